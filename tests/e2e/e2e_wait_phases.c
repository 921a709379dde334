/* End-to-end test program for wait%: threads that alternate spinning and sleeping
 * phases of 0.2, 0.5, 2, 5, 20 and 50 ms, and measure the truth themselves.
 * Profiling comes from the environment (LAPSE_PROFILE=1 ...).
 *
 * usage: e2e_wait_phases THREADS SECONDS
 *
 * Each thread runs rounds until SECONDS have passed; a round is, for each length L,
 * one top-level span "work" holding about 50 ms of alternating "spin_<L>ms" (a loop
 * on CLOCK_MONOTONIC for L) and "sleep_<L>ms" (nanosleep of L) phases. At the entry
 * and exit of every phase (inside its span) the thread reads CLOCK_MONOTONIC and its
 * own CPU clock (CLOCK_THREAD_CPUTIME_ID): the truth of a path is 1 - the sum of the
 * CPU deltas / the sum of the wall deltas over its entries, on every thread. At the
 * end it prints one line per path, summed over the threads:
 *   <path> <entries> <wall ns> <cpu ns>
 */
#include "lapse.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LENGTHS 6
static const double length_ms[LENGTHS] = {0.2, 0.5, 2, 5, 20, 50};
static const char *length_name[LENGTHS] = {"0.2", "0.5", "2", "5", "20", "50"};
#define PATHS (1 + 2 * LENGTHS) /* work, then spin and sleep of each length */
#define MAX_THREADS 64

typedef struct truth {
    uint64_t entries, wall_ns, cpu_ns;
} truth;

static uint32_t names[PATHS];
static char path_names[PATHS][64];
static double seconds;
static truth totals[MAX_THREADS][PATHS];

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

/* One phase: its span, the truth read just inside it. */
static void phase(int thread, int path, int spin, uint64_t ns)
{
    lapse_span_begin_id(names[path]);
    uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (spin) {
        uint64_t acc = 0;
        while (clock_ns(CLOCK_MONOTONIC) - w0 < ns)
            for (int i = 0; i < 64; i++)
                acc += (uint64_t)i * acc + 1;
        sink += acc;
    } else {
        struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
    lapse_span_end_id(names[path]);
    truth *t = &totals[thread][path];
    t->entries++;
    t->wall_ns += w1 - w0;
    t->cpu_ns += c1 - c0;
}

static void *run_thread(void *arg)
{
    int thread = (int)(intptr_t)arg;
    uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
    while (clock_ns(CLOCK_MONOTONIC) < end) {
        for (int l = 0; l < LENGTHS; l++) {
            uint64_t ns = (uint64_t)(length_ms[l] * 1e6);
            int repeats = (int)(50.0 / length_ms[l] + 0.5);
            if (repeats < 1)
                repeats = 1;
            lapse_span_begin_id(names[0]);
            uint64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
            for (int r = 0; r < repeats; r++) {
                phase(thread, 1 + 2 * l, 1, ns);
                phase(thread, 2 + 2 * l, 0, ns);
            }
            uint64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w1 = clock_ns(CLOCK_MONOTONIC);
            lapse_span_end_id(names[0]);
            truth *t = &totals[thread][0];
            t->entries++;
            t->wall_ns += w1 - w0;
            t->cpu_ns += c1 - c0;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: e2e_wait_phases THREADS SECONDS\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    seconds = atof(argv[2]);
    if (threads < 1 || threads > MAX_THREADS || !(seconds > 0)) {
        fprintf(stderr, "e2e_wait_phases: THREADS is 1 to %d, SECONDS > 0\n", MAX_THREADS);
        return 2;
    }
    snprintf(path_names[0], sizeof path_names[0], "work");
    names[0] = lapse_intern("work");
    for (int l = 0; l < LENGTHS; l++) {
        char name[32];
        snprintf(name, sizeof name, "spin_%sms", length_name[l]);
        names[1 + 2 * l] = lapse_intern(name);
        snprintf(path_names[1 + 2 * l], sizeof path_names[0], "work/%s", name);
        snprintf(name, sizeof name, "sleep_%sms", length_name[l]);
        names[2 + 2 * l] = lapse_intern(name);
        snprintf(path_names[2 + 2 * l], sizeof path_names[0], "work/%s", name);
    }
    pthread_t tids[MAX_THREADS];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&tids[i], NULL, run_thread, (void *)(intptr_t)i) != 0) {
            fprintf(stderr, "e2e_wait_phases: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    for (int p = 0; p < PATHS; p++) {
        truth sum = {0, 0, 0};
        for (int i = 0; i < threads; i++) {
            sum.entries += totals[i][p].entries;
            sum.wall_ns += totals[i][p].wall_ns;
            sum.cpu_ns += totals[i][p].cpu_ns;
        }
        printf("%s %llu %llu %llu\n", path_names[p], (unsigned long long)sum.entries,
               (unsigned long long)sum.wall_ns, (unsigned long long)sum.cpu_ns);
    }
    return 0;
}
