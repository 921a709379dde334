/* A fake CUDA driver (soname libcuda.so.1): one context, made only when the fake
 * runtime (fake_cudart.c) is used the way a program uses CUDA (cudaFree(0), the
 * first cudaEventCreate, ...). cuCtxGetCurrent answers what is current and creates
 * nothing. fake_cuda_contexts_created() says how many contexts were made. */
#include <stddef.h>

static int context; /* its address is the context */
static int made;

int cuCtxGetCurrent(void **ctx)
{
    *ctx = made ? &context : NULL;
    return 0;
}

void fake_cuda_make_context(void) { made++; }

int fake_cuda_contexts_created(void) { return made; }
