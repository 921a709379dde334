/* End-to-end test program for the placement of a rank: a process of a parallel job
 * whose launcher variables (SLURM_*, RANK, OMPI_*, ...) the test sets itself.
 * Profiling comes from the environment (LAPSE_PROFILE=1 ...).
 *
 * usage: e2e_rank ITERATIONS SLEEP_US [ckpt]
 * Each iteration: step > compute (a sleep of SLEEP_US), and with "ckpt" also
 * step > ckpt (a sleep of SLEEP_US / 2). Prints the path of its .lapse file. */
#include "lapse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: e2e_rank ITERATIONS SLEEP_US [ckpt]\n");
        return 2;
    }
    int iterations = atoi(argv[1]);
    long sleep = atol(argv[2]);
    int ckpt = argc > 3 && !strcmp(argv[3], "ckpt");
    for (int i = 0; i < iterations; i++) {
        LAPSE_SCOPE("step");
        {
            LAPSE_SCOPE("compute");
            sleep_us(sleep);
        }
        if (ckpt) {
            LAPSE_SCOPE("ckpt");
            sleep_us(sleep / 2);
        }
    }
    const char *file = lapse_file_path();
    printf("%s\n", file ? file : "-");
    return 0;
}
