#include "rank_spread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The i-th smallest of n values of which the first zeros are 0 and the rest are
 * sorted[0..k). */
static uint64_t nth(const uint64_t *sorted, uint32_t zeros, uint32_t i)
{
    return i < zeros ? 0 : sorted[i - zeros];
}

static int cmp_rank(const void *a, const void *b)
{
    int64_t x = ((const rank_value *)a)->rank, y = ((const rank_value *)b)->rank;
    return x < y ? -1 : x > y;
}

uint32_t rank_values_merge(rank_value *values, uint32_t k)
{
    if (k < 2)
        return k;
    qsort(values, k, sizeof *values, cmp_rank);
    uint32_t n = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (n && values[n - 1].rank == values[i].rank) {
            uint64_t *t = &values[n - 1].total_ns;
            *t = *t + values[i].total_ns < *t ? UINT64_MAX : *t + values[i].total_ns;
        } else {
            values[n++] = values[i];
        }
    }
    return n;
}

int rank_spread_compute(const rank_value *values, uint32_t k, uint32_t ranks, rank_spread *out)
{
    memset(out, 0, sizeof *out);
    out->slowest_rank = -1;
    out->ranks = ranks;
    if (k > ranks)
        return -EINVAL;
    if (ranks == 0)
        return 0;
    uint64_t *sorted = malloc((k ? k : 1u) * sizeof *sorted);
    if (!sorted)
        return -ENOMEM;
    for (uint32_t i = 0; i < k; i++) {
        sorted[i] = values[i].total_ns;
        if (values[i].total_ns)
            out->entered++;
        if (values[i].total_ns &&
            (out->slowest_rank < 0 || values[i].total_ns > out->max_ns ||
             (values[i].total_ns == out->max_ns && values[i].rank < out->slowest_rank))) {
            out->max_ns = values[i].total_ns;
            out->slowest_rank = values[i].rank;
        }
    }
    qsort(sorted, k, sizeof *sorted, cmp_u64);
    uint32_t zeros = ranks - k; /* ranks with no value: 0 */
    out->min_ns = nth(sorted, zeros, 0);
    if (ranks % 2)
        out->median_ns = (double)nth(sorted, zeros, ranks / 2);
    else
        out->median_ns = ((double)nth(sorted, zeros, ranks / 2 - 1) + (double)nth(sorted, zeros, ranks / 2)) / 2.0;
    free(sorted);
    return 0;
}
