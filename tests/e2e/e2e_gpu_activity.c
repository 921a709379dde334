/* End-to-end test program for ACTIVITY: launches known work through the fake libcupti
 * (tests/fakes/fake_cupti.c, loaded by lapse from $LAPSE_CUPTI_PATH) inside known spans.
 * Profiling comes from the environment (LAPSE_PROFILE=1, LAPSE_FEATURES).
 *
 *   train/forward:  gemm 2 ms x3, relu 0.5 ms (device 0, stream 7)
 *   train/backward: gemm_bw 3 ms x2, a 1 MiB host-to-device copy of 0.1 ms (stream 8)
 *   train:          a 4096-byte set of 10 us (stream 7)
 *   (no span):      outside 1 us (stream 7)
 *   worker (a second thread): wk 0.7 ms x2 (device 1, stream 9)
 *
 * usage: e2e_gpu_activity [REPEAT]  (REPEAT times the whole; default 1)
 *        e2e_gpu_activity fork      (the whole once, then a forked child opens a span
 *                                    and exits: it prints the child's pid)
 *        e2e_gpu_activity forms     (span forms: one kernel "form" through each API id
 *                                    lapse enables, cupti_api.h; span queries: 1000 each
 *                                    of cudaStreamQuery, cudaEventQuery, cudaGetDevice,
 *                                    cuStreamQuery, cuCtxGetDevice, which launch nothing;
 *                                    prints "launches N callbacks M", M from the fake)
 *        e2e_gpu_activity many N    (N kernels of 1 us, 8 a "step" span, on streams 7 and 8
 *                                    by turns: the view's scale run; with ACTIVITY off
 *                                    it loads the fake itself and the same spans run) */
#include "lapse.h"

#include "../../src/collect/cupti_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void (*launch)(const char *, uint32_t, uint32_t, uint64_t);
static void (*memcpy_)(uint32_t, uint64_t, uint32_t, uint32_t, uint64_t);
static void (*memset_)(uint64_t, uint32_t, uint32_t, uint64_t);

/* launches through every API id lapse enables, then calls that launch nothing */
static int forms(void *lib)
{
    void (*via)(int, uint32_t, const char *, uint32_t, uint32_t, uint64_t);
    void (*call)(int, uint32_t);
    uint64_t (*callbacks)(void);
    *(void **)&via = dlsym(lib, "fake_cupti_launch_via");
    *(void **)&call = dlsym(lib, "fake_cupti_call");
    *(void **)&callbacks = dlsym(lib, "fake_cupti_callbacks");
    if (!via || !call || !callbacks)
        return 4;
#define RUNTIME(name, id) via(CUPTI_DOMAIN_RUNTIME_API, id, "form", 0, 7, 1000), n++;
#define DRIVER(name, id) via(CUPTI_DOMAIN_DRIVER_API, id, "form", 0, 7, 1000), n++;
    int n = 0;
    {
        LAPSE_SCOPE("forms");
        CUPTI_RUNTIME_CBIDS(RUNTIME)
        CUPTI_DRIVER_CBIDS(DRIVER)
    }
    {
        LAPSE_SCOPE("queries");
        /* cupti_runtime_cbid.h: cudaStreamQuery_v3020 132, cudaEventQuery_v3020 138,
           cudaGetDevice_v3020 17; cupti_driver_cbid.h: cuStreamQuery 125, cuCtxGetDevice 16 */
        for (int i = 0; i < 1000; i++) {
            call(CUPTI_DOMAIN_RUNTIME_API, 132);
            call(CUPTI_DOMAIN_RUNTIME_API, 138);
            call(CUPTI_DOMAIN_RUNTIME_API, 17);
            call(CUPTI_DOMAIN_DRIVER_API, 125);
            call(CUPTI_DOMAIN_DRIVER_API, 16);
        }
    }
    printf("launches %d callbacks %llu\n", n, (unsigned long long)callbacks());
    return 0;
}

static void *worker(void *arg)
{
    (void)arg;
    LAPSE_SCOPE("worker");
    launch("wk", 1, 9, 700000);
    launch("wk", 1, 9, 700000);
    return NULL;
}

int main(int argc, char **argv)
{
    int fork_child = argc > 1 && strcmp(argv[1], "fork") == 0;
    int repeat = argc > 1 && !fork_child ? atoi(argv[1]) : 1;
    const char *path = getenv("LAPSE_CUPTI_PATH");
    int many = argc > 2 && strcmp(argv[1], "many") == 0;
    void *lib = path ? dlopen(path, RTLD_NOW | (many ? 0 : RTLD_NOLOAD)) : NULL;
    if (!lib) { /* lapse did not load it (ACTIVITY off, or the library missing) */
        fprintf(stderr, "e2e_gpu_activity: the fake libcupti is not loaded\n");
        return 3;
    }
    *(void **)&launch = dlsym(lib, "fake_cupti_launch");
    *(void **)&memcpy_ = dlsym(lib, "fake_cupti_memcpy");
    *(void **)&memset_ = dlsym(lib, "fake_cupti_memset");
    if (!launch || !memcpy_ || !memset_)
        return 4;
    if (argc > 1 && strcmp(argv[1], "forms") == 0)
        return forms(lib);
    if (many) {
        long n = atol(argv[2]);
        for (long i = 0; i < n;) {
            LAPSE_SCOPE("step");
            for (int k = 0; k < 8 && i < n; k++, i++)
                launch(k % 2 ? "scale_b" : "scale_a", 0, 7 + (uint32_t)(i / 8 % 2), 1000);
        }
        return 0;
    }
    for (int r = 0; r < repeat; r++) {
        {
            LAPSE_SCOPE("train");
            {
                LAPSE_SCOPE("forward");
                for (int i = 0; i < 3; i++)
                    launch("gemm", 0, 7, 2000000);
                launch("relu", 0, 7, 500000);
            }
            {
                LAPSE_SCOPE("backward");
                launch("gemm_bw", 0, 8, 3000000);
                launch("gemm_bw", 0, 8, 3000000);
                memcpy_(1, 1u << 20, 0, 8, 100000);
            }
            memset_(4096, 0, 7, 10000);
        }
        launch("outside", 0, 7, 1000);
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) == 0)
            pthread_join(t, NULL);
    }
    if (fork_child) {
        pid_t pid = fork();
        if (pid == 0) {
            LAPSE_SCOPE("child");
            return 0;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        printf("%d\n", (int)pid);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 5;
    }
    return 0;
}
