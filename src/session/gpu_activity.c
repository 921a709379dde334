#include "gpu_activity.h"

#include "../collect/cupti.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct taken_gpu {
    store_gpu_activity g;
    cupti_taken t;
} taken_gpu;

int gpu_activity_take(store_file *f)
{
    taken_gpu *k = calloc(1, sizeof *k);
    if (!k)
        return -ENOMEM;
    int rc = cupti_take(&k->t);
    if (rc == 0 && k->t.state == CUPTI_OFF) { /* the collector never started: no section */
        free(k);
        return 0;
    }
    /* each thread's nodes are contiguous, its root (parent -1) first */
    uint32_t *base = calloc(f->thread_count + 1u, sizeof *base);
    uint32_t *count = calloc(f->thread_count + 1u, sizeof *count);
    k->g.records = calloc(k->t.count + 1u, sizeof *k->g.records);
    if (rc || !base || !count || !k->g.records) {
        free(base);
        free(count);
        free(k->g.records);
        cupti_taken_free(&k->t);
        free(k);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < f->node_count; i++) {
        uint32_t t = f->nodes[i].thread;
        if (t < f->thread_count && count[t]++ == 0)
            base[t] = i;
    }
    store_gpu_activity *g = &k->g;
    g->state = k->t.state == CUPTI_COLLECTING  ? STORE_GPU_COLLECTED
               : k->t.state == CUPTI_NO_DEVICE ? STORE_GPU_NO_DEVICE
                                               : STORE_GPU_MISSING;
    g->note = (char *)k->t.why;
    g->dropped = k->t.dropped;
    static char *empty_names[] = {""};
    g->names = k->t.name_count ? k->t.names : empty_names;
    g->name_count = k->t.name_count ? k->t.name_count : 1;
    for (uint32_t i = 0; i < k->t.count; i++) {
        const cupti_activity *a = &k->t.records[i];
        store_gpu_record *r = &g->records[i];
        *r = (store_gpu_record){a->kind, a->copy_kind, a->device, a->stream, a->name,
                                STORE_GPU_NO_NODE, a->start_ns, a->end_ns, a->bytes,
                                a->launch_ns};
        if (a->thread < f->thread_count && a->node < count[a->thread])
            r->node = base[a->thread] + a->node;
    }
    g->count = k->t.count;
    free(base);
    free(count);
    f->activity = g; /* the first member: freed through it */
    return 0;
}

void gpu_activity_free(store_file *f)
{
    taken_gpu *k = (taken_gpu *)f->activity;
    if (!k)
        return;
    free(k->g.records);
    cupti_taken_free(&k->t);
    free(k);
    f->activity = NULL;
}
