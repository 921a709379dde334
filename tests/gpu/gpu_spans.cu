/* A real-GPU check of ACTIVITY (tests/gpu/run.sh builds and runs it where a GPU is):
 * known kernels launched inside known C spans, each span's kernels timed with CUDA
 * events on the same stream. Prints one line per span: "span PATH KERNELS EVENT_NS".
 *
 *   gpu_spans            the GPU program (profiling from the environment)
 *   gpu_spans cpu        a sibling that never touches CUDA (no GPU section expected)
 *
 * Built by nvcc (a ctest compiles it where nvcc is on PATH; nothing runs it there). */
#include "lapse.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

__global__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles)
        ;
}

__global__ void fill(float *x, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v;
}

static int check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_spans: %s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

/* launches `kernels` spin kernels of `cycles` in span `name` (nested in the caller's),
 * timed with events around them on stream s; prints the span's line */
static int timed_span(const char *path, const char *name, int kernels, long long cycles,
                      cudaStream_t s)
{
    cudaEvent_t a, b;
    if (check(cudaEventCreate(&a), "cudaEventCreate") || check(cudaEventCreate(&b), "cudaEventCreate"))
        return 1;
    uint32_t id = lapse_intern(name);
    lapse_span_begin_id(id);
    cudaEventRecord(a, s);
    for (int i = 0; i < kernels; i++)
        spin<<<1, 1, 0, s>>>(cycles);
    cudaEventRecord(b, s);
    lapse_span_end_id(id);
    if (check(cudaEventSynchronize(b), "cudaEventSynchronize"))
        return 1;
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    printf("span %s %d %.0f\n", path, kernels, (double)ms * 1e6);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "cpu") == 0) { /* the CPU-only sibling */
        LAPSE_SCOPE("cpu_only");
        struct timespec t = {0, 50 * 1000 * 1000};
        nanosleep(&t, NULL);
        return 0;
    }
    cudaStream_t s;
    if (check(cudaStreamCreate(&s), "cudaStreamCreate"))
        return 1;
    float *x;
    const int n = 1 << 20;
    if (check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc"))
        return 1;
    for (int step = 0; step < 5; step++) {
        LAPSE_SCOPE("step");
        if (timed_span("step/forward", "forward", 4, 2000000, s) ||
            timed_span("step/backward", "backward", 2, 6000000, s))
            return 1;
        {
            LAPSE_SCOPE("fill");
            fill<<<(n + 255) / 256, 256, 0, s>>>(x, n, 1.0f);
            cudaMemsetAsync(x, 0, n * sizeof(float), s);
        }
    }
    cudaStreamSynchronize(s);
    cudaFree(x);
    cudaStreamDestroy(s);
    return 0;
}
