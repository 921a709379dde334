/* Histogram: bucket layout, quantile error bound, merge and subtract. */
#include "../../src/core/hist.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_layout(void)
{
    for (uint64_t v = 0; v < 16; v++)
        CHECK_EQ_U64(hist_bucket(v), v);
    /* every bucket's range maps back to it, and buckets tile the line */
    for (unsigned b = 0; b + 1 < HIST_BUCKETS; b++) {
        uint64_t low = hist_bucket_low(b), width = hist_bucket_width(b);
        CHECK_EQ_U64(hist_bucket(low), b);
        CHECK_EQ_U64(hist_bucket(low + width - 1), b);
        CHECK_EQ_U64(hist_bucket_low(b + 1), low + width);
        if (b >= 16)
            CHECK(width * 8 <= low); /* relative width at most 1/8 */
    }
    CHECK_EQ_U64(hist_bucket(UINT64_MAX), HIST_BUCKETS - 1);
}

/* The q-quantile estimate lies within one bucket width of the exact order
 * statistic: below 16 ns exact, above it within 1/8 of the value. */
static void test_quantile_error(void)
{
    enum { N = 20000 };
    static uint64_t values[N];
    static uint64_t h[HIST_BUCKETS];
    double worst = 0;
    for (int round = 0; round < 20; round++) {
        memset(h, 0, sizeof h);
        for (int i = 0; i < N; i++) {
            /* log-uniform from 1 ns to ~1 s, with some exact small values */
            uint64_t v = round % 5 == 0 ? rng() % 16 : (rng() % (1ull << (1 + rng() % 30))) + 1;
            values[i] = v;
            h[hist_bucket(v)]++;
        }
        qsort(values, N, sizeof values[0], cmp_u64);
        static const double qs[] = {0.0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0};
        for (unsigned k = 0; k < sizeof qs / sizeof qs[0]; k++) {
            size_t rank = (size_t)(qs[k] * N);
            if (rank < 1)
                rank = 1;
            uint64_t exact = values[rank - 1];
            double est = hist_quantile(h, qs[k]);
            double err = est > (double)exact ? est - (double)exact : (double)exact - est;
            double bound = exact < 16 ? 0.0 : (double)hist_bucket_width(hist_bucket(exact));
            CHECK(err <= bound);
            if (exact >= 16 && err / (double)exact > worst)
                worst = err / (double)exact;
        }
    }
    CHECK(worst <= 0.125);
    printf("quantile: worst relative error %.4f (bound 0.125)\n", worst);
}

static void test_merge_subtract(void)
{
    static uint64_t a[HIST_BUCKETS], b[HIST_BUCKETS], sum[HIST_BUCKETS], back[HIST_BUCKETS];
    for (int i = 0; i < 5000; i++) {
        a[hist_bucket(rng() % 1000000)]++;
        b[hist_bucket(rng() % 1000)]++;
    }
    memcpy(sum, a, sizeof sum);
    hist_merge(sum, b);
    CHECK_EQ_U64(hist_count(sum), 10000);
    CHECK(hist_subtract(back, sum, b) == 0);
    CHECK(memcmp(back, a, sizeof back) == 0);
    /* b is not contained in a: refused, dst untouched */
    memset(back, 0x5a, sizeof back);
    CHECK(hist_subtract(back, b, sum) == -1);
    CHECK(back[0] == 0x5a5a5a5a5a5a5a5aull);
    static uint64_t empty[HIST_BUCKETS];
    CHECK(hist_quantile(empty, 0.5) == 0.0);
}

int main(void)
{
    test_layout();
    test_quantile_error();
    test_merge_subtract();
    return check_done("test_hist");
}
