#include "run_model.h"
#include "run_join.h"
#include "causality.h"
#include "u64_map.h"

#include "core/hash.h"
#include "lapse.h"

#include "core/hist.h"
#include "store/sample_set.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/run_dir.h"
#include "store/run_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- loading index: open addressing maps ---- */

typedef struct str_map { /* string id by content */
    uint32_t *ids; /* RM_NONE: empty */
    uint32_t mask, used;
} str_map;

/* Paths by (parent, name): a slot holds a path id and 32 bits of its key's hash (8
 * bytes a slot, not the 12 of a key and a value); a probe looks at a path only when
 * the hash bits agree. */
typedef struct path_map {
    uint64_t *slots; /* hash bits << 32 | path id; UINT64_MAX: empty */
    uint32_t mask, used;
} path_map;

typedef struct rm_index {
    str_map strings;
    path_map paths;
    u64_map counters; /* (path << 32 | name) -> counter */
    u64_map rank_slots; /* (role << 32 | rank) -> the role's rank slot */
} rm_index;

static uint32_t str_hash(const char *s)
{
    return (uint32_t)hash_mix(hash_str(s));
}

static void index_free(rm_index *ix)
{
    if (!ix)
        return;
    free(ix->strings.ids);
    free(ix->paths.slots);
    u64_map_free(&ix->counters);
    u64_map_free(&ix->rank_slots);
    free(ix);
}

/* ---- growable arrays ---- */

static int grow(void **items, uint32_t *cap, uint32_t count, size_t size)
{
    if (count < *cap)
        return 0;
    if (*cap >= UINT32_MAX / 2u)
        return -ENOMEM;
    uint32_t ncap = *cap ? *cap * 2u : 16u;
    void *p = realloc(*items, (size_t)ncap * size);
    if (!p)
        return -ENOMEM;
    *items = p;
    *cap = ncap;
    return 0;
}

#define GROW(m, arr, count, cap) grow((void **)&(m)->arr, &(m)->cap, (m)->count, sizeof *(m)->arr)

/* ---- strings ---- */

/* Blocks that names are cut from, freed together with the model:
 * no allocation (and no header) per string. A string never spans two blocks. */
typedef struct rm_block {
    struct rm_block *next;
    size_t used, cap;
    char data[];
} rm_block;

#define RM_BLOCK_SIZE (1u << 20)

static char *block_alloc(run_model *m, size_t size)
{
    rm_block *b = m->blocks;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > RM_BLOCK_SIZE ? size : RM_BLOCK_SIZE;
        rm_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        nb->next = b;
        m->blocks = b = nb;
    }
    char *p = b->data + b->used;
    b->used += size;
    return p;
}

static char *block_strdup(run_model *m, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = block_alloc(m, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static int str_map_grow(run_model *m, str_map *sm)
{
    uint32_t cap = sm->mask ? (sm->mask + 1u) * 2u : 1024u;
    uint32_t *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids)
        return -ENOMEM;
    memset(ids, 0xff, (size_t)cap * sizeof *ids);
    uint32_t mask = cap - 1u;
    for (uint32_t i = 0; i < m->string_count; i++) {
        uint32_t s = str_hash(m->strings[i]) & mask;
        while (ids[s] != RM_NONE)
            s = (s + 1u) & mask;
        ids[s] = i;
    }
    free(sm->ids);
    sm->ids = ids;
    sm->mask = mask;
    return 0;
}

/* The id of s, interned on first sight; RM_NONE when out of memory. */
static uint32_t intern(run_model *m, rm_index *ix, const char *s)
{
    str_map *sm = &ix->strings;
    if ((m->string_count + 1u) * 2u > sm->mask + 1u && str_map_grow(m, sm))
        return RM_NONE;
    uint32_t slot = str_hash(s) & sm->mask;
    for (;;) {
        uint32_t id = sm->ids[slot];
        if (id == RM_NONE)
            break;
        if (!strcmp(m->strings[id], s))
            return id;
        slot = (slot + 1u) & sm->mask;
    }
    if (GROW(m, strings, string_count, string_cap))
        return RM_NONE;
    char *copy = block_strdup(m, s);
    if (!copy)
        return RM_NONE;
    uint32_t id = m->string_count++;
    m->strings[id] = copy;
    sm->ids[slot] = id;
    return id;
}

static int path_map_grow(path_map *pm);

static rm_index *index_of(run_model *m)
{
    if (m->index)
        return m->index;
    rm_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return NULL;
    m->index = ix;
    if (path_map_grow(&ix->paths) || u64_map_grow(&ix->counters) || u64_map_grow(&ix->rank_slots) ||
        intern(m, ix, "") != 0) {
        index_free(ix);
        m->index = NULL;
        return NULL;
    }
    return ix;
}

/* ---- paths, roles, counters ---- */

static uint32_t new_path(run_model *m, uint32_t parent, uint32_t name, uint32_t role)
{
    if (GROW(m, paths, path_count, path_cap))
        return RM_NONE;
    uint32_t idx = m->path_count++;
    rm_path *p = &m->paths[idx];
    memset(p, 0, sizeof *p);
    p->parent = parent;
    p->name = name;
    p->role = role;
    p->depth = parent == RM_NONE ? 0 : m->paths[parent].depth + 1u;
    p->last_worker = RM_NONE;
    p->first_counter = RM_NONE;
    return idx;
}

static inline uint64_t path_key(uint32_t parent, uint32_t name)
{
    return ((uint64_t)parent << 32) | name;
}

static int path_map_grow(path_map *pm)
{
    uint32_t cap = pm->mask ? (pm->mask + 1u) * 2u : 1024u;
    uint64_t *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return -ENOMEM;
    memset(slots, 0xff, (size_t)cap * sizeof *slots);
    uint32_t mask = cap - 1u;
    for (uint32_t i = 0; pm->slots && i <= pm->mask; i++) {
        uint64_t v = pm->slots[i];
        if (v == UINT64_MAX)
            continue;
        /* the slot's bits are the hash's high half; its index comes from the low */
        uint32_t s = (uint32_t)(v >> 32) & mask;
        while (slots[s] != UINT64_MAX)
            s = (s + 1u) & mask;
        slots[s] = v;
    }
    free(pm->slots);
    pm->slots = slots;
    pm->mask = mask;
    return 0;
}

/* Brings the first slot of (parent, name) toward the cache: a file's nodes look up
 * distinct paths at random slots of a table far larger than the cache. */
static inline void path_map_prefetch(const path_map *pm, uint32_t parent, uint32_t name)
{
    __builtin_prefetch(&pm->slots[(uint32_t)(hash_mix(path_key(parent, name)) >> 32) & pm->mask]);
}

static uint32_t child_path(run_model *m, rm_index *ix, uint32_t parent, uint32_t name)
{
    path_map *pm = &ix->paths;
    if ((pm->used + 1u) * 2u > pm->mask + 1u && path_map_grow(pm))
        return RM_NONE;
    uint64_t h = hash_mix(path_key(parent, name));
    uint64_t bits = h & 0xffffffff00000000ull;
    uint32_t slot = (uint32_t)(h >> 32) & pm->mask;
    for (uint64_t v; (v = pm->slots[slot]) != UINT64_MAX; slot = (slot + 1u) & pm->mask) {
        uint32_t id = (uint32_t)v;
        if ((v & 0xffffffff00000000ull) == bits && m->paths[id].parent == parent &&
            m->paths[id].name == name)
            return id;
    }
    uint32_t idx = new_path(m, parent, name, m->paths[parent].role);
    if (idx == RM_NONE)
        return RM_NONE;
    pm->slots[slot] = bits | idx;
    pm->used++;
    return idx;
}

static uint32_t role_of(run_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->role_count; i++)
        if (!strcmp(m->roles[i].name, name))
            return i;
    if (GROW(m, roles, role_count, role_cap))
        return RM_NONE;
    rm_role *r = &m->roles[m->role_count];
    memset(r, 0, sizeof *r);
    r->name = strdup(name);
    if (!r->name)
        return RM_NONE;
    r->root = new_path(m, RM_NONE, 0, m->role_count);
    if (r->root == RM_NONE) {
        free(r->name);
        return RM_NONE;
    }
    return m->role_count++;
}

static int add_counter(run_model *m, rm_index *ix, uint32_t path, uint32_t name, int64_t sum,
                       uint64_t updates)
{
    u64_map *cm = &ix->counters;
    if (u64_map_full(cm) && u64_map_grow(cm))
        return -ENOMEM;
    uint64_t key = ((uint64_t)path << 32) | name;
    int found;
    uint32_t slot = u64_map_slot(cm, key, &found);
    if (!found) {
        if (GROW(m, counters, counter_count, counter_cap))
            return -ENOMEM;
        uint32_t idx = m->counter_count++;
        rm_counter *c = &m->counters[idx];
        c->path = path;
        c->name = name;
        c->sum = 0;
        c->updates = 0;
        c->overflowed = 0;
        /* keep each path's list in order of first sight */
        c->next = RM_NONE;
        uint32_t *link = &m->paths[path].first_counter;
        while (*link != RM_NONE)
            link = &m->counters[*link].next;
        *link = idx;
        cm->keys[slot] = key;
        cm->vals[slot] = idx;
        cm->used++;
    }
    rm_counter *c = &m->counters[cm->vals[slot]];
    /* past the bound the true sum is not known: it stays at the bound, and says so */
    if (!c->overflowed && __builtin_add_overflow(c->sum, sum, &c->sum)) {
        c->sum = sum > 0 ? INT64_MAX : INT64_MIN;
        c->overflowed = 1;
        m->overflowed_counters++;
    }
    c->updates += updates;
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* The rank slot of a process of role r with this rank (a new one for a rank not seen
 * before in the role), RM_NONE for a process without a rank (or none a key can
 * hold: in no cross-rank figure), or -ENOMEM. */
static int64_t rank_slot(run_model *m, rm_index *ix, uint32_t r, int64_t rank)
{
    if (rank < 0 || rank >= (int64_t)RM_NONE)
        return RM_NONE;
    u64_map *sm = &ix->rank_slots;
    if (u64_map_full(sm) && u64_map_grow(sm))
        return -ENOMEM;
    uint64_t key = ((uint64_t)r << 32) | (uint64_t)rank;
    int found;
    uint32_t at = u64_map_slot(sm, key, &found);
    if (found)
        return sm->vals[at];
    rm_role *role = &m->roles[r];
    if (GROW(role, slot_ranks, slot_count, slot_cap))
        return -ENOMEM;
    role->slot_ranks[role->slot_count] = rank;
    sm->keys[at] = key;
    sm->vals[at] = role->slot_count;
    sm->used++;
    return role->slot_count++;
}

/* Adds one process's total of a path to its rank's (slot's), widening the path's
 * window of slots to hold it. */
static int add_rank_total(rm_path *p, uint32_t slot, uint64_t total_ns)
{
    if (!p->rank_n) { /* the first: held in place */
        p->rank_lo = slot;
        p->rank_n = p->rank_cap = 1;
        p->rank_total = total_ns;
        return 0;
    }
    uint32_t lo = slot < p->rank_lo ? slot : p->rank_lo;
    uint32_t end = slot >= p->rank_lo + p->rank_n ? slot + 1 : p->rank_lo + p->rank_n;
    if (end - lo > p->rank_cap) {
        uint32_t cap = p->rank_cap * 2 > end - lo ? p->rank_cap * 2 : end - lo;
        uint64_t *t = p->rank_cap > 1 ? realloc(p->rank_totals, (size_t)cap * sizeof *t)
                                      : malloc((size_t)cap * sizeof *t);
        if (!t)
            return -ENOMEM;
        if (p->rank_cap <= 1)
            t[0] = p->rank_total;
        p->rank_totals = t;
        p->rank_cap = cap;
    }
    if (lo < p->rank_lo) { /* a slot before the window: move it up */
        memmove(p->rank_totals + (p->rank_lo - lo), p->rank_totals, (size_t)p->rank_n * sizeof(uint64_t));
        memset(p->rank_totals, 0, (size_t)(p->rank_lo - lo) * sizeof(uint64_t));
    } else if (end > p->rank_lo + p->rank_n) {
        memset(p->rank_totals + p->rank_n, 0, (size_t)(end - p->rank_lo - p->rank_n) * sizeof(uint64_t));
    }
    p->rank_lo = lo;
    p->rank_n = end - lo;
    uint64_t *t = p->rank_cap > 1 ? &p->rank_totals[slot - lo] : &p->rank_total;
    *t = sat_add(*t, total_ns);
    return 0;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

int run_model_add_unreadable(run_model *m, const char *file, const char *reason)
{
    if (GROW(m, unreadable, unreadable_count, unreadable_cap))
        return -ENOMEM;
    rm_unreadable *u = &m->unreadable[m->unreadable_count];
    u->file = strdup(file);
    u->reason = strdup(reason && *reason ? reason : "unreadable");
    if (!u->file || !u->reason) {
        free(u->file);
        free(u->reason);
        return -ENOMEM;
    }
    m->unreadable_count++;
    return 0;
}

int run_model_add_duplicate(run_model *m, const char *file, const char *kept)
{
    if (m->duplicate_count && !strcmp(m->duplicates[m->duplicate_count - 1].kept, kept)) {
        m->duplicates[m->duplicate_count - 1].count++;
        return 0;
    }
    if (GROW(m, duplicates, duplicate_count, duplicate_cap))
        return -ENOMEM;
    rm_duplicate *d = &m->duplicates[m->duplicate_count];
    d->file = strdup(file);
    d->kept = strdup(kept);
    d->count = 1;
    if (!d->file || !d->kept) {
        free(d->file);
        free(d->kept);
        return -ENOMEM;
    }
    m->duplicate_count++;
    return 0;
}

/* What f's session collected: its record, or for a file without one what was always
 * collected then: spans (a file with any node or counter beyond its roots), wait%
 * with a CPU sampler, I/O and RSS with a process sampler, the getrusage peak. */
static uint32_t file_features(const store_file *f)
{
    if (f->meta.features)
        return f->meta.features;
    uint32_t bits = 0;
    if (f->node_count > f->thread_count || f->counter_count || !f->samples)
        bits |= LAPSE_FEATURE_SPANS | LAPSE_FEATURE_TIMELINE;
    if (f->meta.cpu_sample_ms)
        bits |= LAPSE_FEATURE_CPU;
    if (f->proc.interval_ms)
        bits |= LAPSE_FEATURE_IO | LAPSE_FEATURE_MEMORY;
    if (f->meta.max_rss_kb)
        bits |= LAPSE_FEATURE_MEMORY;
    return bits;
}

static int estimated(const store_node *n)
{
    return n->sample_stride != 0 || n->child_estimated != 0;
}

int run_model_check(const store_file *f, char *why, size_t whylen)
{
    uint64_t wall = f->meta.wall_ns;
    uint64_t *children = calloc(f->node_count ? f->node_count : 1, sizeof *children);
    if (!children)
        return -ENOMEM;
    int rc = 0;
    for (uint32_t i = 0; i < f->node_count; i++) {
        const store_node *n = &f->nodes[i];
        if (n->parent >= 0 && (uint32_t)n->parent < i && !estimated(n)) {
            uint64_t *c = &children[n->parent];
            *c = *c + n->total_ns < *c ? UINT64_MAX : *c + n->total_ns;
        }
    }
    for (uint32_t i = 0; i < f->node_count && rc == 0; i++) {
        const store_node *n = &f->nodes[i];
        if (estimated(n))
            continue;
        uint64_t room = n->child_ns + wall < n->child_ns ? UINT64_MAX : n->child_ns + wall;
        if (children[i] > room) {
            snprintf(why, whylen,
                     "inconsistent sums: the spans inside node %u (%s) add up to %llu ns, more "
                     "than its child time, %llu ns, plus the process's wall time",
                     i, n->name < f->name_count ? f->names[n->name] : "?",
                     (unsigned long long)children[i], (unsigned long long)n->child_ns);
            rc = -ERANGE;
        } else if (n->parent >= 0 && n->child_ns - wall > n->total_ns && n->child_ns > wall) {
            snprintf(why, whylen,
                     "inconsistent sums: node %u (%s) has %llu ns of child time in %llu ns of "
                     "total, more than the process's wall time apart",
                     i, n->name < f->name_count ? f->names[n->name] : "?",
                     (unsigned long long)n->child_ns, (unsigned long long)n->total_ns);
            rc = -ERANGE;
        }
    }
    free(children);
    return rc;
}

/* The process sampler's records of f into w->proc: totals, and the series merged
 * down to RM_IO_POINTS stretches on the writer's realtime clock. */
static int add_proc(rm_worker *w, const store_file *f)
{
    const store_proc_samples *ps = &f->proc;
    rm_proc *p = &w->proc;
    p->interval_ms = ps->interval_ms;
    p->unreadable = ps->unreadable;
    p->sampler_cpu_ns = ps->sampler_cpu_ns;
    if (!ps->count)
        return 0;
    uint32_t per = (ps->count + RM_IO_POINTS - 1) / RM_IO_POINTS;
    p->series = calloc((ps->count + per - 1) / per, sizeof *p->series);
    if (!p->series)
        return -ENOMEM;
    /* realtime = mono + (anchor_real - anchor_mono) */
    int64_t shift = (int64_t)(f->meta.anchor_real_ns - f->meta.anchor_mono_ns);
    for (uint32_t i = 0; i < ps->count; i++) {
        const store_proc_sample *r = &ps->records[i];
        p->intervals += r->intervals;
        p->quiet_intervals += r->quiet_intervals;
        p->read_chars = sat_add(p->read_chars, r->read_chars);
        p->write_chars = sat_add(p->write_chars, r->write_chars);
        p->read_bytes = sat_add(p->read_bytes, r->read_bytes);
        p->write_bytes = sat_add(p->write_bytes, r->write_bytes);
        p->quiet_chars = sat_add(p->quiet_chars, r->quiet_chars);
        p->phased_chars = sat_add(p->phased_chars, r->phased_chars);
        if (r->rss_max_bytes > p->rss_peak_bytes)
            p->rss_peak_bytes = r->rss_max_bytes;
        rm_io_point *pt = &p->series[i / per];
        uint64_t start = r->start_ns + (uint64_t)shift, end = r->end_ns + (uint64_t)shift;
        if (i % per == 0)
            pt->start_real_ns = start;
        pt->end_real_ns = end;
        pt->chars = sat_add(pt->chars, sat_add(r->read_chars, r->write_chars));
    }
    p->series_count = (ps->count + per - 1) / per;
    return 0;
}

/* What a worker owns (its fields NULL or allocated). */
static void worker_free(rm_worker *w)
{
    free(w->file);
    free(w->host);
    free(w->role);
    free(w->run_id);
    free(w->end_reason);
    free(w->launcher);
    free(w->job_id);
    free(w->write_error);
    free(w->gpu_time_missing);
    free(w->window.backend);
    free(w->window.phase);
    free(w->window.trace);
    free(w->window.error);
    free(w->proc.series);
    free(w->children);
    free(w->activity_note);
    sample_set_free(w->samples);
    causal_file_free(w->causal);
    for (uint32_t i = 0; i < w->gpu.device_count; i++) {
        free(w->gpu.devices[i].name);
        free(w->gpu.devices[i].uuid);
        free(w->gpu.devices[i].uuid_error);
        free(w->gpu.devices[i].phases);
    }
    free(w->gpu.devices);
    free(w->gpu.error);
    for (uint32_t i = 0; i < w->gpu_memory.device_count; i++) {
        free(w->gpu_memory.devices[i].uuid);
        free(w->gpu_memory.devices[i].name);
    }
    free(w->gpu_memory.devices);
    free(w->gpu_memory.error);
    free(w->missing);
    free(w->absent);
}

/* The file's GPU section, its phase names interned. */
static int add_gpu(run_model *m, rm_index *ix, rm_worker *w, const store_file *f)
{
    const store_gpu *g = &f->gpu;
    rm_gpu *o = &w->gpu;
    if (!g->interval_ms)
        return 0;
    o->interval_ms = g->interval_ms;
    o->failed_calls = g->failed_calls;
    if (!(o->error = dup_or_empty(g->error)))
        return -ENOMEM;
    if (g->device_count && !(o->devices = calloc(g->device_count, sizeof *o->devices)))
        return -ENOMEM;
    for (uint32_t i = 0; i < g->device_count; i++) {
        const store_gpu_device *d = &g->devices[i];
        rm_gpu_device *od = &o->devices[i];
        o->device_count = i + 1;
        *od = (rm_gpu_device){d->index, dup_or_empty(d->name), d->ticks, d->busy_ticks,
                              d->busy_pct_sum, d->own_ticks, d->own_pct_sum, d->mem_peak_bytes,
                              NULL, 0, dup_or_empty(d->uuid), dup_or_empty(d->uuid_error),
                              d->uuid != NULL};
        if (!od->name || !od->uuid || !od->uuid_error || (d->phase_count && !(od->phases = calloc(d->phase_count, sizeof *od->phases))))
            return -ENOMEM;
        for (uint32_t k = 0; k < d->phase_count; k++) {
            const store_gpu_phase *p = &d->phases[k];
            uint32_t name = p->name && p->name < f->name_count && f->names[p->name]
                                ? intern(m, ix, f->names[p->name])
                                : 0;
            if (name == RM_NONE)
                return -ENOMEM;
            od->phases[k] = (rm_gpu_phase){name, p->ticks, p->own_pct_sum};
        }
        od->phase_count = d->phase_count;
    }
    return 0;
}

/* The file's GPU_MEMORY section (VRAM from torch). */
static int add_gpu_memory(rm_worker *w, const store_file *f)
{
    const store_gpu_memory *g = f->gpu_memory;
    rm_gpu_memory *o = &w->gpu_memory;
    if (!g)
        return 0;
    o->present = 1;
    o->readings = g->readings;
    o->resets = g->resets;
    if (!(o->error = dup_or_empty(g->error)))
        return -ENOMEM;
    if (g->device_count && !(o->devices = calloc(g->device_count, sizeof *o->devices)))
        return -ENOMEM;
    for (uint32_t i = 0; i < g->device_count; i++) {
        const store_gpu_memory_device *d = &g->devices[i];
        o->device_count = i + 1;
        o->devices[i] = (rm_gpu_memory_device){d->index, dup_or_empty(d->uuid),
                                               dup_or_empty(d->name), d->allocated_peak_bytes,
                                               d->reserved_peak_bytes};
        if (!o->devices[i].uuid || !o->devices[i].name)
            return -ENOMEM;
    }
    return 0;
}

/* ---- GPU activity ---- */

static int cmp_activity(const void *a, const void *b)
{
    const rm_activity *x = a, *y = b;
    if (x->path != y->path)
        return x->path < y->path ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    return (x->unseen > y->unseen) - (x->unseen < y->unseen);
}

/* Sorts m->activity from start on and merges equal keys; keeps the count. */
static void activity_merge(run_model *m, uint32_t start)
{
    rm_activity *g = m->activity + start;
    uint32_t n = m->activity_count - start, out = 0;
    if (n == 0)
        return;
    qsort(g, n, sizeof *g, cmp_activity);
    for (uint32_t i = 1; i < n; i++) {
        if (cmp_activity(&g[out], &g[i]) == 0) {
            g[out].count = sat_add(g[out].count, g[i].count);
            g[out].ns = sat_add(g[out].ns, g[i].ns);
            g[out].bytes = sat_add(g[out].bytes, g[i].bytes);
        } else {
            g[++out] = g[i];
        }
    }
    m->activity_count = start + out + 1;
}

/* The GPU records of f, merged into m by the paths its nodes became (nodes[]). */
static int add_activity(run_model *m, rm_index *ix, rm_worker *w, const store_file *f,
                   const uint32_t *nodes, uint32_t root)
{
    const store_gpu_activity *g = f->activity;
    if (!g)
        return 0;
    w->activity_state = g->state;
    w->activity_dropped = g->dropped;
    w->activity_records = g->count;
    free(w->activity_note);
    if (!(w->activity_note = dup_or_empty(g->note)))
        return -ENOMEM;
    uint32_t *names = malloc(((size_t)g->name_count + 1u) * sizeof *names);
    if (!names)
        return -ENOMEM;
    for (uint32_t i = 0; i < g->name_count; i++)
        if ((names[i] = intern(m, ix, g->names[i] ? g->names[i] : "")) == RM_NONE) {
            free(names);
            return -ENOMEM;
        }
    uint32_t start = m->activity_count;
    for (uint32_t i = 0; i < g->count; i++) {
        const store_gpu_record *r = &g->records[i];
        if (r->node != STORE_GPU_NO_NODE && r->node >= f->node_count)
            continue; /* the decoder refuses it; a model built from memory may hold one */
        if (GROW(m, activity, activity_count, activity_cap)) {
            free(names);
            return -ENOMEM;
        }
        int unseen = r->node == STORE_GPU_NO_NODE;
        m->activity[m->activity_count++] = (rm_activity){unseen ? root : nodes[r->node], r->kind,
                                          r->kind == STORE_GPU_KERNEL && r->name < g->name_count
                                              ? names[r->name] : 0,
                                          (uint32_t)unseen, 1, r->end_ns - r->start_ns, r->bytes};
        if (m->activity_count - start >= 65536u) /* merged as it goes: a file's memory stays small */
            activity_merge(m, start);
    }
    activity_merge(m, start);
    free(names);
    return 0;
}

static int add_children(rm_worker *w, const store_file *f)
{
    w->children_unrecorded = f->children_unrecorded;
    if (!f->child_count)
        return 0;
    w->children = malloc((size_t)f->child_count * sizeof *w->children);
    if (!w->children)
        return -ENOMEM;
    /* realtime = mono + (anchor_real - anchor_mono), in unsigned arithmetic (a file's
     * figures may be anything) */
    uint64_t shift = f->meta.anchor_real_ns - f->meta.anchor_mono_ns;
    for (uint32_t i = 0; i < f->child_count; i++)
        w->children[i] = (rm_child){f->children[i].pid, f->children[i].fork_mono_ns + shift};
    w->child_count = f->child_count;
    return 0;
}

int run_model_add(run_model *m, const char *file, const store_file *f)
{
    rm_index *ix = index_of(m);
    if (!ix)
        return -ENOMEM;
    /* the decoder checks this; a model built from memory may not have been */
    for (uint32_t i = 0; i < f->node_count; i++) {
        const store_node *n = &f->nodes[i];
        if (n->name >= f->name_count || (n->parent >= 0 && (uint32_t)n->parent >= i) ||
            (unsigned)n->hist_lo + n->hist_n > HIST_BUCKETS)
            return -EINVAL;
    }
    for (uint32_t i = 0; i < f->counter_count; i++)
        if (f->counters[i].node >= f->node_count || f->counters[i].name >= f->name_count)
            return -EINVAL;
    char why[8];
    int checked = run_model_check(f, why, sizeof why);
    if (checked)
        return checked;

    if (GROW(m, workers, worker_count, worker_cap))
        return -ENOMEM;
    uint32_t role = role_of(m, f->meta.role ? f->meta.role : "");
    if (role == RM_NONE)
        return -ENOMEM;
    uint32_t widx = m->worker_count;
    rm_worker *w = &m->workers[widx];
    memset(w, 0, sizeof *w);
    const store_meta *mt = &f->meta;
    w->file = dup_or_empty(file);
    w->host = dup_or_empty(mt->host);
    w->role = dup_or_empty(mt->role);
    w->run_id = dup_or_empty(mt->run_id);
    w->end_reason = dup_or_empty(mt->end_reason);
    w->launcher = dup_or_empty(mt->launcher);
    w->job_id = dup_or_empty(mt->job_id);
    w->write_error = dup_or_empty(mt->write_error);
    w->missing = dup_or_empty(mt->missing);
    w->absent = dup_or_empty(mt->absent);
    w->gpu_time_missing = dup_or_empty(mt->gpu_time_missing);
    w->window.backend = dup_or_empty(mt->window_backend);
    w->window.phase = dup_or_empty(mt->window_phase);
    w->window.trace = dup_or_empty(mt->window_trace);
    w->window.error = dup_or_empty(mt->window_error);
    if (!w->window.backend || !w->window.phase || !w->window.trace || !w->window.error) {
        worker_free(w);
        return -ENOMEM;
    }
    w->window.start = mt->window_start;
    w->window.stop = mt->window_stop;
    w->window.entries = mt->window_entries;
    w->window.opened_entry = mt->window_opened_entry;
    w->window.closed_entry = mt->window_closed_entry;
    w->window.open_ns = mt->window_open_ns;
    w->window.close_ns = mt->window_close_ns;
    w->activity_pauses = mt->activity_pauses;
    w->activity_paused_ns = mt->activity_paused_ns;
    w->activity_pause_from_ns = mt->activity_pause_from_ns > mt->start_mono_ns
                                    ? mt->activity_pause_from_ns - mt->start_mono_ns : 0;
    w->activity_pause_to_ns = mt->activity_pause_to_ns > mt->start_mono_ns
                                  ? mt->activity_pause_to_ns - mt->start_mono_ns : 0;
    if (!w->file || !w->host || !w->role || !w->run_id || !w->end_reason || !w->launcher ||
        !w->job_id || !w->write_error || !w->missing || !w->absent || !w->gpu_time_missing ||
        (f->samples && !(w->samples = sample_set_from_store(f->samples)))) {
        worker_free(w);
        return -ENOMEM;
    }
    w->role_index = role;
    w->pid = mt->pid;
    w->ppid = mt->ppid;
    w->rank = mt->rank;
    w->world_size = mt->world_size;
    w->local_rank = mt->local_rank;
    w->final = mt->final ? 1u : 0u;
    w->write_seq = mt->write_seq;
    w->write_failures = mt->write_failures;
    w->start_real_ns = mt->start_real_ns;
    w->written_real_ns = mt->write_real_ns;
    w->wall_ns = mt->wall_ns;
    w->cpu_user_ns = mt->cpu_user_ns;
    w->cpu_sys_ns = mt->cpu_sys_ns;
    w->max_rss_kb = mt->max_rss_kb;
    w->cpu_known = !mt->cpu_unknown;
    w->ctx_voluntary = mt->ctx_voluntary < 0 ? -1 : mt->ctx_voluntary;
    w->ctx_involuntary = mt->ctx_involuntary < 0 ? -1 : mt->ctx_involuntary;
    w->threads = f->thread_count;
    w->snapshot_interval_ms = mt->snapshot_interval_ms;
    w->max_depth = mt->max_depth;
    w->max_paths = mt->max_paths;
    w->max_spans = mt->max_spans;
    w->max_counters = mt->max_counters;
    w->timeline_dropped = mt->timeline_dropped;
    w->folded_depth = mt->folded_depth;
    w->folded_paths = mt->folded_paths;
    w->unmatched_ends = mt->unmatched_ends;
    w->dropped_counters = mt->dropped_counters;
    w->cpu_sampler = (rm_cpu_sampler){mt->cpu_sample_ms, mt->cpu_sampler_rt ? 1u : 0u,
                                      mt->cpu_ticks, mt->cpu_ticks_late, mt->cpu_sampler_ns};
    w->features = file_features(f);
    if (add_proc(w, f) || add_children(w, f) || causal_file_take(f, &w->causal) ||
        add_gpu(m, ix, w, f) || add_gpu_memory(w, f)) {
        worker_free(w);
        return -ENOMEM;
    }
    m->worker_count++;
    m->roles[role].processes++;
    int64_t slot = rank_slot(m, ix, role, mt->rank);
    if (slot < 0)
        return (int)slot;

    int rc = -ENOMEM;
    uint32_t *names = malloc(((size_t)f->name_count + 1u) * sizeof *names);
    uint32_t *nodes = malloc(((size_t)f->node_count + 1u) * sizeof *nodes);
    if (!names || !nodes)
        goto out;
    for (uint32_t i = 0; i < f->name_count; i++)
        if ((names[i] = intern(m, ix, f->names[i] ? f->names[i] : "")) == RM_NONE)
            goto out;
    for (uint32_t i = 0; i < f->node_count; i++) {
        const store_node *n = &f->nodes[i];
        enum { AHEAD = 8 }; /* the lookup of the node AHEAD on, if its parent is merged */
        if (i + AHEAD < f->node_count) {
            const store_node *a = &f->nodes[i + AHEAD];
            if (a->parent >= 0 && (uint32_t)a->parent < i)
                path_map_prefetch(&ix->paths, nodes[a->parent], names[a->name]);
        }
        uint32_t p;
        if (n->parent < 0) {
            p = m->roles[role].root;
            w->busy_ns = sat_add(w->busy_ns, n->child_ns);
            if (mt->thread_names) { /* the thread's spans under its name, added here */
                const char *tname = n->thread < f->thread_count && f->threads[n->thread].name &&
                                            *f->threads[n->thread].name
                                        ? f->threads[n->thread].name
                                        : "(unnamed thread)";
                uint32_t tn = intern(m, ix, tname);
                if (tn == RM_NONE || (p = child_path(m, ix, p, tn)) == RM_NONE)
                    goto out;
                m->paths[p].total_ns = sat_add(m->paths[p].total_ns, n->child_ns);
            }
        } else {
            p = child_path(m, ix, nodes[n->parent], names[n->name]);
            if (p == RM_NONE)
                goto out;
            w->span_calls = sat_add(w->span_calls, n->calls);
        }
        nodes[i] = p;
        rm_path *mp = &m->paths[p];
        if (n->calls) {
            if (mp->calls == 0 || n->min_ns < mp->min_ns)
                mp->min_ns = n->min_ns;
            if (n->max_ns > mp->max_ns)
                mp->max_ns = n->max_ns;
            if (mp->last_worker != widx) {
                mp->last_worker = widx;
                mp->in_processes++;
            }
            /* the reader gives the window of non-zero buckets; hist_n 0 is dense */
            if (n->hist && n->hist_n == 0 && hist_window_add_dense(&mp->hist, n->hist))
                goto out;
            if (n->hist && n->hist_n && hist_window_add_counts(&mp->hist, n->hist_lo, n->hist_n, n->hist))
                goto out;
        }
        mp->calls = sat_add(mp->calls, n->calls);
        mp->total_ns = sat_add(mp->total_ns, n->total_ns);
        mp->child_ns = sat_add(mp->child_ns, n->child_ns);
        mp->folded = sat_add(mp->folded, n->folded);
        if (n->sample_stride > mp->sample_stride)
            mp->sample_stride = n->sample_stride;
        mp->child_estimated |= n->child_estimated;
        mp->cpu_ticks = sat_add(mp->cpu_ticks, n->cpu_ticks);
        mp->cpu_wait_ticks = sat_add(mp->cpu_wait_ticks, n->cpu_wait_ticks);
        mp->gpu_ns = sat_add(mp->gpu_ns, n->gpu_ns);
        mp->gpu_timed = sat_add(mp->gpu_timed, n->gpu_timed);
        mp->gpu_untimed = sat_add(mp->gpu_untimed, n->gpu_untimed);
        if (p != m->roles[role].root && slot != RM_NONE &&
            add_rank_total(mp, (uint32_t)slot, n->parent < 0 ? n->child_ns : n->total_ns))
            goto out;
    }
    for (uint32_t i = 0; i < f->counter_count; i++) {
        const store_counter *c = &f->counters[i];
        if (add_counter(m, ix, nodes[c->node], names[c->name], c->sum, c->updates))
            goto out;
    }
    if (add_activity(m, ix, w, f, nodes, m->roles[role].root))
        goto out;
    rc = 0;
out:
    free(names);
    free(nodes);
    return rc;
}

/* ---- finishing ---- */

static _Thread_local const run_model *sort_model; /* for the qsort comparator */

static int cmp_role_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return strcmp(sort_model->roles[x].name, sort_model->roles[y].name);
}

static int sort_roles(run_model *m)
{
    uint32_t n = m->role_count;
    if (n < 2)
        return 0;
    uint32_t *order = malloc(n * sizeof *order);
    uint32_t *rank = malloc(n * sizeof *rank);
    rm_role *sorted = malloc(n * sizeof *sorted);
    if (!order || !rank || !sorted) {
        free(order);
        free(rank);
        free(sorted);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    sort_model = m;
    qsort(order, n, sizeof *order, cmp_role_index);
    for (uint32_t i = 0; i < n; i++) {
        sorted[i] = m->roles[order[i]];
        rank[order[i]] = i;
    }
    memcpy(m->roles, sorted, n * sizeof *sorted);
    for (uint32_t i = 0; i < m->path_count; i++)
        m->paths[i].role = rank[m->paths[i].role];
    for (uint32_t i = 0; i < m->worker_count; i++)
        m->workers[i].role_index = rank[m->workers[i].role_index];
    free(order);
    free(rank);
    free(sorted);
    return 0;
}

/* Fills buf backwards from its end with path i's names and separators, at most
 * RM_PATH_SHOWN + 1 bytes (one more than a string keeps: then it is cut). Returns
 * how many bytes it wrote, ending at buf + RM_PATH_SHOWN + 1. */
static size_t path_tail(const run_model *m, uint32_t i, char *buf)
{
    const size_t room = RM_PATH_SHOWN + 1;
    size_t n = 0;
    for (uint32_t q = i; n < room && m->paths[q].parent != RM_NONE; q = m->paths[q].parent) {
        const char *name = m->strings[m->paths[q].name];
        size_t len = strlen(name), take = len < room - n ? len : room - n;
        n += take;
        memcpy(buf + room - n, name + len - take, take);
        if (n < room && m->paths[m->paths[q].parent].parent != RM_NONE)
            buf[room - ++n] = '/';
    }
    return n;
}

const char *rm_path_str(const run_model *m, uint32_t i, char *buf)
{
    const rm_path *p = &m->paths[i];
    if (p->parent == RM_NONE)
        return "";
    if (m->paths[p->parent].parent == RM_NONE) /* a top-level path: its name, whole */
        return m->strings[p->name];
    const size_t room = RM_PATH_SHOWN + 1;
    size_t n = path_tail(m, i, buf);
    if (n < room) {
        memmove(buf, buf + room - n, n);
        buf[n] = 0;
    } else { /* "..." + the last RM_PATH_SHOWN - 3 bytes */
        size_t keep = RM_PATH_SHOWN - 3;
        memmove(buf + 3, buf + room - keep, keep);
        memcpy(buf, "...", 3);
        buf[RM_PATH_SHOWN] = 0;
    }
    return buf;
}

int rm_path_cut(const run_model *m, uint32_t i)
{
    if (m->paths[i].depth <= 1)
        return 0;
    size_t n = 0;
    for (uint32_t q = i; n <= RM_PATH_SHOWN && m->paths[q].parent != RM_NONE; q = m->paths[q].parent)
        n += strlen(m->strings[m->paths[q].name]) + (m->paths[m->paths[q].parent].parent != RM_NONE);
    return n > RM_PATH_SHOWN;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int build_hosts(run_model *m)
{
    if (!m->worker_count)
        return 0;
    m->hosts = malloc(m->worker_count * sizeof *m->hosts);
    if (!m->hosts)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->worker_count; i++)
        m->hosts[i] = m->workers[i].host;
    qsort(m->hosts, m->worker_count, sizeof *m->hosts, cmp_str);
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (n == 0 || strcmp(m->hosts[n - 1], m->hosts[i]))
            m->hosts[n++] = m->hosts[i];
    for (uint32_t i = 0; i < n; i++)
        if (!(m->hosts[i] = strdup(m->hosts[i]))) {
            m->host_count = i;
            return -ENOMEM;
        }
    m->host_count = n;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct ranks of role r's processes, ascending, and how many have none. */
static int collect_ranks(run_model *m, uint32_t r)
{
    rm_role *role = &m->roles[r];
    free(role->ranks);
    role->ranks = NULL;
    role->rank_count = role->unranked = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].role_index == r)
            n += rm_has_rank(&m->workers[i]);
    role->unranked = role->processes - n;
    if (!n)
        return 0;
    role->ranks = malloc(n * sizeof *role->ranks);
    if (!role->ranks)
        return -ENOMEM;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].role_index == r && rm_has_rank(&m->workers[i]))
            role->ranks[k++] = m->workers[i].rank;
    qsort(role->ranks, n, sizeof *role->ranks, cmp_i64);
    k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || role->ranks[k - 1] != role->ranks[i])
            role->ranks[k++] = role->ranks[i];
    role->rank_count = k;
    return 0;
}

static uint64_t now_real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rm_on_this_host(const rm_host_view *view, const char *host)
{
    for (size_t i = 0; view && host && i < sizeof view->names / sizeof view->names[0]; i++)
        if (view->names[i] && !strcmp(view->names[i], host))
            return 1;
    return 0;
}

int rm_pid_gone(const rm_host_view *view, int64_t pid)
{
    return view && view->pid_alive && pid > 0 && view->pid_alive(view->pid_ctx, pid) == 0;
}

int run_model_finish(run_model *m, const rm_options *opt)
{
    index_free(m->index); /* loading is over */
    m->index = NULL;
    activity_merge(m, 0); /* one entry per key over every file */
    int rc = sort_roles(m);
    if (!rc)
        rc = build_hosts(m);
    if (rc)
        return rc;

    m->read_real_ns = opt && opt->now_real_ns ? opt->now_real_ns : now_real_ns();
    m->start_real_ns = m->end_real_ns = 0;
    const char *first_run = NULL;
    m->run_ids = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->start_real_ns && (!m->start_real_ns || w->start_real_ns < m->start_real_ns))
            m->start_real_ns = w->start_real_ns;
        if (w->written_real_ns > m->end_real_ns)
            m->end_real_ns = w->written_real_ns;
        int seen = 0;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = !strcmp(m->workers[k].run_id, w->run_id);
        if (!seen)
            m->run_ids++;
        if (!first_run)
            first_run = w->run_id;
    }
    free(m->run_id);
    m->run_id = strdup(first_run ? first_run : "");
    if (!m->run_id)
        return -ENOMEM;

    for (uint32_t r = 0; r < m->role_count; r++) {
        rm_role *role = &m->roles[r];
        role->busy_ns = role->busy_max_ns = role->busy_min_ns = 0;
        role->busy_max_worker = RM_NONE;
        int first = 1;
        for (uint32_t i = 0; i < m->worker_count; i++) {
            const rm_worker *w = &m->workers[i];
            if (w->role_index != r)
                continue;
            role->busy_ns = sat_add(role->busy_ns, w->busy_ns);
            if (first || w->busy_ns > role->busy_max_ns) {
                role->busy_max_ns = w->busy_ns;
                role->busy_max_worker = i;
            }
            if (first || w->busy_ns < role->busy_min_ns)
                role->busy_min_ns = w->busy_ns;
            first = 0;
        }
        role->top_total_ns = 0;
        role->over_busy = 0;
        for (uint32_t i = 0; i < m->path_count; i++) {
            const rm_path *p = &m->paths[i];
            if (p->role != r || p->parent == RM_NONE)
                continue;
            if (p->depth == 1)
                role->top_total_ns = sat_add(role->top_total_ns, p->total_ns);
            role->over_busy += rm_over_busy(m, p);
        }
        double mean = role->processes ? (double)role->busy_ns / role->processes : 0.0;
        role->imbalance = mean > 0.0 ? (double)role->busy_max_ns / mean : 0.0;
        rc = collect_ranks(m, r);
        if (rc)
            return rc;
    }

    for (uint32_t i = 0; i < m->worker_count; i++) {
        rm_worker *w = &m->workers[i];
        w->stale_limit_ns = 2ull * w->snapshot_interval_ms * 1000000ull + 1000000000ull;
        w->stale_by_ns = m->end_real_ns - w->written_real_ns;
        w->silent_ns = m->read_real_ns > w->written_real_ns ? m->read_real_ns - w->written_real_ns : 0;
        const rm_host_view *view = opt ? opt->host : NULL;
        w->gone = !w->final && rm_on_this_host(view, w->host) && rm_pid_gone(view, w->pid);
        if (w->final)
            w->state = RM_FINAL;
        else if (w->stale_by_ns > w->stale_limit_ns)
            w->state = RM_STOPPED_EARLY;
        else if (w->gone)
            w->state = RM_GONE;
        else if (w->silent_ns > w->stale_limit_ns)
            w->state = RM_ENDED_UNSEEN;
        else
            w->state = RM_RUNNING;
    }
    return 0;
}

/* store_read_attempt's callback: one image of a file (a pack holds several), or an
 * entry that was not read. */
static int add_image(void *ctx, const store_image *im)
{
    run_model *m = ctx;
    if (im->same_as)
        return run_model_add_duplicate(m, im->name, im->same_as);
    if (!im->f)
        return run_model_add_unreadable(m, im->name, im->why);
    char why[512];
    int checked = run_model_check(im->f, why, sizeof why);
    if (checked == -ENOMEM)
        return checked;
    if (checked)
        return run_model_add_unreadable(m, im->name, why);
    int rc = run_model_add(m, im->name, im->f);
    if (rc == -EINVAL)
        return run_model_add_unreadable(m, im->name, "malformed span tree");
    return rc;
}

/* The files of one attempt into m (m->input and m->dir set), finished. */
static int load_attempt(const store_attempt *at, const rm_options *opt, run_model *m)
{
    m->single_file = at->single_file;
    for (uint32_t i = 0; opt && i < opt->extra_unreadable_count; i++)
        if (run_model_add_unreadable(m, opt->extra_unreadable[i].file,
                                     opt->extra_unreadable[i].reason))
            return -ENOMEM;
    if (store_read_attempt(at, STORE_READ_SKIP_SPANS, add_image, m, opt ? opt->hold : NULL,
                           opt ? opt->hold_ctx : NULL) != 0)
        return -ENOMEM;
    return run_model_finish(m, opt);
}

int run_model_load_mem(const char *dir, int single_file, const store_buffer *files, size_t count,
                       const rm_options *opt, run_model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    int rc = -ENOMEM;
    char **names = calloc(count ? count : 1, sizeof *names);
    m->input = strdup(dir);
    m->dir = strdup(dir);
    if (names && m->input && m->dir) {
        for (size_t i = 0; i < count; i++)
            names[i] = (char *)files[i].name;
        store_attempt at = {.dir = m->dir, .single_file = single_file, .files = names,
                            .file_count = count, .buffers = files};
        rc = load_attempt(&at, opt, m);
    }
    free(names);
    if (rc) {
        snprintf(err, errlen, "%s: out of memory loading the run", dir);
        run_model_free(m);
    }
    return rc;
}

static int cmp_joined(const void *a, const void *b)
{
    const rm_joined *x = a, *y = b;
    if (x->start_real_ns != y->start_real_ns)
        return x->start_real_ns < y->start_real_ns ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

/* The attempts of l that the run holds (joined) and those it does not (superseded). */
static int take_attempts(run_model *m, const store_run_listing *l, const run_join *j)
{
    m->superseded = calloc(l->count, sizeof *m->superseded);
    m->joined = j->joined > 1 ? calloc(j->joined, sizeof *m->joined) : NULL;
    if (!m->superseded || (j->joined > 1 && !m->joined))
        return -ENOMEM;
    for (size_t i = 0; i < l->count; i++) {
        const store_attempt *a = &l->attempts[i];
        if (j->attempts[i].joined && j->joined > 1) {
            rm_joined *x = &m->joined[m->joined_count];
            if (!(x->dir = strdup(a->dir)))
                return -ENOMEM;
            x->files = a->file_count;
            x->start_real_ns = j->attempts[i].start_real_ns;
            m->joined_count++;
        } else if (!j->attempts[i].joined) {
            rm_superseded *s = &m->superseded[m->superseded_count];
            if (!(s->dir = strdup(a->dir)))
                return -ENOMEM;
            s->files = a->file_count;
            s->newest_mtime_ns = a->newest_mtime_ns;
            m->superseded_count++;
        }
    }
    if (m->joined_count)
        qsort(m->joined, m->joined_count, sizeof *m->joined, cmp_joined);
    return 0;
}

int run_model_load(const char *path, const rm_options *opt, run_model *m, char *err,
                   size_t errlen)
{
    memset(m, 0, sizeof *m);
    store_run_listing l;
    int rc = store_list_run(path, &l, err, errlen);
    if (rc)
        return rc;
    run_join j;
    if ((rc = run_join_build(&l, path, &j)) != 0) {
        store_run_listing_free(&l);
        snprintf(err, errlen, "%s: out of memory loading the run", path);
        return rc;
    }
    rc = -ENOMEM;
    const store_attempt *at = &j.run;
    m->input = strdup(path);
    m->dir = strdup(at->dir);
    if (!m->input || !m->dir || take_attempts(m, &l, &j))
        goto fail;
    rc = load_attempt(at, opt, m);
    if (!rc)
        rc = rm_find_leftovers(m, opt ? opt->host : NULL, at->files, at->file_count);
    if (rc)
        goto fail;
    run_join_free(&j);
    store_run_listing_free(&l);
    return 0;
fail:
    snprintf(err, errlen, "%s: out of memory loading the run", path);
    run_join_free(&j);
    store_run_listing_free(&l);
    run_model_free(m);
    return rc;
}

void run_model_free(run_model *m)
{
    free(m->input);
    free(m->dir);
    free(m->run_id);
    free(m->strings);
    for (rm_block *b = m->blocks; b;) {
        rm_block *next = b->next;
        free(b);
        b = next;
    }
    for (uint32_t i = 0; i < m->path_count; i++) {
        if (m->paths[i].rank_cap > 1)
            free(m->paths[i].rank_totals);
        hist_window_free(&m->paths[i].hist);
    }
    free(m->paths);
    free(m->counters);
    free(m->activity);
    for (uint32_t i = 0; i < m->role_count; i++) {
        free(m->roles[i].name);
        free(m->roles[i].ranks);
        free(m->roles[i].slot_ranks);
    }
    free(m->roles);
    for (uint32_t i = 0; i < m->worker_count; i++) {
        worker_free(&m->workers[i]);
    }
    free(m->workers);
    for (uint32_t i = 0; i < m->unreadable_count; i++) {
        free(m->unreadable[i].file);
        free(m->unreadable[i].reason);
    }
    free(m->unreadable);
    for (uint32_t i = 0; i < m->duplicate_count; i++) {
        free(m->duplicates[i].file);
        free(m->duplicates[i].kept);
    }
    free(m->duplicates);
    for (uint32_t i = 0; i < m->superseded_count; i++)
        free(m->superseded[i].dir);
    free(m->superseded);
    for (uint32_t i = 0; i < m->joined_count; i++)
        free(m->joined[i].dir);
    free(m->joined);
    for (uint32_t i = 0; i < m->host_count; i++)
        free(m->hosts[i]);
    free(m->hosts);
    for (uint32_t i = 0; i < m->leftover_count; i++) {
        free(m->leftovers[i].temp);
        free(m->leftovers[i].file);
    }
    free(m->leftovers);
    index_free(m->index);
    memset(m, 0, sizeof *m);
}
