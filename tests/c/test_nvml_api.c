/* Our NVML declarations (src/collect/nvml_api.h) against NVIDIA's nvml.h, where a
 * CUDA toolkit or driver development package installs it, or the tools venv's
 * nvidia-nvml-dev-cu12 wheel (requirements-dev.txt; CMake looks in both: LAPSE_NVML_H). Without one the test is skipped (exit 77) and says
 * so: no NVIDIA header may be included in src/. */
#include "../../src/collect/nvml_api.h"
#include "check.h"

#include <stddef.h>

#ifdef LAPSE_NVML_H
#include LAPSE_NVML_H

#define SAME_FIELD(ours, theirs, a, b)                                                  \
    do {                                                                               \
        CHECK_EQ_U64(offsetof(ours, a), offsetof(theirs, b));                          \
        CHECK_EQ_U64(sizeof(((ours *)0)->a), sizeof(((theirs *)0)->b));                \
    } while (0)

/* NVIDIA's declaration of function f has exactly the type proto */
#define SAME_TYPE(f, proto) \
    CHECK_EQ_U64(__builtin_types_compatible_p(__typeof__(f), proto), 1)

int main(void)
{
    CHECK_EQ_U64(sizeof(nvml_utilization), sizeof(nvmlUtilization_t));
    SAME_FIELD(nvml_utilization, nvmlUtilization_t, gpu, gpu);
    SAME_FIELD(nvml_utilization, nvmlUtilization_t, memory, memory);
    CHECK_EQ_U64(sizeof(nvml_process_info), sizeof(nvmlProcessInfo_t));
    SAME_FIELD(nvml_process_info, nvmlProcessInfo_t, pid, pid);
    SAME_FIELD(nvml_process_info, nvmlProcessInfo_t, used_gpu_memory, usedGpuMemory);
    SAME_FIELD(nvml_process_info, nvmlProcessInfo_t, gpu_instance_id, gpuInstanceId);
    SAME_FIELD(nvml_process_info, nvmlProcessInfo_t, compute_instance_id, computeInstanceId);
    CHECK_EQ_U64(sizeof(nvml_process_utilization_sample), sizeof(nvmlProcessUtilizationSample_t));
    SAME_FIELD(nvml_process_utilization_sample, nvmlProcessUtilizationSample_t, pid, pid);
    SAME_FIELD(nvml_process_utilization_sample, nvmlProcessUtilizationSample_t, time_stamp, timeStamp);
    SAME_FIELD(nvml_process_utilization_sample, nvmlProcessUtilizationSample_t, sm_util, smUtil);
    SAME_FIELD(nvml_process_utilization_sample, nvmlProcessUtilizationSample_t, mem_util, memUtil);
    SAME_FIELD(nvml_process_utilization_sample, nvmlProcessUtilizationSample_t, dec_util, decUtil);
    CHECK_EQ_U64(sizeof(nvml_return), sizeof(nvmlReturn_t));
    CHECK_EQ_U64(LAPSE_NVML_SUCCESS, NVML_SUCCESS);
    CHECK_EQ_U64(LAPSE_NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NOT_SUPPORTED);
    CHECK_EQ_U64(LAPSE_NVML_ERROR_NOT_FOUND, NVML_ERROR_NOT_FOUND);
    CHECK_EQ_U64(LAPSE_NVML_ERROR_INSUFFICIENT_SIZE, NVML_ERROR_INSUFFICIENT_SIZE);
    CHECK_EQ_U64(LAPSE_NVML_DEVICE_UUID_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
    CHECK_EQ_U64(LAPSE_NVML_VALUE_NOT_AVAILABLE, (unsigned long long)NVML_VALUE_NOT_AVAILABLE);
    /* each function's prototype in NVIDIA's header, as nvml_api's field declares it
     * (the same parameters, spelled in NVIDIA's types: nvml_device is nvmlDevice_t) */
    SAME_TYPE(nvmlInit_v2, nvmlReturn_t(void));
    SAME_TYPE(nvmlShutdown, nvmlReturn_t(void));
    SAME_TYPE(nvmlErrorString, const char *(nvmlReturn_t));
    SAME_TYPE(nvmlDeviceGetCount_v2, nvmlReturn_t(unsigned int *));
    SAME_TYPE(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t(unsigned int, nvmlDevice_t *));
    SAME_TYPE(nvmlDeviceGetName, nvmlReturn_t(nvmlDevice_t, char *, unsigned int));
    SAME_TYPE(nvmlDeviceGetUUID, nvmlReturn_t(nvmlDevice_t, char *, unsigned int));
    SAME_TYPE(nvmlDeviceGetUtilizationRates, nvmlReturn_t(nvmlDevice_t, nvmlUtilization_t *));
    SAME_TYPE(nvmlDeviceGetComputeRunningProcesses_v3,
              nvmlReturn_t(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *));
    SAME_TYPE(nvmlDeviceGetProcessUtilization,
              nvmlReturn_t(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
                           unsigned long long));
    return check_done("test_nvml_api");
}
#else
int main(void)
{
    printf("test_nvml_api: skipped: no NVIDIA nvml.h in the CUDA include folders (our "
           "declarations are checked where one is installed)\n");
    return 77;
}
#endif
