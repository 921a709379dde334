/* Our declarations of the CUDA calls (src/collect/cuda_decls.h) against the toolkit's
 * headers, where they are installed (CMake finds cuda_runtime_api.h and cuda.h and
 * defines LAPSE_CUDA_HEADERS): the headers' prototypes are the shapes we mirror, and
 * the handles and error codes we read as void * and int have their sizes. Without
 * the headers the test says so and is skipped (exit 77). */
#include "../../src/collect/cuda_decls.h"

#include <stdio.h>

#ifdef LAPSE_CUDA_HEADERS
#include <cuda.h>
#include <cuda_runtime_api.h>

#define SAME(a, b) __builtin_types_compatible_p(__typeof__(a), b)
/* the toolkit's prototypes */
_Static_assert(SAME(&cudaEventCreate, cudaError_t (*)(cudaEvent_t *)), "cudaEventCreate");
_Static_assert(SAME(&cudaEventRecord, cudaError_t (*)(cudaEvent_t, cudaStream_t)), "cudaEventRecord");
_Static_assert(SAME(&cudaEventSynchronize, cudaError_t (*)(cudaEvent_t)), "cudaEventSynchronize");
_Static_assert(SAME(&cudaEventElapsedTime, cudaError_t (*)(float *, cudaEvent_t, cudaEvent_t)),
               "cudaEventElapsedTime");
_Static_assert(SAME(&cudaEventDestroy, cudaError_t (*)(cudaEvent_t)), "cudaEventDestroy");
_Static_assert(SAME(&cudaDeviceSynchronize, cudaError_t (*)(void)), "cudaDeviceSynchronize");
_Static_assert(SAME(&cuCtxGetCurrent, CUresult (*)(CUcontext *)), "cuCtxGetCurrent");
/* what we read them as */
_Static_assert(sizeof(cudaError_t) == sizeof(int) && cudaSuccess == 0, "cudaError_t is an int, 0 success");
_Static_assert(sizeof(CUresult) == sizeof(int) && CUDA_SUCCESS == 0, "CUresult is an int, 0 success");
_Static_assert(sizeof(cudaEvent_t) == sizeof(void *) && sizeof(cudaStream_t) == sizeof(void *) &&
                   sizeof(CUcontext) == sizeof(void *),
               "the handles are pointers");
/* and ours take the same number of arguments of those sizes */
_Static_assert(SAME((cuda_event_elapsed_fn)0, int (*)(float *, void *, void *)), "ours");

int main(void)
{
    printf("test_cuda_decls: checked against the CUDA %d toolkit headers\n", CUDART_VERSION);
    return 0;
}
#else
int main(void)
{
    printf("test_cuda_decls: skipped: no CUDA toolkit headers (cuda_runtime_api.h, cuda.h) found\n");
    return 77;
}
#endif
