/* Cross-rank statistics of one phase (src/analyze/rank_spread.c): ranks that never
 * entered a phase count as zero, the median of an even count is the mean of the two
 * middle values, the slowest rank is the one with the largest total (the lowest
 * rank on a tie), and "entered" says how many ranks are behind the figures. */
#include "analyze/rank_spread.h"

#include "check.h"

#include <errno.h>
#include <stdlib.h>

/* (rank, total) pairs, as rank_spread_compute takes them: two arrays */
typedef struct pair {
    int64_t rank;
    uint64_t total;
} pair;

static int spread_of(const pair *v, uint32_t k, uint32_t ranks, rank_spread *s)
{
    uint64_t totals[400], scratch[400];
    int64_t of[400];
    for (uint32_t i = 0; i < k && i < 400; i++) {
        totals[i] = v[i].total;
        of[i] = v[i].rank;
    }
    return rank_spread_compute(k ? totals : NULL, k ? of : NULL, k, ranks, scratch, s);
}

static void test_all_entered(void)
{
    pair v[] = {{3, 40}, {0, 10}, {2, 30}, {1, 20}};
    rank_spread s;
    CHECK(spread_of(v, 4, 4, &s) == 0);
    CHECK_U64(s.ranks, 4);
    CHECK_U64(s.entered, 4);
    CHECK_U64(s.min_ns, 10);
    CHECK(s.median_ns == 25.0); /* (20 + 30) / 2 */
    CHECK_U64(s.max_ns, 40);
    CHECK(s.slowest_rank == 3);
}

static void test_missing_ranks_count_as_zero(void)
{
    /* 1 of 4 ranks entered: min and median are 0, not the one value */
    pair one[] = {{0, 1000}};
    rank_spread s;
    CHECK(spread_of(one, 1, 4, &s) == 0);
    CHECK_U64(s.entered, 1);
    CHECK_U64(s.ranks, 4);
    CHECK_U64(s.min_ns, 0);
    CHECK(s.median_ns == 0.0);
    CHECK_U64(s.max_ns, 1000);
    CHECK(s.slowest_rank == 0);

    /* 2 of 3 (odd count): the median is the middle value of {0, 5, 9} */
    pair two[] = {{2, 9}, {1, 5}};
    CHECK(spread_of(two, 2, 3, &s) == 0);
    CHECK_U64(s.entered, 2);
    CHECK_U64(s.min_ns, 0);
    CHECK(s.median_ns == 5.0);
    CHECK_U64(s.max_ns, 9);
    CHECK(s.slowest_rank == 2);

    /* 3 of 4: {0, 2, 4, 8}, median (2 + 4) / 2 */
    pair three[] = {{1, 8}, {2, 2}, {3, 4}};
    CHECK(spread_of(three, 3, 4, &s) == 0);
    CHECK(s.median_ns == 3.0);
    CHECK_U64(s.min_ns, 0);
    CHECK(s.slowest_rank == 1);

    /* a value of 0 is a rank that did not enter */
    pair zero[] = {{0, 0}, {1, 7}};
    CHECK(spread_of(zero, 2, 2, &s) == 0);
    CHECK_U64(s.entered, 1);
    CHECK(s.median_ns == 3.5);
}

static void test_ties_and_edges(void)
{
    pair tie[] = {{5, 7}, {2, 7}, {9, 1}};
    rank_spread s;
    CHECK(spread_of(tie, 3, 3, &s) == 0);
    CHECK(s.slowest_rank == 2);
    CHECK_U64(s.max_ns, 7);
    CHECK(s.median_ns == 7.0);

    CHECK(spread_of(NULL, 0, 5, &s) == 0); /* no rank entered */
    CHECK_U64(s.entered, 0);
    CHECK(s.slowest_rank == -1);
    CHECK_U64(s.max_ns, 0);
    CHECK(s.median_ns == 0.0);

    CHECK(spread_of(NULL, 0, 0, &s) == 0);
    CHECK_U64(s.ranks, 0);

    pair more[] = {{0, 1}, {1, 2}};
    CHECK(spread_of(more, 2, 1, &s) == -EINVAL); /* more values than ranks */

    pair big[] = {{0, UINT64_MAX}, {1, UINT64_MAX - 1}};
    CHECK(spread_of(big, 2, 2, &s) == 0);
    CHECK_U64(s.max_ns, UINT64_MAX);
    CHECK(s.median_ns > 1.8e19);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* min and median against sorting all n values, zeros included: sizes 1..300, values
 * from a few distinct ones (many ties) to all distinct, in runs that are sorted,
 * reversed and shuffled. */
static void test_against_sorting(void)
{
    static pair v[300];
    static uint64_t all[400];
    uint64_t x = 88172645463325252ull;
    int bad = 0;
    for (uint32_t k = 1; k <= 300; k++)
        for (int kind = 0; kind < 4; kind++)
            for (uint32_t zeros = 0; zeros <= 3; zeros++) {
                uint32_t ranks = k + zeros;
                for (uint32_t i = 0; i < k; i++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    uint64_t val = kind == 0 ? x % 3 : kind == 1 ? i : kind == 2 ? k - i : x % 1000;
                    v[i] = (pair){(int64_t)i, val};
                    all[i] = val;
                }
                for (uint32_t i = k; i < ranks; i++)
                    all[i] = 0;
                qsort(all, ranks, sizeof *all, cmp_u64);
                double median = ranks % 2 ? (double)all[ranks / 2]
                                          : ((double)all[ranks / 2 - 1] + (double)all[ranks / 2]) / 2.0;
                rank_spread s;
                bad += spread_of(v, k, ranks, &s) != 0 || s.min_ns != all[0] ||
                       s.median_ns != median || s.max_ns != all[ranks - 1];
            }
    CHECK(bad == 0);
}

int main(void)
{
    test_against_sorting();
    test_all_entered();
    test_missing_ranks_count_as_zero();
    test_ties_and_edges();
    return check_done("test_rank_spread");
}
