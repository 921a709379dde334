/* Cross-rank statistics of one phase: how its per-rank total time spreads over the
 * ranks of a role. A rank that never entered the phase counts as zero, and the
 * figures say how many ranks entered it ("in k/n ranks"). */
#ifndef LAPSE_ANALYZE_RANK_SPREAD_H
#define LAPSE_ANALYZE_RANK_SPREAD_H

#include <stdint.h>

typedef struct rank_spread {
    uint32_t ranks;   /* n: ranks of the role */
    uint32_t entered; /* k: ranks with a non-zero total (the others count as 0) */
    uint64_t min_ns, max_ns;
    double median_ns; /* of all n values; the mean of the two middle ones when n is even */
    int64_t slowest_rank; /* the rank of max_ns (the lowest such rank); -1 when nothing entered */
} rank_spread;

/* totals[i]: the total of rank ranks_of[i], for k distinct ranks of the role (any
 * order; totals of 0 allowed, they count as not entered); ranks: n, the ranks of
 * the role, n >= k; scratch: room for k values. Returns 0, or -EINVAL when k > n. */
int rank_spread_compute(const uint64_t *totals, const int64_t *ranks_of, uint32_t k,
                        uint32_t ranks, uint64_t *scratch, rank_spread *out);

#endif
