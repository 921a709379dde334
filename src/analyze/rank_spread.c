#include "rank_spread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reorders a[0..n) so that a[j] is the j-th smallest and nothing before it is larger
 * (Hoare's selection: linear on the average; a range that does not shrink fast
 * enough, as values made to defeat the pivot would, is sorted instead). */
static void select_nth(uint64_t *a, uint32_t n, uint32_t j)
{
    int64_t lo = 0, hi = (int64_t)n - 1;
    for (int rounds = 0; lo < hi; rounds++) {
        if (rounds == 64) {
            qsort(a + lo, (size_t)(hi - lo + 1), sizeof *a, cmp_u64);
            return;
        }
        uint64_t pivot = a[lo + (hi - lo) / 2];
        int64_t i = lo, k = hi;
        while (i <= k) {
            while (a[i] < pivot)
                i++;
            while (a[k] > pivot)
                k--;
            if (i <= k) {
                uint64_t t = a[i];
                a[i++] = a[k];
                a[k--] = t;
            }
        }
        /* a[lo..k] <= pivot, a[k+1..i-1] == pivot, a[i..hi] >= pivot */
        if (j <= k)
            hi = k;
        else if (j >= i)
            lo = i;
        else
            return;
    }
}

int rank_spread_compute(const uint64_t *totals, const int64_t *ranks_of, uint32_t k,
                        uint32_t ranks, uint64_t *scratch, rank_spread *out)
{
    memset(out, 0, sizeof *out);
    out->slowest_rank = -1;
    out->ranks = ranks;
    if (k > ranks)
        return -EINVAL;
    if (ranks == 0)
        return 0;
    uint64_t *v = scratch;
    uint64_t least = UINT64_MAX;
    for (uint32_t i = 0; i < k; i++) {
        v[i] = totals[i];
        if (v[i] < least)
            least = v[i];
        if (!v[i])
            continue;
        out->entered++;
        if (out->slowest_rank < 0 || v[i] > out->max_ns ||
            (v[i] == out->max_ns && ranks_of[i] < out->slowest_rank)) {
            out->max_ns = v[i];
            out->slowest_rank = ranks_of[i];
        }
    }
    /* the n values, ascending: ranks - k zeros (ranks with no value), then v sorted */
    uint32_t zeros = ranks - k;
    out->min_ns = zeros ? 0 : least;
    uint64_t upper = 0, lower = 0; /* the values at ranks / 2 and ranks / 2 - 1 */
    if (ranks / 2 >= zeros) {
        uint32_t j = ranks / 2 - zeros;
        select_nth(v, k, j);
        upper = v[j];
        for (uint32_t i = 0; i < j; i++) /* v[0..j) holds the j smallest */
            lower = v[i] > lower ? v[i] : lower;
    }
    out->median_ns = ranks % 2 ? (double)upper : ((double)lower + (double)upper) / 2.0;
    return 0;
}
