/* A fake CUDA runtime (soname libcudart.so.13), for phases' GPU time: events whose
 * elapsed times are $FAKE_CUDART_ELAPSED_MS, one per cudaEventElapsedTime in order
 * (comma separated; the last repeats; default 1.5), and counts of the calls made
 * (fake_cudart_calls). As the real runtime, its first call that needs a context makes
 * one in the driver (fake_cuda_driver.c, which must be loaded first, RTLD_GLOBAL).
 * FAKE_CUDART_FAIL=NAME makes that call return error 999. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static int events_live, creates, records, syncs, elapsed_reads, device_syncs;
static unsigned next_elapsed;

static int failing(const char *name)
{
    const char *f = getenv("FAKE_CUDART_FAIL");
    return f && strcmp(f, name) == 0;
}

static void need_context(void)
{
    void (*make)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "fake_cuda_make_context");
    int (*made)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "fake_cuda_contexts_created");
    if (make && made && made() == 0)
        make();
}

int cudaFree(void *p)
{
    (void)p;
    need_context();
    return 0;
}

int cudaEventCreate(void **event)
{
    need_context();
    creates++;
    if (failing("cudaEventCreate"))
        return 999;
    *event = malloc(1);
    events_live++;
    return 0;
}

int cudaEventRecord(void *event, void *stream)
{
    (void)event;
    (void)stream;
    records++;
    return failing("cudaEventRecord") ? 999 : 0;
}

int cudaEventSynchronize(void *event)
{
    (void)event;
    syncs++;
    return 0;
}

int cudaEventElapsedTime(float *ms, void *start, void *stop)
{
    (void)start;
    (void)stop;
    if (failing("cudaEventElapsedTime"))
        return 999;
    const char *list = getenv("FAKE_CUDART_ELAPSED_MS");
    double v = 1.5;
    if (list && *list) {
        const char *p = list;
        for (unsigned i = 0; i < next_elapsed && strchr(p, ','); i++)
            p = strchr(p, ',') + 1;
        v = strtod(p, NULL);
    }
    next_elapsed++;
    elapsed_reads++;
    *ms = (float)v;
    return 0;
}

int cudaEventDestroy(void *event)
{
    free(event);
    events_live--;
    return 0;
}

int cudaDeviceSynchronize(void)
{
    need_context();
    device_syncs++;
    return 0;
}

/* what was called: "creates records syncs elapsed device_syncs live" */
void fake_cudart_calls(int out[6])
{
    int v[6] = {creates, records, syncs, elapsed_reads, device_syncs, events_live};
    memcpy(out, v, sizeof v);
}
