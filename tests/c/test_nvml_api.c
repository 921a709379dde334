/* Our NVML declarations (src/collect/nvml_api.h) against NVIDIA's nvml.h, where a
 * CUDA toolkit or driver development package installs it (CMake looks in the CUDA
 * include folders: LAPSE_NVML_H). Without one the test is skipped (exit 77) and says
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
    CHECK_EQ_U64(NVML_SUCCESS, 0);
    CHECK_EQ_U64(NVML_ERROR_NOT_SUPPORTED, 3);
    CHECK_EQ_U64(NVML_ERROR_NOT_FOUND, 6);
    CHECK_EQ_U64(NVML_ERROR_INSUFFICIENT_SIZE, 7);
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
