/* A small multi-process pipeline, profiled with lapse.
 *
 * A driver prepares an input buffer ("setup"), forks three workers ("dispatch"),
 * then collects their results and waits for them ("gather"). Each worker names
 * itself "worker" and runs a loop of steps:
 *
 *   step > load            copy a slice of the input into a working buffer
 *        > compute > kernel   arithmetic over the slice
 *        > write           a short sleep (simulated I/O) and a checksum
 *
 * with counters "items" and "bytes". Worker i does a little more work than
 * worker i-1, so the report shows imbalance between the workers.
 *
 * Run it under lapse from the environment:
 *   LAPSE_PROFILE=1 LAPSE_RUN_DIR=lapse-runs/demo ./build/example_pipeline
 *   ./build/lapse report lapse-runs/demo
 * or plainly (./build/example_pipeline): then it starts a session itself, in
 * $LAPSE_RUN_DIR or ./lapse-runs.
 *
 * Optional argument: the number of steps per worker (default 40, about 2.5 s).
 */
#include "lapse.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 3
#define INPUT_BYTES (4u << 20)  /* 4 MiB shared input, split between the workers */
#define SLICE_BYTES (256u << 10) /* what one step loads */

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Fills the input buffer with pseudo-random bytes. */
static uint8_t *setup_input(void)
{
    LAPSE_SCOPE("setup");
    uint8_t *input = malloc(INPUT_BYTES);
    if (!input)
        return NULL;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < INPUT_BYTES; i += 8) {
        uint64_t v = xorshift(&s);
        memcpy(input + i, &v, 8);
    }
    lapse_count("bytes", INPUT_BYTES);
    return input;
}

/* The arithmetic of one step: a few passes of mixing over the slice. */
static uint64_t kernel(const uint8_t *buf, size_t len, int passes)
{
    LAPSE_SCOPE("kernel");
    uint64_t acc = 1469598103934665603ull;
    size_t words = len / 8;
    for (int p = 0; p < passes; p++) {
        for (size_t i = 0; i < words; i++) {
            uint64_t w;
            memcpy(&w, buf + i * 8, 8);
            acc = (acc ^ w) * 1099511628211ull;
            acc += (acc >> 29) ^ (uint64_t)p;
        }
    }
    lapse_count("items", (int64_t)(words * (size_t)passes));
    return acc;
}

/* One worker: `steps` steps over its shard of the input. Returns a checksum. */
static uint64_t run_worker(int index, const uint8_t *input, int steps)
{
    lapse_set_role("worker"); /* fails harmlessly when profiling is off */
    uint8_t *work = malloc(SLICE_BYTES);
    if (!work)
        return 0;
    size_t shard = INPUT_BYTES / WORKERS;
    const uint8_t *mine = input + (size_t)index * shard;
    int passes = 180 + 60 * index; /* uneven on purpose: the report shows imbalance */
    uint64_t checksum = 0;
    for (int step = 0; step < steps; step++) {
        LAPSE_SCOPE("step");
        {
            LAPSE_SCOPE("load");
            size_t off = ((size_t)step * 4096u) % (shard - SLICE_BYTES);
            memcpy(work, mine + off, SLICE_BYTES);
            lapse_count("bytes", SLICE_BYTES);
        }
        uint64_t r;
        {
            LAPSE_SCOPE("compute");
            r = kernel(work, SLICE_BYTES, passes);
        }
        {
            LAPSE_SCOPE("write");
            checksum ^= r + (uint64_t)step;
            sleep_us(30000); /* stands in for writing the result somewhere */
            lapse_count("bytes", sizeof r);
        }
    }
    free(work);
    return checksum;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    if (steps < 1) {
        fprintf(stderr, "usage: %s [steps per worker, >= 1]\n", argv[0]);
        return 2;
    }

    /* LAPSE_PROFILE=1 started a session before main; otherwise start one here. */
    int own_session = 0;
    if (!lapse_is_active()) {
        lapse_options opts;
        lapse_options_init(&opts);
        opts.role = "driver";
        if (lapse_start(&opts) != 0)
            fprintf(stderr, "pipeline: profiling is off: %s\n", lapse_last_error());
        else
            own_session = 1;
    } else {
        const char *role = getenv("LAPSE_ROLE");
        if (!role || !*role)
            lapse_set_role("driver");
    }

    uint8_t *input = setup_input();
    if (!input) {
        fprintf(stderr, "pipeline: out of memory\n");
        return 1;
    }

    pid_t pids[WORKERS];
    int fds[WORKERS];
    int started = 0;
    {
        LAPSE_SCOPE("dispatch");
        fflush(NULL); /* nothing buffered may be written twice */
        for (int i = 0; i < WORKERS; i++) {
            int p[2];
            if (pipe(p) != 0) {
                perror("pipeline: pipe");
                break;
            }
            pid_t pid = fork();
            if (pid < 0) {
                perror("pipeline: fork");
                close(p[0]);
                close(p[1]);
                break;
            }
            if (pid == 0) {
                close(p[0]);
                for (int j = 0; j < started; j++)
                    close(fds[j]);
                uint64_t sum = run_worker(i, input, steps);
                ssize_t n = write(p[1], &sum, sizeof sum);
                close(p[1]);
                free(input);
                exit(n == (ssize_t)sizeof sum ? 0 : 1); /* lapse writes the final file at exit */
            }
            close(p[1]);
            pids[i] = pid;
            fds[i] = p[0];
            started++;
        }
        lapse_count("items", started);
    }

    int failed = started < WORKERS;
    uint64_t total = 0;
    {
        LAPSE_SCOPE("gather");
        for (int i = 0; i < started; i++) {
            uint64_t sum = 0;
            ssize_t n;
            do
                n = read(fds[i], &sum, sizeof sum);
            while (n < 0 && errno == EINTR);
            close(fds[i]);
            int status = 0;
            while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
            }
            if (n != (ssize_t)sizeof sum || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "pipeline: worker %d (pid %ld) failed\n", i, (long)pids[i]);
                failed = 1;
            }
            total ^= sum;
            lapse_count("bytes", sizeof sum);
        }
    }
    free(input);

    printf("pipeline: %d workers x %d steps, checksum %016llx\n", started, steps,
           (unsigned long long)total);
    const char *file = lapse_file_path();
    if (file)
        printf("pipeline: profile of the driver: %s\n", file);
    if (own_session)
        lapse_stop();
    return failed ? 1 : 0;
}
