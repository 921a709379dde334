/* The report of a run as data: every figure `lapse report` shows, in text or JSON, is
 * computed here, once. Render formats it (render/report_render.h) and chooses no
 * number of its own; `lapse diff` and the Python package read the same model.
 *
 * Built from a merged run model (run_model.h): run_stats orders each role's paths and
 * makes each path's figures (self time, quantiles, shares, wait%, the spread across
 * ranks) on demand (run_stats_phase), for the rows a renderer prints; this adds
 * what the blocks of a role show around them (counters with rates, I/O by phase,
 * the process sampler's I/O, memory, the top-level rest, the order by slowest rank),
 * the run's header and ranks, the CAVEATS, the Python samples' tables, and the run's
 * paths merged over every role. */
#ifndef LAPSE_ANALYZE_REPORT_MODEL_H
#define LAPSE_ANALYZE_REPORT_MODEL_H

#include "causality.h"
#include "caveats.h"
#include "gpu_activity.h"
#include "run_model.h"
#include "run_ranks.h"
#include "run_stats.h"
#include "sample_stats.h"

#include <stdint.h>

typedef struct report_inputs {
    unsigned top; /* rows of the top lists (top-level spans, dominant phases, ACROSS
                     RANKS, functions): 0 means 10 */
    int run_paths; /* also the paths merged over every role (the JSON report's
                      run_paths; the text shows none: ~100 bytes a distinct path) */
} report_inputs;

/* ---- the four numbers of a process or a role ---- */

/* Wall, CPU, cores busy (CPU / wall), user/sys and context switches. A figure some
 * process did not measure (a file of an older writer, a target lapse record could not
 * read at its end) is not known for its role: has_* 0, shown "-", never 0. */
typedef struct report_usage {
    uint32_t processes; /* behind the figures */
    uint64_t wall_ns;   /* a process: its session's wall time; a role: from the earliest
                           session start of its processes to the latest end */
    int has_cpu;        /* the CPU time of every one of them was measured */
    uint64_t cpu_ns, cpu_user_ns, cpu_sys_ns; /* cpu = user + sys (getrusage) */
    int has_cores_busy; /* has_cpu and a wall time */
    double cores_busy;  /* cpu / wall: CPUs kept busy on average */
    int has_ctx;        /* the context switches of every one of them are known */
    uint64_t ctx_voluntary, ctx_involuntary; /* ru_nvcsw, ru_nivcsw */
} report_usage;

/* The usage of worker w of m, and of role r (over its processes). */
void report_usage_of_worker(const rm_worker *w, report_usage *u);
void report_usage_of_role(const run_model *m, uint32_t r, report_usage *u);

/* ---- per role ---- */

/* Whether a block of the report has something to show. Decided here, obeyed by every
 * renderer, so that text and JSON agree: no block without data. */
typedef enum report_state {
    REPORT_NOT_COLLECTED = 0, /* no process of the role collected it: no block */
    REPORT_UNREADABLE = 1,    /* collected, and nothing could be read: one line */
    REPORT_NONE_MEASURED = 2, /* collected, and what it measured is zero: one line */
    REPORT_MEASURED = 3,      /* figures: the block */
} report_state;

/* The state's name in the JSON report: "not_collected", "unreadable", ... */
const char *report_state_name(report_state s);

typedef enum report_counter_kind {
    REPORT_COUNTER_PLAIN = 0, /* the program's own */
    REPORT_COUNTER_IO = 1,    /* io.*: an io=True phase's bytes (I/O BY PHASE) */
    REPORT_COUNTER_MEM = 2,   /* mem.*: an io=True phase's RSS growth (MEMORY) */
} report_counter_kind;

typedef struct report_counter {
    uint32_t counter;  /* index in run_model.counters */
    uint32_t kind;     /* report_counter_kind */
    int has_rate;      /* per_second is defined: its path has time, the sum did not overflow */
    double per_second; /* sum per second of its path's total time */
    int has_per_unit;  /* ns_per_unit is defined: a positive sum that did not overflow */
    double ns_per_unit; /* its path's total time per unit counted */
} report_counter;

/* The counters of one path: counters[first .. first + count) of its role. */
typedef struct report_counter_range {
    uint32_t first, count;
    uint32_t plain; /* of them, REPORT_COUNTER_PLAIN */
} report_counter_range;

/* I/O BY PHASE: an io=True phase's bytes, measured at its own entry and exit. */
typedef struct report_io_phase {
    uint32_t phase; /* index in rs_role.phases */
    int64_t read_chars, write_chars, read_bytes, write_bytes, unreadable;
    uint64_t cache_read_bytes; /* read_chars beyond read_bytes: what the page cache served */
    int has_disk_rate;
    uint64_t disk_bytes_per_second; /* read_bytes + write_bytes per second of its time */
} report_io_phase;

/* The process sampler's I/O of a role, beyond run_stats' sums (rs_io). */
typedef struct report_process_io {
    double peak_bin;              /* the largest column of the sparkline, bytes */
    uint64_t peak_bytes_per_second; /* that column's rate (0 without columns) */
    uint64_t read_cache_bytes;    /* read_chars beyond read_bytes */
    int has_shares;               /* some byte moved and the role recorded spans: the three
                                     shares below hold */
    double quiet_share;           /* moved while no phase was open */
    double phased_share;          /* moved with a phase open throughout */
    double mixed_share;           /* in intervals where phases opened or closed */
    int has_sampler_cost;
    double sampler_cpu_ns_per_interval;
} report_process_io;

/* RSS growth of an io=True phase, measured at each call's entry and exit. */
typedef struct report_growth {
    uint32_t phase;           /* index in rs_role.phases */
    int64_t growth_bytes;     /* over all its calls; may be negative */
    uint64_t calls;
    uint64_t per_call_bytes;  /* |growth| / calls (whole bytes), the sign of growth_bytes */
    int64_t unmeasured;       /* calls whose RSS could not be read */
} report_growth;

typedef struct report_memory {
    report_state state;           /* MEASURED: some figure below exists; else
                                     NOT_COLLECTED, or UNREADABLE (collected, no figure) */
    uint32_t rusage_processes;    /* processes of the role with a getrusage peak */
    uint32_t rusage_peak_worker;  /* RM_NONE when none */
    uint64_t rusage_peak_bytes;   /* the largest, getrusage's ru_maxrss */
    uint64_t rusage_mean_bytes;   /* over rusage_processes */
    report_growth *growth;        /* io=True phases with an RSS growth, in phase order */
    uint32_t growth_count;
} report_memory;

/* GPU BY PHASE: this run's utilisation of a device while a top-level span was open. */
typedef struct report_gpu_phase {
    uint32_t name;  /* string id; 0: the phases past the writer's bound, together */
    uint64_t ticks; /* readings with it open and this run's utilisation read */
    double own_pct; /* this run's utilisation over them, mean percent */
} report_gpu_phase;

/* One device of one process of the role (a device whose process list held it). */
typedef struct report_gpu {
    uint32_t worker;
    const rm_gpu_device *device;
    uint64_t ticks;            /* readings while the device held the process */
    uint32_t interval_ms;      /* between readings */
    int has_busy;              /* the whole device's utilisation was read */
    double busy_pct, idle_pct; /* the whole device (every process on it), mean percent */
    int has_own;               /* this run's utilisation was read: else n/a, not 0 */
    double own_pct;            /* this process's, mean percent */
    uint64_t mem_peak_bytes;   /* the most device memory the process held */
    report_gpu_phase *phases;  /* most readings first */
    uint32_t phase_count;
    int32_t vram;              /* the torch line joined to it (index in vram), -1: none */
} report_gpu;

/* How a torch device (report_vram) met NVML's (report_gpu). */
typedef enum report_vram_join {
    REPORT_VRAM_JOINED = 0,         /* one line: gpu is NVML's line of the same uuid and host */
    REPORT_VRAM_NO_TORCH_UUID = 1,  /* torch gave no uuid */
    REPORT_VRAM_NO_NVML = 2,        /* NVML has no line on its host (DEVICE not collected,
                                       or no device's process list held the process) */
    REPORT_VRAM_NO_MATCH = 3,       /* NVML's lines of its host, every uuid known: none its */
    REPORT_VRAM_NVML_UUID_UNKNOWN = 4, /* none matched, and an NVML line of its host has no
                                          uuid: join_why says why (the failed call; "" when
                                          its file records none: an older writer) */
} report_vram_join;

/* VRAM from torch, one device (by its uuid; one without a uuid: of its process alone)
 * over the processes of the role that read it. A peak is the largest process peak:
 * a sum of per-process peaks is no peak. Joined to NVML's line (report_gpu) of the
 * device of the same uuid on the same host (torch's index is relative to
 * CUDA_VISIBLE_DEVICES, NVML's is physical: never by index), that of its own process
 * first; unjoined, NVML's figures for it are unknown ("-"), never 0. */
typedef struct report_vram {
    uint32_t worker;                    /* the process with the largest allocated peak */
    const rm_gpu_memory_device *device; /* its reading: torch index, uuid, name */
    uint32_t processes;                 /* processes of the role that read it */
    uint64_t allocated_peak_bytes;      /* the largest max_memory_allocated of them */
    uint64_t reserved_peak_bytes;       /* the largest max_memory_reserved of them */
    uint32_t join;                      /* report_vram_join */
    uint32_t gpu;                       /* JOINED: its NVML line, an index in gpus */
    const char *join_why;               /* NVML_UUID_UNKNOWN: why; else "" */
} report_vram;

/* The same device: NVML's "GPU-8-4-4-4-12" and torch's str(uuid), which lacks "GPU-"
 * (torch's uuid_to_string); case aside. "" matches nothing. */
int report_uuid_same(const char *a, const char *b);

typedef struct report_role {
    const rm_role *role;
    const rs_role *stats;
    report_usage usage;            /* the four numbers over its processes */
    double busy_mean_ns;           /* busy time per process */
    int busy_estimated;            /* a top-level span is sampled: busy time is an estimate */
    uint32_t top_shown;            /* top-level spans shown (at most top) */
    uint32_t rest_count;           /* the others */
    uint64_t rest_ns;              /* their total */
    double rest_share;             /* of the role's busy time; -1 without busy time */
    uint32_t dominant_shown;       /* phases by self time shown (at most top) */
    uint32_t estimated_shown;      /* of those, with an estimated figure */
    report_counter *counters;      /* every counter of the role's paths */
    uint32_t counter_count;
    report_counter_range *phase_counters; /* parallel to stats->phases */
    report_counter_range root_counters;   /* outside any span */
    uint32_t *by_rank_max;         /* phase indices, largest slowest-rank total first: the
                                      first rank_rows_shown (at most top); NULL unless the
                                      role has 2 ranks or more */
    uint32_t rank_rows_shown;
    uint32_t *gpu_phases;          /* gpu_time phases (with a GPU figure, measured or
                                      missing): their indices in stats->phases, in order */
    uint32_t gpu_phase_count;
    const char *gpu_missing_why;   /* why some had none: the first reason of the role's
                                      processes; "" when every entry has its GPU time */
    report_io_phase *io_phases;    /* io=True phases, in phase order */
    uint32_t io_phase_count;
    report_state spans;            /* NOT_COLLECTED: no process of the role recorded spans;
                                      NONE_MEASURED: they did, and none was recorded */
    report_state process_io_state; /* the process sampler's I/O (the I/O block) */
    report_process_io process_io;
    report_memory memory;
    report_activity activity;                /* GPU ACTIVITY BY SPAN (ACTIVITY) */
    report_state gpu_state;        /* MEASURED: gpus below; NOT_COLLECTED: no GPU block */
    report_gpu *gpus;              /* in worker order, each worker's devices in its order */
    uint32_t gpu_count;
    report_state vram_state;       /* VRAM from torch: MEASURED (vram below), UNREADABLE
                                      (every reading failed: vram_error), NOT_COLLECTED */
    report_vram *vram;             /* devices with a peak above 0, in order of first sight */
    uint32_t vram_count;
    uint64_t vram_resets;          /* readings of its processes that found a peak reset */
    const char *vram_error;        /* the first failure of its processes; "" when none */
    int samples_only;              /* every process holds Python samples and no span nor
                                      counter (lapse record's files), and the role has no
                                      I/O nor MEMORY block: its samples say it all */
} report_role;

/* ---- the run ---- */

typedef struct report_header {
    int has_runtime;      /* some process was read */
    uint64_t runtime_ns;  /* earliest start to latest write; 0 when that is not positive */
    uint32_t final;       /* processes whose last file is final */
    uint32_t not_final;
    int mixed_run_ids;    /* the files carry more run ids than the attempts they were
                             read from (one, or the joined ones): m->run_ids */
} report_header;

/* ---- Python samples ---- */

typedef struct report_samples_thread {
    int64_t tid;
    uint32_t name; /* string id of the samples, 0 unknown */
    ss_group group;
} report_samples_thread;

typedef struct report_samples_process {
    int64_t pid;
    const store_sample_process *info; /* NULL when the samples hold none */
    ss_group group;
    report_samples_thread *threads;
    uint32_t thread_count;
} report_samples_process;

typedef struct report_samples_span {
    const char *path;
    ss_group group;
} report_samples_span;

/* The samples of one file. Shares and times are estimates from sampling. */
typedef struct report_samples {
    uint32_t worker;
    const store_samples *samples;
    int has_stacks;     /* some stack was sampled (process_count > 0): else the block is
                           one line */
    double late_share;  /* late passes / passes; -1 without passes */
    double lost_share;  /* passes lost to read errors / passes */
    int lost_biased;    /* enough lost that shares lean toward callers */
    report_samples_process *processes;
    uint32_t process_count;
    report_samples_span *spans; /* heaviest first */
    uint32_t span_count;
    ss_span_total *span_totals; /* owns the spans' paths */
    uint32_t span_total_count;
} report_samples;

/* ---- the run's paths: each span path merged over every role ---- */

/* A counter of a run path: the counters of that name of its roles' paths, added. */
typedef struct report_run_counter {
    uint32_t name;  /* string id */
    int64_t sum;    /* at INT64_MAX or INT64_MIN when it overflowed */
    int overflowed; /* some role's sum overflowed, or their total does */
} report_run_counter;

/* One span path (its chain of names from a top-level span) merged over every role,
 * thread and process of the run: what the Python package's lapse.load_run(...).tree
 * holds. Two roles' paths are the same run path when their names are the same, name
 * by name (not their "/"-joined strings). */
typedef struct report_run_path {
    uint32_t parent; /* index in report_model.run_paths; RM_NONE for a top-level span */
    uint32_t name;   /* string id */
    uint64_t calls, total_ns;
    uint64_t self_ns; /* the sum of its roles' self times (rm_self_ns) */
    int estimated;    /* in some role its figures are estimates (a sampled phase, or the
                         self time of a parent of one) */
    uint32_t roles_first, role_count; /* report_model.run_path_roles[first .. first + count):
                                         the roles that have it, in role order */
    uint32_t counters_first, counter_count; /* report_model.run_counters[...], by name */
} report_run_path;

/* ---- a heavy backend's window (Python's backend=), one per process that asked ---- */

typedef enum report_window_state {
    REPORT_WINDOW_NOT_RUN = 0,     /* its backend could not run (the error says why) */
    REPORT_WINDOW_NOT_REACHED = 1, /* fewer entries than its start: it did not open */
    REPORT_WINDOW_OPEN = 2,        /* open when its file was written (a snapshot, or the
                                      process ended without stopping it) */
    REPORT_WINDOW_CLOSED = 3,      /* closed on its stop entry */
    REPORT_WINDOW_CUT = 4,         /* the session stopped inside it, and closed it then */
} report_window_state;

/* The state's name in the JSON report: "not_run", "not_reached", ... */
const char *report_window_state_name(report_window_state s);

typedef struct report_window {
    uint32_t worker;
    const rm_window *w;
    report_window_state state;
    uint64_t asked_last;              /* the last entry asked for: stop - 1 */
    int opened;                       /* OPEN, CLOSED, CUT: the fields below hold */
    uint64_t first_entry, last_entry; /* the entries inside it (opened); else 0, 0 */
    uint64_t open_at_ns, close_at_ns; /* on the run's clock (since its start); opened */
    int has_close;                    /* CLOSED, CUT: close_at_ns and open_for_ns hold */
    uint64_t open_for_ns;             /* close_at_ns - open_at_ns (0 if a file says less) */
} report_window;

/* The windows of m's workers, in worker order (report_windows.c): 0 or -ENOMEM. */
int report_windows_build(const run_model *m, report_window **out, uint32_t *count);

typedef struct report_model {
    const run_model *m;
    unsigned top;
    report_header header;
    run_ranks ranks;
    run_stats stats;
    report_role *roles; /* parallel to m->roles */
    report_usage *worker_usage; /* parallel to m->workers */
    report_samples *samples; /* files with Python samples, in worker order */
    uint32_t samples_count;
    caveat_list caveats;
    report_run_path *run_paths; /* in order of first sight: the roles in order, each
                                   role's phases in order (a parent before its children) */
    uint32_t run_path_count;
    int run_paths_built;        /* report_inputs.run_paths asked for them */
    uint32_t *run_path_roles;   /* role indices */
    report_run_counter *run_counters;
    uint32_t run_counter_count;
    causality causal; /* signals, waits, the critical path (present: some file has them) */
    report_window *windows; /* the processes that asked for a backend's window */
    uint32_t window_count;
} report_model;

/* Builds the report of m. 0, or -ENOMEM (r is then empty: no partial report). */
int report_model_build(const run_model *m, const report_inputs *in, report_model *r);
void report_model_free(report_model *r);

/* The run paths of r (r->stats and r->m built): 0 or -ENOMEM (run_paths.c). */
int report_run_paths_build(report_model *r);

/* The GPU block of role r (report_gpu.c), NVML's devices and torch's VRAM: 0 or
 * -ENOMEM. gpu_state is MEASURED when either has figures. */
int report_gpu_build(const run_model *m, uint32_t r, report_role *rr);
void report_gpu_free(report_role *rr);

/* The counter of a role by name on a phase (index in stats->phases), or NULL. */
const report_counter *report_counter_named(const report_model *r, uint32_t role, uint32_t phase,
                                           const char *name);

#endif
