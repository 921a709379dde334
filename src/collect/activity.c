/* The ACTIVITY collector behind the collector interface (collector.h): CUPTI's
 * kernels, copies and sets (cupti.c) into the file's GPU_ACTIVITY section, each
 * record's (thread, node) made the file's node index. */
#include "collector.h"
#include "cupti.h"

#include "lapse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the last take handed to the file (valid until the next take): the writer
 * takes it under the session's write lock, one at a time. */
static struct {
    store_gpu_activity g;
    store_gpu_record *records;
    uint32_t cap;
    uint32_t *base, *count; /* per thread of the file: its first node, its nodes */
    uint32_t threads_cap;
    cupti_taken t;
} A;

static int activity_start(const collect_config *cfg, char *why, size_t why_len)
{
    (void)cfg;
    if (cupti_start() == 0)
        return 0;
    snprintf(why, why_len, "%s", cupti_why());
    /* a machine without a GPU has nothing to report: absent, no caveat */
    return cupti_state() == CUPTI_NO_DEVICE ? -ENOENT : -EIO;
}

static int grow(void **p, uint32_t *cap, uint32_t want, size_t size)
{
    if (want <= *cap)
        return 0;
    void *n = realloc(*p, (size_t)want * size);
    if (!n)
        return -1;
    *p = n;
    *cap = want;
    return 0;
}

static int activity_take(store_file *f)
{
    cupti_taken_free(&A.t);
    if (cupti_take(&A.t) != 0)
        return -1;
    uint32_t threads_cap = A.threads_cap;
    if (grow((void **)&A.records, &A.cap, A.t.count + 1u, sizeof *A.records) ||
        grow((void **)&A.base, &threads_cap, f->thread_count + 1u, sizeof *A.base) ||
        grow((void **)&A.count, &A.threads_cap, f->thread_count + 1u, sizeof *A.count))
        return -1;
    /* each thread's nodes are contiguous, its root (parent -1) first */
    memset(A.count, 0, (f->thread_count + 1u) * sizeof *A.count);
    for (uint32_t i = 0; i < f->node_count; i++) {
        uint32_t t = f->nodes[i].thread;
        if (t < f->thread_count && A.count[t]++ == 0)
            A.base[t] = i;
    }
    for (uint32_t i = 0; i < A.t.count; i++) {
        const cupti_activity *a = &A.t.records[i];
        store_gpu_record *r = &A.records[i];
        *r = (store_gpu_record){a->kind, a->copy_kind, a->device, a->stream, a->name,
                                STORE_GPU_NO_NODE, a->start_ns, a->end_ns, a->bytes,
                                a->launch_ns};
        if (a->thread < f->thread_count && a->node < A.count[a->thread])
            r->node = A.base[a->thread] + a->node;
        else
            r->launch_ns = 0; /* not seen: no launch to point from */
    }
    static char *no_names[] = {""};
    A.g = (store_gpu_activity){A.t.state == CUPTI_COLLECTING ? STORE_GPU_COLLECTED : STORE_GPU_MISSING,
                               (char *)A.t.why, A.t.dropped,
                               A.t.name_count ? A.t.names : no_names,
                               A.t.name_count ? A.t.name_count : 1u, A.records, A.t.count};
    f->activity = &A.g;
    cupti_pause_record p;
    cupti_pauses(&p);
    f->meta.activity_pauses = p.count;
    f->meta.activity_paused_ns = p.paused_ns;
    f->meta.activity_pause_from_ns = p.first_ns;
    f->meta.activity_pause_to_ns = p.last_end_ns;
    return 0;
}

static void activity_stop(void) { cupti_stop(); }

static void activity_fork_child(void) { cupti_fork_child(); }

const collector collect_activity = {"activity", LAPSE_FEATURE_ACTIVITY, activity_start, NULL,
                                    activity_take, activity_stop, activity_fork_child, {NULL, NULL}};
