/* Phases with GPU time (LAPSE_GPU_TIME, LAPSE_GPU_SYNC) against the fake CUDA
 * runtime and driver (tests/fakes/fake_cudart.c, fake_cuda_driver.c, built beside
 * this test): with no runtime loaded, and with one loaded by a program that never
 * used CUDA, the figure is missing with the reason and no context is created (no
 * event call is made); once the program made a context, the GPU time per path is
 * the fake's elapsed times exactly, the sync phase synchronises at both ends, and a
 * failing call makes the figure missing, never 0, and leaks no event. */
#include "lapse.h"

#include "../../src/store/codec.h"
#include "../../src/store/file_io.h"
#include "check.h"
#include "session_file.h"

#include <dlfcn.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char run_dir[256];

static void start(void)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.role = "test";
    o.features = LAPSE_FEATURE_SPANS;
    o.snapshot_interval_ms = 60000;
    o.handle_signals = 0;
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "lapse_start: %s\n", lapse_last_error());
        exit(1);
    }
}

static const store_node *node(const store_file *f, const char *name)
{
    for (uint32_t i = 0; i < f->node_count; i++)
        if (f->nodes[i].parent >= 0 && !strcmp(f->names[f->nodes[i].name], name))
            return &f->nodes[i];
    fprintf(stderr, "no node %s\n", name);
    exit(1);
}

static void phase(const char *name, unsigned flags)
{
    lapse_gpu_phase p;
    lapse_gpu_phase_begin(&p, name, flags);
    lapse_gpu_phase_end(&p);
}

static void *load(const char *dir, const char *lib)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, lib);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    return h;
}

int main(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = 0;
    const char *dir = dirname(exe);
    snprintf(run_dir, sizeof run_dir, "/tmp/lapse-test-gpu-XXXXXX");
    if (!mkdtemp(run_dir))
        return 1;
    store_file f;

    /* no CUDA runtime in the process: missing, with why */
    start();
    phase("no.runtime", LAPSE_GPU_TIME | LAPSE_GPU_SYNC);
    stop_and_read(&f);
    CHECK_EQ_U64(node(&f, "no.runtime")->calls, 1);
    CHECK_EQ_U64(node(&f, "no.runtime")->gpu_untimed, 1);
    CHECK_EQ_U64(node(&f, "no.runtime")->gpu_timed, 0);
    CHECK(strstr(f.meta.gpu_time_missing, "has not loaded the CUDA runtime") != NULL);
    store_file_free(&f);

    /* the runtime and driver loaded, CUDA never used: no context made, no event call */
    void *driver = load(dir, "libfake_cuda_driver.so");
    void *runtime = load(dir, "libfake_cudart.so");
    int (*contexts)(void) = (int (*)(void))dlsym(driver, "fake_cuda_contexts_created");
    void (*calls)(int[6]) = (void (*)(int[6]))dlsym(runtime, "fake_cudart_calls");
    int (*cuda_free)(void *) = (int (*)(void *))dlsym(runtime, "cudaFree");
    CHECK(contexts && calls && cuda_free);
    int c[6];
    start();
    phase("no.context", LAPSE_GPU_TIME | LAPSE_GPU_SYNC);
    stop_and_read(&f);
    CHECK_EQ_U64(node(&f, "no.context")->gpu_untimed, 1);
    CHECK(strstr(f.meta.gpu_time_missing, "no CUDA context on this thread") != NULL);
    store_file_free(&f);
    CHECK(contexts() == 0);
    calls(c);
    CHECK(c[0] == 0 && c[1] == 0 && c[4] == 0); /* no create, record, device sync */

    /* the program made its context: the fake's elapsed times, per path, exactly */
    CHECK(cuda_free(NULL) == 0);
    CHECK(contexts() == 1);
    setenv("FAKE_CUDART_ELAPSED_MS", "2.5,0.75,4", 1);
    start();
    int outer = lapse_span_begin_id(lapse_intern("outer"));
    phase("step", LAPSE_GPU_TIME);
    phase("step", LAPSE_GPU_TIME);
    phase("synced", LAPSE_GPU_TIME | LAPSE_GPU_SYNC);
    phase("sync.only", LAPSE_GPU_SYNC);
    lapse_span_end_token_(outer);
    stop_and_read(&f);
    CHECK_EQ_U64(node(&f, "step")->gpu_ns, 3250000);
    CHECK_EQ_U64(node(&f, "step")->gpu_timed, 2);
    CHECK_EQ_U64(node(&f, "step")->gpu_untimed, 0);
    CHECK_EQ_U64(node(&f, "synced")->gpu_ns, 4000000);
    CHECK_EQ_U64(node(&f, "sync.only")->gpu_timed, 0);
    CHECK_EQ_U64(node(&f, "sync.only")->gpu_untimed, 0);
    CHECK_EQ_U64(node(&f, "outer")->gpu_timed, 0); /* the phases' own, not their parent's */
    CHECK(strcmp(f.meta.gpu_time_missing, "") == 0); /* a new session: nothing missing */
    store_file_free(&f);
    calls(c);
    CHECK(c[0] == 6 && c[1] == 6 && c[2] == 3 && c[3] == 3); /* 2 events, 2 records per phase */
    CHECK(c[4] == 4);                                         /* 2 phases x both ends */
    CHECK(c[5] == 0);                                         /* every event destroyed */
    CHECK(contexts() == 1);

    /* a call that fails: missing, with why, never 0; no event leaks */
    setenv("FAKE_CUDART_FAIL", "cudaEventElapsedTime", 1);
    start();
    phase("fails", LAPSE_GPU_TIME);
    stop_and_read(&f);
    CHECK_EQ_U64(node(&f, "fails")->gpu_untimed, 1);
    CHECK_EQ_U64(node(&f, "fails")->gpu_ns, 0);
    CHECK(strstr(f.meta.gpu_time_missing, "elapsed time could not be read") != NULL);
    store_file_free(&f);
    setenv("FAKE_CUDART_FAIL", "cudaEventCreate", 1);
    start();
    phase("create.fails", LAPSE_GPU_TIME);
    stop_and_read(&f);
    CHECK_EQ_U64(node(&f, "create.fails")->gpu_untimed, 1);
    store_file_free(&f);
    calls(c);
    CHECK(c[5] == 0);
    return check_done("test_gpu_phase");
}
