/* The hot path: span begin and end, counters, timeline records. */
#include "core.h"

#include "lapse.h"

#include "clock.h"
#include "hash.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static inline core_thread *thread_state(void)
{
    core_thread *t = core_tls;
    if (likely(t && t->gen == __atomic_load_n(&core_gen, __ATOMIC_RELAXED)))
        return t;
    return core_thread_attach();
}

static inline uint32_t path_hash(uint64_t key, uint32_t mask)
{
    return hash_index(key, mask);
}

/* The node of (parent, name), created on first sight; UINT32_MAX when the thread
 * already has max_paths paths. */
static inline uint32_t path_node(core_thread *t, uint32_t parent, uint32_t name)
{
    uint64_t key = ((uint64_t)parent << 32) | name;
    uint32_t slot = path_hash(key, t->path_mask);
    for (;;) {
        uint64_t k = t->path_keys[slot];
        if (likely(k == key))
            return t->path_nodes[slot];
        if (k == UINT64_MAX)
            break;
        slot = (slot + 1) & t->path_mask;
    }
    uint32_t idx = t->node_count;
    if (unlikely(idx > core_cfg.max_paths))
        return UINT32_MAX;
    core_node *n = &t->nodes[idx];
    n->parent = parent;
    n->name = name;
    n->depth = t->nodes[parent].depth + 1;
    n->min_ns = UINT64_MAX;
    t->path_keys[slot] = key;
    t->path_nodes[slot] = idx;
    __atomic_store_n(&t->node_count, idx + 1, __ATOMIC_RELEASE);
    return idx;
}

__attribute__((noinline)) static int span_begin_slow(uint32_t name)
{
    core_thread *t = thread_state();
    if (unlikely(!t))
        return 0;
    uint32_t d = t->depth;
    uint32_t parent = t->stack[d].node;
    uint32_t inherited = t->stack[d].flags & (CORE_FRAME_SUPPRESSED | CORE_FRAME_SCALED);
    core_frame *f = &t->stack[d + 1];
    if (unlikely(inherited & CORE_FRAME_SUPPRESSED)) { /* inside a skipped sampled entry */
        if (d >= core_cfg.max_depth + 1u)
            return 0;
        f->name = name;
        f->node = parent;
        f->flags = CORE_FRAME_SUPPRESSED;
        t->depth = d + 1;
        if (unlikely(core_span_hook_count))
            core_span_hooks_begin(t, f);
        return (int)(d + 1);
    }
    if (unlikely(d >= core_cfg.max_depth + 1u)) { /* the stack is full: count, push nothing */
        t->folded_depth++;                           /* (f is past its end) */
        t->nodes[parent].folded++;
        return 0;
    }
    f->name = name;
    if (unlikely(d >= core_cfg.max_depth)) {
        f->node = parent;
        f->flags = CORE_FRAME_FOLDED;
        t->folded_depth++;
        t->nodes[parent].folded++;
    } else {
        uint32_t node = path_node(t, parent, name);
        if (likely(node != UINT32_MAX)) {
            f->node = node;
            f->flags = 0;
        } else {
            f->node = parent;
            f->flags = CORE_FRAME_FOLDED;
            t->folded_paths++;
            t->nodes[parent].folded++;
        }
    }
    if (unlikely(inherited)) { /* inside a measured sampled entry: scaled as it is */
        f->flags |= CORE_FRAME_SCALED;
        f->scale = t->stack[d].scale;
    }
    t->depth = d + 1;
    if (unlikely(core_span_hook_count)) /* before the clock: not billed to the span */
        core_span_hooks_begin(t, f);
    f->start = core_ticks();
    return (int)(d + 1);
}

/* Reserves the next chunk of the timeline for t; 0 when there is no room. */
__attribute__((noinline)) static int timeline_refill(core_thread *t)
{
    {
        if (t->tl_exhausted) {
            t->timeline_dropped++;
            return 0;
        }
        uint64_t cap = core_cfg.max_spans;
        uint64_t pos = __atomic_fetch_add(&core_timeline_cursor, CORE_TIMELINE_CHUNK,
                                          __ATOMIC_RELAXED);
        if (pos >= cap) {
            t->tl_exhausted = 1;
            t->timeline_dropped++;
            return 0;
        }
        uint64_t end_pos = pos + CORE_TIMELINE_CHUNK < cap ? pos + CORE_TIMELINE_CHUNK : cap;
        t->tl_next = core_timeline + pos;
        t->tl_end = core_timeline + end_pos;
    }
    return 1;
}

static inline void timeline_record(core_thread *t, const core_frame *f, uint32_t depth, uint64_t end)
{
    if (unlikely(t->tl_next == t->tl_end) && !timeline_refill(t))
        return;
    core_span_record *r = t->tl_next++;
    r->begin = f->start;
    r->name = f->name;
    r->thread = (uint16_t)t->index;
    r->depth = (uint16_t)depth;
    __atomic_store_n(&r->end, end, __ATOMIC_RELEASE);
}

/* Records a span of a measured sampled entry: every figure scaled by the frame's
 * scale, and the nodes marked as holding estimates. */
__attribute__((noinline)) static void close_scaled(core_thread *t, const core_frame *f, uint32_t d,
                                                   uint64_t now)
{
    if (f->flags & CORE_FRAME_FOLDED)
        return;
    uint64_t s = f->scale;
    uint64_t ns = core_ticks_to_ns(now - f->start);
    core_node *n = &t->nodes[f->node];
    n->hist[hist_bucket(ns)] += s;
    n->total_ns += ns * s;
    if (ns < n->min_ns)
        n->min_ns = ns;
    if (ns > n->max_ns)
        n->max_ns = ns;
    if (f->scale > n->sample_stride)
        n->sample_stride = f->scale;
    __atomic_store_n(&n->calls, n->calls + s, __ATOMIC_RELEASE);
    const core_frame *pf = &t->stack[d - 1];
    core_node *parent = &t->nodes[pf->node];
    parent->child_ns += ns * s;
    if (!(pf->flags & CORE_FRAME_SCALED))
        parent->child_estimated = 1; /* its self time is now an estimate too */
    if (core_cfg.max_spans)
        timeline_record(t, f, d, now);
}

/* Records the close of frame f (depth d, unflagged but for CORE_FRAME_HOOKED) at `now`. */
static inline __attribute__((always_inline)) void close_record(core_thread *t, const core_frame *f,
                                                               uint32_t d, uint64_t now)
{
    uint64_t ns = core_ticks_to_ns(now - f->start);
    core_node *n = &t->nodes[f->node];
    (*t->hist_pending)++;
    t->hist_pending = &n->hist[hist_bucket(ns)];
    n->total_ns += ns;
    if (ns < n->min_ns)
        n->min_ns = ns;
    if (ns > n->max_ns)
        n->max_ns = ns;
    __atomic_store_n(&n->calls, n->calls + 1, __ATOMIC_RELEASE);
    t->nodes[t->stack[d - 1].node].child_ns += ns;
    if (core_cfg.max_spans)
        timeline_record(t, f, d, now);
}

/* The close of a flagged frame, out of line: the hot path's close only tail-calls it,
 * so the span hooks cost it no registers. */
__attribute__((noinline)) static void close_flagged(core_thread *t, core_frame *f, uint32_t d,
                                                    uint64_t now)
{
    if (f->flags & CORE_FRAME_HOOKED)
        core_span_hooks_end(t, f);
    if (f->flags & ~CORE_FRAME_HOOKED) {
        if (d == t->fast_limit) /* the outermost sampled frame: its subtree is over */
            t->fast_limit = core_fast_limit;
        if (f->flags & CORE_FRAME_SCALED)
            close_scaled(t, f, d, now);
        return; /* folded: its time stays in the parent's self time; suppressed: nothing */
    }
    close_record(t, f, d, now);
}

/* Closes the top frame at tick `now`. */
static inline __attribute__((always_inline)) void close_top(core_thread *t, uint64_t now)
{
    uint32_t d = t->depth;
    core_frame *f = &t->stack[d];
    t->depth = d - 1;
    if (unlikely(f->flags)) {
        close_flagged(t, f, d, now);
        return;
    }
    close_record(t, f, d, now);
}

__attribute__((noinline)) static void close_top_outlined(core_thread *t, uint64_t now)
{
    close_top(t, now);
}

__attribute__((noinline)) static void span_end_token_slow(int token, uint64_t now)
{
    core_thread *t = core_tls;
    if (unlikely(!t || t->gen != __atomic_load_n(&core_gen, __ATOMIC_RELAXED)))
        return; /* begun in an earlier session or before a fork */
    uint32_t want = (uint32_t)token;
    if (likely(t->depth == want)) {
        close_top(t, now);
        return;
    }
    if (t->depth < want || want <= t->base) { /* already closed, or not this stack's */
        t->unmatched_ends++;
        return;
    }
    while (t->depth > want) { /* spans begun inside this scope and never ended */
        t->unmatched_ends++;
        close_top_outlined(t, now);
    }
    close_top_outlined(t, now);
}

/* The common case inline: the scope's span is on top of this thread's stack. */
static inline __attribute__((always_inline)) void span_end_token(int token)
{
    uint64_t now = core_ticks();
    core_thread *t = core_tls;
    if (likely(t && t->gen == __atomic_load_n(&core_gen, __ATOMIC_RELAXED) &&
               t->depth == (uint32_t)token)) {
        close_top(t, now);
        return;
    }
    span_end_token_slow(token, now);
}

/* The common case inline: a known path below the depth bound. */
static inline __attribute__((always_inline)) int span_begin(uint32_t name)
{
    core_thread *t = core_tls;
    if (unlikely(!t || t->gen != __atomic_load_n(&core_gen, __ATOMIC_RELAXED)))
        return span_begin_slow(name);
    uint32_t d = t->depth;
    if (unlikely(d >= t->fast_limit))
        return span_begin_slow(name);
    uint32_t parent = t->stack[d].node;
    uint64_t key = ((uint64_t)parent << 32) | name;
    uint32_t slot = path_hash(key, t->path_mask);
    if (unlikely(t->path_keys[slot] != key))
        return span_begin_slow(name);
    core_frame *f = &t->stack[d + 1];
    f->node = t->path_nodes[slot];
    f->name = name;
    f->flags = 0;
    t->depth = d + 1;
    f->start = core_ticks();
    return (int)(d + 1);
}

static inline void span_end_name(uint32_t name)
{
    uint64_t now = core_ticks();
    core_thread *t = core_tls;
    if (unlikely(!t || t->gen != __atomic_load_n(&core_gen, __ATOMIC_RELAXED))) {
        if ((t = thread_state()) != NULL) /* nothing open in this session */
            t->unmatched_ends++;
        return;
    }
    uint32_t d = t->depth, base = t->base;
    if (likely(d > base && t->stack[d].name == name)) {
        close_top(t, now);
        return;
    }
    uint32_t k = d;
    while (k > base && t->stack[k].name != name)
        k--;
    t->unmatched_ends++;
    if (k == base)
        return; /* nothing of that name is open here: ignore the end */
    while (t->depth > k) /* close what was opened inside it and never ended */
        close_top_outlined(t, now);
    close_top_outlined(t, now);
}

static inline void count_add(uint32_t name, int64_t n)
{
    core_thread *t = thread_state();
    if (unlikely(!t) || name == 0)
        return;
    const core_frame *top = &t->stack[t->depth];
    if (unlikely(top->flags & (CORE_FRAME_SUPPRESSED | CORE_FRAME_SCALED))) {
        if (top->flags & CORE_FRAME_SUPPRESSED)
            return; /* a skipped sampled entry records nothing */
        n *= (int64_t)top->scale;
    }
    uint64_t updates = top->flags & CORE_FRAME_SCALED ? top->scale : 1;
    uint32_t node = top->node;
    uint64_t key = ((uint64_t)node << 32) | name;
    uint32_t slot = path_hash(key, t->counter_mask);
    for (;;) {
        core_counter *c = &t->counters[slot];
        if (likely(c->name == name && c->node == node)) {
            c->sum += n;
            c->updates += updates;
            return;
        }
        if (c->name == 0)
            break;
        slot = (slot + 1) & t->counter_mask;
    }
    if (t->counter_count >= core_cfg.max_counters) {
        t->dropped_counters++;
        return;
    }
    core_counter *c = &t->counters[slot];
    c->node = node;
    c->sum = n;
    c->updates = updates;
    t->counter_count++;
    __atomic_store_n(&c->name, name, __ATOMIC_RELEASE);
}

int core_span_begin(uint32_t name) { return span_begin(name); }
void core_span_end_token(int token) { span_end_token(token); }
void core_span_end_name(uint32_t name) { span_end_name(name); }
void core_count(uint32_t name, int64_t n) { count_add(name, n); }

/* The entry points of the public macros live here so that the hot path is one
 * call from the user's code. */
static inline uint32_t site_id(lapse_site *site)
{
    uint32_t id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);
    if (unlikely(id == 0)) {
        id = names_intern(site->name);
        __atomic_store_n(&site->id, id, __ATOMIC_RELAXED);
    }
    return id;
}

int lapse_span_begin_site_(lapse_site *site) { return span_begin(site_id(site)); }
void lapse_span_end_token_(int token) { span_end_token(token); }
void lapse_span_end_site_(lapse_site *site) { span_end_name(site_id(site)); }
void lapse_count_site_(lapse_site *site, int64_t n) { count_add(site_id(site), n); }

/* Makes the stack of `key` current on t: the one it has, else a free one (depth
 * 0, any earlier key), else a new one; with none left, the thread's own. */
__attribute__((noinline)) static void stack_switch(core_thread *t, const void *key)
{
    core_stack *cur = &t->stacks[t->stack_current];
    cur->depth = t->depth;
    cur->fast_limit = t->fast_limit;
    cur->base = t->base;
    uint32_t found = UINT32_MAX, free_slot = UINT32_MAX;
    for (uint32_t i = 0; i < t->stack_count; i++) {
        if (t->stacks[i].key == key) {
            found = i;
            break;
        }
        if (i && free_slot == UINT32_MAX && t->stacks[i].depth == t->stacks[i].base &&
            i != t->stack_current)
            free_slot = i;
    }
    if (found == UINT32_MAX && free_slot != UINT32_MAX) {
        found = free_slot;
        t->stacks[found].key = key;
        t->stacks[found].fast_limit = core_fast_limit;
        t->stacks[found].depth = 0;
        t->stacks[found].base = 0;
    }
    if (found == UINT32_MAX && t->stack_count < CORE_MAX_STACKS) {
        core_frame *frames = calloc(1, core_stack_bytes());
        if (frames) {
            frames[0].node = CORE_ROOT;
            found = t->stack_count++;
            t->stacks[found] = (core_stack){key, frames, 0, core_fast_limit, 0};
        }
    }
    if (found == UINT32_MAX) {
        t->stacks_exhausted++;
        found = 0;
    }
    t->stack_current = found;
    t->stack = t->stacks[found].frames;
    t->depth = t->stacks[found].depth;
    t->fast_limit = t->stacks[found].fast_limit;
    t->base = t->stacks[found].base;
}

static inline core_thread *keyed_state(const void *key)
{
    core_thread *t = thread_state();
    if (likely(t) && unlikely(t->stacks[t->stack_current].key != key))
        stack_switch(t, key);
    return t;
}

int core_span_begin_keyed(const void *key, uint32_t name)
{
    if (unlikely(!keyed_state(key)))
        return 0;
    return span_begin(name);
}

void core_span_end_keyed(const void *key, int token)
{
    core_thread *t = core_tls;
    if (unlikely(!t || t->gen != __atomic_load_n(&core_gen, __ATOMIC_RELAXED)))
        return; /* begun in an earlier session or before a fork */
    if (unlikely(t->stacks[t->stack_current].key != key))
        stack_switch(t, key);
    span_end_token(token);
}

void core_span_end_keyed_name(const void *key, uint32_t name)
{
    core_thread *t = core_tls;
    if (likely(t && t->gen == __atomic_load_n(&core_gen, __ATOMIC_RELAXED)) &&
        unlikely(t->stacks[t->stack_current].key != key))
        stack_switch(t, key);
    span_end_name(name);
}

uint32_t core_current_path(const void *key, char sep, char *buf, size_t len)
{
    if (len)
        buf[0] = 0;
    core_thread *t = core_tls;
    if (!t || t->gen != __atomic_load_n(&core_gen, __ATOMIC_RELAXED))
        return 0;
    const core_frame *frames = t->stack;
    uint32_t depth = t->depth;
    if (t->stacks[t->stack_current].key != key) { /* read another stack without switching */
        frames = NULL;
        for (uint32_t i = 0; i < t->stack_count; i++)
            if (t->stacks[i].key == key) {
                frames = t->stacks[i].frames;
                depth = t->stacks[i].depth;
            }
        if (!frames)
            return 0;
    }
    size_t used = 0;
    for (uint32_t d = 1; d <= depth; d++) {
        const char *name = names_get(frames[d].name);
        size_t n = strlen(name);
        if (d > 1 && used + 1 < len)
            buf[used++] = sep;
        if (used + n >= len)
            n = len > used + 1 ? len - used - 1 : 0;
        memcpy(buf + used, name, n);
        used += n;
    }
    if (len)
        buf[used < len ? used : len - 1] = 0;
    return depth;
}

int core_span_begin_sampled(const void *key, uint32_t name, int measured, uint32_t stride)
{
    core_thread *t = keyed_state(key);
    if (unlikely(!t))
        return 0;
    if (!measured) {
        uint32_t d = t->depth;
        if (d >= core_cfg.max_depth + 1u)
            return 0;
        core_frame *f = &t->stack[d + 1];
        f->name = name;
        f->node = t->stack[d].node;
        f->flags = CORE_FRAME_SUPPRESSED;
        t->depth = d + 1;
        if (d + 1 < t->fast_limit)
            t->fast_limit = d + 1;
        if (unlikely(core_span_hook_count))
            core_span_hooks_begin(t, f);
        return (int)(d + 1);
    }
    int token = span_begin_slow(name);
    if (token) {
        core_frame *f = &t->stack[token];
        if (!(f->flags & CORE_FRAME_SUPPRESSED)) {
            uint32_t outer = f->flags & CORE_FRAME_SCALED ? f->scale : 1;
            f->flags |= CORE_FRAME_SCALED;
            f->scale = outer * (stride ? stride : 1);
        }
        if ((uint32_t)token < t->fast_limit)
            t->fast_limit = (uint32_t)token;
    }
    return token;
}

void core_gpu_time(const void *key, int64_t ns)
{
    core_thread *t = key ? keyed_state(key) : thread_state();
    if (!t || t->depth == 0)
        return;
    const core_frame *top = &t->stack[t->depth];
    if (top->flags & CORE_FRAME_SUPPRESSED)
        return;
    core_node *n = &t->nodes[top->node];
    uint64_t s = top->flags & CORE_FRAME_SCALED ? top->scale : 1;
    if (ns < 0) {
        __atomic_store_n(&n->gpu_untimed, n->gpu_untimed + s, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&n->gpu_ns, n->gpu_ns + (uint64_t)ns * s, __ATOMIC_RELAXED);
    __atomic_store_n(&n->gpu_timed, n->gpu_timed + s, __ATOMIC_RELAXED);
}

void core_stack_inherit(const void *child_key, const void *parent_key)
{
    core_thread *t = keyed_state(child_key);
    if (!t || t->depth != t->base || child_key == parent_key)
        return; /* it has spans of its own open: they decide its path */
    const core_stack *parent = NULL;
    for (uint32_t i = 0; i < t->stack_count; i++)
        if (i != t->stack_current && t->stacks[i].key == parent_key)
            parent = &t->stacks[i];
    if (!parent)
        return; /* not on this thread: the child starts at the top level */
    uint32_t depth = parent->depth;
    memcpy(&t->stack[1], &parent->frames[1], depth * sizeof(core_frame));
    t->depth = t->base = depth;
    t->fast_limit = parent->fast_limit;
}
