/* bench/sampler: the sampler's own CPU per pass, reading a target back to back.
 *
 *   sample_cost PID PASSES
 *   sample_cost --wake HZ PASSES   the reference: CPU of a thread that only sleeps
 *                                  on the same absolute schedule and wakes (no read)
 *
 * Prints: passes, CPU per pass (CLOCK_THREAD_CPUTIME_ID of this thread, which reads
 * the /proc state of each thread that does not hold the GIL too, as `lapse record`
 * does in wall mode), process_vm_readv calls and bytes per pass, and the deepest
 * stack seen. Reading only: the pass runs wherever this thread is (record's pass
 * runs on the CPU of the target's GIL holder). */
#include "pyread/pyread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int wake_only(double hz, int passes)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    double c0 = now(CLOCK_THREAD_CPUTIME_ID), t = now(CLOCK_MONOTONIC);
    for (int i = 0; i < passes; i++) {
        t += 1e9 / hz;
        struct timespec ts = {(time_t)(t / 1e9), (long)(t - (double)(time_t)(t / 1e9) * 1e9)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    printf("wakes %d at %.0f Hz cpu_us_per_wake %.2f\n", passes, hz, (now(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e3 / passes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--wake"))
        return wake_only(atof(argv[2]), atoi(argv[3]));
    if (argc < 3) {
        fprintf(stderr, "usage: sample_cost PID PASSES | sample_cost --wake HZ PASSES\n");
        return 2;
    }
    pyread_target *t;
    char msg[512];
    if (pyread_open(atoi(argv[1]), &t, msg, sizeof msg) != 0) {
        fprintf(stderr, "sample_cost: %s\n", msg);
        return 1;
    }
    int passes = atoi(argv[2]);
    pyread_sample *s = malloc(sizeof *s);
    int deepest = 0, errors = 0;
    const unsigned flags = PYREAD_WANT_WAITING | PYREAD_WANT_NAMES; /* record's wall mode */
    pyread_sample_now(t, s, flags); /* warm the code cache */
    uint64_t sc0, b0, sc1, b1;
    pyread_io_counters(t, &sc0, &b0);
    double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    for (int i = 0; i < passes; i++) {
        if (pyread_sample_now(t, s, flags) != 0) {
            errors++;
            break;
        }
        errors += s->read_errors;
        for (int k = 0; k < s->thread_count; k++)
            if (s->threads[k].depth > deepest)
                deepest = s->threads[k].depth;
    }
    double c1 = now(CLOCK_THREAD_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
    pyread_io_counters(t, &sc1, &b1);
    printf("passes %d cpu_us_per_pass %.2f wall_us_per_pass %.2f syscalls_per_pass %.2f bytes_per_pass %.0f "
           "deepest %d read_errors %d\n",
           passes, (c1 - c0) / 1e3 / passes, (w1 - w0) / 1e3 / passes, (double)(sc1 - sc0) / passes,
           (double)(b1 - b0) / passes, deepest, errors);
    free(s);
    pyread_close(t);
    return 0;
}
