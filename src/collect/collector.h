/* A collector: one source of evidence beside the span engine (the CPU sampler behind
 * wait%, the process sampler, GPU telemetry, ...), one per file of src/collect/,
 * behind this interface. The session starts the collectors of the features asked
 * for, drives their ticks from its one sampler thread, has each add its data to the
 * process's file at every write, stops them at its end and restarts them in a
 * forked child. session.c keeps the lifecycle only. */
#ifndef LAPSE_COLLECT_COLLECTOR_H
#define LAPSE_COLLECT_COLLECTOR_H

#include "../core/core.h"
#include "../store/model.h"

#include <stddef.h>
#include <stdint.h>

/* What a session asks of its collectors (settled by lapse_start). */
typedef struct collect_config {
    uint32_t features;          /* LAPSE_FEATURE_* asked for */
    uint32_t cpu_sample_ms;     /* 0: no CPU sampler */
    uint32_t process_sample_ms; /* 0: no process sampler */
    uint32_t device_interval_ms; /* the GPU collector's period */
} collect_config;

typedef struct collector {
    const char *name;  /* as the reasons name it: "cpu", "process" */
    uint32_t features; /* the LAPSE_FEATURE_* bits it serves: started when one is asked */
    /* 0: it runs; 1: nothing to do (its settings turn it off); negative errno-style:
     * it cannot run, why (why_len bytes) says why, in a few words: -ENOENT when what it
     * needs is not on this machine (no GPU driver: nothing to report), another code
     * when it is there and fails (a caveat). Resets its data. Called before the
     * sampler thread starts. */
    int (*start)(const collect_config *cfg, char *why, size_t why_len);
    /* On the session's sampler thread: first with due_ns 0 (the thread's start), then
     * at (or after) each time it returned. Returns the CLOCK_MONOTONIC ns of its next
     * tick; UINT64_MAX: none. NULL: it has no tick. */
    uint64_t (*tick)(uint64_t due_ns);
    /* Adds its data to the file about to be written (any thread, under the session's
     * write lock). 0, or -1 (out of memory: the write fails). NULL: nothing. */
    int (*take)(store_file *f);
    /* The session ends: the sampler thread has stopped. Its last reading; what it
     * holds stays for the final take. NULL: nothing to do. */
    void (*stop)(void);
    /* In a forked child of the session, before its sampler thread starts: forgets the
     * parent's data (the child is a process of its own). NULL: nothing to do. */
    void (*fork_child)(void);
    /* Its span hook (begin/end of every span: MARKERS's NVTX ranges), taken by the
     * span engine while it runs; {NULL, NULL}: none. A collector with one starts
     * before the engine's session begins (its hooks are fixed then). */
    core_span_hook span_hook;
} collector;

/* Every collector, in the order they tick when due at once; NULL after the last. */
#define COLLECT_MAX 8
extern const collector *const collectors[COLLECT_MAX + 1];

#endif
