/* Phases with GPU time (lapse.h, LAPSE_GPU_TIME / LAPSE_GPU_SYNC): the span, the
 * CUDA events of collect/cuda_events around it, and the figure into its node. */
#include "lapse.h"

#include "../collect/cuda_events.h"
#include "../core/core.h"
#include "../core/names.h"
#include "gpu_phase.h"

#include <stdio.h>
#include <string.h>

#define GPU_TIME_MISSING (1u << 31) /* p->flags: its events could not begin */

static char first_why[256]; /* the first reason a GPU time was missing */
static int why_taken;

const char *session_gpu_time_missing(void)
{
    return __atomic_load_n(&why_taken, __ATOMIC_ACQUIRE) == 2 ? first_why : "";
}

static void missing(const char *why)
{
    int expected = 0;
    if (__atomic_compare_exchange_n(&why_taken, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        snprintf(first_why, sizeof first_why, "%s", why && *why ? why : "unknown");
        __atomic_store_n(&why_taken, 2, __ATOMIC_RELEASE);
    }
}

void session_gpu_time_reset(void)
{
    first_why[0] = 0;
    __atomic_store_n(&why_taken, 0, __ATOMIC_RELEASE);
}

void lapse_gpu_time_keyed(const void *key, int64_t ns, const char *why)
{
    if (!lapse_enabled_)
        return;
    if (ns < 0)
        missing(why);
    core_gpu_time(key, ns);
}

void lapse_gpu_phase_begin(lapse_gpu_phase *p, const char *name, unsigned flags)
{
    memset(p, 0, sizeof *p);
    if (!lapse_enabled_)
        return;
    char why[256];
    p->flags = flags;
    if (flags & LAPSE_GPU_SYNC)
        (void)cuda_device_sync(why, sizeof why); /* without a context: nothing to wait for */
    p->token = core_span_begin(names_intern(name));
    if (p->token && (flags & LAPSE_GPU_TIME)) {
        cuda_events e;
        if (cuda_events_begin(&e, why, sizeof why) == 0) {
            p->events[0] = e.start;
            p->events[1] = e.stop;
        } else {
            p->flags = (p->flags & ~LAPSE_GPU_TIME) | GPU_TIME_MISSING; /* said at the end */
            missing(why);
        }
    }
}

void lapse_gpu_phase_end(lapse_gpu_phase *p)
{
    if (!p->token)
        return;
    char why[256];
    if (p->flags & LAPSE_GPU_TIME) {
        cuda_events e = {p->events[0], p->events[1]};
        uint64_t ns;
        if (cuda_events_end(&e, &ns, why, sizeof why) == 0)
            core_gpu_time(NULL, (int64_t)ns);
        else
            lapse_gpu_time_keyed(NULL, -1, why);
    } else if (p->flags & GPU_TIME_MISSING) {
        core_gpu_time(NULL, -1);
    }
    if (p->flags & LAPSE_GPU_SYNC)
        (void)cuda_device_sync(why, sizeof why);
    core_span_end_token(p->token);
    p->token = 0;
}
