/* lapse: named regions (spans), counters and session control.
 *
 * A span carries only a name. What is measured is decided by the active session.
 * With no active session every macro below is one predictable branch on a global.
 *
 *   LAPSE_SCOPE("solve");            span until the enclosing block ends
 *   LAPSE_BEGIN("io"); ... LAPSE_END("io");   span across blocks
 *   lapse_count("cells", n);         counter on the innermost open span
 *
 * A program linked with liblapse starts a session from the environment alone:
 *   LAPSE_PROFILE=1 LAPSE_RUN_DIR=runs LAPSE_ROLE=worker ./program
 */
#ifndef LAPSE_H
#define LAPSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LAPSE_VERSION_MAJOR 0
#define LAPSE_VERSION_MINOR 1

#if defined(__GNUC__)
#define LAPSE_API __attribute__((visibility("default")))
#else
#define LAPSE_API
#endif

/* A call site: a static descriptor interned to an integer id on first use.
 * Sites with the same name share one id. */
typedef struct lapse_site {
    const char *name;
    uint32_t id; /* 0 until interned */
} lapse_site;

/* Feature flags of a session: what it may collect. lapse_start refuses a flag it cannot
 * apply (an error and lapse_last_error() naming it), never drops one in silence. */
enum lapse_feature {
    LAPSE_FEATURE_SPANS = 1u << 0,    /* spans and counters (the span tree); without it a
                                         span is one branch and records nothing */
    LAPSE_FEATURE_TIMELINE = 1u << 1, /* raw (begin, end) records, bounded by max_spans
                                         (needs SPANS) */
    LAPSE_FEATURE_CPU = 1u << 2,      /* wait% per span: a sampler thread reads each
                                         thread's CPU clock (LAPSE_CPU_SAMPLE_MS, default
                                         10; needs SPANS) */
    LAPSE_FEATURE_IO = 1u << 3,       /* the process's I/O: the process sampler's I/O
                                         block (every process_sample_ms) and the bytes of
                                         LAPSE_IO_SCOPE spans */
    LAPSE_FEATURE_MEMORY = 1u << 4,   /* RSS: the peak (getrusage, the process sampler)
                                         and the RSS growth of LAPSE_IO_SCOPE spans */
    LAPSE_FEATURE_MARKERS = 1u << 5,  /* every span also an NVTX range (domain "lapse",
                                         start/end), for the NVTX tool capturing the
                                         process (nsys, Kineto: NVTX_INJECTION64_PATH).
                                         Collected only when such a tool attached at
                                         lapse_start: without one the session leaves it
                                         out (lapse_features(), lapse_feature_missing())
                                         and spans cost what they cost without it. Needs
                                         SPANS */
    LAPSE_FEATURE_DEVICE = 1u << 6,   /* GPU telemetry of the process (NVML, loaded at
                                         start: LAPSE_DEVICE_INTERVAL_MS, default 1000);
                                         where it cannot run the session runs without it
                                         and lapse_missing() says why */
    LAPSE_FEATURE_ACTIVITY = 1u << 7, /* GPU kernels, copies and sets (CUPTI, loaded at
                                         start: $LAPSE_CUPTI_PATH, else libcupti.so),
                                         each attributed to the span open on the thread
                                         that launched it; where it cannot run (no GPU,
                                         no CUPTI, another CUPTI subscriber) the session
                                         runs without it and lapse_missing() says why */
};
/* The process sampler's two halves, as one flag (what it was before they split). */
#define LAPSE_FEATURE_PROCESS (LAPSE_FEATURE_IO | LAPSE_FEATURE_MEMORY)
#define LAPSE_FEATURES_DEFAULT                                                            \
    (LAPSE_FEATURE_SPANS | LAPSE_FEATURE_TIMELINE | LAPSE_FEATURE_CPU | LAPSE_FEATURE_IO | \
     LAPSE_FEATURE_MEMORY | LAPSE_FEATURE_DEVICE | LAPSE_FEATURE_MARKERS | LAPSE_FEATURE_ACTIVITY)

typedef struct lapse_options {
    uint32_t features;             /* LAPSE_FEATURE_* bits; 0: $LAPSE_FEATURES ("spans,
                                      timeline,cpu,io,memory,markers": what a parent session
                                      exports), else LAPSE_FEATURES_DEFAULT */
    const char *role;              /* NULL: $LAPSE_ROLE, else "main" */
    const char *run_dir;           /* NULL: $LAPSE_RUN_DIR, else "lapse-runs" */
    uint64_t max_spans;            /* timeline bound; 0: $LAPSE_MAX_SPANS, else 100000 */
    uint32_t snapshot_interval_ms; /* periodic write; 0: $LAPSE_SNAPSHOT_MS, else 5000 */
    uint32_t max_depth;            /* deeper spans fold into their parent; 0: 64 */
    uint32_t max_paths;            /* distinct paths per thread before folding; 0: 4096 */
    int handle_signals;            /* flush on SIGTERM/SIGINT/SIGUSR1/SIGHUP; default 1 */
    int thread_names;              /* report each thread's spans under its name; default
                                      $LAPSE_THREAD_NAMES, else 0 */
    uint32_t process_sample_ms;    /* the process sampler's period (with
                                      LAPSE_FEATURE_IO or _MEMORY); 0: $LAPSE_PROCESS_SAMPLE_MS
                                      (0 there: off), else 1000; at least 10 */
    int share;                     /* the run readable by the user's group: directories
                                      0750 and files 0640 instead of 0700 and 0600 (the
                                      umask still applies); default $LAPSE_SHARE, else 0 */
} lapse_options;

/* Fills *options with the defaults ("from the environment"). */
LAPSE_API void lapse_options_init(lapse_options *options);

/* Starts a session (NULL: options from the environment). Returns 0, or a negative
 * errno-style code with lapse_last_error() saying why. */
LAPSE_API int lapse_start(const lapse_options *options);
/* Writes the final file and ends the session. Returns 0 or a negative code. */
LAPSE_API int lapse_stop(void);
/* Writes a snapshot now. */
LAPSE_API int lapse_flush(void);
/* Nonzero while a session records. */
LAPSE_API int lapse_is_active(void);
/* The message of the last failure of lapse_start/stop/flush in this process. */
LAPSE_API const char *lapse_last_error(void);
/* Changes the role of this process for the rest of the session (for example in a
 * forked worker); the next write goes to a file named after the new role. */
LAPSE_API int lapse_set_role(const char *role);
/* The path of the spans open on the stack of key (NULL: the thread's own) in
 * this thread, outermost first, names joined by sep; "" when none. Returns the
 * number of open spans. */
LAPSE_API uint32_t lapse_current_path(const void *key, char sep, char *buf, size_t len);

/* This process's I/O so far, as /proc/self/io counts it, less the bytes lapse's own
 * file writes moved: out[0] read_chars (bytes read by syscalls, page cache
 * included), out[1] write_chars, out[2] read_bytes (from the block device),
 * out[3] write_bytes (to it). Two readings around a phase give its I/O exactly.
 * Returns 0, or -1 when /proc could not be read (then record nothing). */
LAPSE_API int lapse_io_counters(uint64_t out[4]);

/* This process's resident set size now, in bytes (/proc/self/statm). Two readings
 * around a phase give the phase's RSS growth (the whole process's: other threads
 * count too). Returns 0, or -1 when it could not be read. */
LAPSE_API int lapse_rss_bytes(uint64_t *out);

/* For a binding's own session object: if the active session was started from the
 * environment (LAPSE_PROFILE=1, inherited from a parent) or continues in a forked
 * child, and nobody adopted it yet,
 * marks it adopted and returns 0; else returns -1. */
LAPSE_API int lapse_adopt_environment_session(void);
/* Names the calling thread in the files (a binding passes its own name for the
 * thread; C threads are named from the kernel's, pthread_setname_np). */
LAPSE_API void lapse_set_thread_name(const char *name);
/* The LAPSE_FEATURE_* bits the active session collects; 0 when none is active. */
LAPSE_API uint32_t lapse_features(void);
/* The features the active session was asked for and does not collect, each with
 * why ("device: libnvidia-ml.so.1: cannot open shared object file: ..."), joined
 * by "; "; "" when none (or no session). Written to its files: META "missing" (it
 * failed: a caveat of the report) and "absent" (its library is not on this machine,
 * as on one without a GPU driver: no caveat). */
LAPSE_API const char *lapse_missing(void);
/* Before a session: 0 when the collectors of features can start here; else the
 * error of the first that cannot (-ENOENT: its library is not on this machine), with
 * why its name and reason ("device: nvmlInit_v2: Driver Not Loaded (9)"), for a
 * start that must not go without them (Python's strict=True). -EBUSY while a
 * session is active. */
LAPSE_API int lapse_check_features(uint32_t features, char *why, size_t why_len);
/* Why the active session does not collect a feature it was asked for (one line), or
 * NULL when it does, was not asked for it, or no session is active. */
LAPSE_API const char *lapse_feature_missing(uint32_t feature);
/* Path of the file this process writes, or NULL when no session is active. */
LAPSE_API const char *lapse_file_path(void);

/* Phases whose GPU time is measured beside their wall time: CUDA events on the
 * default stream at both ends, through the CUDA runtime the program already loaded
 * (libcudart.so.13 or .12), on a thread with a CUDA context. lapse never loads CUDA
 * and never creates a context: without them the phase's GPU time is missing (counted
 * as such in the report, with the reason; never 0). */
#define LAPSE_GPU_TIME 1u /* its GPU time: a CUDA event at each end */
#define LAPSE_GPU_SYNC 2u /* cudaDeviceSynchronize at both ends (before its begin and
                             before its end): its wall time includes its GPU work */
typedef struct lapse_gpu_phase {
    int token;
    unsigned flags;
    void *events[2];
} lapse_gpu_phase;
LAPSE_API void lapse_gpu_phase_begin(lapse_gpu_phase *p, const char *name, unsigned flags);
LAPSE_API void lapse_gpu_phase_end(lapse_gpu_phase *p);
/* For bindings that measure GPU time themselves (Python: torch.cuda.Event): adds ns
 * of GPU time to the innermost open span of key's stack (NULL: the thread's current
 * stack); ns < 0: its GPU time is missing, why says why (one line). */
LAPSE_API void lapse_gpu_time_keyed(const void *key, int64_t ns, const char *why);

/* For language bindings: intern a name once, then begin/end by id. */
LAPSE_API uint32_t lapse_intern(const char *name);
LAPSE_API int lapse_span_begin_id(uint32_t name_id);
LAPSE_API void lapse_span_end_id(uint32_t name_id);
LAPSE_API void lapse_count_id(uint32_t name_id, int64_t n);
LAPSE_API void lapse_count_name(const char *name, int64_t n);
/* Spans whose nesting is kept per key on the calling thread (a binding passes,
 * for example, the current asyncio task's context): spans of different keys that
 * interleave on one thread do not nest in each other. NULL is the thread's own
 * stack, the one LAPSE_SCOPE uses; C spans nest under the key used last. The
 * token from begin goes to end. */
LAPSE_API int lapse_span_begin_keyed(const void *key, uint32_t name_id);
LAPSE_API void lapse_span_end_keyed(const void *key, int token);
/* A sampled span on the stack of key: with measured != 0 the span and everything
 * inside it are recorded scaled by stride and marked as estimates; otherwise
 * nothing inside it is recorded. The caller picks which entries to measure (one in
 * stride, by a deterministic count). Ends like any keyed span. */
LAPSE_API int lapse_span_begin_sampled(const void *key, uint32_t name_id, int measured,
                                       uint32_t stride);
/* Starts the stack of child_key, when it has no span of its own open, with the
 * spans open now on the stack of parent_key (same thread): a task created inside a
 * span nests its spans under it. The inherited spans are never closed from the
 * child's stack. */
LAPSE_API void lapse_stack_inherit(const void *child_key, const void *parent_key);
/* Ends the innermost open span named name_id on the stack of key (as LAPSE_END). */
LAPSE_API void lapse_span_end_keyed_name(const void *key, uint32_t name_id);

/* ---- causality: a producer and the consumer it unblocked ----
 * lapse_signal(name): this thread has just made `name` available (a batch put on a
 * queue, a lock released, a file written); call it before the consumer is woken
 * (before the put or post), so that the signal precedes the end of the wait it ends.
 * lapse_wait_on(name) .. lapse_wait_done(&w): this thread waits for `name`; the wait
 * is also a span, "wait:NAME", that ends when it was unblocked. The k-th wait on a
 * name to end is paired with the k-th signal of it, across the processes of a run, on
 * the one clock (docs/view.md); the report names the critical path that set the
 * run's length. Each process records at most 65,536 signals and waits (the rest are
 * counted). Dormant without a session. */
typedef struct lapse_wait {
    int span;        /* the span's token */
    uint32_t record; /* the wait's record, 0: none */
    uint32_t gen;    /* the session it belongs to */
} lapse_wait;
LAPSE_API void lapse_signal(const char *name);
LAPSE_API lapse_wait lapse_wait_on(const char *name);
LAPSE_API void lapse_wait_done(lapse_wait *wait);
/* For bindings: the wait's span on the stack of key (lapse_span_begin_keyed). */
LAPSE_API lapse_wait lapse_wait_on_keyed(const void *key, const char *name);
LAPSE_API void lapse_wait_done_keyed(const void *key, lapse_wait *wait);

/* A wait on name that ends with the enclosing C block. */
#define LAPSE_WAIT_ON(name)                                                                   \
    lapse_wait LAPSE_CAT_(lapse_wait_, __LINE__) __attribute__((cleanup(lapse_wait_done))) = \
        lapse_wait_on(name)

/* ---- implementation details used by the macros ---- */
extern LAPSE_API volatile int lapse_enabled_;
LAPSE_API int lapse_span_begin_site_(lapse_site *site);
LAPSE_API void lapse_span_end_token_(int token);
LAPSE_API void lapse_span_end_site_(lapse_site *site);
LAPSE_API void lapse_count_site_(lapse_site *site, int64_t n);

static inline int lapse_scope_begin_(lapse_site *site)
{
    if (__builtin_expect(lapse_enabled_, 0))
        return lapse_span_begin_site_(site);
    return 0;
}

static inline void lapse_scope_end_(int *token)
{
    if (__builtin_expect(*token, 0))
        lapse_span_end_token_(*token);
}

#define LAPSE_CAT2_(a, b) a##b
#define LAPSE_CAT_(a, b) LAPSE_CAT2_(a, b)

/* A span that ends when the enclosing C block ends. */
#define LAPSE_SCOPE(name)                                                              \
    static lapse_site LAPSE_CAT_(lapse_site_, __LINE__) = {name, 0};                   \
    int LAPSE_CAT_(lapse_token_, __LINE__) __attribute__((cleanup(lapse_scope_end_))) = \
        lapse_scope_begin_(&LAPSE_CAT_(lapse_site_, __LINE__))

/* A span that may cross blocks; LAPSE_END names the span it closes. A mismatched
 * end is counted and reported, never a crash. */
#define LAPSE_BEGIN(name)                                  \
    do {                                                   \
        static lapse_site lapse_begin_site_ = {name, 0};   \
        if (__builtin_expect(lapse_enabled_, 0))           \
            lapse_span_begin_site_(&lapse_begin_site_);    \
    } while (0)

#define LAPSE_END(name)                                    \
    do {                                                   \
        static lapse_site lapse_end_site_ = {name, 0};     \
        if (__builtin_expect(lapse_enabled_, 0))           \
            lapse_span_end_site_(&lapse_end_site_);        \
    } while (0)

/* A span whose bytes read and written are measured at its own entry and exit
 * (lapse_io_counters) and added to it as the counters io.read_chars,
 * io.write_chars, io.read_bytes and io.write_bytes, and whose RSS growth
 * (lapse_rss_bytes at exit minus at entry, may be negative) is added as mem.rss_growth;
 * four /proc reads a span, for spans that move data. Ends with the enclosing block.
 * Each half only when the session collects it (LAPSE_FEATURE_IO, _MEMORY). */
typedef struct lapse_io_scope {
    int token;
    int measured;
    uint64_t at_entry[4];
    int rss_measured;
    uint64_t rss_at_entry;
} lapse_io_scope;
LAPSE_API void lapse_io_scope_begin_(lapse_io_scope *scope, lapse_site *site);
/* For bindings: an I/O scope's readings without its span. Begin reads at entry, end
 * (before the span ends) adds the counters to the innermost open span; each reads
 * only what the session collects (LAPSE_FEATURE_IO: io.*, LAPSE_FEATURE_MEMORY:
 * mem.*). */
LAPSE_API void lapse_io_measure_begin_(lapse_io_scope *scope);
LAPSE_API void lapse_io_measure_end_(lapse_io_scope *scope);
LAPSE_API void lapse_io_scope_end_(lapse_io_scope *scope);

#define LAPSE_IO_SCOPE(name)                                                                 \
    static lapse_site LAPSE_CAT_(lapse_io_site_, __LINE__) = {name, 0};                     \
    lapse_io_scope LAPSE_CAT_(lapse_io_scope_, __LINE__)                                   \
        __attribute__((cleanup(lapse_io_scope_end_))) = {0, 0, {0, 0, 0, 0}, 0, 0};         \
    lapse_io_scope_begin_(&LAPSE_CAT_(lapse_io_scope_, __LINE__), &LAPSE_CAT_(lapse_io_site_, __LINE__))

/* Adds n to the counter `name` of the innermost open span of this thread. */
#define lapse_count(name, n)                                   \
    do {                                                       \
        static lapse_site lapse_count_site_desc_ = {name, 0};  \
        if (__builtin_expect(lapse_enabled_, 0))               \
            lapse_count_site_(&lapse_count_site_desc_, (int64_t)(n)); \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
