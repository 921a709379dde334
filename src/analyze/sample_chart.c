#include "sample_chart.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int slice_push(sample_chart *l, sample_slice v)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        sample_slice *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        l->items = p;
        l->cap = cap;
    }
    l->items[l->count++] = v;
    return 0;
}

static int cmp_slice(const void *a, const void *b)
{
    const sample_slice *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Stacks of one thread, ordered root first frame by frame, so that stacks with a
 * common prefix are neighbours. */
static int cmp_stack_frames(const void *a, const void *b, void *ctx)
{
    const store_samples *s = ctx;
    const store_sample_stack *x = &s->stacks[*(const uint32_t *)a];
    const store_sample_stack *y = &s->stacks[*(const uint32_t *)b];
    uint32_t n = x->depth < y->depth ? x->depth : y->depth;
    for (uint32_t d = 0; d < n; d++) {
        uint32_t fx = s->frame_ids[x->first + d], fy = s->frame_ids[y->first + d];
        if (fx != fy)
            return fx < fy ? -1 : 1;
    }
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

uint64_t sample_stack_width_ns(const store_samples *s, const store_sample_stack *st)
{
    if (st->weight_ns)
        return st->weight_ns;
    double hz = s->rate_achieved_hz > 0 ? s->rate_achieved_hz : s->rate_asked_hz;
    double ns = hz > 0 ? (double)st->count * 1e9 / hz : (double)st->count;
    return ns < 9.2e18 ? (uint64_t)ns : (uint64_t)INT64_MAX; /* a file's counts may be anything */
}

/* Lays out the stacks idx[0..n), in that order, from ts0 into out. */
static int layout_thread(const store_samples *s, const uint32_t *idx, uint32_t n, int64_t ts0,
                         sample_chart *out)
{
    uint32_t open_cap = 64, open_n = 0;
    uint32_t *open_frame = malloc(open_cap * sizeof *open_frame);
    int64_t *open_ts = malloc(open_cap * sizeof *open_ts);
    int rc = open_frame && open_ts ? 0 : -ENOMEM;
    int64_t cursor = ts0;
    for (uint32_t k = 0; k <= n && rc == 0; k++) {
        const store_sample_stack *st = k < n ? &s->stacks[idx[k]] : NULL;
        uint32_t depth = st ? st->depth : 0, common = 0;
        while (common < open_n && common < depth &&
               open_frame[common] == s->frame_ids[st->first + common])
            common++;
        while (open_n > common && rc == 0) { /* close what this stack does not share */
            open_n--;
            /* cursor never goes back: the difference, in unsigned arithmetic, is exact */
            rc = slice_push(out, (sample_slice){open_ts[open_n],
                                                (uint64_t)cursor - (uint64_t)open_ts[open_n],
                                                open_n, open_frame[open_n]});
        }
        if (!st || rc)
            break;
        if (depth > open_cap) {
            uint32_t cap = depth;
            uint32_t *f = realloc(open_frame, cap * sizeof *f);
            if (f)
                open_frame = f;
            int64_t *t = f ? realloc(open_ts, cap * sizeof *t) : NULL;
            if (t)
                open_ts = t;
            if (!f || !t) {
                rc = -ENOMEM;
                break;
            }
            open_cap = cap;
        }
        for (; open_n < depth; open_n++) {
            open_frame[open_n] = s->frame_ids[st->first + open_n];
            open_ts[open_n] = cursor;
        }
        uint64_t width = sample_stack_width_ns(s, st);
        if (__builtin_add_overflow(cursor, width > INT64_MAX ? INT64_MAX : (int64_t)width, &cursor))
            cursor = INT64_MAX; /* held at the end of time, not wrapped */
    }
    free(open_frame);
    free(open_ts);
    return rc;
}

int sample_chart_layout(const store_samples *s, uint32_t *idx, uint32_t n, int64_t ts0,
                        sample_chart *out)
{
    qsort_r(idx, n, sizeof *idx, cmp_stack_frames, (void *)s);
    out->count = 0;
    int rc = layout_thread(s, idx, n, ts0, out);
    if (!rc)
        qsort(out->items, out->count, sizeof *out->items, cmp_slice);
    return rc;
}

void sample_chart_free(sample_chart *c)
{
    free(c->items);
    memset(c, 0, sizeof *c);
}
