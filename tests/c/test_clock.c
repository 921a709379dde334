/* Clock calibration: TSC ticks convert to CLOCK_MONOTONIC within a small error. */
#include "../../src/core/clock.h"
#include "check.h"

#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void check_against_monotonic(const char *label)
{
    uint64_t t0 = core_ticks(), m0 = core_mono_ns();
    sleep_ms(200);
    uint64_t t1 = core_ticks(), m1 = core_mono_ns();
    double measured = (double)core_ticks_to_ns(t1 - t0);
    double reference = (double)(m1 - m0);
    double rel = measured > reference ? measured / reference - 1 : 1 - measured / reference;
    /* 5 ms calibration window: expect well under 0.1% */
    CHECK(rel < 0.001);
    int64_t offset = (int64_t)core_ticks_to_mono_ns(t1) - (int64_t)m1;
    CHECK(llabs(offset) < 50000); /* 50 us: readings are not simultaneous */
    printf("%s: duration error %.5f%%, absolute offset %lld ns\n", label, rel * 100,
           (long long)offset);
}

int main(void)
{
    core_clock_calibrate(5, 0);
    printf("invariant TSC: %d, using TSC: %d, %.0f Hz\n", core_clock_tsc_invariant(),
           core_clock_g.use_tsc, core_clock_g.tsc_hz);
    CHECK(core_clock_g.use_tsc == core_clock_tsc_invariant());
    check_against_monotonic("tsc");
    core_clock_calibrate(5, 1);
    CHECK(core_clock_g.use_tsc == 0);
    check_against_monotonic("monotonic");
    uint64_t real = core_real_ns();
    uint64_t from_anchor = core_clock_g.anchor_real_ns + (core_mono_ns() - core_clock_g.anchor_mono_ns);
    CHECK(llabs((long long)(real - from_anchor)) < 1000000);
    return check_done("test_clock");
}
