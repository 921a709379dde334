/* The torch readings of the session (gpu_memory.h): the largest peaks per device. */
#include "gpu_memory.h"

#include "session.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define GM_MAX_DEVICES 64u /* the reader's bound (GPU_MAX_DEVICES) */

typedef struct gm_device {
    uint32_t index;
    char uuid[80], name[128];
    uint64_t allocated_peak, reserved_peak; /* the largest read */
    uint64_t allocated_last, reserved_last; /* the last read: a lower one is a reset */
} gm_device;

static struct {
    pthread_mutex_t mu;
    gm_device dev[GM_MAX_DEVICES];
    uint32_t count;
    uint64_t readings, resets;
    char error[256];
} G = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* What the last take handed out (the write lock keeps takes apart). */
static store_gpu_memory_device out_dev[GM_MAX_DEVICES];
static char out_uuid[GM_MAX_DEVICES][80], out_name[GM_MAX_DEVICES][128], out_error[256];
static store_gpu_memory out;

static gm_device *device_of(uint32_t index)
{
    for (uint32_t i = 0; i < G.count; i++)
        if (G.dev[i].index == index)
            return &G.dev[i];
    if (G.count == GM_MAX_DEVICES)
        return NULL;
    gm_device *d = &G.dev[G.count++];
    memset(d, 0, sizeof *d);
    d->index = index;
    return d;
}

int lapse_session_gpu_memory_reading(const store_gpu_memory_device *devices, uint32_t count,
                                     const char *error)
{
    if (!lapse_is_active())
        return -EINVAL;
    /* a terminating signal's write (gpu_memory_take) must not find G.mu held by the
     * thread it interrupted: none is taken while it is */
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    pthread_mutex_lock(&G.mu);
    if (error && *error) {
        snprintf(G.error, sizeof G.error, "%s", error);
    } else {
        int reset = 0;
        for (uint32_t i = 0; i < count; i++) {
            const store_gpu_memory_device *s = &devices[i];
            gm_device *d = device_of(s->index);
            if (!d)
                break;
            snprintf(d->uuid, sizeof d->uuid, "%s", s->uuid ? s->uuid : "");
            snprintf(d->name, sizeof d->name, "%s", s->name ? s->name : "");
            reset |= s->allocated_peak_bytes < d->allocated_last ||
                     s->reserved_peak_bytes < d->reserved_last;
            d->allocated_last = s->allocated_peak_bytes;
            d->reserved_last = s->reserved_peak_bytes;
            if (s->allocated_peak_bytes > d->allocated_peak)
                d->allocated_peak = s->allocated_peak_bytes;
            if (s->reserved_peak_bytes > d->reserved_peak)
                d->reserved_peak = s->reserved_peak_bytes;
        }
        G.readings++;
        G.resets += (uint64_t)reset;
    }
    pthread_mutex_unlock(&G.mu);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return 0;
}

void gpu_memory_reset(int forked)
{
    if (forked) /* a thread of the parent may have held it; none of its threads is here */
        pthread_mutex_init(&G.mu, NULL);
    pthread_mutex_lock(&G.mu);
    G.count = 0;
    G.readings = G.resets = 0;
    G.error[0] = 0;
    pthread_mutex_unlock(&G.mu);
}

void gpu_memory_take(store_file *f)
{
    pthread_mutex_lock(&G.mu);
    if (G.readings || G.error[0]) {
        for (uint32_t i = 0; i < G.count; i++) {
            const gm_device *d = &G.dev[i];
            memcpy(out_uuid[i], d->uuid, sizeof d->uuid);
            memcpy(out_name[i], d->name, sizeof d->name);
            out_dev[i] = (store_gpu_memory_device){d->index, out_uuid[i], out_name[i],
                                                   d->allocated_peak, d->reserved_peak};
        }
        memcpy(out_error, G.error, sizeof G.error);
        out = (store_gpu_memory){G.readings, G.resets, out_error, out_dev, G.count};
        f->gpu_memory = &out;
    }
    pthread_mutex_unlock(&G.mu);
}
