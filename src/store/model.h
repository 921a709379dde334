/* The content of one .lapse file, as the writer takes it and the reader gives it.
 * The byte layout is specified in docs/format.md. */
#ifndef LAPSE_STORE_MODEL_H
#define LAPSE_STORE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define STORE_FORMAT_VERSION 1u

typedef struct store_meta {
    uint32_t format_version;
    char *lapse_version;
    char *host;
    char *role;
    char *run_id;
    char *job_id;       /* "" when unknown */
    char *launcher;     /* what gave the rank: "openmpi", "torchrun", "slurm", ...; "" */
    char *end_reason;   /* "" for a periodic snapshot; "exit", "stop", "SIGTERM", ... */
    char *clock_source; /* "tsc" or "monotonic" */
    int64_t pid, ppid;
    int64_t rank, world_size; /* -1 when unknown */
    int64_t local_rank;       /* rank among the job's processes on this host; -1 unknown */
    uint64_t start_real_ns, start_mono_ns; /* session start */
    uint64_t write_real_ns, write_mono_ns; /* when this file was written */
    uint64_t anchor_real_ns, anchor_mono_ns; /* one instant on both clocks */
    uint64_t wall_ns, cpu_user_ns, cpu_sys_ns, max_rss_kb; /* this process so far */
    uint32_t cpu_unknown; /* 1: cpu_user_ns and cpu_sys_ns were not measured (they are 0) */
    int64_t ctx_voluntary, ctx_involuntary; /* context switches so far; -1 unknown (absent) */
    double tsc_hz; /* 0 with the monotonic clock */
    uint64_t write_seq; /* 1 for the first write of the session, then +1 */
    uint32_t final;     /* 1: written at stop, exit or a terminating signal */
    uint32_t snapshot_interval_ms;
    uint64_t max_spans, max_depth, max_paths, max_counters;
    uint32_t cpu_sample_ms; /* the CPU sampler's period; 0 when it did not run */
    uint64_t cpu_ticks;      /* ticks the CPU sampler took */
    uint64_t cpu_ticks_late; /* of them, taken 200 us or more after their time */
    uint64_t cpu_sampler_ns; /* the sampler thread's CPU time on them */
    uint32_t cpu_sampler_rt; /* 1: the sampler thread had real-time priority */
    uint32_t thread_names;  /* 1: readers nest each thread's spans under its name */
    uint32_t features;      /* the session's LAPSE_FEATURE_* bits; 0 in files written before
                               they were recorded (and by lapse record) */
    uint64_t timeline_dropped; /* completed spans the timeline had no room for */
    uint64_t folded_depth;     /* spans folded into their parent: depth bound */
    uint64_t folded_paths;     /* spans folded into their parent: path bound */
    uint64_t unmatched_ends;   /* LAPSE_END without a matching open span, or spans closed implicitly */
    uint64_t dropped_counters; /* counter updates with no room in the counter table */
    uint64_t write_failures;   /* writes of this session that failed before this one */
    char *write_error;         /* the last of those failures; "" (or NULL) when none */
    char *missing; /* features asked for that failed to start, with why ("device: why",
                      joined by "; "); "" (or NULL) when none */
    char *absent;  /* features asked for whose vendor library this machine does not have
                      (a GPU collector without a driver), with why, as missing */
    char *gpu_time_missing;    /* why a gpu_time phase had no GPU time (the first); "" or NULL */
    /* ACTIVITY let CUPTI go to torch.profiler recording CUDA (Kineto needs the one
     * subscription): how many times, for how long in all, from the first's start to
     * the last's end (CLOCK_MONOTONIC; to 0: paused at this write) */
    uint32_t activity_pauses;
    uint64_t activity_paused_ns, activity_pause_from_ns, activity_pause_to_ns;
    /* a heavy backend's window (Python's backend=, backend_window=, window_phase=):
     * window_backend "" (or NULL) when none was asked for */
    char *window_backend;          /* "torch" or "viztracer" */
    char *window_phase;            /* the span whose entries are counted */
    uint64_t window_start, window_stop; /* entries asked: opens at start, closes at stop */
    uint64_t window_entries;       /* entries counted when the record was last updated */
    uint64_t window_opened_entry;  /* the entry it opened on; 0: it did not open */
    uint64_t window_closed_entry;  /* the entry it closed on; 0: not on an entry (the
                                      session stopped inside it, or it did not open) */
    uint64_t window_open_ns, window_close_ns; /* ns into the session; close 0: still open */
    char *window_trace;            /* the trace written; "" when none */
    char *window_error;            /* why the backend did not run or write; "" when none */
} store_meta;

typedef struct store_thread {
    int64_t tid;
    char *name;
} store_thread;

/* One path of one thread. Each thread has a root node (depth 0, name 0, parent -1)
 * whose child_ns is the time of its top-level spans. */
typedef struct store_node {
    int32_t parent; /* index in nodes, -1 for a thread root */
    uint32_t thread;
    uint32_t name;
    uint32_t depth;
    uint64_t calls, total_ns, child_ns, min_ns, max_ns;
    uint64_t folded; /* spans folded into this node by the depth or path bound */
    /* Histogram: hist[i] counts bucket hist_lo + i, for i < hist_n. NULL: all zero.
     * The reader returns the tight window of non-zero buckets; a writer may pass a
     * dense HIST_BUCKETS array with hist_lo = hist_n = 0. */
    uint64_t *hist;
    uint16_t hist_lo, hist_n;
    /* Sampled spans: 0 when measured, else the largest scale its figures carry (1
     * entry in sample_stride was measured and scaled up): every figure an estimate. */
    uint32_t sample_stride;
    uint32_t child_estimated; /* child_ns (and so self time) includes estimates */
    /* CPU sampler: its ticks at which an entry of the path was open on the thread,
     * and of them those at which the thread was off CPU (wait% = wait / ticks) */
    uint64_t cpu_ticks, cpu_wait_ticks;
    /* gpu_time phases: GPU time of the entries that have it, those entries, and the
     * entries whose GPU time is missing (GPU_TIME section) */
    uint64_t gpu_ns, gpu_timed, gpu_untimed;
} store_node;

typedef struct store_counter {
    uint32_t node;
    uint32_t name;
    int64_t sum;
    uint64_t updates;
} store_counter;

/* One completed span of the timeline, on CLOCK_MONOTONIC. */
typedef struct store_span {
    uint32_t thread;
    uint32_t name;
    uint32_t depth;
    uint64_t begin_ns, end_ns;
} store_span;

/* One record of the process sampler: what the process read and wrote (less lapse's
 * own writes) and its RSS over `intervals` consecutive sampler intervals. */
typedef struct store_proc_sample {
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC: first reading, last reading */
    uint64_t read_chars, write_chars, read_bytes, write_bytes; /* /proc/self/io deltas */
    uint64_t quiet_chars;  /* of read_chars + write_chars: moved in intervals with no phase
                              open at either end and none closed between */
    uint64_t phased_chars; /* moved in intervals with a phase open at both ends */
    uint64_t rss_max_bytes; /* largest RSS read at the ends of its intervals */
    uint32_t intervals;       /* sampler intervals summed (1 .. per_record) */
    uint32_t quiet_intervals; /* of them, with no phase open (as quiet_chars) */
} store_proc_sample;

/* The process sampler (section PROCESS_SAMPLES). */
typedef struct store_proc_samples {
    uint32_t interval_ms; /* the sampler's period; 0: it did not run */
    uint32_t per_record;  /* intervals per record: doubles when the record bound is reached */
    uint64_t unreadable;  /* intervals whose counters could not be read: in no record */
    uint64_t sampler_cpu_ns; /* CPU time the sampler's readings took, all intervals */
    store_proc_sample *records; /* in time order, not overlapping */
    uint32_t count;
} store_proc_samples;

/* Python stack samples taken from outside the process (section SAMPLES, docs/format.md).
 * Aggregated: one entry per distinct (process, thread, span path, state, stack), with
 * the number of samples that saw it and the time they stand for. Strings have their
 * own table (strings[0] is ""). Every figure is an estimate from sampling. */
enum store_sample_state {
    STORE_SAMPLE_RUNNING = 1u << 0, /* the thread was on a CPU (or not known to wait) */
    STORE_SAMPLE_GIL = 1u << 1,     /* the thread held the GIL */
    STORE_SAMPLE_IDLE = 1u << 2,    /* the thread was known to wait (sleep, lock, I/O) */
};
#define STORE_SAMPLE_STATE_MASK 7u

typedef struct store_sample_frame {
    uint32_t function; /* string id: the qualified name */
    uint32_t file;     /* string id: the file name */
    uint32_t line;     /* 0 when unknown */
} store_sample_frame;

typedef struct store_sample_process {
    int64_t pid, ppid;       /* ppid: -1 when unknown */
    uint32_t command;        /* string id: the command line, arguments joined by " " */
    uint32_t python_version; /* string id: e.g. "3.12.1" */
} store_sample_process;

typedef struct store_sample_stack {
    int64_t pid, tid;
    uint32_t thread_name; /* string id, 0 when unknown */
    uint32_t span_path;   /* string id of the lapse span path open on the thread, names
                             joined with "/"; 0 when none */
    uint32_t state;       /* STORE_SAMPLE_* bits */
    uint32_t depth;       /* frames, root first, at frame_ids[first .. first + depth) */
    uint64_t first;
    uint64_t count;       /* samples that saw this stack */
    uint64_t weight_ns;   /* time those samples stand for */
} store_sample_stack;

typedef struct store_samples {
    char *mode;                      /* "wall", "cpu" or "gil" */
    double rate_asked_hz, rate_achieved_hz;
    uint64_t samples;                /* sampling passes taken */
    uint64_t late_samples;           /* passes that started later than one period late */
    uint64_t read_errors;            /* reads of the target that failed or were torn */
    uint64_t start_real_ns, end_real_ns; /* the recording, CLOCK_REALTIME */
    uint64_t duration_ns;
    uint32_t idle;                   /* 1: idle threads were kept (--idle) */
    char **strings;
    uint32_t string_count;
    store_sample_process *processes;
    uint32_t process_count;
    store_sample_frame *frames;
    uint32_t frame_count;
    uint32_t *frame_ids;
    uint64_t frame_id_count;
    store_sample_stack *stacks;
    uint32_t stack_count;
} store_samples;

/* A child process this one forked during its session (section CHILDREN), as the child
 * recorded itself: its pid and when it was forked (CLOCK_MONOTONIC). */
typedef struct store_child {
    int64_t pid;
    uint64_t fork_mono_ns;
} store_child;

/* GPU activity (section GPU_ACTIVITY): kernels, copies and sets CUPTI recorded,
 * each with the span open on the thread that launched it. */
enum store_gpu_kind { STORE_GPU_KERNEL = 1, STORE_GPU_MEMCPY = 2, STORE_GPU_MEMSET = 3 };
/* MISSING: the collector ran in the parent and cannot in this forked child (the note
 * says so); a collector that could not start writes no section (META missing) */
enum store_gpu_state { STORE_GPU_COLLECTED = 1, STORE_GPU_MISSING = 2 };
#define STORE_GPU_NO_NODE UINT32_MAX /* a record whose launch the collector did not see */

typedef struct store_gpu_record {
    uint32_t kind;      /* store_gpu_kind */
    uint32_t copy_kind; /* memcpy: CUPTI's CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD,
                           ...); else 0 */
    uint32_t device, stream;
    uint32_t name; /* kernels: index in the section's names; else 0 */
    uint32_t node; /* the launching span's node (a thread root: no span was open), or
                      STORE_GPU_NO_NODE */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    uint64_t bytes;            /* copies and sets; 0 for kernels */
    uint64_t launch_ns;        /* CLOCK_MONOTONIC at the call that launched it; 0 unseen */
} store_gpu_record;

typedef struct store_gpu_activity {
    uint32_t state; /* store_gpu_state */
    char *note;     /* missing: why; collected: "" or what was lost (a flush that failed) */
    uint64_t dropped; /* records past the collector's bound (dropped_activities) */
    char **names;     /* names[0] is "" */
    uint32_t name_count;
    store_gpu_record *records;
    uint32_t count;
} store_gpu_activity;
/* A signal or a wait (section CAUSALITY, lapse.h's lapse_signal / lapse_wait_on), on
 * CLOCK_MONOTONIC: a signal has end_ns == begin_ns; a wait lasted begin_ns..end_ns. */
typedef struct store_causal {
    uint32_t thread; /* index in threads */
    uint32_t name;   /* index in names */
    uint32_t kind;   /* STORE_CAUSAL_SIGNAL or STORE_CAUSAL_WAIT */
    uint64_t begin_ns, end_ns;
} store_causal;

enum { STORE_CAUSAL_SIGNAL = 1, STORE_CAUSAL_WAIT = 2 };
/* GPU telemetry (section GPU_DEVICE, docs/format.md): per device whose process
 * list held this process, over the ticks at which it did. Percentages are NVML's
 * integer percent, summed over ticks: a mean is sum / ticks. */
typedef struct store_gpu_phase {
    uint32_t name;        /* the top-level span open at those ticks (a name id); 0: the
                             phases past the writer's bound, together */
    uint64_t ticks;       /* ticks with it open and this process's utilisation read */
    uint64_t own_pct_sum; /* this process's utilisation summed over them */
} store_gpu_phase;

typedef struct store_gpu_device {
    uint32_t index;   /* NVML's device index */
    char *name;       /* nvmlDeviceGetName */
    uint64_t ticks;   /* readings while its process list held this process */
    uint64_t busy_ticks, busy_pct_sum; /* of them, with the whole device's utilisation read */
    uint64_t own_ticks, own_pct_sum;   /* with this process's utilisation read; 0: n/a */
    uint64_t mem_peak_bytes;           /* the most device memory this process held */
    store_gpu_phase *phases;
    uint32_t phase_count;
    char *uuid;       /* nvmlDeviceGetUUID ("GPU-..."), section GPU_DEVICE_IDS; "" when the
                         call failed; NULL: the file has no id for it (an older writer) */
    char *uuid_error; /* why the call failed, "" when it did not; NULL with uuid */
} store_gpu_device;

typedef struct store_gpu {
    uint32_t interval_ms;  /* the collector's period; 0: it did not run (no section) */
    uint64_t failed_calls; /* NVML calls that failed while it ran (the figures miss them) */
    char *error;           /* the last of those failures; "" when none */
    store_gpu_device *devices;
    uint32_t device_count;
} store_gpu;

/* VRAM from torch (section GPU_MEMORY, docs/format.md): per torch device index, the
 * caching allocator's peaks as the Python side read them (torch.cuda.max_memory_*),
 * the largest over the session's readings. */
typedef struct store_gpu_memory_device {
    uint32_t index;                /* torch's device index (CUDA_VISIBLE_DEVICES renumbers) */
    char *uuid;                    /* get_device_properties(i).uuid; "" unknown */
    char *name;                    /* get_device_properties(i).name */
    uint64_t allocated_peak_bytes; /* the largest max_memory_allocated read */
    uint64_t reserved_peak_bytes;  /* the largest max_memory_reserved read */
} store_gpu_memory_device;

typedef struct store_gpu_memory {
    uint64_t readings; /* times torch was read */
    uint64_t resets;   /* readings at which a peak was below the one before: the program
                          reset torch's peak stats (a peak reset unread is missed) */
    char *error;       /* the last reading that failed, "call: why"; "" when none */
    store_gpu_memory_device *devices;
    uint32_t device_count;
} store_gpu_memory;

typedef struct store_file {
    store_meta meta;
    char **names; /* names[0] is "" */
    uint32_t name_count;
    store_thread *threads;
    uint32_t thread_count;
    store_node *nodes;
    uint32_t node_count;
    store_counter *counters;
    uint32_t counter_count;
    store_span *spans;
    uint64_t span_count;
    store_proc_samples proc;
    store_samples *samples; /* NULL: the file holds no Python stack samples */
    store_child *children;  /* the children it forked, in fork order */
    uint32_t child_count;
    uint64_t children_unrecorded; /* forked children past the writer's bound */
    store_gpu_activity *activity; /* NULL: no GPU activity collector ran (ACTIVITY not asked
                                     for, or it could not start: META missing, absent) */
    store_causal *causal; /* its signals and completed waits, in order of record */
    uint32_t causal_count;
    uint64_t causal_dropped; /* signals and waits past the writer's bound */
    store_gpu gpu; /* interval_ms 0: no GPU section */
    store_gpu_memory *gpu_memory; /* NULL: no VRAM from torch (no GPU_MEMORY section) */
    void *owned; /* memory behind the pointers above: the reader's arena, or the
                  * writer's copies of histograms with a pending increment */
} store_file;

#endif
