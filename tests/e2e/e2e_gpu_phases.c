/* A C program for the DEVICE collector's tests (test_gpu_device.py): a session with
 * the default features; a top-level span "train" open for argv[1] ms, then
 * "idle" for argv[2] ms. The GPU it "uses" is the fake NVML's (tests/fakes).
 *
 *   e2e_gpu_phases sync LOAD TRAIN   in step with the fake's readings (with its gate,
 *                                    FAKE_NVML_GATE=1): "load" open for its first LOAD
 *                                    readings, "train" for the next TRAIN, then no
 *                                    phase until the script ends */
#include "lapse.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Waits until the fake NVML has taken n readings (10 s at most). */
static int wait_readings(int (*readings)(void), int n)
{
    for (int i = 0; i < 10000 && readings() < n; i++)
        sleep_ms(1);
    return readings() >= n;
}

static int in_step(int load, int train)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
    int (*readings)(void) = lib ? (int (*)(void))dlsym(lib, "fake_nvml_readings") : NULL;
    int (*lines)(void) = lib ? (int (*)(void))dlsym(lib, "fake_nvml_lines") : NULL;
    void (*open_gate)(void) = lib ? (void (*)(void))dlsym(lib, "fake_nvml_open_gate") : NULL;
    if (!readings || !lines || !open_gate) {
        fprintf(stderr, "e2e_gpu_phases: the fake NVML is not loaded\n");
        return 1;
    }
    /* a reading takes the open phases before it reads the device: once the fake has
     * counted reading k, reading k + 1 sees what is open from then on */
    LAPSE_BEGIN("load");
    open_gate(); /* FAKE_NVML_GATE=1: the script's first reading comes after "load" opened
                    (the sampler's first tick may come before this thread got here) */
    int ok = wait_readings(readings, load);
    LAPSE_END("load");
    LAPSE_BEGIN("train");
    ok = ok && wait_readings(readings, load + train);
    LAPSE_END("train");
    ok = ok && wait_readings(readings, lines() + 1); /* past the script: not listed */
    if (!ok)
        fprintf(stderr, "e2e_gpu_phases: the fake's readings did not come\n");
    return lapse_stop() != 0 || !ok;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "sync")) {
        if (lapse_start(NULL) != 0) {
            fprintf(stderr, "e2e_gpu_phases: %s\n", lapse_last_error());
            return 1;
        }
        return in_step(atoi(argv[2]), atoi(argv[3]));
    }
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
