#include "timeline.h"
#include "gpu_track.h"
#include "u64_map.h"

#include "lapse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t timeline_clock_offset(const store_file *f)
{
    return f->meta.anchor_real_ns - f->meta.anchor_mono_ns;
}

/* (parent path + 1, name) + 1 -> path (u64_map's keys are never UINT64_MAX) */
static uint64_t path_key(uint32_t parent, uint32_t name)
{
    return ((uint64_t)(parent + 1u) << 32 | name) + 1u;
}

/* parent: a path, or UINT32_MAX for none; the name's text is prefix + "/" + name. */
static uint32_t intern_path(timeline_file *t, u64_map *ix, uint32_t parent, uint32_t name,
                            const char *text)
{
    if (u64_map_full(ix) && u64_map_grow(ix))
        return UINT32_MAX;
    uint64_t key = path_key(parent, name);
    int found;
    uint32_t h = u64_map_slot(ix, key, &found);
    if (found)
        return ix->vals[h];
    if (t->path_count == t->path_cap) {
        uint32_t cap = t->path_cap ? t->path_cap * 2 : 16;
        char **paths = realloc(t->paths, cap * sizeof *paths);
        if (!paths)
            return UINT32_MAX;
        t->paths = paths;
        t->path_cap = cap;
    }
    const char *pre = parent == UINT32_MAX ? "" : t->paths[parent];
    size_t pl = strlen(pre), nl = strlen(text);
    char *s = malloc(pl + nl + 2);
    if (!s)
        return UINT32_MAX;
    memcpy(s, pre, pl);
    size_t k = pl;
    if (pl)
        s[k++] = '/';
    memcpy(s + k, text, nl + 1);
    t->paths[t->path_count] = s;
    ix->keys[h] = key;
    ix->vals[h] = t->path_count;
    ix->used++;
    return t->path_count++;
}

/* By thread, then start, then depth (a parent before what it holds), then the
 * longer first (timeline_span_order). */
static int cmp_span(const void *a, const void *b, void *ctx)
{
    const store_span *spans = ctx;
    const store_span *x = &spans[*(const uint64_t *)a], *y = &spans[*(const uint64_t *)b];
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->begin_ns != y->begin_ns)
        return x->begin_ns < y->begin_ns ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

void timeline_span_order(const store_file *f, uint64_t *order)
{
    for (uint64_t i = 0; i < f->span_count; i++)
        order[i] = i;
    qsort_r(order, (size_t)f->span_count, sizeof *order, cmp_span, (void *)f->spans);
}

/* The path of a thread's root: its name when the file nests spans so, else none. */
static uint32_t root_path(timeline_file *t, u64_map *ix, const store_file *f, uint32_t thread)
{
    if (!f->meta.thread_names)
        return UINT32_MAX;
    const char *tn = *t->threads[thread].name ? t->threads[thread].name : "(unnamed thread)";
    uint32_t root = intern_path(t, ix, UINT32_MAX, UINT32_MAX - 1 - thread, tn);
    return root == UINT32_MAX ? UINT32_MAX - 1 : root;
}

uint32_t timeline_node_path(timeline_file *t, const store_file *f, uint32_t node)
{
    u64_map *ix = t->index;
    if (node >= f->node_count)
        return UINT32_MAX;
    /* its depth: the chain up to the thread's root (longer than node_count: a hostile cycle) */
    uint32_t n = 0, at = node;
    for (; f->nodes[at].parent >= 0; n++) {
        if (n == f->node_count || (uint32_t)f->nodes[at].parent >= f->node_count ||
            f->nodes[at].name >= f->name_count)
            return UINT32_MAX;
        at = (uint32_t)f->nodes[at].parent;
    }
    if (f->nodes[at].thread >= t->thread_count)
        return UINT32_MAX;
    uint32_t *chain = malloc((n ? n : 1) * sizeof *chain);
    if (!chain)
        return UINT32_MAX - 1;
    at = node;
    for (uint32_t k = n; k-- > 0; at = (uint32_t)f->nodes[at].parent)
        chain[k] = at;
    uint32_t p = root_path(t, ix, f, f->nodes[at].thread);
    for (uint32_t k = 0; k < n && p != UINT32_MAX - 1; k++) {
        const store_node *x = &f->nodes[chain[k]];
        p = intern_path(t, ix, p, x->name, f->names[x->name]);
        if (p == UINT32_MAX)
            p = UINT32_MAX - 1;
    }
    free(chain);
    return p;
}

typedef struct open_span {
    uint64_t end_ns;
    uint32_t depth, path;
} open_span;

void timeline_free(timeline_file *t)
{
    free(t->gpu_ops);
    free(t->gpu_tracks);
    free(t->gpu_names);
    for (uint32_t i = 0; i < t->chart_count; i++)
        free(t->charts[i].slices);
    free(t->charts);
    free(t->proc);
    for (uint32_t i = 0; i < t->path_count; i++)
        free(t->paths[i]);
    free(t->paths);
    free(t->spans);
    free(t->threads);
    memset(t, 0, sizeof *t);
}

static int cmp_stack_thread(const void *a, const void *b, void *ctx)
{
    const store_samples *s = ctx;
    const store_sample_stack *x = &s->stacks[*(const uint32_t *)a];
    const store_sample_stack *y = &s->stacks[*(const uint32_t *)b];
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The charts of f's samples: per (pid, tid), its stacks with a frame laid out. */
static int build_charts(const store_samples *s, uint64_t base_real_ns, timeline_file *t)
{
    uint32_t n = 0, *idx = malloc(((size_t)s->stack_count + 1) * sizeof *idx);
    t->charts = calloc((size_t)s->stack_count + 1, sizeof *t->charts);
    if (!idx || !t->charts) {
        free(idx);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < s->stack_count; i++)
        if (s->stacks[i].depth)
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_stack_thread, (void *)s);
    int64_t ts0 = (int64_t)(s->start_real_ns - base_real_ns);
    int rc = 0;
    for (uint32_t i = 0; i < n && !rc;) {
        const store_sample_stack *first = &s->stacks[idx[i]];
        uint32_t j = i;
        while (j < n && s->stacks[idx[j]].pid == first->pid && s->stacks[idx[j]].tid == first->tid)
            j++;
        sample_chart c = {0};
        rc = sample_chart_layout(s, idx + i, j - i, ts0, &c);
        if (rc) {
            sample_chart_free(&c);
            break;
        }
        t->charts[t->chart_count++] = (tl_chart){first->pid, first->tid, first->thread_name,
                                                 c.items, c.count};
        i = j;
    }
    free(idx);
    return rc;
}

/* The process sampler's records as points on the run's clock, and their peaks. */
static int build_proc(const store_file *f, uint64_t base_real_ns, timeline_file *t)
{
    const store_proc_samples *ps = &f->proc;
    if (!ps->count)
        return 0;
    if (!(t->proc = malloc(ps->count * sizeof *t->proc)))
        return -ENOMEM;
    /* a file from before the features were recorded read both when it sampled */
    uint32_t features = f->meta.features ? f->meta.features : LAPSE_FEATURE_PROCESS;
    t->proc_rss = !!(features & LAPSE_FEATURE_MEMORY);
    t->proc_io = !!(features & LAPSE_FEATURE_IO);
    uint64_t off = timeline_clock_offset(f) - base_real_ns;
    for (uint32_t i = 0; i < ps->count; i++) {
        proc_point p = proc_track_point(f, i, off);
        t->proc[t->proc_count++] = p;
        if (p.rss_bytes > t->rss_peak)
            t->rss_peak = p.rss_bytes;
        if (p.read_per_s > t->io_peak)
            t->io_peak = p.read_per_s;
        if (p.write_per_s > t->io_peak)
            t->io_peak = p.write_per_s;
    }
    return 0;
}

int timeline_build(const store_file *f, uint64_t base_real_ns, timeline_file *t)
{
    memset(t, 0, sizeof *t);
    uint64_t off = timeline_clock_offset(f);
    uint64_t n = f->span_count;
    uint64_t *order = malloc((n ? n : 1) * sizeof *order);
    open_span *open = NULL;
    uint32_t open_n = 0, open_cap = 0;
    u64_map ix = {0};
    t->spans = malloc((n ? n : 1) * sizeof *t->spans);
    t->threads = calloc(f->thread_count ? f->thread_count : 1, sizeof *t->threads);
    if (!order || !t->spans || !t->threads)
        goto fail;
    t->thread_count = f->thread_count;
    for (uint32_t i = 0; i < f->thread_count; i++) {
        t->threads[i].tid = f->threads[i].tid;
        t->threads[i].name = f->threads[i].name ? f->threads[i].name : "";
    }
    timeline_span_order(f, order);

    int64_t last_end = INT64_MIN;
    uint32_t thread = UINT32_MAX, root = UINT32_MAX;
    uint64_t kept = 0;
    for (uint64_t k = 0; k < n; k++) {
        const store_span *s = &f->spans[order[k]];
        if (s->thread >= f->thread_count || s->name >= f->name_count || s->end_ns < s->begin_ns)
            continue; /* the reader checks these; never index past them */
        if (s->thread != thread) {
            thread = s->thread;
            open_n = 0;
            t->threads[thread].first = kept;
            root = root_path(t, &ix, f, thread); /* as run_model.c nests them */
            if (root == UINT32_MAX - 1)
                goto fail;
        }
        /* close what ended before it began, and what is not shallower than it */
        while (open_n && (open[open_n - 1].end_ns <= s->begin_ns ||
                          open[open_n - 1].depth >= s->depth))
            open_n--;
        uint32_t parent = open_n ? open[open_n - 1].path : root;
        uint32_t path = intern_path(t, &ix, parent, s->name, f->names[s->name]);
        if (path == UINT32_MAX)
            goto fail;
        if (open_n == open_cap) {
            uint32_t cap = open_cap ? open_cap * 2 : 16;
            open_span *o = realloc(open, cap * sizeof *o);
            if (!o)
                goto fail;
            open = o;
            open_cap = cap;
        }
        tl_span *ts = &t->spans[kept++];
        ts->begin_ns = (int64_t)(s->begin_ns + off - base_real_ns);
        ts->dur_ns = s->end_ns - s->begin_ns;
        ts->level = open_n;
        ts->path = path;
        t->threads[thread].count++;
        int64_t end = (int64_t)(s->end_ns + off - base_real_ns);
        if (end > last_end)
            last_end = end;
        open[open_n++] = (open_span){s->end_ns, s->depth, path};
    }
    t->span_count = kept;
    t->dropped = f->meta.timeline_dropped;
    t->dropped_at_ns = kept ? last_end : (int64_t)(f->meta.write_mono_ns + off - base_real_ns);
    if (f->samples && build_charts(f->samples, base_real_ns, t))
        goto fail;
    if (build_proc(f, base_real_ns, t))
        goto fail;
    t->index = &ix;
    int gpu = f->activity ? gpu_track_build(f, base_real_ns, t) : 0;
    t->index = NULL;
    if (gpu)
        goto fail;
    free(order);
    free(open);
    u64_map_free(&ix);
    return 0;
fail:
    free(order);
    free(open);
    u64_map_free(&ix);
    timeline_free(t);
    return -ENOMEM;
}
