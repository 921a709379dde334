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

double hist_quantile(const uint64_t *h, double q)
{
    uint64_t n = hist_count(h);
    if (n == 0)
        return 0.0;
    if (q < 0.0)
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    /* 1-based rank of the order statistic we want */
    double rank = q * (double)n;
    if (rank < 1.0)
        rank = 1.0;
    uint64_t seen = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        if (h[b] == 0)
            continue;
        if ((double)(seen + h[b]) >= rank) {
            if (b < HIST_EXACT)
                return (double)b;
            double within = (rank - (double)seen - 0.5) / (double)h[b];
            if (within < 0.0)
                within = 0.0;
            return (double)hist_bucket_low(b) + within * (double)hist_bucket_width(b);
        }
        seen += h[b];
    }
    return (double)hist_bucket_low(HIST_BUCKETS - 1);
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
