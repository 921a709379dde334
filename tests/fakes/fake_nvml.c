/* A fake libnvidia-ml.so.1 for the DEVICE collector's tests: it replays a script.
 *
 *   FAKE_NVML_INIT=fail      nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED)
 *   FAKE_NVML_PID=PID        the process the script's readings belong to (the test's
 *                            target); without it device 0 lists only pid 1
 *   FAKE_NVML_SCRIPT=FILE    one line per reading of device 0, in order:
 *                              BUSY OWN MEM
 *                            BUSY: its utilisation percent, or E (the call fails);
 *                            OWN: the target's SM percent (one new sample), - (no new
 *                            sample: NVML_ERROR_NOT_FOUND), or n (NOT_SUPPORTED);
 *                            MEM: bytes the target holds.
 *                            Past the last line the target is not on the list.
 *   FAKE_NVML_DEVICE=1       the scripted device is device 1 (default 0)
 *   FAKE_NVML_UUID0=UUID     what nvmlDeviceGetUUID answers for device 0 (default
 *                            GPU-f0f0f0f0-0000-0000-0000-000000000000), or fail: the
 *                            call fails (999, Unknown Error); FAKE_NVML_UUID1 for device 1
 *                            (default ...-000000000001)
 *   FAKE_NVML_GATE=1         device 0's first process list waits (10 s at most) until
 *                            the program calls fake_nvml_open_gate(), and lists no
 *                            target: the script's readings all come after the gate.
 * Two devices: "Fake GPU 0" and "Fake GPU 1"; the scripted one (device 0, unless
 * FAKE_NVML_DEVICE=1; "device 0" below) lists the target, the other only pid 1.
 * Device 0's process list is read once per reading: each call to
 * nvmlDeviceGetComputeRunningProcesses_v3 on it moves to the next line.
 * fake_nvml_readings(): the readings of device 0 so far (the test program waits on
 * it to open its phases in step with the readings); fake_nvml_lines(): the script's.
 * The gate makes that exact: a reading takes the open phases before it asks the
 * device, so the reading after the gate's sees what was open before the gate opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { unsigned int gpu, memory; } utilization;
typedef struct {
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
} process_info;
typedef struct {
    unsigned int pid;
    unsigned long long ts;
    unsigned int sm, mem, enc, dec;
} process_sample;

#define MAX_LINES 256
static struct {
    char busy[16], own[16];
    unsigned long long mem;
} lines[MAX_LINES];
static int nlines, line = -1; /* line: the current reading of device 0 */
static unsigned int target;
static process_sample samples[MAX_LINES];
static int nsamples;
static int devices[2];
static int *scripted_dev = &devices[0];
static int gate_shut; /* FAKE_NVML_GATE: until fake_nvml_open_gate() */

int nvmlInit_v2(void)
{
    const char *f = getenv("FAKE_NVML_INIT");
    if (f && !strcmp(f, "fail"))
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    const char *pid = getenv("FAKE_NVML_PID");
    target = pid ? (unsigned int)strtoul(pid, NULL, 10) : 0;
    const char *dev = getenv("FAKE_NVML_DEVICE");
    scripted_dev = dev && !strcmp(dev, "1") ? &devices[1] : &devices[0];
    const char *gate = getenv("FAKE_NVML_GATE");
    __atomic_store_n(&gate_shut, gate && !strcmp(gate, "1"), __ATOMIC_RELEASE);
    const char *path = getenv("FAKE_NVML_SCRIPT");
    FILE *in = path ? fopen(path, "r") : NULL;
    nlines = 0;
    while (in && nlines < MAX_LINES &&
           fscanf(in, "%15s %15s %llu", lines[nlines].busy, lines[nlines].own, &lines[nlines].mem) == 3)
        nlines++;
    if (in)
        fclose(in);
    return 0;
}

int nvmlShutdown(void) { return 0; }

int fake_nvml_readings(void) { return __atomic_load_n(&line, __ATOMIC_ACQUIRE) + 1; }
int fake_nvml_lines(void) { return nlines; }
void fake_nvml_open_gate(void) { __atomic_store_n(&gate_shut, 0, __ATOMIC_RELEASE); }

/* The gate's reading: waits for the gate (10 s at most); the script does not move. */
static void wait_for_gate(void)
{
    struct timespec ms = {0, 1000000L};
    for (int i = 0; i < 10000 && __atomic_load_n(&gate_shut, __ATOMIC_ACQUIRE); i++)
        nanosleep(&ms, NULL);
    __atomic_store_n(&gate_shut, 0, __ATOMIC_RELEASE);
}

const char *nvmlErrorString(int rc)
{
    switch (rc) {
    case 9: return "Driver Not Loaded";
    case 999: return "Unknown Error";
    default: return "fake error";
    }
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = 2;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
    if (i > 1)
        return 2;
    *dev = &devices[i];
    return 0;
}

int nvmlDeviceGetName(void *dev, char *name, unsigned int len)
{
    snprintf(name, len, "Fake GPU %d", dev == &devices[0] ? 0 : 1);
    return 0;
}

int nvmlDeviceGetUUID(void *dev, char *uuid, unsigned int len)
{
    int i = dev == &devices[0] ? 0 : 1;
    const char *u = getenv(i ? "FAKE_NVML_UUID1" : "FAKE_NVML_UUID0");
    if (u && !strcmp(u, "fail"))
        return 999;
    if (u)
        snprintf(uuid, len, "%s", u);
    else
        snprintf(uuid, len, "GPU-f0f0f0f0-0000-0000-0000-00000000000%d", i);
    return 0;
}

static int scripted(void *dev) { return dev == scripted_dev && line >= 0 && line < nlines && target; }

int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *count, process_info *out)
{
    if (dev == scripted_dev && __atomic_load_n(&gate_shut, __ATOMIC_ACQUIRE))
        wait_for_gate(); /* and line stays before the script: no target listed */
    else if (dev == scripted_dev && line < nlines)
        __atomic_store_n(&line, line + 1, __ATOMIC_RELEASE);
    unsigned int n = 0;
    if (*count < 2) {
        *count = 2;
        return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    }
    out[n++] = (process_info){1, 4096, 0, 0};
    if (scripted(dev)) {
        out[n++] = (process_info){target, lines[line].mem, 0, 0};
        if (strcmp(lines[line].own, "-") && strcmp(lines[line].own, "n"))
            samples[nsamples++] = (process_sample){target, 1000ull * (unsigned)(line + 1),
                                                   (unsigned)atoi(lines[line].own), 0, 0, 0};
    }
    *count = n;
    return 0;
}

int nvmlDeviceGetUtilizationRates(void *dev, utilization *u)
{
    if (scripted(dev) && !strcmp(lines[line].busy, "E"))
        return 999;
    u->gpu = scripted(dev) ? (unsigned)atoi(lines[line].busy) : 5;
    u->memory = 0;
    return 0;
}

int nvmlDeviceGetProcessUtilization(void *dev, process_sample *out, unsigned int *count,
                                    unsigned long long last_seen)
{
    if (scripted(dev) && !strcmp(lines[line].own, "n"))
        return 3; /* NVML_ERROR_NOT_SUPPORTED */
    unsigned int n = 0;
    if (dev == scripted_dev)
        for (int i = 0; i < nsamples && n < *count; i++)
            if (samples[i].ts > last_seen)
                out[n++] = samples[i];
    *count = n;
    return n ? 0 : 6; /* NVML_ERROR_NOT_FOUND */
}
