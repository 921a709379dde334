#include "hist.h"

#include <string.h>

uint64_t hist_bucket_low(unsigned b)
{
    if (b < HIST_EXACT)
        return b;
    unsigned e = (b - HIST_EXACT) / 8u + 4u;
    uint64_t sub = (b - HIST_EXACT) % 8u;
    return (8u + sub) << (e - HIST_SUB_BITS);
}

uint64_t hist_bucket_width(unsigned b)
{
    if (b < HIST_EXACT)
        return 1;
    unsigned e = (b - HIST_EXACT) / 8u + 4u;
    return (uint64_t)1 << (e - HIST_SUB_BITS);
}

uint64_t hist_count(const uint64_t *h)
{
    uint64_t n = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++)
        n += h[b];
    return n;
}

double hist_quantile_window(const uint64_t *counts, unsigned lo, unsigned n, uint64_t total,
                            double q)
{
    if (total == 0)
        for (unsigned i = 0; i < n; i++)
            total += counts[i];
    if (total == 0)
        return 0.0;
    if (q < 0.0)
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    /* 1-based rank of the order statistic we want */
    double rank = q * (double)total;
    if (rank < 1.0)
        rank = 1.0;
    uint64_t seen = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t c = counts[i];
        if (c == 0)
            continue;
        unsigned b = lo + i;
        if ((double)(seen + c) >= rank) {
            if (b < HIST_EXACT)
                return (double)b;
            double within = (rank - (double)seen - 0.5) / (double)c;
            if (within < 0.0)
                within = 0.0;
            return (double)hist_bucket_low(b) + within * (double)hist_bucket_width(b);
        }
        seen += c;
    }
    return (double)hist_bucket_low(lo + n - 1);
}

double hist_quantile(const uint64_t *h, double q)
{
    return hist_quantile_window(h, 0, HIST_BUCKETS, 0, q);
}

void hist_merge(uint64_t *dst, const uint64_t *src)
{
    for (unsigned b = 0; b < HIST_BUCKETS; b++)
        dst[b] += src[b];
}

int hist_subtract(uint64_t *dst, const uint64_t *a, const uint64_t *b)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        if (b[i] > a[i])
            return -1;
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        dst[i] = a[i] - b[i];
    return 0;
}
