#include "live_delta.h"

#include "core/hash.h"
#include "core/hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double QUANTILES[LIVE_QUANTILES] = {0.50, 0.90, 0.99};

/* ---- the state ---- */

static size_t slot_of(const live_state *s, uint32_t parent, const char *name)
{
    return hash_mix(hash_str(name) ^ ((uint64_t)parent << 32 | parent)) & (s->slot_cap - 1);
}

/* The path (parent, name) of s, LIVE_NONE when there is none. */
static uint32_t find_path(const live_state *s, uint32_t parent, const char *name)
{
    for (size_t i = slot_of(s, parent, name);; i = (i + 1) & (s->slot_cap - 1)) {
        uint32_t p = s->slots[i];
        if (p == LIVE_NONE || (s->paths[p].parent == parent && !strcmp(s->paths[p].name, name)))
            return p;
    }
}

static int grow_slots(live_state *s)
{
    size_t cap = s->slot_cap ? s->slot_cap * 2 : 64;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -ENOMEM;
    memset(slots, 0xff, cap * sizeof *slots); /* LIVE_NONE */
    free(s->slots);
    s->slots = slots;
    s->slot_cap = cap;
    for (uint32_t p = 1; p < s->path_count; p++) {
        size_t i = slot_of(s, s->paths[p].parent, s->paths[p].name);
        while (s->slots[i] != LIVE_NONE)
            i = (i + 1) & (cap - 1);
        s->slots[i] = p;
    }
    return 0;
}

/* The path (parent, name), made when new; LIVE_NONE out of memory. */
static uint32_t path_for(live_state *s, uint32_t parent, const char *name)
{
    uint32_t p = find_path(s, parent, name);
    if (p != LIVE_NONE)
        return p;
    if ((size_t)(s->path_count + 1) * 2 > s->slot_cap && grow_slots(s))
        return LIVE_NONE;
    if (s->path_count == s->path_cap) {
        uint32_t cap = s->path_cap * 2;
        live_path *paths = realloc(s->paths, cap * sizeof *paths);
        if (!paths)
            return LIVE_NONE;
        s->paths = paths;
        s->path_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return LIVE_NONE;
    p = s->path_count++;
    s->paths[p] = (live_path){.parent = parent, .name = copy, .first_counter = LIVE_NONE};
    size_t i = slot_of(s, parent, name);
    while (s->slots[i] != LIVE_NONE)
        i = (i + 1) & (s->slot_cap - 1);
    s->slots[i] = p;
    return p;
}

int live_state_init(live_state *s)
{
    memset(s, 0, sizeof *s);
    s->path_cap = 16;
    s->paths = malloc(s->path_cap * sizeof *s->paths);
    char *outside = strdup("");
    if (!s->paths || !outside || grow_slots(s)) {
        free(outside);
        live_state_free(s);
        return -ENOMEM;
    }
    s->paths[0] = (live_path){.parent = LIVE_NONE, .name = outside, .first_counter = LIVE_NONE};
    s->path_count = 1; /* outside any span: not in the index */
    return 0;
}

void live_state_free(live_state *s)
{
    for (uint32_t p = 0; p < s->path_count; p++) {
        free(s->paths[p].name);
        free(s->paths[p].hist);
    }
    for (uint32_t c = 0; c < s->counter_count; c++)
        free(s->counters[c].name);
    free(s->paths);
    free(s->counters);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

static int64_t add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

static int add_counter(live_state *s, uint32_t path, const char *name, int64_t sum)
{
    uint32_t *link = &s->paths[path].first_counter;
    for (; *link != LIVE_NONE; link = &s->counters[*link].next)
        if (!strcmp(s->counters[*link].name, name)) {
            s->counters[*link].sum = add_sat(s->counters[*link].sum, sum);
            return 0;
        }
    if (s->counter_count == s->counter_cap) {
        uint32_t cap = s->counter_cap ? s->counter_cap * 2 : 16;
        live_counter *counters = realloc(s->counters, cap * sizeof *counters);
        if (!counters)
            return -ENOMEM;
        s->counters = counters;
        s->counter_cap = cap;
        link = &s->paths[path].first_counter; /* the array moved: find the end again */
        for (; *link != LIVE_NONE; link = &s->counters[*link].next)
            ;
    }
    char *copy = strdup(name);
    if (!copy)
        return -ENOMEM;
    *link = s->counter_count;
    s->counters[s->counter_count++] = (live_counter){copy, sum, LIVE_NONE};
    return 0;
}

int live_state_add(live_state *s, const store_file *f)
{
    uint32_t *of = malloc((f->node_count ? f->node_count : 1u) * sizeof *of);
    if (!of)
        return -ENOMEM;
    int rc = 0;
    for (uint32_t i = 0; i < f->node_count && !rc; i++) {
        const store_node *n = &f->nodes[i];
        if (n->parent < 0) {
            of[i] = 0; /* a thread's root: outside any span */
            continue;
        }
        if ((uint32_t)n->parent >= i || of[n->parent] == LIVE_NONE || n->name >= f->name_count) {
            of[i] = LIVE_NONE; /* not a path of a well-formed tree: left out */
            continue;
        }
        uint32_t p = of[i] = path_for(s, of[n->parent], f->names[n->name]);
        if (p == LIVE_NONE) {
            rc = -ENOMEM;
            break;
        }
        live_path *lp = &s->paths[p];
        lp->calls += n->calls;
        lp->total_ns += n->total_ns;
        if (n->hist) {
            if (!lp->hist && !(lp->hist = calloc(HIST_BUCKETS, sizeof *lp->hist))) {
                rc = -ENOMEM;
                break;
            }
            unsigned lo = n->hist_n ? n->hist_lo : 0, cnt = n->hist_n ? n->hist_n : HIST_BUCKETS;
            for (unsigned b = 0; b < cnt && lo + b < HIST_BUCKETS; b++)
                lp->hist[lo + b] += n->hist[b];
        }
    }
    for (uint32_t i = 0; i < f->counter_count && !rc; i++) {
        const store_counter *c = &f->counters[i];
        if (c->node >= f->node_count || of[c->node] == LIVE_NONE || c->name >= f->name_count)
            continue;
        rc = add_counter(s, of[c->node], f->names[c->name], c->sum);
    }
    free(of);
    return rc;
}

/* ---- the interval ---- */

/* total / calls, rounded as the report's JSON rounds a mean (json_ns). */
static uint64_t mean_ns(uint64_t total, uint64_t calls)
{
    double mean = (double)total / (double)calls;
    return mean >= 9.2e18 ? (uint64_t)mean : (uint64_t)llround(mean);
}

/* The sum of counter name of base path bp (0 when bp or the counter is absent). */
static int64_t base_sum(const live_state *base, uint32_t bp, const char *name)
{
    if (bp == LIVE_NONE)
        return 0;
    for (uint32_t c = base->paths[bp].first_counter; c != LIVE_NONE; c = base->counters[c].next)
        if (!strcmp(base->counters[c].name, name))
            return base->counters[c].sum;
    return 0;
}

int live_interval_build(const live_state *base, const live_state *now, live_interval *out)
{
    memset(out, 0, sizeof *out);
    uint32_t *base_of = malloc(now->path_count * sizeof *base_of); /* now path -> base path */
    out->paths = calloc(now->path_count, sizeof *out->paths);
    out->counters = calloc(now->counter_count ? now->counter_count : 1u, sizeof *out->counters);
    uint64_t *d = malloc(HIST_BUCKETS * sizeof *d);
    if (!base_of || !out->paths || !out->counters || !d) {
        free(base_of);
        free(d);
        live_interval_free(out);
        return -ENOMEM;
    }
    for (uint32_t p = 0; p < now->path_count; p++) {
        const live_path *np = &now->paths[p];
        uint32_t bp = 0;
        if (p) {
            uint32_t up = base_of[np->parent];
            bp = up == LIVE_NONE ? LIVE_NONE : find_path(base, up, np->name);
        }
        /* the index keeps a path whose figures went back (a new session) for its
         * children, which may match; its own figures are since the start */
        base_of[p] = bp;
        const live_path *old = bp == LIVE_NONE ? NULL : &base->paths[bp];
        if (old && (np->calls < old->calls || np->total_ns < old->total_ns)) {
            out->restarted = 1;
            old = NULL;
        }
        live_delta_path dp = {.path = p, .counters_first = out->counter_count};
        dp.calls = np->calls - (old ? old->calls : 0);
        dp.total_ns = np->total_ns - (old ? old->total_ns : 0);
        for (uint32_t c = np->first_counter; c != LIVE_NONE; c = now->counters[c].next) {
            const live_counter *ct = &now->counters[c];
            int64_t was = old ? base_sum(base, bp, ct->name) : 0, delta;
            if (__builtin_sub_overflow(ct->sum, was, &delta))
                delta = was < 0 ? INT64_MAX : INT64_MIN;
            if (delta)
                out->counters[out->counter_count++] = (live_delta_counter){c, delta};
        }
        dp.counter_count = out->counter_count - dp.counters_first;
        if (!p) {
            out->outside_first = dp.counters_first;
            out->outside_count = dp.counter_count;
            continue;
        }
        if (!dp.calls && !dp.counter_count)
            continue; /* idle in the interval: absent, not zero */
        if (dp.calls) {
            dp.mean_ns = mean_ns(dp.total_ns, dp.calls);
            if (np->hist) {
                if (!old || !old->hist) {
                    memcpy(d, np->hist, HIST_BUCKETS * sizeof *d);
                } else if (hist_subtract(d, np->hist, old->hist) != 0) {
                    out->restarted = 1; /* the base is not contained: a new session */
                    memcpy(d, np->hist, HIST_BUCKETS * sizeof *d);
                }
                if (hist_count(d)) {
                    dp.has_quantiles = 1;
                    for (int q = 0; q < LIVE_QUANTILES; q++)
                        dp.quantile_ns[q] = (uint64_t)(hist_quantile(d, QUANTILES[q]) + 0.5);
                }
            }
        }
        out->paths[out->path_count++] = dp;
    }
    free(base_of);
    free(d);
    return 0;
}

void live_interval_free(live_interval *iv)
{
    free(iv->paths);
    free(iv->counters);
    memset(iv, 0, sizeof *iv);
}
