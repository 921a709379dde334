/* The external sampler: reads one or more CPython processes on an absolute
 * schedule and adds their stacks to a sample_set (src/store/sample_set.h).
 *
 * Pass k is due at start + k * period plus a small jitter (at most an eighth of a
 * period either way, so that the schedule does not lock onto a periodic target);
 * a pass that starts more than one period after it was due counts as late, and the
 * passes it missed are not made up: each sample stands for the time since the
 * previous pass, so weights add up to the wall time whatever the rate achieved. */
#ifndef LAPSE_PYREAD_SAMPLER_H
#define LAPSE_PYREAD_SAMPLER_H

#include "store/sample_set.h"
#include "store/samples_file.h"

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

enum sampler_mode {
    SAMPLER_WALL = 0, /* every thread (idle ones only with idle=1) */
    SAMPLER_CPU = 1,  /* threads on a CPU (OS state R) */
    SAMPLER_GIL = 2,  /* the thread holding the GIL */
};

/* "wall", "cpu", "gil" for a SAMPLER_* mode, and back (-1 for any other name). */
const char *sampler_mode_name(int mode);
int sampler_mode_parse(const char *name);

#define SAMPLER_HIDE_MAX 8

typedef struct sampler_opts {
    double rate_hz;
    double duration_s;       /* 0: until the targets exit or *stop is set */
    int mode;                /* SAMPLER_* */
    int idle;                /* wall mode: keep threads that wait */
    int subprocesses;        /* follow the root's descendants */
    pid_t root;              /* the process to sample (and whose children to follow) */
    /* Files whose frames are left out at the root of each stack (what launched the
     * program, as `lapse run` does: its own and runpy's), unless the stack has no other */
    const char *hide_root[SAMPLER_HIDE_MAX];
    int hide_root_count;
    pid_t child;             /* root was launched by us: reap it (0: attached) */
    double start_timeout_s;  /* how long to wait for root to become a readable Python */
    volatile sig_atomic_t *stop;
    /* Called about every tick_s seconds with the set being filled (top); a nonzero
     * return ends the recording. */
    double tick_s;
    int (*tick)(void *ctx, sample_set *set);
    void *tick_ctx;
    /* Called once the root is readable, before the first pass (NULL: not called), with
     * its CPython version; tick_ctx is its context. */
    void (*started)(void *ctx, const char *version);
} sampler_opts;

typedef struct sampler_result {
    uint64_t passes, late, read_errors;
    uint64_t duration_ns;
    uint64_t sampler_cpu_ns;  /* CPU time of the sampling thread while sampling */
    int processes;            /* Python processes sampled */
    int child_status;         /* wait status of a launched child, -1 when not reaped */
    int ended_by;             /* 0 duration, 1 targets exited, 2 stopped, 3 tick */
    int saw_spans;            /* the root had a lapse core publishing its span stacks */
    struct rusage child_usage; /* of a launched child, when child_status is set */
} sampler_result;

/* What a launched child used (wait4's rusage), into meta's usage fields. */
void sampler_usage_from_rusage(const struct rusage *ru, samples_file_meta *meta);
/* What a live target has used so far, from /proc/PID/stat (user and system time)
 * and /proc/PID/status (context switches, VmHWM), into meta's usage fields; a figure
 * that cannot be read is left unknown. */
void sampler_usage_of_pid(pid_t pid, samples_file_meta *meta);
/* The same, less what start (sampler_usage_of_pid at the recording's start) held:
 * what the target used while it was recorded; unknown where either read failed or a
 * figure went back (the switches of threads that ended are not in the sum). */
void sampler_usage_since(pid_t pid, const samples_file_meta *start, samples_file_meta *meta);

/* Samples until the duration ends, every target has exited, *stop is set or tick
 * asks to stop, filling set (its meta too: mode, rates, passes, late, errors, start
 * and end, idle). Returns 0, or a PYREAD_* code with one line in msg when the root
 * could never be read (gone, not Python, version, permission). */
int sampler_run(const sampler_opts *o, sample_set *set, sampler_result *r, char *msg, size_t msglen);

#endif
