/* The few NVML types and functions the GPU collector uses (libnvidia-ml.so.1, loaded
 * with dlopen), declared here from NVML's documented ABI: no NVIDIA header is
 * included, and our names carry a LAPSE_/nvml_ prefix of their own so that a file can
 * include both. tests/c/test_nvml_api.c checks every layout, constant and prototype
 * against NVIDIA's nvml.h (CUDA 12.9's, from the nvidia-nvml-dev-cu12 wheel of the
 * tools venv, or a toolkit's where one is installed). */
#ifndef LAPSE_COLLECT_NVML_API_H
#define LAPSE_COLLECT_NVML_API_H

#include <stdint.h>

typedef int nvml_return;          /* nvmlReturn_t */
#define LAPSE_NVML_SUCCESS 0
#define LAPSE_NVML_ERROR_NOT_SUPPORTED 3
#define LAPSE_NVML_ERROR_NOT_FOUND 6     /* GetProcessUtilization: no sample since the last seen */
#define LAPSE_NVML_ERROR_INSUFFICIENT_SIZE 7
#define LAPSE_NVML_DEVICE_UUID_BUFFER_SIZE 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define LAPSE_NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFull /* usedGpuMemory not known */

typedef struct nvml_device_st *nvml_device; /* nvmlDevice_t */

typedef struct nvml_utilization { /* nvmlUtilization_t */
    unsigned int gpu;    /* percent of the last period a kernel ran */
    unsigned int memory; /* percent of it the memory was read or written */
} nvml_utilization;

typedef struct nvml_process_info { /* nvmlProcessInfo_t (v2), of the _v3 functions */
    unsigned int pid;
    unsigned long long used_gpu_memory; /* bytes */
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_process_info;

typedef struct nvml_process_utilization_sample { /* nvmlProcessUtilizationSample_t */
    unsigned int pid;
    unsigned long long time_stamp; /* CPU timestamp, microseconds */
    unsigned int sm_util, mem_util, enc_util, dec_util; /* percent */
} nvml_process_utilization_sample;

_Static_assert(sizeof(nvml_utilization) == 8, "nvmlUtilization_t");
_Static_assert(sizeof(nvml_process_info) == 24, "nvmlProcessInfo_t");
_Static_assert(sizeof(nvml_process_utilization_sample) == 32, "nvmlProcessUtilizationSample_t");

/* The functions, by the names dlsym finds them under. */
typedef struct nvml_api {
    nvml_return (*init)(void);                                   /* nvmlInit_v2 */
    nvml_return (*shutdown)(void);                               /* nvmlShutdown */
    const char *(*error_string)(nvml_return);                    /* nvmlErrorString */
    nvml_return (*device_count)(unsigned int *);                 /* nvmlDeviceGetCount_v2 */
    nvml_return (*device_by_index)(unsigned int, nvml_device *); /* ..GetHandleByIndex_v2 */
    nvml_return (*device_name)(nvml_device, char *, unsigned int); /* nvmlDeviceGetName */
    nvml_return (*device_uuid)(nvml_device, char *, unsigned int); /* nvmlDeviceGetUUID */
    nvml_return (*utilization)(nvml_device, nvml_utilization *);   /* ..GetUtilizationRates */
    nvml_return (*compute_processes)(nvml_device, unsigned int *,
                                     nvml_process_info *); /* ..GetComputeRunningProcesses_v3 */
    nvml_return (*process_utilization)(nvml_device, nvml_process_utilization_sample *,
                                       unsigned int *, unsigned long long); /* ..GetProcessUtilization */
} nvml_api;

#endif
