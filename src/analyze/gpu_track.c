#include "gpu_track.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define COPY_KINDS 11u
/* a memcpy's slice name; its direction is what follows "memcpy " */
static const char *const copy_labels[COPY_KINDS] = {
    "memcpy ?",    "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
    "memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};

const char *gpu_copy_kind_name(uint32_t copy_kind)
{
    return copy_labels[copy_kind < COPY_KINDS ? copy_kind : 0] + 7;
}

typedef struct op_key {
    uint64_t pair; /* device << 32 | stream */
    uint64_t start, end;
    uint32_t record, track;
} op_key;

static int cmp_key(const op_key *x, const op_key *y)
{
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->record > y->record) - (x->record < y->record);
}

static int cmp_pair(const void *a, const void *b)
{
    const op_key *x = a, *y = b;
    if (x->pair != y->pair)
        return x->pair < y->pair ? -1 : 1;
    return cmp_key(x, y);
}

static int cmp_track(const void *a, const void *b)
{
    const op_key *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return cmp_key(x, y);
}

/* ops with a launching thread, by (thread, launch) */
static int cmp_launch(const void *a, const void *b, void *ctx)
{
    const tl_gpu_op *ops = ctx;
    const tl_gpu_op *x = &ops[*(const uint32_t *)a], *y = &ops[*(const uint32_t *)b];
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->launch_ns != y->launch_ns)
        return x->launch_ns < y->launch_ns ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The names: the section's (kernels), one per copy direction, then "memset". */
static int build_names(const store_gpu_activity *g, timeline_file *t)
{
    uint32_t n = g->name_count + COPY_KINDS + 1u;
    if (!(t->gpu_names = malloc(n * sizeof *t->gpu_names)))
        return -ENOMEM;
    for (uint32_t i = 0; i < g->name_count; i++)
        t->gpu_names[i] = g->names[i] ? g->names[i] : "";
    for (uint32_t k = 0; k < COPY_KINDS; k++)
        t->gpu_names[g->name_count + k] = copy_labels[k];
    t->gpu_names[g->name_count + COPY_KINDS] = "memset";
    t->gpu_name_count = n;
    return 0;
}

/* Whether span s has ended at t (t >= its begin): exact, where begin + dur would overflow
 * (the times of a file no writer makes). */
static int ended_at(const tl_span *s, int64_t t)
{
    return (uint64_t)t - (uint64_t)s->begin_ns >= s->dur_ns;
}

/* Each op's launching span's bar: on its thread, the innermost span open at the launch
 * whose path is the op's (a sweep over the thread's spans, by start, with the stack of
 * those open). */
static int find_spans(timeline_file *t)
{
    uint32_t n = 0, *idx = malloc(((size_t)t->gpu_op_count + 1) * sizeof *idx);
    uint64_t *open = NULL;
    uint32_t open_cap = 0;
    if (!idx)
        return -ENOMEM;
    for (uint32_t i = 0; i < t->gpu_op_count; i++)
        if (t->gpu_ops[i].thread != UINT32_MAX && t->gpu_ops[i].path != UINT32_MAX)
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_launch, t->gpu_ops);
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc;) {
        uint32_t th = t->gpu_ops[idx[i]].thread, open_n = 0;
        const tl_span *s = t->spans + t->threads[th].first;
        uint64_t count = t->threads[th].count, next = 0;
        for (; i < n && t->gpu_ops[idx[i]].thread == th; i++) {
            tl_gpu_op *op = &t->gpu_ops[idx[i]];
            for (; next < count && s[next].begin_ns <= op->launch_ns; next++) {
                while (open_n && ended_at(&s[open[open_n - 1]], s[next].begin_ns))
                    open_n--;
                if (open_n == open_cap) {
                    uint32_t cap = open_cap ? open_cap * 2 : 16;
                    uint64_t *o = realloc(open, cap * sizeof *o);
                    if (!o) {
                        rc = -ENOMEM;
                        break;
                    }
                    open = o;
                    open_cap = cap;
                }
                open[open_n++] = next;
            }
            if (rc)
                break;
            for (uint32_t k = open_n; k-- > 0;) {
                const tl_span *o = &s[open[k]];
                if (!ended_at(o, op->launch_ns) && o->path == op->path) {
                    op->span = open[k];
                    break;
                }
            }
        }
    }
    free(open);
    free(idx);
    return rc;
}

int gpu_track_build(const store_file *f, uint64_t base_real_ns, timeline_file *t)
{
    const store_gpu_activity *g = f->activity;
    if (!g->count)
        return 0;
    uint64_t off = timeline_clock_offset(f) - base_real_ns;
    op_key *keys = malloc(g->count * sizeof *keys);
    uint32_t *node_path = malloc(((size_t)f->node_count + 1) * sizeof *node_path);
    t->gpu_ops = malloc(g->count * sizeof *t->gpu_ops);
    t->gpu_tracks = calloc(TL_GPU_TRACKS, sizeof *t->gpu_tracks);
    int rc = -ENOMEM;
    if (!keys || !node_path || !t->gpu_ops || !t->gpu_tracks || build_names(g, t))
        goto out;
    for (uint32_t i = 0; i < f->node_count; i++)
        node_path[i] = UINT32_MAX - 2; /* not asked yet */
    for (uint32_t i = 0; i < g->count; i++) {
        const store_gpu_record *r = &g->records[i];
        keys[i] = (op_key){(uint64_t)r->device << 32 | r->stream, r->start_ns, r->end_ns, i, 0};
    }
    /* tracks: the distinct pairs in order, those past the bound sharing the last */
    qsort(keys, g->count, sizeof *keys, cmp_pair);
    uint32_t ntracks = 0;
    for (uint32_t i = 0; i < g->count; i++) {
        if (!i || keys[i].pair != keys[i - 1].pair) {
            if (ntracks < TL_GPU_TRACKS) {
                tl_gpu_track *tr = &t->gpu_tracks[ntracks++];
                tr->device = (uint32_t)(keys[i].pair >> 32);
                tr->stream = (uint32_t)keys[i].pair;
            } else {
                t->gpu_tracks[TL_GPU_TRACKS - 1].more++;
            }
        }
        keys[i].track = ntracks - 1;
    }
    if (t->gpu_tracks[TL_GPU_TRACKS - 1].more)
        qsort(keys, g->count, sizeof *keys, cmp_track);
    t->gpu_track_count = ntracks;
    uint64_t row_end[TL_GPU_ROWS];
    for (uint32_t i = 0; i < g->count; i++) {
        const store_gpu_record *r = &g->records[keys[i].record];
        tl_gpu_track *tr = &t->gpu_tracks[keys[i].track];
        if (!tr->count) {
            tr->first = i;
            tr->rows = 0;
        }
        tr->count++;
        /* the first row free at its start, else (out of rows) the one that ends first */
        uint64_t end = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
        uint32_t row = 0;
        while (row < tr->rows && row_end[row] > r->start_ns)
            row++;
        if (row == tr->rows && tr->rows < TL_GPU_ROWS) {
            row_end[tr->rows++] = end;
        } else if (row == tr->rows) {
            row = 0;
            for (uint32_t k = 1; k < TL_GPU_ROWS; k++)
                if (row_end[k] < row_end[row])
                    row = k;
        }
        if (end > row_end[row])
            row_end[row] = end;
        tl_gpu_op *op = &t->gpu_ops[i];
        *op = (tl_gpu_op){.begin_ns = (int64_t)(r->start_ns + off),
                          .dur_ns = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0,
                          .kind = r->kind, .row = row, .bytes = r->bytes,
                          .thread = UINT32_MAX, .path = UINT32_MAX, .span = UINT64_MAX};
        op->name = r->kind == STORE_GPU_MEMCPY ? g->name_count + (r->copy_kind < COPY_KINDS ? r->copy_kind : 0)
                   : r->kind == STORE_GPU_MEMSET ? g->name_count + COPY_KINDS
                   : r->name < g->name_count     ? r->name
                                                 : 0;
        if (r->node == STORE_GPU_NO_NODE || !r->launch_ns || r->node >= f->node_count ||
            f->nodes[r->node].thread >= t->thread_count)
            continue; /* launch not seen */
        if (node_path[r->node] == UINT32_MAX - 2) /* a thread's root: no span was open */
            node_path[r->node] = f->nodes[r->node].parent < 0 ? UINT32_MAX
                                                              : timeline_node_path(t, f, r->node);
        if (node_path[r->node] == UINT32_MAX - 1)
            goto out;
        op->thread = f->nodes[r->node].thread;
        op->path = node_path[r->node];
        op->launch_ns = (int64_t)(r->launch_ns + off);
        op->queue_ns = (int64_t)(r->start_ns - r->launch_ns); /* mod 2^64, as the clock: a file
                                                                  no writer makes may hold times
                                                                  2^63 apart */
    }
    t->gpu_op_count = g->count;
    rc = find_spans(t);
out:
    free(keys);
    free(node_path);
    return rc;
}
