/* The DEVICE collector: GPU telemetry of this process through NVML
 * (libnvidia-ml.so.1, dlopen; declarations in nvml_api.h). Every interval, per
 * device: whether its compute process list holds this process (and the memory it
 * holds there); if it does, the whole device's utilisation (busy), this process's
 * (nvmlDeviceGetProcessUtilization: the mean of its samples since the last seen, 0
 * when NVML has none: measured idle), and the top-level spans open then (GPU BY
 * PHASE). Each device's UUID is read once at start (the file's GPU_DEVICE_IDS: what
 * joins torch's VRAM readings to it). A device whose list never holds the process is not written: a CPU-only
 * process on a GPU machine gets no GPU section. docs/format.md, GPU_DEVICE. */
#include "collector.h"

#include "lapse.h"

#include "../core/clock.h"
#include "../core/core.h"
#include "nvml_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NVML_LIBRARY "libnvidia-ml.so.1"
#define GPU_DEVICES 16u   /* devices read, the first of NVML's order */
#define GPU_PHASES 32u    /* phases per device; those past it count together (name 0) */
#define GPU_PROCESSES 256u /* entries of a device's process list read */
#define GPU_SAMPLES 512u  /* process utilisation samples read per tick */

typedef struct gpu_live {
    nvml_device handle;
    unsigned long long last_seen; /* the newest process sample's timestamp */
    char name[96];
    char uuid[LAPSE_NVML_DEVICE_UUID_BUFFER_SIZE]; /* "" when nvmlDeviceGetUUID failed */
    char uuid_error[160];                         /* then why; else "" */
    store_gpu_device acc;
    store_gpu_phase phases[GPU_PHASES];
} gpu_live;

static struct {
    pthread_mutex_t mu;
    void *lib;
    nvml_api f;
    uint32_t interval_ms;
    int inited; /* nvmlInit_v2 succeeded: nvmlShutdown at the end */
    uint32_t count;
    gpu_live dev[GPU_DEVICES];
    uint64_t failed_calls;
    char error[256];
    /* the copy the last take handed out: valid until the next (writes are serialized) */
    store_gpu_device taken[GPU_DEVICES];
    store_gpu_phase taken_phases[GPU_DEVICES][GPU_PHASES];
    nvml_process_info procs[GPU_PROCESSES];
    nvml_process_utilization_sample samples[GPU_SAMPLES];
} N = {.mu = PTHREAD_MUTEX_INITIALIZER};

static const char *nvml_error(nvml_return rc)
{
    const char *s = N.f.error_string ? N.f.error_string(rc) : NULL;
    return s ? s : "unknown error";
}

/* Called with N.mu held. */
static void call_failed(const char *call, nvml_return rc)
{
    N.failed_calls++;
    snprintf(N.error, sizeof N.error, "%s: %s (%d)", call, nvml_error(rc), rc);
}

static void forget_data(void)
{
    N.failed_calls = 0;
    N.error[0] = 0;
    for (uint32_t i = 0; i < N.count; i++) {
        N.dev[i].last_seen = 0;
        memset(&N.dev[i].acc, 0, sizeof N.dev[i].acc);
        N.dev[i].acc.index = i;
        N.dev[i].acc.name = N.dev[i].name;
        N.dev[i].acc.uuid = N.dev[i].uuid;
        N.dev[i].acc.uuid_error = N.dev[i].uuid_error;
    }
}

static int load(char *why, size_t why_len)
{
    if (!N.lib) {
        N.lib = dlopen(NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!N.lib) {
            const char *e = dlerror();
            snprintf(why, why_len, "%s", e ? e : NVML_LIBRARY ": cannot be loaded");
            return -ENOENT;
        }
    }
    static const char *const names[] = {"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString",
                                        "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
                                        "nvmlDeviceGetName", "nvmlDeviceGetUUID",
                                        "nvmlDeviceGetUtilizationRates",
                                        "nvmlDeviceGetComputeRunningProcesses_v3",
                                        "nvmlDeviceGetProcessUtilization"};
    void **slots[] = {(void **)&N.f.init, (void **)&N.f.shutdown, (void **)&N.f.error_string,
                      (void **)&N.f.device_count, (void **)&N.f.device_by_index,
                      (void **)&N.f.device_name, (void **)&N.f.device_uuid,
                      (void **)&N.f.utilization,
                      (void **)&N.f.compute_processes, (void **)&N.f.process_utilization};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        *slots[i] = dlsym(N.lib, names[i]);
        if (!*slots[i]) {
            snprintf(why, why_len, NVML_LIBRARY " has no %s (a driver older than NVML 11)", names[i]);
            return -ENOSYS;
        }
    }
    return 0;
}

static int nvml_start(const collect_config *cfg, char *why, size_t why_len)
{
    pthread_mutex_lock(&N.mu);
    N.count = 0;
    N.interval_ms = cfg->device_interval_ms;
    int rc = N.interval_ms ? load(why, why_len) : 1;
    nvml_return r = LAPSE_NVML_SUCCESS;
    unsigned int count = 0;
    if (rc == 0 && (r = N.f.init()) != LAPSE_NVML_SUCCESS) {
        snprintf(why, why_len, "nvmlInit_v2: %s (%d)", nvml_error(r), r);
        rc = -EIO;
    }
    N.inited = rc == 0;
    if (rc == 0 && (r = N.f.device_count(&count)) != LAPSE_NVML_SUCCESS) {
        snprintf(why, why_len, "nvmlDeviceGetCount_v2: %s (%d)", nvml_error(r), r);
        rc = -EIO;
    }
    if (rc == 0 && count == 0) {
        snprintf(why, why_len, "NVML sees no GPU");
        rc = -ENOENT; /* nothing to observe here, as without a driver */
    }
    for (unsigned int i = 0; rc == 0 && i < count && N.count < GPU_DEVICES; i++) {
        gpu_live *d = &N.dev[N.count];
        if ((r = N.f.device_by_index(i, &d->handle)) != LAPSE_NVML_SUCCESS) {
            snprintf(why, why_len, "nvmlDeviceGetHandleByIndex_v2(%u): %s (%d)", i, nvml_error(r), r);
            rc = -EIO;
            break;
        }
        if (N.f.device_name(d->handle, d->name, sizeof d->name) != LAPSE_NVML_SUCCESS)
            snprintf(d->name, sizeof d->name, "GPU %u", i);
        d->name[sizeof d->name - 1] = 0;
        d->uuid_error[0] = 0;
        if ((r = N.f.device_uuid(d->handle, d->uuid, sizeof d->uuid)) != LAPSE_NVML_SUCCESS) {
            d->uuid[0] = 0; /* not joinable to torch's devices: the report says why */
            snprintf(d->uuid_error, sizeof d->uuid_error, "nvmlDeviceGetUUID: %s (%d)",
                     nvml_error(r), r);
        }
        d->uuid[sizeof d->uuid - 1] = 0;
        N.count++;
    }
    if (rc < 0 && N.inited) {
        N.f.shutdown();
        N.inited = 0;
    }
    forget_data();
    pthread_mutex_unlock(&N.mu);
    return rc;
}

/* One reading of device d (N.mu held); phases: the top-level spans open now. */
static void read_device(gpu_live *d, unsigned int pid, const uint32_t *phases, uint32_t nphases)
{
    unsigned int n = GPU_PROCESSES;
    nvml_return r = N.f.compute_processes(d->handle, &n, N.procs);
    if (r != LAPSE_NVML_SUCCESS) {
        call_failed("nvmlDeviceGetComputeRunningProcesses_v3", r);
        return;
    }
    int listed = 0;
    unsigned long long mem = 0;
    for (unsigned int i = 0; i < n && i < GPU_PROCESSES; i++)
        if (N.procs[i].pid == pid) {
            listed = 1;
            if (N.procs[i].used_gpu_memory != LAPSE_NVML_VALUE_NOT_AVAILABLE) /* WDDM: unknown */
                mem += N.procs[i].used_gpu_memory;
        }
    if (!listed)
        return; /* not this process's device (now) */
    store_gpu_device *a = &d->acc;
    a->ticks++;
    if (mem > a->mem_peak_bytes)
        a->mem_peak_bytes = mem;
    nvml_utilization u;
    if ((r = N.f.utilization(d->handle, &u)) == LAPSE_NVML_SUCCESS && u.gpu <= 100) {
        a->busy_ticks++;
        a->busy_pct_sum += u.gpu;
    } else if (r != LAPSE_NVML_ERROR_NOT_SUPPORTED) {
        call_failed("nvmlDeviceGetUtilizationRates", r == LAPSE_NVML_SUCCESS ? -1 : r);
    }
    unsigned int ns = GPU_SAMPLES;
    r = N.f.process_utilization(d->handle, N.samples, &ns, d->last_seen);
    int own_read = r == LAPSE_NVML_SUCCESS || r == LAPSE_NVML_ERROR_NOT_FOUND;
    uint64_t own = 0, seen = 0;
    if (r == LAPSE_NVML_SUCCESS) {
        unsigned long long newest = d->last_seen;
        for (unsigned int i = 0; i < ns && i < GPU_SAMPLES; i++) {
            const nvml_process_utilization_sample *s = &N.samples[i];
            if (s->time_stamp > newest)
                newest = s->time_stamp;
            if (s->pid == pid && s->time_stamp > d->last_seen && s->sm_util <= 100) {
                own += s->sm_util;
                seen++;
            }
        }
        d->last_seen = newest;
        own = seen ? own / seen : 0;
    } else if (!own_read && r != LAPSE_NVML_ERROR_NOT_SUPPORTED) {
        call_failed("nvmlDeviceGetProcessUtilization", r);
    }
    if (!own_read)
        return; /* this process's utilisation is not known: n/a, not 0 */
    a->own_ticks++;
    a->own_pct_sum += own;
    for (uint32_t k = 0; k < nphases; k++) {
        uint32_t slot = 0;
        while (slot < a->phase_count && d->phases[slot].name != phases[k])
            slot++;
        if (slot == a->phase_count && slot < GPU_PHASES - 1) {
            d->phases[slot] = (store_gpu_phase){phases[k], 0, 0};
            a->phase_count++;
        } else if (slot == a->phase_count) { /* the last slot holds the rest */
            slot = GPU_PHASES - 1;
            if (a->phase_count < GPU_PHASES) {
                d->phases[slot] = (store_gpu_phase){0, 0, 0};
                a->phase_count = GPU_PHASES;
            }
        }
        d->phases[slot].ticks++;
        d->phases[slot].own_pct_sum += own;
    }
}

static uint64_t nvml_tick(uint64_t due_ns)
{
    uint64_t now = core_mono_ns(), interval = (uint64_t)N.interval_ms * 1000000ull;
    if (due_ns) {
        uint32_t phases[GPU_PHASES];
        uint32_t nphases = core_open_phases(phases, GPU_PHASES);
        unsigned int pid = (unsigned int)getpid();
        pthread_mutex_lock(&N.mu);
        for (uint32_t i = 0; i < N.count; i++)
            read_device(&N.dev[i], pid, phases, nphases);
        pthread_mutex_unlock(&N.mu);
        now = core_mono_ns();
    }
    uint64_t next = (due_ns ? due_ns : now) + interval;
    return next > now ? next : now + interval;
}

static int nvml_take(store_file *f)
{
    pthread_mutex_lock(&N.mu);
    store_gpu *g = &f->gpu;
    uint32_t n = 0;
    for (uint32_t i = 0; i < N.count; i++) {
        const gpu_live *d = &N.dev[i];
        if (!d->acc.ticks)
            continue; /* its process list never held this process */
        N.taken[n] = d->acc;
        memcpy(N.taken_phases[n], d->phases, d->acc.phase_count * sizeof d->phases[0]);
        N.taken[n].phases = N.taken_phases[n];
        n++;
    }
    if (n || N.failed_calls) {
        g->interval_ms = N.interval_ms;
        g->failed_calls = N.failed_calls;
        g->error = N.error;
        g->devices = N.taken;
        g->device_count = n;
    }
    pthread_mutex_unlock(&N.mu);
    return 0;
}

/* After the sampler's last tick: NVML is let go; the figures stay for the last take. */
static void nvml_stop(void)
{
    pthread_mutex_lock(&N.mu);
    if (N.inited)
        N.f.shutdown();
    N.inited = 0;
    pthread_mutex_unlock(&N.mu);
}

static void nvml_fork_child(void)
{
    pthread_mutex_init(&N.mu, NULL); /* the sampler may have held it */
    forget_data();
}

const collector collect_device = {"device", LAPSE_FEATURE_DEVICE, nvml_start, nvml_tick,
                                  nvml_take, nvml_stop, nvml_fork_child, {NULL, NULL}};
