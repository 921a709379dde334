/* hist_window: a window of buckets whose counts take 1, 2, 4 or 8 bytes each holds
 * what a dense histogram holds, through merges that widen and move it. */
#include "../../src/analyze/hist_window.h"
#include "../../src/core/hist.h"
#include "check.h"

#include <errno.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Adds random windows of counts of every size (up to 2^40) to a window and to a
 * dense reference; after each add both hold the same counts and quantiles. */
static void test_against_dense(void)
{
    static const double qs[5] = {0.0, 0.5, 0.9, 0.99, 1.0};
    for (int round = 0; round < 200; round++) {
        hist_window w = {0};
        uint64_t ref[HIST_BUCKETS] = {0}, got[HIST_BUCKETS];
        for (int add = 0; add < 8; add++) {
            unsigned lo = (unsigned)(rng() % HIST_BUCKETS);
            unsigned n = 1 + (unsigned)(rng() % 40);
            if (lo + n > HIST_BUCKETS)
                n = HIST_BUCKETS - lo;
            uint64_t counts[40];
            unsigned bits = (unsigned)(rng() % 41); /* 1-byte .. 8-byte counts */
            for (unsigned i = 0; i < n; i++) {
                counts[i] = bits ? rng() >> (64 - bits) : 0;
                ref[lo + i] += counts[i];
            }
            if (add % 2) {
                CHECK(hist_window_add_counts(&w, lo, n, counts) == 0);
            } else { /* through a window of its own: hist_window_add */
                hist_window src = {0};
                CHECK(hist_window_add_counts(&src, lo, n, counts) == 0);
                CHECK(hist_window_add(&w, &src) == 0);
                hist_window_free(&src);
            }
            hist_window_to_dense(&w, got);
            CHECK(memcmp(got, ref, sizeof ref) == 0);
            CHECK_EQ_U64(hist_window_count(&w), hist_count(ref));
            double a[5];
            hist_window_quantiles(&w, qs, 5, a);
            for (int k = 0; k < 5; k++)
                CHECK(a[k] == hist_quantile(ref, qs[k]));
        }
        hist_window_free(&w);
    }
}

/* A count that outgrows its width widens the window's counts; they stay exact. */
static void test_widths(void)
{
    hist_window w = {0};
    uint64_t one = 255;
    CHECK(hist_window_add_counts(&w, 100, 1, &one) == 0);
    CHECK_EQ_U64(w.width, 1);
    one = 1;
    CHECK(hist_window_add_counts(&w, 100, 1, &one) == 0);
    CHECK_EQ_U64(w.width, 2);
    one = 65535;
    CHECK(hist_window_add_counts(&w, 101, 1, &one) == 0);
    CHECK_EQ_U64(w.width, 2);
    one = UINT32_MAX;
    CHECK(hist_window_add_counts(&w, 101, 1, &one) == 0);
    CHECK_EQ_U64(w.width, 8);
    CHECK_EQ_U64(w.lo, 100);
    CHECK_EQ_U64(w.n, 2);
    CHECK_EQ_U64(hist_window_count(&w), 256ull + 65535ull + UINT32_MAX);
    /* a window past the last bucket is refused, w unchanged */
    CHECK(hist_window_add_counts(&w, HIST_BUCKETS - 1, 2, (uint64_t[2]){1, 1}) == -EINVAL);
    CHECK_EQ_U64(hist_window_count(&w), 256ull + 65535ull + UINT32_MAX);
    hist_window_free(&w);
    CHECK(w.c == NULL && w.n == 0);
}

int main(void)
{
    test_against_dense();
    test_widths();
    return check_done("test_hist_window");
}
