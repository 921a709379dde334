/* End-to-end test program for `lapse export --hdf5`: REPEAT times, opens the spans
 * NAME... nested in the order given (the first outermost), spins 20 us in the
 * innermost, and closes them. Profiling comes from the environment.
 *
 * usage: e2e_regions REPEAT NAME... */
#include "lapse.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void spin_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: e2e_regions REPEAT NAME...\n");
        return 2;
    }
    int repeat = atoi(argv[1]);
    for (int i = 0; i < repeat; i++) {
        for (int k = 2; k < argc; k++)
            lapse_span_begin_id(lapse_intern(argv[k]));
        spin_us(20);
        for (int k = argc - 1; k >= 2; k--)
            lapse_span_end_id(lapse_intern(argv[k]));
    }
    return 0;
}
