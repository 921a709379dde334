/* The CPU sampler: the schedule of its ticks, the CPU it takes them on, and what
 * they cost (core_tick in core.h does the reading).
 *
 * Two things keep a tick from seeing what it causes. Where the process may, the
 * sampler thread runs with SCHED_FIFO priority 1: with normal priority it gets a
 * CPU late when every CPU is busy, mostly just when one of the program's threads
 * blocks. And before each tick it moves to a CPU drawn at random from those the
 * process may use: core_tick leaves out the threads of the CPU the sampler took,
 * which is then no particular thread's (docs/report.md, "wait%", has the figures
 * without either). */
#include "cpu_sampler.h"

#include "collector.h"
#include "io.h"

#include "lapse.h"

#include "../core/clock.h"
#include "../core/core.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CPU_TICK_LATE_NS 200000ull /* a tick this late was taken when the CPUs were busy */

static struct {
    uint64_t period_ns;
    uint64_t rng;
    uint32_t cpus[CPU_SETSIZE], ncpus; /* those the sampler may move to */
    uint64_t ticks, late_ticks, cpu_ns; /* written by the sampler, read by the writer */
    uint32_t realtime;
} C;

static uint64_t next_random(void)
{
    C.rng ^= C.rng << 13; /* xorshift64 */
    C.rng ^= C.rng >> 7;
    C.rng ^= C.rng << 17;
    return C.rng >> 11;
}

void cpu_sampler_reset(uint32_t period_ms)
{
    C.period_ns = (uint64_t)period_ms * 1000000ull;
    C.rng = (core_mono_ns() * 0x9E3779B97F4A7C15ull) | 1u;
    __atomic_store_n(&C.ticks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&C.late_ticks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&C.cpu_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&C.realtime, 0, __ATOMIC_RELAXED);
}

/* Moves the sampler thread to a CPU drawn at random (the next tick's). */
static void move_to_random_cpu(void)
{
    if (C.ncpus < 2)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(C.cpus[next_random() % C.ncpus], &one);
    sched_setaffinity(0, sizeof one, &one);
}

void cpu_sampler_thread_init(void)
{
    C.ncpus = 0;
    if (!C.period_ns)
        return;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (uint32_t i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &allowed))
                C.cpus[C.ncpus++] = i;
    move_to_random_cpu();
    const char *rt = getenv("LAPSE_CPU_SAMPLER_RT");
    if (rt && !strcmp(rt, "0"))
        return;
    /* reset on fork: nothing a child starts inherits it */
    struct sched_param sp = {.sched_priority = 1};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
        __atomic_store_n(&C.realtime, 1, __ATOMIC_RELAXED);
}

/* Exponential, of mean the period: the chance of a tick in the next instant is the
 * same however long ago the last one was, so that what a tick sets off in the
 * program (the CPU it took is handed to a waiting thread when it ends) is seen as
 * often as the time it lasts. A wait drawn uniformly in [0.5, 1.5] x the period
 * never came within half a period of the last tick: a thread that got a CPU when a
 * tick ended and ran a 0.5 ms phase at a 1 ms period was seldom seen running it, and
 * such phases read 2 to 13 points too much wait on busy CPUs (bench/README.md). Capped
 * at 20 periods (a chance of e^-20). */
uint64_t cpu_sampler_next_wait_ns(void)
{
    double u = (double)(next_random() + 1) / 9007199254740992.0; /* (0, 1]: 53 bits */
    double periods = -log(u);
    return (uint64_t)((periods < 20.0 ? periods : 20.0) * (double)C.period_ns);
}

/* The CPU a thread of this process is on or waits for (/proc/self/task/TID/stat,
 * field 39), where the C library keeps no rseq area. 0 or -1. */
static int thread_cpu_of(int64_t tid, uint32_t *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%lld/stat", (long long)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    collect_own_read((uint64_t)n);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    for (int field = 2; p && field < 39; field++)
        p = strchr(p + 1, ' ');
    char *end;
    unsigned long v = p ? strtoul(p + 1, &end, 10) : 0;
    if (!p || end == p + 1)
        return -1;
    *cpu = (uint32_t)v;
    return 0;
}

static uint64_t own_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cpu_sampler_tick(uint64_t due_ns)
{
    uint64_t cpu0 = own_cpu_ns();
    uint64_t now = core_mono_ns();
    int own = sched_getcpu();
    core_tick(own < 0 ? UINT32_MAX : (uint32_t)own, thread_cpu_of);
    move_to_random_cpu();
    __atomic_store_n(&C.ticks, C.ticks + 1, __ATOMIC_RELAXED);
    if (now >= due_ns + CPU_TICK_LATE_NS)
        __atomic_store_n(&C.late_ticks, C.late_ticks + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&C.cpu_ns, C.cpu_ns + (own_cpu_ns() - cpu0), __ATOMIC_RELAXED);
}

void cpu_sampler_totals_get(cpu_sampler_totals *out)
{
    out->ticks = __atomic_load_n(&C.ticks, __ATOMIC_RELAXED);
    out->late_ticks = __atomic_load_n(&C.late_ticks, __ATOMIC_RELAXED);
    out->cpu_ns = __atomic_load_n(&C.cpu_ns, __ATOMIC_RELAXED);
    out->realtime = __atomic_load_n(&C.realtime, __ATOMIC_RELAXED);
}

/* The collector (collector.h): runs with LAPSE_FEATURE_CPU at cpu_sample_ms. */
static uint32_t cpu_period_ms;

static int cpu_start(const collect_config *cfg, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    cpu_period_ms = cfg->cpu_sample_ms;
    cpu_sampler_reset(cpu_period_ms);
    return cpu_period_ms ? 0 : 1;
}

static uint64_t cpu_tick(uint64_t due_ns)
{
    if (due_ns == 0) /* the sampler thread's start */
        cpu_sampler_thread_init();
    else
        cpu_sampler_tick(due_ns);
    return core_mono_ns() + cpu_sampler_next_wait_ns();
}

static int cpu_take(store_file *f)
{
    cpu_sampler_totals cs;
    cpu_sampler_totals_get(&cs);
    f->meta.cpu_sample_ms = cpu_period_ms;
    f->meta.cpu_ticks = cs.ticks;
    f->meta.cpu_ticks_late = cs.late_ticks;
    f->meta.cpu_sampler_ns = cs.cpu_ns;
    f->meta.cpu_sampler_rt = cs.realtime;
    return 0;
}

static void cpu_fork_child(void) { cpu_sampler_reset(cpu_period_ms); }

const collector collect_cpu = {"cpu", LAPSE_FEATURE_CPU, cpu_start, cpu_tick, cpu_take, NULL,
                               cpu_fork_child, {NULL, NULL}};
