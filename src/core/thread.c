/* Per-thread state: creation, the list the writer walks, retirement, fork. */
#include "core.h"

#include "clock.h"
#include "names.h"
#include "span_registry.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread core_thread *core_tls __attribute__((tls_model("initial-exec")));

uint32_t core_gen;
core_config core_cfg;
uint32_t core_fast_limit;
core_span_record *core_timeline;
uint64_t core_timeline_cursor;
static uint64_t core_timeline_bytes;

static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static core_thread *threads_head, *threads_tail;
static uint32_t threads_count;
static core_thread *retired_head; /* states of earlier generations */
static uint32_t retired_gen;      /* generation in which they were retired */

/* glibc 2.35 and later register an rseq area for every thread, __rseq_offset bytes
 * from its thread pointer; the kernel keeps its cpu_id (offset 4) at the CPU the
 * thread runs on, or ran on last. Looked up at run time: older C libraries have
 * none (then rseq_cpu stays NULL). */
#define CORE_RSEQ_CPU_UNKNOWN 0xFFFFFFFEu /* rseq's "not registered" and "failed" */
static ptrdiff_t rseq_offset;
static int rseq_known;

static void rseq_lookup(void)
{
    const ptrdiff_t *off = dlsym(RTLD_DEFAULT, "__rseq_offset");
    const unsigned int *size = dlsym(RTLD_DEFAULT, "__rseq_size");
    if (off && size && *size >= 8) {
        rseq_offset = *off;
        rseq_known = 1;
    }
}

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exited(void *state)
{
    core_thread *t = state;
    __atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
}

static void exit_key_create(void) { pthread_key_create(&exit_key, thread_exited); }

static uint32_t pow2_at_least(uint64_t n)
{
    uint32_t p = 16;
    while (p < n)
        p *= 2;
    return p;
}

static void free_mapping(core_thread *t)
{
    for (uint32_t i = 1; i < t->stack_count; i++)
        free(t->stacks[i].frames);
    free(t->stacks);
    free(t->tick_frames);
    t->tick_frames = NULL;
    t->stack_count = 0;
    if (t->mapping)
        munmap(t->mapping, t->mapping_size);
    t->mapping = NULL;
    t->nodes = NULL;
    t->stack = NULL;
    t->stacks = NULL;
}

/* One anonymous mapping holds the stack, nodes, path table and counters; pages a
 * thread never touches cost no memory. */
static core_thread *thread_create(void)
{
    const core_config *cfg = &core_cfg;
    uint32_t path_slots = pow2_at_least(2ull * (cfg->max_paths + 1));
    uint32_t counter_slots = pow2_at_least(2ull * cfg->max_counters);
    size_t stack_bytes = core_stack_bytes();
    size_t node_bytes = (size_t)(cfg->max_paths + 1) * sizeof(core_node);
    size_t key_bytes = (size_t)path_slots * sizeof(uint64_t);
    size_t val_bytes = (size_t)path_slots * sizeof(uint32_t);
    size_t counter_bytes = (size_t)counter_slots * sizeof(core_counter);
    size_t total = stack_bytes + node_bytes + key_bytes + val_bytes + counter_bytes;

    core_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    /* on the heap, not in the mapping: leak checkers see what it points to */
    t->stacks = calloc(CORE_MAX_STACKS, sizeof(core_stack));
    if (!t->stacks) {
        free(t);
        return NULL;
    }
    void *map = mmap(NULL, total, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        free(t->stacks);
        free(t);
        return NULL;
    }
    char *p = map;
    t->mapping = map;
    t->mapping_size = total;
    t->nodes = (core_node *)p; /* first: page-aligned */
    p += node_bytes;
    t->stack = (core_frame *)p;
    p += stack_bytes;
    t->path_keys = (uint64_t *)p;
    p += key_bytes;
    t->path_nodes = (uint32_t *)p;
    p += val_bytes;
    t->counters = (core_counter *)p;
    memset(t->path_keys, 0xFF, key_bytes);
    t->path_mask = path_slots - 1;
    t->counter_mask = counter_slots - 1;

    core_node *root = &t->nodes[CORE_ROOT];
    root->parent = UINT32_MAX;
    root->min_ns = UINT64_MAX;
    t->node_count = 1;
    t->stack[0].node = CORE_ROOT;
    t->stacks[0].frames = t->stack;
    t->stacks[0].fast_limit = core_fast_limit;
    t->fast_limit = core_fast_limit;
    t->stack_count = 1;
    t->hist_pending = &t->hist_sink;
    t->tid = (int64_t)syscall(SYS_gettid);
    if (rseq_known) /* thread_create runs on the thread it creates the state of */
        t->rseq_cpu = (const uint32_t *)((char *)__builtin_thread_pointer() + rseq_offset + 4);
    pthread_getname_np(pthread_self(), t->name, sizeof t->name);
    return t;
}

core_thread *core_thread_attach(void)
{
    uint32_t gen = __atomic_load_n(&core_gen, __ATOMIC_ACQUIRE);
    if (gen == 0)
        return NULL;
    core_thread *old = core_tls;
    if (old && old->gen == gen)
        return old;
    pthread_once(&exit_key_once, exit_key_create);
    core_thread *t = NULL;
    pthread_mutex_lock(&threads_mu);
    if (gen == core_gen && threads_count < CORE_MAX_THREADS && (t = thread_create()) != NULL) {
        t->gen = gen;
        t->index = threads_count++;
        if (threads_tail)
            threads_tail->next = t;
        else
            threads_head = t;
        threads_tail = t;
    }
    pthread_mutex_unlock(&threads_mu);
    if (!t)
        return NULL;
    core_tls = t;
    pthread_setspecific(exit_key, t);
    return t;
}

void core_threads_lock(void) { pthread_mutex_lock(&threads_mu); }
void core_threads_unlock(void) { pthread_mutex_unlock(&threads_mu); }
core_thread *core_threads_first(void) { return threads_head; }
uint32_t core_threads_count(void) { return __atomic_load_n(&threads_count, __ATOMIC_RELAXED); }

/* Frees what earlier generations left, moves the current list to retired. Call
 * with threads_mu held. */
static void retire_threads(uint32_t new_gen)
{
    core_thread *keep = NULL;
    for (core_thread *t = retired_head; t;) {
        core_thread *next = t->next;
        if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE)) {
            free_mapping(t);
            free(t);
        } else {
            /* a live thread may still hold this pointer: keep the small header, and
             * free the mapping once a whole generation has passed */
            if (retired_gen + 1 < new_gen)
                free_mapping(t);
            t->next = keep;
            keep = t;
        }
        t = next;
    }
    retired_head = keep;
    for (core_thread *t = threads_head; t;) {
        core_thread *next = t->next;
        t->next = retired_head;
        retired_head = t;
        t = next;
    }
    retired_gen = new_gen;
    threads_head = threads_tail = NULL;
    threads_count = 0;
}

/* populate: fault the pages in now (a session's start); else as spans reach them
 * (a forked child, which may exec or exit before its first span) */
static int timeline_alloc(uint64_t max_spans, int populate)
{
    if (core_timeline)
        munmap(core_timeline, core_timeline_bytes);
    core_timeline = NULL;
    core_timeline_bytes = 0;
    __atomic_store_n(&core_timeline_cursor, 0, __ATOMIC_RELAXED);
    if (max_spans == 0)
        return 0;
    size_t bytes = (size_t)max_spans * sizeof(core_span_record);
    /* populated now: a page fault every 170 records on the hot path cost 13 ns a
     * span (bench/span_cost.c) */
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    core_timeline = p;
    core_timeline_bytes = bytes;
    return 0;
}

int core_begin_session(const core_config *cfg)
{
    static pthread_once_t rseq_once = PTHREAD_ONCE_INIT;
    pthread_once(&rseq_once, rseq_lookup);
    pthread_mutex_lock(&threads_mu);
    uint32_t gen = core_gen + 1;
    if (gen == 0)
        gen = 1;
    retire_threads(gen);
    core_cfg = *cfg;
    if (core_cfg.max_depth == 0)
        core_cfg.max_depth = 64;
    if (core_cfg.max_depth > CORE_MAX_DEPTH)
        core_cfg.max_depth = CORE_MAX_DEPTH;
    if (core_cfg.max_paths == 0)
        core_cfg.max_paths = 4096;
    if (core_cfg.max_paths > CORE_MAX_PATHS)
        core_cfg.max_paths = CORE_MAX_PATHS;
    if (core_cfg.max_counters == 0)
        core_cfg.max_counters = 1024;
    core_span_hooks_apply();
    int rc = timeline_alloc(core_cfg.max_spans, 1);
    if (rc)
        core_cfg.max_spans = 0;
    __atomic_store_n(&core_gen, gen, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&threads_mu);
    return rc;
}

void core_fork_prepare(void)
{
    names_lock_for_fork();
    pthread_mutex_lock(&threads_mu);
}

void core_fork_parent(void)
{
    pthread_mutex_unlock(&threads_mu);
    names_unlock_after_fork();
}

void core_fork_child(void)
{
    pthread_mutex_init(&threads_mu, NULL);
    names_after_fork_child();
    core_tls = NULL; /* the only thread here; its old state is freed below */
    for (core_thread *lists[2] = {threads_head, retired_head}, **l = lists; l < lists + 2; l++)
        for (core_thread *t = *l; t;) {
            core_thread *next = t->next;
            free_mapping(t);
            free(t);
            t = next;
        }
    threads_head = threads_tail = retired_head = NULL;
    threads_count = 0;
    if (core_gen) {
        uint32_t gen = core_gen + 1;
        core_gen = gen ? gen : 1;
        /* an empty timeline of its own: clearing the parent's would copy every
         * page of it (3.2 MB by default) on write */
        if (core_timeline && timeline_alloc(core_cfg.max_spans, 0) != 0)
            core_cfg.max_spans = 0;
    }
}

/* The CPU clock of thread tid of this process (Linux: the kernel's per-thread
 * clock id; a tid that is gone makes clock_gettime fail, never read another). */
static int thread_cpu_ns(int64_t tid, uint64_t *ns)
{
    clockid_t cid = (clockid_t)((~(unsigned)tid << 3) | 6u); /* CPUCLOCK_SCHED | PERTHREAD */
    struct timespec ts;
    if (clock_gettime(cid, &ts) != 0)
        return -1;
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return 0;
}

/* Reads the entries open on t's current stack into its tick frames: up to the
 * first skipped entry of a sampled span (nothing inside it is recorded), and only
 * nodes the thread has published. Each frame's start is read before its node: a
 * begin writes the node first, so a node newer than the start read here comes with
 * a start that the check after the clock (tick_still_open) no longer finds. */
static uint32_t tick_read_frames(core_thread *t, const core_frame *frames, uint32_t depth)
{
    uint32_t nodes = __atomic_load_n(&t->node_count, __ATOMIC_ACQUIRE);
    if (depth > core_cfg.max_depth + 1u)
        depth = core_cfg.max_depth + 1u;
    uint32_t open = 0;
    for (uint32_t d = 1; d <= depth; d++) {
        core_tick_frame *tf = &t->tick_frames[open];
        tf->start = __atomic_load_n(&frames[d].start, __ATOMIC_ACQUIRE);
        tf->flags = __atomic_load_n(&frames[d].flags, __ATOMIC_ACQUIRE);
        tf->node = __atomic_load_n(&frames[d].node, __ATOMIC_ACQUIRE);
        if (tf->node >= nodes || (tf->flags & CORE_FRAME_SUPPRESSED))
            break;
        open++;
    }
    return open;
}

/* How many of the entries read by tick_read_frames are still open, outermost
 * first: the same stack, and at each depth the same start (an entry that closed
 * leaves its depth to the next one begun there, whose start differs; a skipped
 * entry of a sampled span writes no start, but its flags differ). */
static uint32_t tick_still_open(const core_thread *t, const core_frame *frames, uint32_t open)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&t->stack, __ATOMIC_ACQUIRE) != frames)
        return 0; /* it switched stacks (asyncio tasks): none of them is current */
    uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
    uint32_t d = 0;
    for (; d < open && d < depth; d++) {
        const core_tick_frame *tf = &t->tick_frames[d];
        if (__atomic_load_n(&frames[d + 1].start, __ATOMIC_ACQUIRE) != tf->start ||
            __atomic_load_n(&frames[d + 1].flags, __ATOMIC_ACQUIRE) != tf->flags)
            break;
    }
    return d;
}

/* One tick for the first `open` tick frames of t: once per node (folded frames
 * share their parent's). Only the sampler thread writes these counts. */
static void tick_credit(core_thread *t, uint32_t open, int waiting)
{
    uint32_t last = UINT32_MAX;
    for (uint32_t d = 0; d < open; d++) {
        const core_tick_frame *tf = &t->tick_frames[d];
        if (tf->node == last)
            continue;
        last = tf->node;
        core_node *n = &t->nodes[tf->node];
        __atomic_store_n(&n->cpu_ticks, n->cpu_ticks + 1, __ATOMIC_RELAXED);
        if (waiting)
            __atomic_store_n(&n->cpu_wait_ticks, n->cpu_wait_ticks + 1, __ATOMIC_RELAXED);
    }
}

uint32_t core_tick(uint32_t own_cpu, int (*cpu_of)(int64_t tid, uint32_t *cpu))
{
    uint32_t credited = 0;
    pthread_mutex_lock(&threads_mu);
    for (core_thread *t = threads_head; t; t = t->next) {
        if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            continue;
        if (!t->tick_frames &&
            !(t->tick_frames = calloc(core_cfg.max_depth + 2u, sizeof *t->tick_frames)))
            continue;
        const core_frame *frames = __atomic_load_n(&t->stack, __ATOMIC_ACQUIRE);
        uint32_t depth = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
        uint32_t open = frames ? tick_read_frames(t, frames, depth) : 0;
        if (!open)
            continue; /* no entry to credit */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t a, b;
        if (thread_cpu_ns(t->tid, &a) != 0 || thread_cpu_ns(t->tid, &b) != 0)
            continue;
        /* the clock of a thread on a CPU moves between two readings (the kernel adds
         * what it has run of its current slice); the clock of one that is not stays */
        int waiting = b == a;
        if (waiting) {
            /* a thread on the sampler's CPU is left out, whatever it does: the
             * sampler took that CPU from it or from what it waits behind (core.h) */
            uint32_t cpu = t->rseq_cpu ? __atomic_load_n(t->rseq_cpu, __ATOMIC_RELAXED) : UINT32_MAX;
            if (cpu >= CORE_RSEQ_CPU_UNKNOWN && (!cpu_of || cpu_of(t->tid, &cpu) != 0))
                continue; /* where it is cannot be told: left out too */
            if (cpu == own_cpu)
                continue;
        }
        open = tick_still_open(t, frames, open);
        if (!open)
            continue;
        tick_credit(t, open, waiting);
        credited++;
    }
    pthread_mutex_unlock(&threads_mu);
    return credited;
}

uint32_t core_open_phases(uint32_t *names, uint32_t max)
{
    uint32_t n = 0;
    pthread_mutex_lock(&threads_mu);
    for (core_thread *t = threads_head; t && n < max; t = t->next) {
        if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            continue;
        const core_frame *frames = __atomic_load_n(&t->stack, __ATOMIC_ACQUIRE);
        if (!frames || __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE) == 0)
            continue;
        uint32_t name = __atomic_load_n(&frames[1].name, __ATOMIC_RELAXED);
        uint32_t i = 0;
        while (i < n && names[i] != name)
            i++;
        if (i == n && name)
            names[n++] = name;
    }
    pthread_mutex_unlock(&threads_mu);
    return n;
}

int core_phase_state(uint64_t *top_closed_ns)
{
    int open = 0;
    uint64_t closed = 0;
    pthread_mutex_lock(&threads_mu);
    for (core_thread *t = threads_head; t; t = t->next) {
        /* an exited thread's spans are closed; what it closed stays in the sum */
        closed += __atomic_load_n(&t->nodes[CORE_ROOT].child_ns, __ATOMIC_RELAXED);
        if (open || __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            continue;
        if (__atomic_load_n(&t->depth, __ATOMIC_ACQUIRE) > 0) {
            open = 1;
            continue;
        }
        /* the keyed stacks not current now (asyncio tasks) keep their depth here */
        uint32_t stacks = __atomic_load_n(&t->stack_count, __ATOMIC_ACQUIRE);
        uint32_t current = __atomic_load_n(&t->stack_current, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < stacks && i < CORE_MAX_STACKS && !open; i++)
            if (i != current && __atomic_load_n(&t->stacks[i].depth, __ATOMIC_RELAXED) > 0)
                open = 1;
    }
    pthread_mutex_unlock(&threads_mu);
    *top_closed_ns = closed;
    return open;
}

void core_thread_set_name(const char *name)
{
    core_thread *t = core_thread_attach();
    if (!t || !name)
        return;
    pthread_mutex_lock(&threads_mu); /* the writer copies names under it */
    snprintf(t->name, sizeof t->name, "%s", name);
    t->name_fixed = 1;
    pthread_mutex_unlock(&threads_mu);
}

/* ---- the span registry: where an outside reader finds each thread's open spans
 * (src/core/span_registry.h). Defined here, in a file every user of spans links, so
 * that a static link keeps it. ---- */

extern const char **name_chunks[];
extern uint32_t name_count_published;

__attribute__((visibility("default"), used)) const lapse_span_registry_v1 lapse_span_registry = {
    .magic = LAPSE_SPAN_REGISTRY_MAGIC,
    .version = LAPSE_SPAN_REGISTRY_VERSION,
    .size = sizeof(lapse_span_registry_v1),
    .gen = &core_gen,
    .threads_head = &threads_head,
    .names_chunks = name_chunks,
    .names_count = &name_count_published,
    .names_chunk_bits = NAMES_CHUNK_BITS,
    .thread_off_next = offsetof(core_thread, next),
    .thread_off_gen = offsetof(core_thread, gen),
    .thread_off_tid = offsetof(core_thread, tid),
    .thread_off_depth = offsetof(core_thread, depth),
    .thread_off_stack = offsetof(core_thread, stack),
    .thread_off_exited = offsetof(core_thread, exited),
    .frame_size = sizeof(core_frame),
    .frame_off_name = offsetof(core_frame, name),
    .frame_off_flags = offsetof(core_frame, flags),
    .frame_flag_folded = CORE_FRAME_FOLDED,
    .max_threads = CORE_MAX_THREADS,
    .max_depth = CORE_MAX_DEPTH + 2,
    .reserved = 0,
};
