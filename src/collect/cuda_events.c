/* CUDA events for the GPU time of phases (cuda_events.h), through our own
 * declarations (cuda_decls.h). */
#include "cuda_events.h"

#include "cuda_decls.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

static struct runtime {
    cuda_event_create_fn create;
    cuda_event_record_fn record;
    cuda_event_sync_fn sync;
    cuda_event_elapsed_fn elapsed;
    cuda_event_destroy_fn destroy;
    cuda_device_sync_fn device_sync;
    cu_ctx_get_current_fn ctx_current;
    const char *soname;
} rt;
static int resolved; /* 1 once rt is complete (atomic) */

/* The runtime and driver the program loaded, looked up until they are there (a
 * program may load CUDA after its first phase). */
static int resolve(char *why, size_t why_len)
{
    if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
        return 0;
    static const char *const sonames[] = {"libcudart.so.13", "libcudart.so.12"};
    void *h = NULL;
    const char *soname = NULL;
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0] && !h; i++)
        if ((h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD)) != NULL)
            soname = sonames[i];
    if (!h) {
        snprintf(why, why_len, "the program has not loaded the CUDA runtime (libcudart.so.13 or .12)");
        return -ENOENT;
    }
    void *d = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!d) {
        dlclose(h);
        snprintf(why, why_len, "the CUDA driver (libcuda.so.1) is not loaded: the program has not used CUDA");
        return -ENOENT;
    }
    struct runtime r = {
        (cuda_event_create_fn)dlsym(h, "cudaEventCreate"),
        (cuda_event_record_fn)dlsym(h, "cudaEventRecord"),
        (cuda_event_sync_fn)dlsym(h, "cudaEventSynchronize"),
        (cuda_event_elapsed_fn)dlsym(h, "cudaEventElapsedTime"),
        (cuda_event_destroy_fn)dlsym(h, "cudaEventDestroy"),
        (cuda_device_sync_fn)dlsym(h, "cudaDeviceSynchronize"),
        (cu_ctx_get_current_fn)dlsym(d, "cuCtxGetCurrent"),
        soname,
    };
    if (!r.create || !r.record || !r.sync || !r.elapsed || !r.destroy || !r.device_sync ||
        !r.ctx_current) {
        dlclose(d);
        dlclose(h);
        snprintf(why, why_len, "%s or libcuda.so.1 lacks a call lapse uses (cudaEvent*, "
                 "cudaDeviceSynchronize, cuCtxGetCurrent)", soname);
        return -ENOENT;
    }
    rt = r; /* the handles stay open: the pointers are kept */
    __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    return 0;
}

/* 0 when this thread has a current CUDA context (one the program made). */
static int has_context(char *why, size_t why_len)
{
    int rc = resolve(why, why_len);
    if (rc)
        return rc;
    void *ctx = NULL;
    if (rt.ctx_current(&ctx) != 0 || !ctx) {
        snprintf(why, why_len, "no CUDA context on this thread: the program has not used CUDA here");
        return -ENOENT;
    }
    return 0;
}

int cuda_events_begin(cuda_events *e, char *why, size_t why_len)
{
    e->start = e->stop = NULL;
    int rc = has_context(why, why_len);
    if (rc)
        return rc;
    int err;
    if ((err = rt.create(&e->start)) != 0 || (err = rt.create(&e->stop)) != 0 ||
        (err = rt.record(e->start, NULL)) != 0) {
        if (e->start)
            rt.destroy(e->start);
        if (e->stop)
            rt.destroy(e->stop);
        e->start = e->stop = NULL;
        snprintf(why, why_len, "a CUDA event could not be created or recorded (error %d)", err);
        return -EIO;
    }
    return 0;
}

int cuda_events_end(cuda_events *e, uint64_t *ns, char *why, size_t why_len)
{
    if (!e->start)
        return -EINVAL;
    float ms = 0;
    int err;
    if ((err = rt.record(e->stop, NULL)) != 0 || (err = rt.sync(e->stop)) != 0 ||
        (err = rt.elapsed(&ms, e->start, e->stop)) != 0 || !(ms >= 0)) {
        snprintf(why, why_len, "the CUDA events' elapsed time could not be read (error %d)", err);
        err = err ? err : -1;
    }
    rt.destroy(e->start);
    rt.destroy(e->stop);
    e->start = e->stop = NULL;
    if (err)
        return -EIO;
    *ns = (uint64_t)((double)ms * 1e6 + 0.5);
    return 0;
}

int cuda_device_sync(char *why, size_t why_len)
{
    int rc = has_context(why, why_len);
    if (rc)
        return rc;
    int err = rt.device_sync();
    if (err) {
        snprintf(why, why_len, "cudaDeviceSynchronize failed (error %d)", err);
        return -EIO;
    }
    return 0;
}
