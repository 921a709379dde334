/* A C program for the DEVICE collector's tests (test_gpu_device.py): a session with
 * the default features; a top-level span "train" open for argv[1] ms, then
 * "idle" for argv[2] ms. The GPU it "uses" is the fake NVML's (tests/fakes). */
#include "lapse.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    long train = argc > 1 ? atol(argv[1]) : 300, idle = argc > 2 ? atol(argv[2]) : 100;
    if (lapse_start(NULL) != 0) {
        fprintf(stderr, "e2e_gpu_phases: %s\n", lapse_last_error());
        return 1;
    }
    printf("missing: %s\n", lapse_missing());
    LAPSE_BEGIN("train");
    sleep_ms(train);
    LAPSE_END("train");
    LAPSE_BEGIN("idle");
    sleep_ms(idle);
    LAPSE_END("idle");
    return lapse_stop() != 0;
}
