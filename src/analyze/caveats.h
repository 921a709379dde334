/* The CAVEATS of a run: what is missing or distorted, derived at read time, as data.
 * Which caveats a run has and every figure they state are decided here; their
 * wording is render's (render/caveat_text.h), one sentence per caveat that the text
 * and JSON reports and both sides of a diff share. The order is fixed: unreadable,
 * duplicate, stale, not_final, signal, write_failed, child_no_file, leftover_tmp, superseded,
 * inconsistent, dropped_spans, folded, unmatched_ends, dropped_counters, overflow,
 * missing_ranks, io_unreadable, sampling, feature_missing, gpu_failed, window_failed,
 * activity_paused. */
#ifndef LAPSE_ANALYZE_CAVEATS_H
#define LAPSE_ANALYZE_CAVEATS_H

#include "run_model.h"

#include <stddef.h>
#include <stdint.h>

typedef enum caveat_kind {
    CAVEAT_UNREADABLE,
    CAVEAT_DUPLICATE,
    CAVEAT_STOPPED_EARLY, /* kind "stale": stopped writing before the run's end */
    CAVEAT_GONE,          /* kind "stale": no such process on this host any more */
    CAVEAT_RUNNING,       /* kind "not_final": still writing snapshots */
    CAVEAT_ENDED_UNSEEN,  /* kind "not_final": its next snapshot is overdue */
    CAVEAT_SIGNAL,
    CAVEAT_WRITE_FAILED,
    CAVEAT_CHILD_NO_FILE, /* a worker forked children that left no file in the run */
    CAVEAT_LEFTOVER_TMP,
    CAVEAT_SUPERSEDED,
    CAVEAT_INCONSISTENT,
    CAVEAT_DROPPED_SPANS,
    CAVEAT_FOLDED,
    CAVEAT_UNMATCHED_ENDS,
    CAVEAT_DROPPED_COUNTERS,
    CAVEAT_OVERFLOW,
    CAVEAT_MISSING_RANKS,
    CAVEAT_IO_UNREADABLE,
    CAVEAT_SAMPLING,
    CAVEAT_ACTIVITY_MISSING,    /* ACTIVITY could not run, or lost records (reason) */
    CAVEAT_DROPPED_ACTIVITIES,  /* GPU records past the collector's bound */
    CAVEAT_DROPPED_CAUSAL, /* signals and waits past the writer's bound */
    CAVEAT_FEATURE_MISSING, /* its session was asked for a feature that could not run */
    CAVEAT_GPU_FAILED,      /* NVML calls failed while the GPU collector ran */
    CAVEAT_WINDOW_FAILED,   /* a heavy backend's window did not run or write (reason) */
    CAVEAT_ACTIVITY_PAUSED, /* ACTIVITY yielded CUPTI to a torch window (a .. b) */
} caveat_kind;

/* The kind as reports name it ("stale", ...). */
const char *caveat_kind_name(caveat_kind k);

/* The workers that a summed caveat names, with each one's own count. */
typedef struct caveat_named {
    uint32_t worker;
    uint64_t value;
} caveat_named;

typedef struct caveat {
    caveat_kind kind;
    const char *file;   /* the one file (or directory) it is about, else NULL */
    const char *kept;   /* duplicate: the image counted in place of file */
    const char *reason; /* unreadable: why; write_failed: the last failure ("" unknown) */
    const char *of_file; /* leftover_tmp: the file it is a temporary of */
    uint32_t worker;    /* the one worker it is about (RM_NONE: none) */
    uint32_t role;      /* inconsistent: the role (RM_NONE: none) */
    uint64_t count;     /* what it counts (spans, ends, updates, ranks...); 0: not a count */
    uint32_t processes; /* processes it concerns (0 for unreadable, superseded) */
    /* summed kinds (dropped_spans, folded, unmatched_ends, dropped_counters,
     * io_unreadable): every worker with a count, in worker order */
    caveat_named *named;
    uint32_t named_count;
    /* folded: merged paths that received folded spans, most first; overflow: the
     * merged counters that overflowed, in counter order */
    uint32_t *items;
    uint32_t item_count;
    /* kind-specific figures:
     *   folded: a = spans past the depth bound, b = past the path bound
     *   inconsistent: a = top-level total ns, b = busy ns (count = paths over busy)
     *   duplicate: count = images of the same process left out
     *   write_failed: a = failed writes before the one the file holds
 *   feature_missing: reason = the features and why ("device: ...; ...")
 *   gpu_failed: count = the calls that failed, reason = the last failure
 *   window_failed: reason = why (the worker's window.error)
 *   activity_paused: count = the times ACTIVITY let CUPTI go to torch.profiler, x = ns
 *     paused in all, a = the first's start and b = the last's end on the run's clock (ns
 *     since its start); flag 1 = paused at the file's write (to its end)
     *   leftover_tmp: a = the writer's pid, b = mtime ns; flag = the file was read
     *   superseded: a = its files, b = its newest mtime ns
     *   missing_ranks: ranks[] the first of them (count = all), world = world size
     *   sampling: flags below; x = the share of passes lost
 *   child_no_file: count = its children that left no file, pids[] the first of them
 *     (pid_count) and after_ns[] when each was forked, into the worker's session;
 *     a = its children unrecorded (forked past its writer's bound) */
    uint64_t a, b;
    int64_t world;
    int64_t ranks[8];
    uint32_t rank_count;
    unsigned flags;
    double x;
    int64_t pids[8];
    uint64_t after_ns[8];
    uint32_t pid_count;
} caveat;

enum caveat_sampling_flags {
    CAVEAT_SAMPLING_NONE_TAKEN = 1u << 0, /* asked for, no pass taken */
    CAVEAT_SAMPLING_SLOW = 1u << 1,       /* achieved below 90% of the rate asked */
    CAVEAT_SAMPLING_LATE = 1u << 2,       /* over 1% of passes late */
    CAVEAT_SAMPLING_LOST = 1u << 3,       /* read errors */
    CAVEAT_SAMPLING_BIASED = 1u << 4,     /* lost over 1%: shares lean toward callers */
    CAVEAT_LEFTOVER_READ = 1u << 5,       /* leftover_tmp: its file was read */
};

typedef struct caveat_list {
    caveat *items;
    uint32_t count, cap;
} caveat_list;

struct run_ranks;

/* The caveats of m (its ranks as run_ranks_build made them), in the fixed order. 0,
 * or -ENOMEM (l is then empty: a report must fail rather than say "none"). */
int caveats_build(const run_model *m, const struct run_ranks *ranks, caveat_list *l);
void caveats_free(caveat_list *l);

#endif
