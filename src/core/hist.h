/* Log-linear histogram of nanosecond durations: values 0..15 exact, then 8
 * sub-buckets per power of two up to 2^64. Mergeable and subtractable. */
#ifndef LAPSE_CORE_HIST_H
#define LAPSE_CORE_HIST_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define HIST_EXACT 16u
#define HIST_SUB_BITS 3u
#define HIST_BUCKETS 496u /* 16 exact + 60 octaves (2^4 .. 2^63) x 8 */

static inline unsigned hist_bucket(uint64_t v)
{
    if (v < HIST_EXACT)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* e >= 4 */
    return HIST_EXACT + (e - 4u) * 8u + (unsigned)((v >> (e - HIST_SUB_BITS)) & 7u);
}

/* Smallest value that falls in bucket b. */
uint64_t hist_bucket_low(unsigned b);
/* Number of distinct values in bucket b. */
uint64_t hist_bucket_width(unsigned b);
/* Sum of all bucket counts. */
uint64_t hist_count(const uint64_t *h);
/* Estimated q-quantile (0 <= q <= 1) in ns, interpolated inside its bucket: the
 * estimate lies in the same bucket as the exact value, so its error is below one
 * bucket width (< 1/8 of the value above 16 ns, zero below). 0 when empty. */
double hist_quantile(const uint64_t *h, double q);
/* The same estimate over a window of buckets: counts[i] is bucket lo + i, n of
 * them, total the sum of the counts (pass 0 to have it summed here). */
double hist_quantile_window(const uint64_t *counts, unsigned lo, unsigned n, uint64_t total,
                            double q);
/* dst += src */
void hist_merge(uint64_t *dst, const uint64_t *src);
/* dst = a - b; returns -1 (dst unchanged) if b is not contained in a. */
int hist_subtract(uint64_t *dst, const uint64_t *a, const uint64_t *b);

#pragma GCC visibility pop

#endif
