/* The ranks of the world that left no readable file (src/analyze/run_ranks.c):
 * listed in order up to a bound, counted in full, and found by walking the gaps
 * between the ranks present, so that a file claiming a huge world size costs
 * nothing (the fuzz target found the walk over every rank of such a world). */
#include "analyze/run_ranks.h"

#include "check.h"

#include <string.h>

static run_model model_of(rm_worker *w, uint32_t n)
{
    run_model m;
    memset(&m, 0, sizeof m);
    m.workers = w;
    m.worker_count = n;
    return m;
}

/* The missing ranks of m, the first max of them into out; how many there are. */
static uint32_t report_missing_ranks(const run_model *m, int64_t *out, uint32_t max, int64_t *world)
{
    run_ranks r;
    CHECK(run_ranks_build(m, &r) == 0);
    *world = r.world_size;
    for (uint32_t i = 0; i < max && i < r.missing_count && i < RUN_RANKS_MISSING_LISTED; i++)
        out[i] = r.missing[i];
    uint32_t n = r.missing_count;
    run_ranks_free(&r);
    return n;
}

static rm_worker ranked(int64_t rank, int64_t world)
{
    rm_worker w;
    memset(&w, 0, sizeof w);
    w.rank = rank;
    w.world_size = world;
    w.host = w.launcher = (char *)"";
    return w;
}

static void test_gaps_listed_in_order(void)
{
    rm_worker w[] = {ranked(3, 8), ranked(0, 8), ranked(5, 8), ranked(3, 8)};
    run_model m = model_of(w, 4);
    int64_t out[8], world;
    CHECK_U64(report_missing_ranks(&m, out, 8, &world), 5);
    CHECK(world == 8);
    int64_t want[] = {1, 2, 4, 6, 7};
    for (int i = 0; i < 5; i++)
        CHECK(out[i] == want[i]);

    int64_t two[2];
    CHECK_U64(report_missing_ranks(&m, two, 2, &world), 5); /* counted in full */
    CHECK(two[0] == 1 && two[1] == 2);
}

static void test_none_missing_and_unknown_world(void)
{
    rm_worker all[] = {ranked(1, 2), ranked(0, 2)};
    run_model m = model_of(all, 2);
    int64_t out[4], world;
    CHECK_U64(report_missing_ranks(&m, out, 4, &world), 0);

    rm_worker unknown[] = {ranked(0, -1), ranked(2, -1)};
    m = model_of(unknown, 2);
    CHECK_U64(report_missing_ranks(&m, out, 4, &world), 0); /* no world: nothing to miss */

    rm_worker differ[] = {ranked(0, 4), ranked(1, 2)};
    m = model_of(differ, 2);
    CHECK_U64(report_missing_ranks(&m, out, 4, &world), 0);
}

static void test_huge_world_is_cheap(void)
{
    rm_worker w[] = {ranked(0, INT64_MAX), ranked(7, INT64_MAX)};
    run_model m = model_of(w, 2);
    int64_t out[3], world;
    CHECK_U64(report_missing_ranks(&m, out, 3, &world), UINT32_MAX); /* clamped */
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 3);

    rm_worker big[] = {ranked(0, 5000000000LL)};
    m = model_of(big, 1);
    CHECK_U64(report_missing_ranks(&m, out, 3, &world), UINT32_MAX);
    rm_worker fits[] = {ranked(0, 3000000001LL), ranked(2999999999LL, 3000000001LL)};
    m = model_of(fits, 2);
    CHECK_U64(report_missing_ranks(&m, out, 3, &world), 2999999999u);
    CHECK(out[0] == 1);
}

int main(void)
{
    test_gaps_listed_in_order();
    test_none_missing_and_unknown_world();
    test_huge_world_is_cheap();
    return check_done("test_report_ranks");
}
