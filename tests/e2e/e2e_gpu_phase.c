/* Phases with GPU time, run by tests/e2e/test_gpu_phase.py. argv[1]: the build
 * directory holding the fake CUDA driver and runtime (tests/fakes), or "-" for a
 * process that never loads CUDA. With them, "use" in argv[2] makes the context
 * first (cudaFree(0)), as a program that uses CUDA does. Prints the contexts the
 * fake driver saw created on its last line. */
#include <lapse.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void phase(const char *name, unsigned flags)
{
    lapse_gpu_phase p;
    lapse_gpu_phase_begin(&p, name, flags);
    lapse_gpu_phase_end(&p);
}

int main(int argc, char **argv)
{
    int (*contexts)(void) = NULL;
    if (argc > 1 && strcmp(argv[1], "-") != 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/libfake_cuda_driver.so", argv[1]);
        void *driver = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        snprintf(path, sizeof path, "%s/libfake_cudart.so", argv[1]);
        void *runtime = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
        if (!driver || !runtime) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        contexts = (int (*)(void))dlsym(driver, "fake_cuda_contexts_created");
        if (argc > 2 && strcmp(argv[2], "use") == 0)
            ((int (*)(void *))dlsym(runtime, "cudaFree"))(NULL);
    }
    {
        LAPSE_SCOPE("train");
        for (int i = 0; i < 3; i++)
            phase("step", LAPSE_GPU_TIME);
        phase("eval", LAPSE_GPU_TIME | LAPSE_GPU_SYNC);
    }
    printf("contexts=%d\n", contexts ? contexts() : 0);
    return 0;
}
