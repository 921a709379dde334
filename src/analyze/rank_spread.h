/* Cross-rank statistics of one phase: how its per-rank total time spreads over the
 * ranks of a role. A rank that never entered the phase counts as zero, and the
 * figures say how many ranks entered it ("in k/n ranks"). */
#ifndef LAPSE_ANALYZE_RANK_SPREAD_H
#define LAPSE_ANALYZE_RANK_SPREAD_H

#include <stdint.h>

typedef struct rank_value {
    int64_t rank;
    uint64_t total_ns;
} rank_value;

typedef struct rank_spread {
    uint32_t ranks;   /* n: ranks of the role */
    uint32_t entered; /* k: ranks with a non-zero total (the others count as 0) */
    uint64_t min_ns, max_ns;
    double median_ns; /* of all n values; the mean of the two middle ones when n is even */
    int64_t slowest_rank; /* the rank of max_ns (the lowest such rank); -1 when nothing entered */
} rank_spread;

/* Adds up the values of equal ranks among values[0..k) (saturating), leaving one per
 * rank in ascending order of rank; returns how many remain. */
uint32_t rank_values_merge(rank_value *values, uint32_t k);

/* values: the totals of the k ranks that have one (any order; values of 0 allowed,
 * they count as not entered); ranks: n, the ranks of the role, n >= k. Returns 0,
 * or -EINVAL when k > n, or -ENOMEM. */
int rank_spread_compute(const rank_value *values, uint32_t k, uint32_t ranks, rank_spread *out);

#endif
