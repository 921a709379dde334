/* Causality (lapse.h's lapse_signal / lapse_wait_on): each wait paired with the
 * signal that ended it, across the processes of a run, and the critical path that
 * set the run's length, with the phases on it.
 *
 * Pairing, per name, on the run's one clock (CLOCK_REALTIME through each file's
 * anchor): the waits in order of their end, the signals in order of time; the k-th
 * wait to end takes the first signal not yet taken, when that signal came no later
 * than the wait's end; else the wait is unmatched (it ended without a recorded
 * signal). Signals left over were not waited for (unconsumed). A pair is blocking
 * when its signal came after its wait began: the wait ended because of it.
 *
 * The critical path: from the latest end among the files with signals or waits,
 * walking back on that thread; at the latest blocking wait that ended before the
 * point, the path jumps to the thread of its signal, at the signal; where no such
 * wait is left it runs back to the thread's first record. What lies between a signal
 * and the end of the wait it ended is the wake-up. Its time on each thread is given
 * to the innermost span open there (the phases on the path); time in no span is
 * "(no span)". */
#ifndef LAPSE_ANALYZE_CAUSALITY_H
#define LAPSE_ANALYZE_CAUSALITY_H

#include "timeline.h"

#include <stddef.h>
#include <stdint.h>

struct run_model;

/* A signal or a completed wait of a file, on CLOCK_REALTIME (ns, as int64). */
typedef struct cz_event {
    uint32_t thread; /* index in tl.threads (the file's threads) */
    uint32_t kind;   /* STORE_CAUSAL_SIGNAL or STORE_CAUSAL_WAIT */
    uint32_t name;   /* index in names */
    int64_t begin_ns, end_ns;
} cz_event;

/* What the analysis keeps of a file that has signals or waits: them, and its
 * spans (timeline_build with 0 as base: CLOCK_REALTIME). */
typedef struct causal_file {
    cz_event *events;
    uint32_t count;
    char **names; /* the file's names, copied: names[0] is "" */
    uint32_t name_count;
    uint64_t dropped; /* signals and waits past the writer's bound */
    timeline_file tl;
    int64_t *max_end; /* per span: the latest end of its thread's spans up to it */
} causal_file;

/* *out: NULL when f has no signal nor wait (nor dropped any). 0 or -ENOMEM. */
int causal_file_take(const store_file *f, causal_file **out);
void causal_file_free(causal_file *cf);

typedef struct cz_pair {
    const char *name;
    uint32_t signal_worker, wait_worker; /* run_model workers */
    int64_t signal_tid, wait_tid;
    int64_t signal_ns, wait_begin_ns, wait_end_ns; /* from the run's start */
    int blocking; /* the signal came after the wait began */
} cz_pair;

typedef struct cz_segment {
    uint32_t worker;
    int64_t tid;
    int64_t begin_ns, end_ns; /* from the run's start */
    int64_t from_pair;        /* the pair whose wait's end starts it (its signal ends
                                 the segment before); -1: the path's first */
} cz_segment;

typedef struct cz_phase {
    const char *role;
    const char *path; /* "(no span)": time on the path in no span */
    uint64_t ns;
    double share; /* of the path's length */
} cz_phase;

typedef struct causality {
    int present;  /* some file has signals or waits */
    uint64_t signals, waits, unmatched_waits, unconsumed_signals, dropped;
    cz_pair *pairs; /* in order of the waits' ends */
    size_t pair_count, blocking;
    cz_segment *segments; /* the critical path, in time order */
    size_t segment_count;
    int64_t begin_ns, end_ns; /* its ends, from the run's start */
    uint64_t wake_ns;         /* its time between a signal and the end of the wait */
    uint32_t processes;       /* distinct processes on it */
    cz_phase *phases;         /* by time on the path, largest first */
    size_t phase_count;
    int spans_dropped;        /* a file on the path dropped spans: phases incomplete */
} causality;

/* 0 or -ENOMEM (out is then empty). */
int causality_build(const struct run_model *m, causality *out);
void causality_free(causality *c);

#endif
