/* The one clock of lapse: the invariant TSC calibrated to CLOCK_MONOTONIC, or
 * CLOCK_MONOTONIC itself where there is no invariant TSC. Spans keep raw ticks;
 * durations and timestamps are converted to nanoseconds. */
#ifndef LAPSE_CORE_CLOCK_H
#define LAPSE_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CORE_HAVE_TSC 1
#else
#define CORE_HAVE_TSC 0
#endif

#pragma GCC visibility push(hidden)

typedef struct core_clock {
    int use_tsc;           /* 1: ticks are TSC cycles; 0: ticks are monotonic ns */
    uint64_t mult;         /* ns per tick, as a 32.32 fixed-point number */
    double tsc_hz;         /* 0 without TSC */
    uint64_t anchor_ticks; /* one instant on three clocks */
    uint64_t anchor_mono_ns;
    uint64_t anchor_real_ns;
} core_clock;

extern core_clock core_clock_g;

uint64_t core_mono_ns(void);
uint64_t core_real_ns(void);

static inline uint64_t core_ticks(void)
{
#if CORE_HAVE_TSC
    if (__builtin_expect(core_clock_g.use_tsc, 1))
        return __rdtsc();
#endif
    return core_mono_ns();
}

static inline uint64_t core_ticks_to_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * core_clock_g.mult) >> 32);
}

/* A tick reading as CLOCK_MONOTONIC nanoseconds. */
uint64_t core_ticks_to_mono_ns(uint64_t ticks);

/* Chooses the clock and calibrates the TSC against CLOCK_MONOTONIC over about
 * `window_ms` (a few ms suffice: the error is ~50 ns over the window). With
 * force_monotonic, or without an invariant TSC, uses CLOCK_MONOTONIC. */
void core_clock_calibrate(unsigned window_ms, int force_monotonic);

/* 1 when the CPU reports an invariant TSC. */
int core_clock_tsc_invariant(void);

#pragma GCC visibility pop

#endif
