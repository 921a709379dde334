/* The CPU sampler behind wait%: at jittered instants, whether each thread is on
 * CPU, credited to the entries open on it then (core_tick; docs/format.md,
 * CPU_TICKS). Driven by the session's sampler thread: collector collect_cpu. */
#ifndef LAPSE_COLLECT_CPU_SAMPLER_H
#define LAPSE_COLLECT_CPU_SAMPLER_H

#include <stdint.h>

/* Forgets the counts and seeds the jitter; period_ms 0: the sampler does not run.
 * At start and in a forked child. */
void cpu_sampler_reset(uint32_t period_ms);
/* Called once by the sampler thread itself: moves it to a random CPU and asks for
 * the real-time priority that makes its ticks keep time on busy CPUs (SCHED_FIFO
 * 1, where the process may; $LAPSE_CPU_SAMPLER_RT=0: not asked). */
void cpu_sampler_thread_init(void);
/* The wait before the next tick: exponential, of mean the period (memoryless: a
 * program's phases, whether they repeat with the period or follow the ticks, are
 * seen as often as they last). */
uint64_t cpu_sampler_next_wait_ns(void);
/* One tick, due at CLOCK_MONOTONIC due_ns. One thread calls it. */
void cpu_sampler_tick(uint64_t due_ns);

typedef struct cpu_sampler_totals {
    uint64_t ticks;      /* ticks taken */
    uint64_t late_ticks; /* of them, taken CPU_TICK_LATE_NS or more after their time */
    uint64_t cpu_ns;     /* the sampler thread's CPU time on them */
    uint32_t realtime;   /* 1: the sampler thread ran with SCHED_FIFO */
} cpu_sampler_totals;

/* What the sampler did so far (any thread). */
void cpu_sampler_totals_get(cpu_sampler_totals *out);

#endif
