/* The span engine: per-thread path trees, counters and the bounded timeline.
 * Hot paths (begin, end, count) take no lock, allocate nothing after a path is
 * first seen, and make no syscall. */
#ifndef LAPSE_CORE_CORE_H
#define LAPSE_CORE_CORE_H

#include "hist.h"

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define CORE_ROOT 0u              /* node 0 of every thread: no span open */
#define CORE_FRAME_FOLDED 1u      /* frame stands for a span folded into its parent */
#define CORE_FRAME_SUPPRESSED 2u  /* a skipped entry of a sampled span, or inside one */
#define CORE_FRAME_SCALED 4u      /* a measured entry of a sampled span, or inside one */
#define CORE_FRAME_HOOKED 8u      /* the span hooks saw its begin: its close calls their end */
#define CORE_SPAN_HOOKS 2u        /* span hooks a session may have at once */
#define CORE_TIMELINE_CHUNK 64u   /* records a thread reserves at a time */
#define CORE_MAX_THREADS 65535u
#define CORE_MAX_STACKS 256u      /* keyed span stacks per thread (see core_stack) */
#define CORE_MAX_DEPTH 4096u      /* the largest max_depth a session may ask for */
#define CORE_MAX_PATHS (1u << 20) /* the largest max_paths (a node is a page of memory) */

typedef struct core_config {
    uint32_t max_depth;    /* spans deeper than this fold into their parent */
    uint32_t max_paths;    /* distinct paths per thread (root excluded) */
    uint32_t max_counters; /* distinct (path, counter) pairs per thread */
    uint64_t max_spans;    /* timeline records for the whole process; 0: no timeline */
} core_config;

typedef struct core_node {
    uint32_t parent;
    uint32_t name;
    uint32_t depth;
    uint32_t sample_stride; /* 0: measured; else the largest scale its figures carry */
    uint64_t calls; /* written last on span end */
    uint64_t total_ns, child_ns, min_ns, max_ns;
    uint64_t folded;
    uint64_t hist[HIST_BUCKETS];
    uint32_t child_estimated; /* child_ns includes scaled (estimated) children */
    uint32_t pad32;
    /* the CPU sampler (written by the sampler thread only): its ticks at which an
     * entry of this path was open on the thread, and of them those at which the
     * thread was off CPU */
    uint64_t cpu_ticks, cpu_wait_ticks;
    /* GPU time of gpu_time phases (core_gpu_time): the sum of the GPU time of its
     * entries that have it, those entries, and the entries whose GPU time is missing */
    uint64_t gpu_ns, gpu_timed, gpu_untimed;
    uint64_t pad[2]; /* one node is one page: index to address is a shift */
} core_node;
_Static_assert(sizeof(core_node) == 4096, "core_node must be one page");

typedef struct core_frame {
    uint32_t node;  /* the span's node; for a folded frame, the node it folds into */
    uint32_t name;
    uint32_t flags;
    uint32_t scale; /* with CORE_FRAME_SCALED: what each recorded value stands for */
    uint64_t start; /* ticks */
} core_frame;
/* the hot path's size: the span hooks keep their values beside the frames, not in them */
_Static_assert(sizeof(core_frame) == 24, "core_frame must stay 24 bytes");

typedef struct core_counter {
    uint32_t node;
    uint32_t name;
    int64_t sum;
    uint64_t updates;
} core_counter;

typedef struct core_span_record {
    uint64_t begin; /* ticks */
    uint64_t end;   /* ticks; written last, 0 while the slot is unused */
    uint32_t name;
    uint16_t thread;
    uint16_t depth;
} core_span_record;

/* An entry the CPU sampler found open on a thread, known by the tick count of its
 * start (which no other entry at that depth shares). */
typedef struct core_tick_frame {
    uint64_t start;
    uint32_t node, flags;
} core_tick_frame;

/* A span stack of a thread. Stack 0 is the thread's own; bindings whose code
 * interleaves on one thread (asyncio tasks) give each task its own stack, keyed
 * by an opaque pointer (the task's context), so that their nesting stays apart. */
typedef struct core_stack {
    const void *key;
    core_frame *frames;
    uint32_t depth;      /* saved while the stack is not current */
    uint32_t fast_limit; /* saved while the stack is not current */
    uint32_t base;       /* frames 1..base were inherited (core_stack_inherit) */
} core_stack;

typedef struct core_thread {
    uint32_t gen;   /* the session generation this state belongs to */
    uint32_t depth; /* frames open; stack[0] is the root frame */
    /* begins at depth >= fast_limit take the slow path: max_depth, or the depth of
     * the outermost open sampled frame (whose subtree is suppressed or scaled) */
    uint32_t fast_limit;
    uint32_t base;     /* the current stack's inherited frames: never closed here */
    core_frame *stack; /* the current stack's frames */
    core_stack *stacks; /* CORE_MAX_STACKS entries, stacks[0] the thread's own */
    uint32_t stack_count;
    uint32_t stack_current;
    uint64_t stacks_exhausted; /* switches that found no free stack: used stack 0 */
    core_node *nodes;
    uint32_t node_count; /* published with release after a node is filled */
    uint32_t path_mask;
    uint64_t *path_keys; /* (parent << 32 | name), UINT64_MAX when empty */
    uint32_t *path_nodes;
    core_counter *counters; /* name 0 marks an empty slot */
    uint32_t counter_mask;
    uint32_t counter_count;
    /* The histogram increment of the last closed span, applied at the next close:
     * an increment whose address depends on the clock reading just taken stalls
     * the loads after it until that reading arrives (measured: +9 ns a span here);
     * one span later the address is long known. The writer adds the pending one. */
    uint64_t *hist_pending;
    uint64_t hist_sink;
    core_span_record *tl_next, *tl_end;
    int tl_exhausted;
    uint64_t folded_depth, folded_paths, unmatched_ends, dropped_counters, timeline_dropped;
    int64_t tid;
    core_tick_frame *tick_frames; /* the CPU sampler's (max_depth + 2), at first use */
    const uint32_t *rseq_cpu; /* where the kernel keeps its CPU (rseq); NULL unknown */
    uint32_t index; /* position in the thread list, the thread id in files */
    int exited;
    int name_fixed; /* set by a binding (lapse_set_thread_name): not refreshed from /proc */
    char name[32];
    struct core_thread *next;
    void *mapping;
    uint64_t mapping_size;
} core_thread;

/* Span hooks: callbacks at the begin and end of every span, on the thread that runs
 * it (the NVTX markers). With a hook set, every thread's fast_limit is 0, so every
 * begin takes the slow path: it calls each hook's begin before the span's clock is
 * read, keeps what it returned beside the frame (each stack's frames are followed by
 * CORE_SPAN_HOOKS values per frame, allocated only in a session with hooks: see
 * core_stack_bytes) and marks the frame CORE_FRAME_HOOKED;
 * the close, after the clock is read, calls the ends in reverse order from the
 * flagged branch it already has. With none set, the hot path is what it was. Set
 * before core_begin_session (which applies them), never while spans run; the
 * callbacks must stay callable for the life of the process (a span open across a
 * session's stop still ends them). */
typedef struct core_span_hook {
    uint64_t (*begin)(uint32_t name); /* the value given to end */
    void (*end)(uint64_t value);
} core_span_hook;
/* The hooks of the next session (n <= CORE_SPAN_HOOKS; 0: none). Returns 0 or -EINVAL. */
int core_span_hooks_set(const core_span_hook *hooks, uint32_t n);
/* For the engine: makes the hooks set the current session's (core_begin_session),
 * calls them at a frame's begin (it sets CORE_FRAME_HOOKED) and at its end. */
extern uint32_t core_span_hook_count;
void core_span_hooks_apply(void);
void core_span_hooks_begin(core_thread *t, core_frame *f);
void core_span_hooks_end(const core_thread *t, const core_frame *f);
/* The bytes of one stack of the current session: max_depth + 2 frames, and with
 * span hooks their values after them. */
size_t core_stack_bytes(void);

/* The calling thread's state; checked against core_gen before use. */
extern __thread core_thread *core_tls __attribute__((tls_model("initial-exec")));

extern uint32_t core_gen;           /* 0 = no session; bumped at each start and fork */
extern core_config core_cfg;
extern uint32_t core_fast_limit; /* a fresh stack's fast_limit: max_depth, 0 with span hooks */
extern core_span_record *core_timeline; /* max_spans records */
extern uint64_t core_timeline_cursor;   /* next free record (atomic) */

/* Starts a new generation with cfg: every thread starts from an empty tree.
 * Returns 0 or -ENOMEM (timeline buffer). */
int core_begin_session(const core_config *cfg);

/* Hot path. begin returns a token (the depth after the push), 0 if nothing was
 * pushed. */
int core_span_begin(uint32_t name);
void core_span_end_token(int token);
void core_span_end_name(uint32_t name);
void core_count(uint32_t name, int64_t n);
/* A sampled span: a measured entry (measured != 0) records it and its subtree
 * scaled by stride, as estimates; a skipped entry records nothing for it and its
 * subtree. Ends like any span (by token or name). */
int core_span_begin_sampled(const void *key, uint32_t name, int measured, uint32_t stride);
/* The same on the stack of `key` (NULL: the thread's own stack). */
int core_span_begin_keyed(const void *key, uint32_t name);
void core_span_end_keyed(const void *key, int token);
void core_span_end_keyed_name(const void *key, uint32_t name);
/* Starts the stack of child_key, when it has no span of its own open, with the
 * spans open now on the stack of parent_key of this thread (an asyncio task takes
 * the path of the task that created it). Those frames are never closed from the
 * child's stack. */
void core_stack_inherit(const void *child_key, const void *parent_key);
/* Adds the GPU time of the innermost open span of key's stack (of the thread's
 * current stack when key is NULL) to its node: ns >= 0 measured; < 0 the
 * figure is missing (counted, never 0). Nothing inside a skipped sampled entry. */
void core_gpu_time(const void *key, int64_t ns);
/* Writes the names of the spans open on the stack of key, outermost first, joined
 * by sep, into buf (truncated to len - 1 bytes); returns the number of open spans. */
uint32_t core_current_path(const void *key, char sep, char *buf, size_t len);

/* The calling thread's index (its thread number in files) and the node of the
 * innermost span open on its current stack (CORE_ROOT: none), attaching the thread
 * when it has no state yet. 0, or -1 without a session or room for the thread. */
int core_innermost(uint32_t *thread, uint32_t *node);

/* The state of the calling thread for the current generation, created on first use. */
core_thread *core_thread_attach(void);

/* Iteration by the writer: lock, walk, unlock. Only registration waits on it. */
void core_threads_lock(void);
void core_threads_unlock(void);
core_thread *core_threads_first(void);
uint32_t core_threads_count(void);
/* Names the calling thread for the files (a binding's own name for it). */
void core_thread_set_name(const char *name);

/* A tick of the CPU sampler, from one thread only (the session's sampler, running
 * on CPU own_cpu). For every live thread with a span open: the entries open on it,
 * its CPU clock read twice back to back, and the entries again. A thread whose
 * clock moved was on CPU at that instant (the kernel adds what it has run of its
 * current slice); one whose clock stayed was off CPU, except that a thread whose
 * CPU (rseq's cpu_id, else cpu_of(tid)) is own_cpu is left out of the tick: the
 * sampler has just taken that CPU from it or from what it waits behind, so what
 * it shows there is the sampler's doing. (A thread on a CPU is never on own_cpu,
 * so leaving out those off CPU is leaving out every thread of own_cpu; with
 * own_cpu drawn at random, that takes ticks from no state more than another.)
 * Each entry open at both readings (the same entry: the same start at its depth)
 * counts one tick for its node, once per node (folded frames share their
 * parent's), and one waiting tick when the thread was off CPU. Returns the
 * threads credited. */
uint32_t core_tick(uint32_t own_cpu, int (*cpu_of)(int64_t tid, uint32_t *cpu));

/* For the process sampler: whether a span is open now on any live thread (any of
 * its stacks), and in *top_closed_ns the sum over threads of their top-level
 * spans' time so far (it moves when a top-level span closes). Takes the thread
 * list's lock; reads the threads' state without stopping them. */
int core_phase_state(uint64_t *top_closed_ns);
/* For the GPU collector: the names of the top-level spans open now on the live
 * threads (the outermost entry of each thread's current stack), each once, at most
 * max. Read without stopping the threads: a span that opens or closes meanwhile may
 * be seen on either side. */
uint32_t core_open_phases(uint32_t *names, uint32_t max);

/* Fork handling: prepare locks, parent unlocks, child resets to a fresh
 * generation with only the calling thread, an empty tree and a clean stack. */
void core_fork_prepare(void);
void core_fork_parent(void);
void core_fork_child(void);

#pragma GCC visibility pop

#endif
