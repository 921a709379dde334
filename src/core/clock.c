#include "clock.h"

#if CORE_HAVE_TSC
#include <cpuid.h>
#endif

core_clock core_clock_g = {0, (uint64_t)1 << 32, 0.0, 0, 0, 0};

uint64_t core_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t core_real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int core_clock_tsc_invariant(void)
{
#if CORE_HAVE_TSC
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

uint64_t core_ticks_to_mono_ns(uint64_t ticks)
{
    const core_clock *c = &core_clock_g;
    if (ticks >= c->anchor_ticks)
        return c->anchor_mono_ns + core_ticks_to_ns(ticks - c->anchor_ticks);
    uint64_t back = core_ticks_to_ns(c->anchor_ticks - ticks);
    return back < c->anchor_mono_ns ? c->anchor_mono_ns - back : 0;
}

#if CORE_HAVE_TSC
/* A TSC reading bracketed tightly by two monotonic readings; returns the
 * monotonic midpoint. Retries keep the narrowest bracket. */
static void paired_reading(uint64_t *ticks, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t m0 = core_mono_ns();
        uint64_t t = __rdtsc();
        uint64_t m1 = core_mono_ns();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *ticks = t;
            *mono = m0 + (m1 - m0) / 2;
        }
    }
}
#endif

void core_clock_calibrate(unsigned window_ms, int force_monotonic)
{
    core_clock c = {0, (uint64_t)1 << 32, 0.0, 0, 0, 0};
#if CORE_HAVE_TSC
    if (!force_monotonic && core_clock_tsc_invariant()) {
        uint64_t t0 = 0, m0 = 0, t1 = 0, m1 = 0;
        paired_reading(&t0, &m0);
        struct timespec pause = {0, (long)(window_ms ? window_ms : 1) * 1000000L};
        nanosleep(&pause, NULL);
        paired_reading(&t1, &m1);
        if (t1 > t0 && m1 > m0) {
            double ns_per_tick = (double)(m1 - m0) / (double)(t1 - t0);
            c.use_tsc = 1;
            c.tsc_hz = 1e9 / ns_per_tick;
            c.mult = (uint64_t)(ns_per_tick * 4294967296.0 + 0.5);
            c.anchor_ticks = t1;
            c.anchor_mono_ns = m1;
        }
    }
#else
    (void)window_ms;
    (void)force_monotonic;
#endif
    if (!c.use_tsc) {
        c.anchor_mono_ns = core_mono_ns();
        c.anchor_ticks = c.anchor_mono_ns;
    }
    /* realtime at the same instant: bracket it with monotonic readings */
    uint64_t m0 = core_mono_ns();
    uint64_t r = core_real_ns();
    uint64_t m1 = core_mono_ns();
    uint64_t mono_mid = m0 + (m1 - m0) / 2;
    c.anchor_real_ns = r - (mono_mid - c.anchor_mono_ns);
    core_clock_g = c;
}
