/* analyze/span_regions: a file's timeline spans grouped by name, in order of start,
 * on the common clock, relative to an origin (the shape of `lapse export --hdf5`). */
#include "analyze/span_regions.h"

#include "check.h"

#include <stdint.h>
#include <string.h>

static void test_grouping_order_and_clock(void)
{
    /* names: 1 "step", 2 "solve"; recorded in order of end, as the timeline does */
    char *names[] = {"", "step", "solve"};
    store_span spans[] = {
        {0, 2, 2, 1100, 1200}, /* thread 0: step > solve (twice) */
        {0, 2, 2, 1300, 1400},
        {0, 1, 1, 1000, 1500},
        {1, 2, 1, 1050, 1080}, /* thread 1: solve alone, earlier than thread 0's */
        {0, 2, 2, 1300, 1350}, /* a solve inside the solve of the same start: after it */
    };
    store_file f;
    memset(&f, 0, sizeof f);
    f.names = names;
    f.name_count = 3;
    f.spans = spans;
    f.span_count = sizeof spans / sizeof spans[0];
    f.meta.anchor_real_ns = 1000000; /* common = mono + 999000 */
    f.meta.anchor_mono_ns = 1000;
    f.meta.start_mono_ns = 900;

    uint64_t origin;
    CHECK(span_regions_origin(&f, &origin) == 0);
    CHECK_U64(origin, 900 + 999000);
    span_regions r;
    CHECK(span_regions_build(&f, origin, &r) == 0);
    CHECK_U64(r.count, 2);
    /* step's first call (1000) starts before solve's (1050) */
    CHECK_STR(r.regions[0].name, "step");
    CHECK_U64(r.regions[0].count, 1);
    CHECK(r.regions[0].start_ns[0] == 100 && r.regions[0].end_ns[0] == 600);
    CHECK_STR(r.regions[1].name, "solve");
    CHECK_U64(r.regions[1].count, 4);
    const int64_t starts[] = {150, 200, 400, 400}, ends[] = {180, 300, 500, 450};
    for (int i = 0; i < 4; i++)
        CHECK(r.regions[1].start_ns[i] == starts[i] && r.regions[1].end_ns[i] == ends[i]);
    span_regions_free(&r);
    CHECK(r.regions == NULL && r.count == 0);

    /* no session start recorded: the earliest span is the origin */
    f.meta.start_mono_ns = 0;
    CHECK(span_regions_origin(&f, &origin) == 0);
    CHECK_U64(origin, 1000 + 999000);
}

static void test_empty(void)
{
    store_file f;
    memset(&f, 0, sizeof f);
    uint64_t origin = 7;
    CHECK(span_regions_origin(&f, &origin) == -1 && origin == 7);
    span_regions r;
    CHECK(span_regions_build(&f, 0, &r) == 0);
    CHECK(r.count == 0 && r.regions == NULL);
    span_regions_free(&r);
}

int main(void)
{
    test_grouping_order_and_clock();
    test_empty();
    return check_done("test_span_regions");
}
