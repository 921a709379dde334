#include "hist_window.h"

#include "core/hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t get(const hist_window *w, unsigned i)
{
    switch (w->width) {
    case 1: return ((const uint8_t *)w->c)[i];
    case 2: return ((const uint16_t *)w->c)[i];
    case 4: return ((const uint32_t *)w->c)[i];
    default: return ((const uint64_t *)w->c)[i];
    }
}

/* Copies w's counts into out[lo - w->lo ..], out covering buckets from lo on. */
static void decode_into(const hist_window *w, uint64_t *out, unsigned lo)
{
    for (unsigned i = 0; i < w->n; i++)
        out[w->lo - lo + i] = get(w, i);
}

/* Makes w hold counts[0..n) for buckets lo .. lo + n - 1, each in the fewest bytes
 * that hold the largest. 0 or -ENOMEM (w unchanged). */
static int store(hist_window *w, unsigned lo, unsigned n, const uint64_t *counts)
{
    uint64_t max = 0;
    for (unsigned i = 0; i < n; i++)
        max = counts[i] > max ? counts[i] : max;
    uint8_t width = max <= UINT8_MAX ? 1 : max <= UINT16_MAX ? 2 : max <= UINT32_MAX ? 4 : 8;
    void *c = w->c;
    if (n != w->n || width != w->width) {
        c = malloc((size_t)n * width);
        if (!c)
            return -ENOMEM;
        free(w->c);
    }
    for (unsigned i = 0; i < n; i++)
        switch (width) {
        case 1: ((uint8_t *)c)[i] = (uint8_t)counts[i]; break;
        case 2: ((uint16_t *)c)[i] = (uint16_t)counts[i]; break;
        case 4: ((uint32_t *)c)[i] = (uint32_t)counts[i]; break;
        default: ((uint64_t *)c)[i] = counts[i]; break;
        }
    w->c = c;
    w->lo = (uint16_t)lo;
    w->n = (uint16_t)n;
    w->width = width;
    return 0;
}

/* w's counts of buckets lo .. lo + n - 1 += counts, in place, when w covers them
 * and each sum fits in w's width (the usual merge of a path seen before); 0 when
 * it does not (w unchanged). */
#define ADD_IN_PLACE(type, maxv)                                                    \
    do {                                                                           \
        type *c = (type *)w->c + (lo - w->lo);                                     \
        for (unsigned i = 0; i < n; i++)                                           \
            if (counts[i] > (uint64_t)(maxv) - c[i])                               \
                return 0;                                                          \
        for (unsigned i = 0; i < n; i++)                                           \
            c[i] = (type)(c[i] + counts[i]);                                       \
        return 1;                                                                  \
    } while (0)

static int add_in_place(hist_window *w, unsigned lo, unsigned n, const uint64_t *counts)
{
    if (!w->n || lo < w->lo || lo + n > (unsigned)w->lo + w->n)
        return 0;
    switch (w->width) {
    case 1: ADD_IN_PLACE(uint8_t, UINT8_MAX);
    case 2: ADD_IN_PLACE(uint16_t, UINT16_MAX);
    case 4: ADD_IN_PLACE(uint32_t, UINT32_MAX);
    default: { /* 8 bytes: sums wrap as uint64_t does */
        uint64_t *c = (uint64_t *)w->c + (lo - w->lo);
        for (unsigned i = 0; i < n; i++)
            c[i] += counts[i];
        return 1;
    }
    }
}

int hist_window_add_counts(hist_window *w, unsigned lo, unsigned n, const uint64_t *counts)
{
    if (!n)
        return 0;
    if (lo + n > HIST_BUCKETS)
        return -EINVAL;
    if (add_in_place(w, lo, n, counts))
        return 0;
    unsigned first = lo, end = lo + n; /* the union of both windows: [first, end) */
    if (w->n) {
        if (w->lo < first)
            first = w->lo;
        if ((unsigned)w->lo + w->n > end)
            end = (unsigned)w->lo + w->n;
    }
    uint64_t sum[HIST_BUCKETS]; /* sum[i] counts bucket first + i */
    memset(sum, 0, (size_t)(end - first) * sizeof *sum);
    if (w->n)
        decode_into(w, sum, first);
    for (unsigned i = 0; i < n; i++)
        sum[lo - first + i] += counts[i];
    return store(w, first, end - first, sum);
}

int hist_window_add_dense(hist_window *w, const uint64_t *dense)
{
    if (!dense)
        return 0;
    unsigned lo = 0, hi = HIST_BUCKETS;
    while (lo < HIST_BUCKETS && dense[lo] == 0)
        lo++;
    if (lo == HIST_BUCKETS)
        return 0;
    while (dense[hi - 1] == 0)
        hi--;
    return hist_window_add_counts(w, lo, hi - lo, dense + lo);
}

int hist_window_add(hist_window *w, const hist_window *src)
{
    if (!src->n)
        return 0;
    uint64_t counts[HIST_BUCKETS];
    decode_into(src, counts, src->lo);
    return hist_window_add_counts(w, src->lo, src->n, counts);
}

uint64_t hist_window_count(const hist_window *w)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < w->n; i++)
        n += get(w, i);
    return n;
}

void hist_window_to_dense(const hist_window *w, uint64_t *dense)
{
    memset(dense, 0, HIST_BUCKETS * sizeof *dense);
    decode_into(w, dense, 0);
}

void hist_window_quantiles(const hist_window *w, const double *q, size_t nq, double *out)
{
    uint64_t counts[HIST_BUCKETS], n = 0;
    for (unsigned i = 0; i < w->n; i++)
        n += counts[i] = get(w, i);
    for (size_t i = 0; i < nq; i++)
        out[i] = hist_quantile_window(counts, w->lo, w->n, n, q[i]);
}

void hist_window_free(hist_window *w)
{
    free(w->c);
    memset(w, 0, sizeof *w);
}

void hist_window_clamp(double *out, size_t nq, uint64_t lo, uint64_t hi)
{
    if (lo > hi)
        return;
    for (size_t i = 0; i < nq; i++) {
        if (out[i] < (double)lo)
            out[i] = (double)lo;
        if (out[i] > (double)hi)
            out[i] = (double)hi;
    }
}
