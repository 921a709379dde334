/* The merged model of one run: every readable .lapse file of the newest attempt,
 * grouped by role, with the paths of all threads and processes of a role merged by
 * their name path. Built one file at a time (spans skipped), so memory grows with
 * the number of distinct paths, not with the number or length of files. */
#ifndef LAPSE_ANALYZE_RUN_MODEL_H
#define LAPSE_ANALYZE_RUN_MODEL_H

#include "hist_window.h"

#include <stddef.h>
#include <stdint.h>

#define RM_NONE UINT32_MAX
#define RM_PATH_SHOWN 4096 /* longer path strings keep their end behind "..." */
#define RM_PATH_BUF (RM_PATH_SHOWN + 2) /* room for rm_path_str */

/* What can be said about a worker whose last file is or is not final. */
typedef enum rm_state {
    RM_FINAL = 0,         /* wrote its final file (stop, exit or a terminating signal) */
    RM_STOPPED_EARLY = 1, /* not final, and its last write is older than the run's latest
                             write by more than 2 x its snapshot interval + 1 s */
    RM_RUNNING = 2,       /* not final, among the newest, and written recently enough (as of
                             the time of reading) that its next snapshot is not yet due */
    RM_ENDED_UNSEEN = 3,  /* not final, among the newest, but its next snapshot is overdue:
                             killed, wedged, or its writes failed after its last snapshot */
    RM_GONE = 4,          /* not final, and its pid no longer exists on its host, the
                             reader's (rm_options.host): it ended without its final write */
} rm_state;

typedef struct rm_counter {
    uint32_t path;   /* merged path it belongs to (a role root: outside any span) */
    uint32_t name;   /* string id */
    uint32_t next;   /* next counter of the same path, RM_NONE at the end */
    int64_t sum;     /* at INT64_MAX or INT64_MIN when it overflowed */
    uint64_t updates;
    int overflowed;  /* the true sum is beyond what an int64 holds: sum is that bound */
} rm_counter;

typedef struct rm_path {
    uint32_t parent; /* RM_NONE for a role root */
    uint32_t name;   /* string id; 0 ("") for a role root */
    uint32_t role;
    uint32_t depth;  /* 0 for the role root, 1 for top-level spans */
    uint64_t calls, total_ns, child_ns, folded;
    uint32_t sample_stride;   /* 0 measured; else its figures are estimates scaled up from
                                 1 entry in sample_stride (the largest seen) */
    uint32_t child_estimated; /* child_ns, and so self time, includes estimates */
    uint64_t cpu_ticks, cpu_wait_ticks; /* CPU sampler: see store_node */
    uint64_t gpu_ns, gpu_timed, gpu_untimed; /* gpu_time phases: see store_node */
    uint64_t min_ns, max_ns; /* over processes that completed a call; 0 when none */
    uint32_t in_processes;   /* processes of the role in which it completed a call */
    uint32_t last_worker;    /* loading only */
    uint32_t first_counter;  /* RM_NONE when none */
    /* Its total in each rank of the role (the processes that share a rank added
     * together): rank_totals[i] is that of rank slot rank_lo + i of the role (see
     * rm_role.slot_ranks), 0 where that rank has none; rank_n 0 when no process with
     * a rank recorded it. The window spans the slots that recorded it: a path of
     * every rank costs 8 bytes a rank, one of a single rank 8 bytes. */
    uint32_t rank_lo, rank_n, rank_cap;
    union {                  /* rm_rank_totals(p): the array of rank_n totals */
        uint64_t *rank_totals; /* rank_cap > 1 */
        uint64_t rank_total;   /* rank_cap <= 1: the one total, held in place */
    };
    hist_window hist;        /* per-call wall time, ns */
} rm_path;

/* One stretch of the process sampler's series, on the writer's CLOCK_REALTIME. */
typedef struct rm_io_point {
    uint64_t start_real_ns, end_real_ns;
    uint64_t chars; /* read_chars + write_chars moved in it */
} rm_io_point;

#define RM_IO_POINTS 256 /* a worker's series is merged down to at most this many */

/* What a worker's process sampler recorded (zero when it did not run). */
typedef struct rm_proc {
    uint32_t interval_ms; /* 0: no process sampler in this worker's file */
    uint64_t intervals, quiet_intervals, unreadable, sampler_cpu_ns;
    uint64_t read_chars, write_chars, read_bytes, write_bytes, quiet_chars, phased_chars;
    uint64_t rss_peak_bytes; /* largest RSS reading */
    rm_io_point *series;
    uint32_t series_count;
} rm_proc;

/* What a worker's CPU sampler (wait%) did (zero when it did not run). */
typedef struct rm_cpu_sampler {
    uint32_t period_ms;  /* 0: no CPU sampler in this worker's file */
    uint32_t realtime;   /* 1: its thread had real-time priority */
    uint64_t ticks, late_ticks, cpu_ns; /* see store_meta */
} rm_cpu_sampler;

/* A child a worker's process forked (as its file records it). */
typedef struct rm_child {
    int64_t pid;
    uint64_t forked_real_ns; /* on the worker's CLOCK_REALTIME */
} rm_child;

/* GPU activity (ACTIVITY, section GPU_ACTIVITY) merged over the run: for one path,
 * one kind and (kernels) one kernel name, the records launched while that path was
 * the innermost open span on the launching thread (a role root: no span was open).
 * unseen: records whose launch the collector did not see, under their role's root. */
typedef struct rm_activity {
    uint32_t path;
    uint32_t kind;   /* store_gpu_kind */
    uint32_t name;   /* kernels: string id of the kernel's name; else 0 */
    uint32_t unseen; /* 1: launch not seen (path is the role root) */
    uint64_t count;
    uint64_t ns;     /* time on the GPU, end - start, added */
    uint64_t bytes;  /* copies and sets */
} rm_activity;
/* A worker's GPU telemetry (store_gpu, its file's GPU_DEVICE section). */
typedef struct rm_gpu_phase {
    uint32_t name; /* string id of the top-level span; 0: the phases past the bound */
    uint64_t ticks, own_pct_sum;
} rm_gpu_phase;

typedef struct rm_gpu_device {
    uint32_t index;
    char *name;
    uint64_t ticks, busy_ticks, busy_pct_sum, own_ticks, own_pct_sum, mem_peak_bytes;
    rm_gpu_phase *phases;
    uint32_t phase_count;
    char *uuid;       /* nvmlDeviceGetUUID, "GPU-..."; "" unknown */
    char *uuid_error; /* why the call failed; "" when it did not (or not recorded) */
    int uuid_recorded; /* the file has its id (GPU_DEVICE_IDS): else an older writer's */
} rm_gpu_device;

typedef struct rm_gpu {
    uint32_t interval_ms; /* 0: no section */
    uint64_t failed_calls;
    char *error;
    rm_gpu_device *devices;
    uint32_t device_count;
} rm_gpu;

/* A heavy backend's window (META window_*): backend "" when none was asked for. */
typedef struct rm_window {
    char *backend, *phase, *trace, *error; /* "" when none */
    uint64_t start, stop, entries, opened_entry, closed_entry;
    uint64_t open_ns, close_ns; /* ns into its session; close 0: not closed */
} rm_window;

/* A worker's VRAM from torch (store_gpu_memory, its file's GPU_MEMORY section). */
typedef struct rm_gpu_memory_device {
    uint32_t index; /* torch's device index */
    char *uuid, *name;
    uint64_t allocated_peak_bytes, reserved_peak_bytes;
} rm_gpu_memory_device;

typedef struct rm_gpu_memory {
    int present; /* the file has the section */
    uint64_t readings, resets;
    char *error; /* "" when none */
    rm_gpu_memory_device *devices;
    uint32_t device_count;
} rm_gpu_memory;

typedef struct rm_worker {
    char *file, *host, *role, *run_id, *end_reason, *launcher, *job_id;
    char *write_error; /* the last failed write before this file's, "" when none */
    char *gpu_time_missing; /* why a gpu_time phase had no GPU time, "" when none */
    uint32_t role_index;
    int64_t pid, ppid, rank, world_size, local_rank; /* ranks, world_size: -1 when unknown */
    uint32_t final;
    uint64_t write_seq;
    uint64_t write_failures; /* writes of its session that failed before this file's */
    uint64_t start_real_ns, written_real_ns;
    uint64_t wall_ns, cpu_user_ns, cpu_sys_ns, max_rss_kb;
    int cpu_known;        /* cpu_user_ns and cpu_sys_ns were measured */
    int64_t ctx_voluntary, ctx_involuntary; /* context switches; -1 unknown (older files) */
    uint64_t busy_ns;    /* sum of its top-level spans over all its threads */
    uint64_t span_calls; /* completed spans, all paths */
    uint32_t threads;
    uint32_t snapshot_interval_ms;
    uint64_t max_depth, max_paths, max_spans, max_counters;
    uint64_t timeline_dropped, folded_depth, folded_paths, unmatched_ends, dropped_counters;
    rm_state state;
    uint64_t stale_by_ns;   /* run's latest write minus this worker's last write */
    uint64_t stale_limit_ns; /* 2 x snapshot interval + 1 s */
    uint64_t silent_ns;     /* time of reading minus its last write */
    int gone;               /* on the reader's host, and no process has its pid */
    uint32_t features;      /* what its session collected: LAPSE_FEATURE_* (lapse.h); for a
                               file that does not record them (older ones, lapse record's)
                               what its content implies (rm_file_features) */
    rm_proc proc;
    rm_cpu_sampler cpu_sampler;
    struct sample_set *samples; /* its Python stack samples (a copy), NULL when none */
    rm_child *children;  /* the children it forked that ran as its program, fork order */
    uint32_t child_count;
    uint64_t children_unrecorded; /* forked past its writer's bound: not known */
    uint32_t activity_state;   /* store_gpu_state of its GPU_ACTIVITY section; 0: none */
    char *activity_note;       /* that section's note ("" when none) */
    uint64_t activity_dropped; /* records its collector had no room for */
    uint64_t activity_records; /* records its file holds */
    struct causal_file *causal; /* its signals, waits and spans (causality.h); NULL: none */
    rm_gpu gpu;
    rm_gpu_memory gpu_memory;
    char *missing; /* features its session was asked for that failed to start, with why; "" */
    char *absent;  /* those whose library its machine does not have, with why; "" */
    rm_window window;
    /* ACTIVITY let CUPTI go to torch.profiler (META activity_pause*): times, ns in all,
     * the first's start and the last's end in ns into the session (to 0: paused at the
     * file's write) */
    uint32_t activity_pauses;
    uint64_t activity_paused_ns, activity_pause_from_ns, activity_pause_to_ns;
} rm_worker;

/* ns_into_session (a worker's window_open_ns, ...) on the run's clock: since the
 * run's earliest session start (m->start_real_ns). */
#define RM_RUN_CLOCK_NS(m, w, ns_into_session) \
    ((w)->start_real_ns > (m)->start_real_ns ? (w)->start_real_ns - (m)->start_real_ns + (ns_into_session) \
                                             : (ns_into_session))

typedef struct rm_role {
    char *name;
    uint32_t root;        /* index of its root path */
    uint32_t processes;
    uint64_t busy_ns;     /* sum over its workers */
    uint64_t busy_max_ns, busy_min_ns;
    uint32_t busy_max_worker; /* worker index */
    double imbalance;     /* max / mean of per-process busy time; 0 when no busy time */
    uint64_t top_total_ns; /* sum of its top-level paths' totals: busy_ns, in files that
                              hold together */
    uint32_t over_busy;   /* paths with more total time than busy_ns: no share for them */
    int64_t *ranks;       /* distinct ranks of its processes, ascending (NULL when none) */
    uint32_t rank_count;  /* as many as its rank slots */
    int64_t *slot_ranks;  /* the rank of each rank slot (its ranks in order of first sight),
                             which paths' rank_totals are indexed by */
    uint32_t slot_count, slot_cap;
    uint32_t unranked;    /* its processes without a rank */
} rm_role;

typedef struct rm_unreadable {
    char *file;
    char *reason;
} rm_unreadable;

/* Images not counted because another image of the run is the same process: copies
 * of a file (same host, pid and session start), or pack members that share bytes
 * with another. Consecutive ones that name the same kept image are one entry. */
typedef struct rm_duplicate {
    char *file;    /* the first image left out */
    char *kept;    /* the image counted in their place */
    uint64_t count; /* images left out for it */
} rm_duplicate;

typedef struct rm_superseded {
    char *dir;
    size_t files;
    uint64_t newest_mtime_ns;
} rm_superseded;

/* One of the attempts a run joins: processes started separately into one directory
 * of runs (each with a run id of its own) that ran at the same time (run_join.h). */
typedef struct rm_joined {
    char *dir;
    size_t files;
    uint64_t start_real_ns; /* its earliest session start */
} rm_joined;

/* A temporary in the run's directories (NAME.lapse.tmp.<pid>...) whose writer is gone:
 * on the reader's host (the host of the directory's files), no process has its pid.
 * It was killed while it wrote, or its rename failed: the file it was to replace
 * holds the write before, and the next writer of that file removes it. */
typedef struct rm_leftover {
    char *temp;        /* the temporary */
    char *file;        /* the file it was to replace */
    int64_t pid;       /* its writer */
    uint64_t mtime_ns; /* its last modification */
    uint32_t worker;   /* the worker whose file that is, RM_NONE when none was read */
} rm_leftover;

typedef struct run_model {
    char *input;  /* the path given */
    char *dir;    /* the attempt reported (the file itself when given one file) */
    int single_file; /* the input was one .lapse file */
    char *run_id; /* of the first readable file ("" when none) */
    uint32_t run_ids; /* distinct run ids among readable files */
    uint64_t start_real_ns, end_real_ns; /* earliest session start, latest write */
    uint64_t read_real_ns;               /* when the model was loaded */

    char **strings; /* interned names; strings[0] is "" (in the string blocks) */
    struct rm_block *blocks; /* the memory behind strings and path strings */
    uint32_t string_count, string_cap;

    rm_path *paths; /* parents before children; each role's root first */
    uint32_t path_count, path_cap;
    rm_counter *counters;
    uint32_t counter_count, counter_cap;
    rm_activity *activity; /* by path, kind, name, unseen after finishing; one entry for each */
    uint32_t activity_count, activity_cap;
    rm_role *roles; /* sorted by name after loading */
    uint32_t role_count, role_cap;
    rm_worker *workers;
    uint32_t worker_count, worker_cap;
    rm_unreadable *unreadable;
    uint32_t unreadable_count, unreadable_cap;
    rm_duplicate *duplicates;
    uint32_t duplicate_count, duplicate_cap;
    uint32_t overflowed_counters; /* merged counters whose sum overflowed int64 */
    rm_superseded *superseded;
    uint32_t superseded_count;
    rm_joined *joined; /* the attempts joined into this run, in start order; none (0) when
                          the run is one attempt */
    uint32_t joined_count;
    char **hosts; /* sorted, distinct */
    uint32_t host_count;
    rm_leftover *leftovers; /* in name order */
    uint32_t leftover_count;

    void *index; /* loading only */
} run_model;

/* The host the analysis is done on, as seen by its caller: which host names are this
 * one, and which pids are alive on it. An input of the analysis, never a call inside
 * it: a test can analyse a run as seen from another host, or with a table of pids
 * (tools/host_view.h fills one for the reader's own host). */
typedef struct rm_host_view {
    const char *names[2]; /* the names this host goes by; NULL where none */
    /* 1: a process with this pid exists on this host, 0: none does, -1: cannot tell */
    int (*pid_alive)(void *ctx, int64_t pid);
    void *pid_ctx;
} rm_host_view;

struct store_held;
typedef struct rm_options {
    /* The reader's host: NULL when unknown (then no worker is known gone and no
     * temporary is known left over: nothing is checked). */
    const rm_host_view *host;
    uint64_t now_real_ns; /* the time of reading; 0: now */
    /* When set, hold(hold_ctx, file, held) receives what was read of each file of
     * the attempt (store_read_attempt); the callee owns held. */
    void (*hold)(void *hold_ctx, const char *file, struct store_held *held);
    void *hold_ctx;
    /* Files not read that a caller knows of (a profile re-rendered from the files it
     * held: those it held nothing of): recorded as unreadable, with their reason. */
    const rm_unreadable *extra_unreadable;
    uint32_t extra_unreadable_count;
} rm_options;

/* Loads the run under path (a file, a run directory or a directory of runs: its
 * newest attempt and those that ran at the same time, run_join.h). A file that cannot be read is recorded in unreadable and skipped. Returns
 * 0, or a negative code with one line in err (no such path, no .lapse file, out of
 * memory); a run whose every file is unreadable still loads (worker_count 0). */
int run_model_load(const char *path, const rm_options *opt, run_model *m, char *err,
                   size_t errlen);
/* Loads one attempt given as files in memory (nothing is opened): dir names the run
 * directory (the file itself when single_file), files their names, as reports name
 * them, in name order, and bytes (store_buffer). No temporaries are looked for: there
 * is no directory. 0, or -ENOMEM with one line in err. */
struct store_buffer;
int run_model_load_mem(const char *dir, int single_file, const struct store_buffer *files,
                       size_t count, const rm_options *opt, run_model *m, char *err,
                       size_t errlen);
void run_model_free(run_model *m);

/* Merges one decoded file into m as a worker (used by run_model_load; exposed for
 * tests and tools that build models from memory). file names it in reports.
 * Returns 0, -ENOMEM, -EINVAL (a span tree that does not hold together) or -ERANGE
 * (sums run_model_check rejects). */
struct store_file;
int run_model_add(run_model *m, const char *file, const struct store_file *f);
/* Whether a file's sums are ones a writer can produce: a path's children hold no
 * more time than the path's child time, and the child time is no more than the
 * path's total plus the process's wall time (a span still open when a snapshot
 * is written holds children its total does not have yet); figures estimated from
 * sampled spans are not held to it. 0, -ERANGE with one line in why, or -ENOMEM. */
int run_model_check(const struct store_file *f, char *why, size_t whylen);
/* Records an image left out as the same process as kept. 0 or -ENOMEM. */
int run_model_add_duplicate(run_model *m, const char *file, const char *kept);
/* Records a file that could not be read. 0 or -ENOMEM. */
int run_model_add_unreadable(run_model *m, const char *file, const char *reason);
/* After the last add: sorts roles, builds hosts, per-role busy
 * statistics and worker staleness. 0 or -ENOMEM. */
int run_model_finish(run_model *m, const rm_options *opt);

/* A path that holds more time than its role's busy time (the denominator of every
 * share) has no share: its files do not hold together. */
static inline int rm_over_busy(const run_model *m, const rm_path *p)
{
    return p->parent != RM_NONE && p->total_ns > m->roles[p->role].busy_ns;
}

/* 1 when host is one of the names of the reader's host (NULL view: never). */
int rm_on_this_host(const rm_host_view *view, const char *host);
/* 1 when the view says no process has pid on its host (0 when alive or unknown). */
int rm_pid_gone(const rm_host_view *view, int64_t pid);

/* Adds to m (after run_model_finish) the leftover temporaries in the directories
 * that hold files (the attempt's count paths) whose writer view says is gone.
 * 0 or -ENOMEM. */
int rm_find_leftovers(run_model *m, const rm_host_view *view, char *const *files, size_t count);

/* Whether a worker takes part in cross-rank figures (a rank a key can hold). */
static inline int rm_has_rank(const rm_worker *w) { return w->rank >= 0 && w->rank < (int64_t)RM_NONE; }

/* Path p's total in each rank slot of its window: rank_n values, slot rank_lo first. */
static inline const uint64_t *rm_rank_totals(const rm_path *p)
{
    return p->rank_cap > 1 ? p->rank_totals : &p->rank_total;
}

/* The string of path i: its names joined with "/" ("" for a role root); below the
 * top level, one longer than RM_PATH_SHOWN bytes is "..." and its last
 * RM_PATH_SHOWN - 3 bytes. Made on demand from the tree (the model holds no path
 * strings): into buf, RM_PATH_BUF bytes, walking up at most RM_PATH_SHOWN + 1 bytes
 * of names; a top-level path's is its name (returned, buf unused). */
const char *rm_path_str(const run_model *m, uint32_t i, char *buf);
/* Whether path i's string is longer than RM_PATH_SHOWN bytes (rm_path_str cuts it). */
int rm_path_cut(const run_model *m, uint32_t i);

/* The name of a string id. */
static inline const char *rm_str(const run_model *m, uint32_t id) { return m->strings[id]; }
/* A path's self time: its total minus its child spans' time, never below 0. */
static inline uint64_t rm_self_ns(const rm_path *p)
{
    return p->total_ns > p->child_ns ? p->total_ns - p->child_ns : 0;
}

#endif
