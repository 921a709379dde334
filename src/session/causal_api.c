/* lapse_signal and lapse_wait_on (lapse.h): the core's causal records (core/causal.h),
 * and the wait's span "wait:NAME". */
#include "lapse.h"

#include "../core/causal.h"
#include "../core/core.h"
#include "../core/names.h"

#include <stdio.h>
#include <string.h>

void lapse_signal(const char *name)
{
    if (lapse_enabled_ && name)
        causal_signal(names_intern(name));
}

lapse_wait lapse_wait_on_keyed(const void *key, const char *name)
{
    lapse_wait w = {0, 0, 0};
    if (!lapse_enabled_ || !name)
        return w;
    char span[256];
    snprintf(span, sizeof span, "wait:%s", name);
    w.gen = __atomic_load_n(&core_gen, __ATOMIC_ACQUIRE);
    w.record = causal_wait_begin(names_intern(name));
    w.span = core_span_begin_keyed(key, names_intern(span));
    return w;
}

void lapse_wait_done_keyed(const void *key, lapse_wait *w)
{
    if (!w || (!w->span && !w->record))
        return;
    if (w->gen == __atomic_load_n(&core_gen, __ATOMIC_ACQUIRE))
        causal_wait_end(w->record);
    if (w->span)
        core_span_end_keyed(key, w->span);
    w->span = 0;
    w->record = 0;
}

lapse_wait lapse_wait_on(const char *name) { return lapse_wait_on_keyed(NULL, name); }

void lapse_wait_done(lapse_wait *w) { lapse_wait_done_keyed(NULL, w); }
