#include "snapshot.h"

#include "../core/causal.h"
#include "../core/clock.h"
#include "../core/core.h"
#include "../core/names.h"
#include "../collect/thread_names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void copy_node(store_node *dst, const core_node *src, int32_t base, uint32_t thread)
{
    /* calls first: what it counts is already in the other fields */
    dst->calls = __atomic_load_n(&src->calls, __ATOMIC_ACQUIRE);
    dst->parent = src->parent == UINT32_MAX ? -1 : base + (int32_t)src->parent;
    dst->thread = thread;
    dst->name = src->name;
    dst->depth = src->depth;
    dst->total_ns = src->total_ns;
    dst->child_ns = src->child_ns;
    dst->min_ns = src->min_ns == UINT64_MAX ? 0 : src->min_ns;
    dst->max_ns = src->max_ns;
    dst->folded = src->folded;
    dst->hist = (uint64_t *)src->hist;
    dst->sample_stride = src->sample_stride;
    dst->child_estimated = src->child_estimated;
    dst->cpu_ticks = __atomic_load_n(&src->cpu_ticks, __ATOMIC_RELAXED);
    dst->cpu_wait_ticks = __atomic_load_n(&src->cpu_wait_ticks, __ATOMIC_RELAXED);
    if (dst->cpu_wait_ticks > dst->cpu_ticks) /* the sampler adds ticks first */
        dst->cpu_wait_ticks = dst->cpu_ticks;
    dst->gpu_ns = __atomic_load_n(&src->gpu_ns, __ATOMIC_RELAXED);
    dst->gpu_timed = __atomic_load_n(&src->gpu_timed, __ATOMIC_RELAXED);
    dst->gpu_untimed = __atomic_load_n(&src->gpu_untimed, __ATOMIC_RELAXED);
}

static int take_timeline(store_file *f)
{
    if (!core_timeline || core_cfg.max_spans == 0)
        return 0;
    uint64_t used = __atomic_load_n(&core_timeline_cursor, __ATOMIC_ACQUIRE);
    if (used > core_cfg.max_spans)
        used = core_cfg.max_spans;
    if (used == 0)
        return 0;
    f->spans = malloc(used * sizeof(store_span));
    if (!f->spans)
        return -ENOMEM;
    uint64_t n = 0;
    for (uint64_t i = 0; i < used; i++) {
        const core_span_record *r = &core_timeline[i];
        uint64_t end = __atomic_load_n(&r->end, __ATOMIC_ACQUIRE);
        if (end == 0 || r->thread >= f->thread_count)
            continue; /* reserved, not yet written */
        store_span *s = &f->spans[n++];
        s->thread = r->thread;
        s->name = r->name;
        s->depth = r->depth;
        s->begin_ns = core_ticks_to_mono_ns(r->begin);
        s->end_ns = core_ticks_to_mono_ns(end);
        if (s->end_ns < s->begin_ns)
            s->end_ns = s->begin_ns;
    }
    f->span_count = n;
    return 0;
}

/* The signals and the completed waits recorded so far (a wait still open is left for
 * a later write), on CLOCK_MONOTONIC. */
static int take_causal(store_file *f)
{
    uint64_t used = __atomic_load_n(&causal_cursor, __ATOMIC_ACQUIRE);
    f->causal_dropped = __atomic_load_n(&causal_dropped, __ATOMIC_RELAXED);
    if (used > CAUSAL_MAX_RECORDS)
        used = CAUSAL_MAX_RECORDS;
    if (used == 0 || !causal_records)
        return 0;
    f->causal = malloc(used * sizeof(store_causal));
    if (!f->causal)
        return -ENOMEM;
    uint32_t n = 0;
    for (uint64_t i = 0; i < used; i++) {
        const causal_record *r = &causal_records[i];
        uint64_t end = __atomic_load_n(&r->end, __ATOMIC_ACQUIRE);
        if (end == 0 || r->thread >= f->thread_count)
            continue; /* reserved, not yet written; or a wait still open */
        store_causal *c = &f->causal[n++];
        c->thread = r->thread;
        c->name = r->name;
        c->kind = r->kind;
        c->begin_ns = core_ticks_to_mono_ns(r->begin);
        c->end_ns = r->kind == CAUSAL_SIGNAL ? c->begin_ns : core_ticks_to_mono_ns(end);
        if (c->end_ns < c->begin_ns)
            c->end_ns = c->begin_ns;
    }
    f->causal_count = n;
    return 0;
}

/* The histogram of the node a thread's pending increment belongs to, copied
 * with that increment applied (see core_thread.hist_pending). */
static void apply_pending(store_file *f, const core_thread *t, uint32_t base, uint32_t count,
                          uint64_t *copy)
{
    const uint64_t *p = __atomic_load_n(&t->hist_pending, __ATOMIC_ACQUIRE);
    const char *first = (const char *)t->nodes;
    if ((const char *)p < first || (const char *)p >= first + (size_t)count * sizeof(core_node))
        return;
    size_t node = (size_t)((const char *)p - first) / sizeof(core_node);
    const core_node *n = &t->nodes[node];
    size_t bucket = (size_t)(p - n->hist);
    if (bucket >= HIST_BUCKETS)
        return;
    memcpy(copy, n->hist, HIST_BUCKETS * sizeof(uint64_t));
    copy[bucket]++;
    f->nodes[base + node].hist = copy;
}

int snapshot_take(store_file *f)
{
    uint32_t name_count = names_count();
    f->names = malloc(name_count * sizeof(char *));
    if (!f->names)
        return -ENOMEM;
    for (uint32_t i = 0; i < name_count; i++)
        f->names[i] = (char *)names_get(i);
    f->name_count = name_count;

    collect_thread_names_refresh();
    core_threads_lock();
    uint32_t threads = core_threads_count();
    uint64_t nodes = 0, counters = 0;
    for (core_thread *t = core_threads_first(); t; t = t->next) {
        nodes += __atomic_load_n(&t->node_count, __ATOMIC_ACQUIRE);
        counters += t->counter_mask + 1u;
    }
    f->threads = calloc(threads ? threads : 1, sizeof(store_thread));
    f->nodes = calloc(nodes ? nodes : 1, sizeof(store_node));
    f->counters = calloc(counters ? counters : 1, sizeof(store_counter));
    f->owned = malloc((size_t)(threads ? threads : 1) * HIST_BUCKETS * sizeof(uint64_t));
    if (!f->threads || !f->nodes || !f->counters || !f->owned) {
        core_threads_unlock();
        return -ENOMEM;
    }
    uint32_t ni = 0, ci = 0, ti = 0;
    for (core_thread *t = core_threads_first(); t && ti < threads; t = t->next, ti++) {
        f->threads[ti].tid = t->tid;
        f->threads[ti].name = t->name;
        uint32_t count = __atomic_load_n(&t->node_count, __ATOMIC_ACQUIRE);
        if (ni + (uint64_t)count > nodes)
            count = (uint32_t)(nodes - ni); /* nodes appeared since we counted */
        int32_t base = (int32_t)ni;
        for (uint32_t i = 0; i < count; i++)
            copy_node(&f->nodes[ni + i], &t->nodes[i], base, ti);
        apply_pending(f, t, ni, count, (uint64_t *)f->owned + (size_t)ti * HIST_BUCKETS);
        for (uint32_t s = 0; s <= t->counter_mask; s++) {
            const core_counter *c = &t->counters[s];
            uint32_t name = __atomic_load_n(&c->name, __ATOMIC_ACQUIRE);
            if (name == 0 || c->node >= count || name >= name_count)
                continue;
            store_counter *dst = &f->counters[ci++];
            dst->node = (uint32_t)base + c->node;
            dst->name = name;
            dst->sum = c->sum;
            dst->updates = c->updates;
        }
        ni += count;
        f->meta.folded_depth += t->folded_depth;
        f->meta.folded_paths += t->folded_paths;
        f->meta.unmatched_ends += t->unmatched_ends;
        f->meta.dropped_counters += t->dropped_counters;
        f->meta.timeline_dropped += t->timeline_dropped;
    }
    f->thread_count = ti;
    f->node_count = ni;
    f->counter_count = ci;
    int rc = take_timeline(f);
    if (rc == 0)
        rc = take_causal(f);
    core_threads_unlock();
    return rc;
}

void snapshot_free(store_file *f)
{
    free(f->names);
    free(f->threads);
    free(f->nodes);
    free(f->counters);
    free(f->spans);
    free(f->causal);
    free(f->owned);
    free(f->proc.records);
    f->proc.records = NULL;
    f->owned = NULL;
    f->names = NULL;
    f->threads = NULL;
    f->nodes = NULL;
    f->counters = NULL;
    f->spans = NULL;
    f->causal = NULL;
}
