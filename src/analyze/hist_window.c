#include "hist_window.h"

#include "core/hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Makes w cover [lo, hi] (inclusive), keeping its counts. */
static int cover(hist_window *w, unsigned lo, unsigned hi)
{
    if (w->n) {
        unsigned wlo = w->lo, whi = (unsigned)w->lo + w->n - 1u;
        if (lo >= wlo && hi <= whi)
            return 0;
        if (wlo < lo)
            lo = wlo;
        if (whi > hi)
            hi = whi;
    }
    size_t n = (size_t)(hi - lo + 1u);
    uint64_t *c = calloc(n, sizeof *c);
    if (!c)
        return -ENOMEM;
    if (w->n)
        memcpy(c + (w->lo - lo), w->c, (size_t)w->n * sizeof *c);
    free(w->c);
    w->c = c;
    w->lo = (uint16_t)lo;
    w->n = (uint16_t)n;
    return 0;
}

/* OR of 8 counts: branch-free, so the scan below runs at memory speed. */
static inline uint64_t any8(const uint64_t *p)
{
    return p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] | p[7];
}

int hist_window_add_dense(hist_window *w, const uint64_t *dense)
{
    if (!dense)
        return 0;
    _Static_assert(HIST_BUCKETS % 8 == 0, "buckets come in chunks of 8");
    unsigned lo = 0, hi = HIST_BUCKETS; /* find the chunks first, then the buckets */
    while (lo < HIST_BUCKETS && !any8(dense + lo))
        lo += 8;
    if (lo == HIST_BUCKETS)
        return 0;
    while (!any8(dense + hi - 8))
        hi -= 8;
    while (dense[lo] == 0)
        lo++;
    while (dense[hi - 1] == 0)
        hi--;
    if (cover(w, lo, hi - 1u))
        return -ENOMEM;
    uint64_t *c = w->c + (lo - w->lo);
    for (unsigned b = lo; b < hi; b++)
        *c++ += dense[b];
    return 0;
}

int hist_window_add(hist_window *w, const hist_window *src)
{
    if (!src->n)
        return 0;
    if (cover(w, src->lo, (unsigned)src->lo + src->n - 1u))
        return -ENOMEM;
    uint64_t *c = w->c + (src->lo - w->lo);
    for (unsigned i = 0; i < src->n; i++)
        c[i] += src->c[i];
    return 0;
}

uint64_t hist_window_count(const hist_window *w)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < w->n; i++)
        n += w->c[i];
    return n;
}

void hist_window_to_dense(const hist_window *w, uint64_t *dense)
{
    memset(dense, 0, HIST_BUCKETS * sizeof *dense);
    if (w->n)
        memcpy(dense + w->lo, w->c, (size_t)w->n * sizeof *dense);
}

void hist_window_quantiles(const hist_window *w, const double *q, size_t nq, double *out)
{
    uint64_t n = hist_window_count(w);
    for (size_t i = 0; i < nq; i++)
        out[i] = hist_quantile_window(w->c, w->lo, w->n, n, q[i]);
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
