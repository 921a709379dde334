#include "sample_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int matches(const store_sample_stack *st, int64_t pid, int64_t tid, uint32_t span,
                   const uint8_t *span_mask)
{
    return (pid == SS_ANY || st->pid == pid) && (tid == SS_ANY || st->tid == tid) &&
           (span == SS_ANY_SPAN || st->span_path == span) &&
           (!span_mask || span_mask[st->span_path]);
}

/* sort context: qsort has none */
static const ss_group *sort_group;

static int cmp_self(const void *a, const void *b)
{
    const ss_func *x = &sort_group->funcs[*(const uint32_t *)a];
    const ss_func *y = &sort_group->funcs[*(const uint32_t *)b];
    uint64_t vx = sort_group->by_weight ? x->self_ns : x->self_count;
    uint64_t vy = sort_group->by_weight ? y->self_ns : y->self_count;
    if (vx != vy)
        return vx > vy ? -1 : 1;
    if (x->self_count != y->self_count)
        return x->self_count > y->self_count ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_total(const void *a, const void *b)
{
    const ss_func *x = &sort_group->funcs[*(const uint32_t *)a];
    const ss_func *y = &sort_group->funcs[*(const uint32_t *)b];
    uint64_t vx = sort_group->by_weight ? x->total_ns : x->total_count;
    uint64_t vy = sort_group->by_weight ? y->total_ns : y->total_count;
    if (vx != vy)
        return vx > vy ? -1 : 1;
    if (x->total_count != y->total_count)
        return x->total_count > y->total_count ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static int build(const store_samples *s, int64_t pid, int64_t tid, uint32_t span,
                 const uint8_t *span_mask, ss_group *g)
{
    memset(g, 0, sizeof *g);
    /* a function per distinct (name, file): map each frame to its function through a
     * table keyed by the pair (open addressing) */
    uint32_t nf = s->frame_count;
    uint32_t cap = 16;
    while (cap < 2 * (nf + 1))
        cap *= 2;
    uint32_t *slots = calloc(cap, sizeof *slots);
    uint32_t *func_of = malloc(((size_t)nf + 1) * sizeof *func_of);
    uint64_t *stamp = NULL;
    g->funcs = malloc(((size_t)nf + 1) * sizeof *g->funcs);
    if (!slots || !func_of || !g->funcs)
        goto oom;
    for (uint32_t i = 0; i < nf; i++) {
        const store_sample_frame *f = &s->frames[i];
        uint32_t h = (f->function * 2654435761u) ^ (f->file * 40503u);
        uint32_t k = h & (cap - 1);
        for (; slots[k]; k = (k + 1) & (cap - 1)) {
            const ss_func *fn = &g->funcs[slots[k] - 1];
            if (fn->function == f->function && fn->file == f->file)
                break;
        }
        if (!slots[k]) {
            g->funcs[g->func_count] = (ss_func){f->function, f->file, 0, 0, 0, 0};
            slots[k] = ++g->func_count;
        }
        func_of[i] = slots[k] - 1;
    }
    stamp = calloc((size_t)g->func_count + 1, sizeof *stamp);
    if (!stamp)
        goto oom;
    for (uint32_t i = 0; i < s->stack_count; i++) {
        const store_sample_stack *st = &s->stacks[i];
        if (!matches(st, pid, tid, span, span_mask))
            continue;
        g->count = sat_add(g->count, st->count);
        g->weight_ns = sat_add(g->weight_ns, st->weight_ns);
        for (uint32_t d = 0; d < st->depth; d++) {
            uint32_t fr = s->frame_ids[st->first + d];
            if (fr >= nf)
                continue;
            ss_func *fn = &g->funcs[func_of[fr]];
            if (d + 1 == st->depth) {
                fn->self_count = sat_add(fn->self_count, st->count);
                fn->self_ns = sat_add(fn->self_ns, st->weight_ns);
            }
            if (stamp[func_of[fr]] != (uint64_t)i + 1) { /* once per stack */
                stamp[func_of[fr]] = (uint64_t)i + 1;
                fn->total_count = sat_add(fn->total_count, st->count);
                fn->total_ns = sat_add(fn->total_ns, st->weight_ns);
            }
        }
    }
    g->by_weight = g->weight_ns > 0;
    /* keep the functions seen in the group only */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < g->func_count; i++)
        if (g->funcs[i].total_count)
            g->funcs[kept++] = g->funcs[i];
    g->func_count = kept;
    g->by_self = malloc(((size_t)kept + 1) * sizeof *g->by_self);
    g->by_total = malloc(((size_t)kept + 1) * sizeof *g->by_total);
    if (!g->by_self || !g->by_total)
        goto oom;
    for (uint32_t i = 0; i < kept; i++)
        g->by_self[i] = g->by_total[i] = i;
    sort_group = g;
    qsort(g->by_self, kept, sizeof *g->by_self, cmp_self);
    qsort(g->by_total, kept, sizeof *g->by_total, cmp_total);
    sort_group = NULL;
    free(slots);
    free(func_of);
    free(stamp);
    return 0;
oom:
    free(slots);
    free(func_of);
    free(stamp);
    ss_group_free(g);
    return -ENOMEM;
}

int ss_group_build(const store_samples *s, int64_t pid, int64_t tid, uint32_t span, ss_group *g)
{
    return build(s, pid, tid, span, NULL, g);
}

/* Is path the span or nested under it ("a/b" is under "a", "ab" is not)? */
static int is_under(const char *path, const char *span, size_t span_len)
{
    return !strncmp(path, span, span_len) && (path[span_len] == 0 || path[span_len] == '/');
}

int ss_group_build_under(const store_samples *s, const char *span, ss_group *g)
{
    memset(g, 0, sizeof *g);
    uint8_t *mask = calloc((size_t)s->string_count + 1, 1);
    if (!mask)
        return -ENOMEM;
    size_t len = strlen(span);
    for (uint32_t i = 1; i < s->string_count; i++)
        mask[i] = (uint8_t)is_under(s->strings[i], span, len);
    int rc = build(s, SS_ANY, SS_ANY, SS_ANY_SPAN, mask, g);
    free(mask);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_span_total(const void *a, const void *b)
{
    const ss_span_total *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->path, y->path);
}

int ss_span_totals(const store_samples *s, ss_span_total **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    /* samples and time per span path id */
    uint64_t *w = calloc((size_t)s->string_count + 1, sizeof *w);
    uint64_t *c = calloc((size_t)s->string_count + 1, sizeof *c);
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int rc = -ENOMEM;
    if (!w || !c)
        goto out;
    for (uint32_t i = 0; i < s->stack_count; i++) {
        uint32_t id = s->stacks[i].span_path;
        if (!id)
            continue;
        w[id] = sat_add(w[id], s->stacks[i].weight_ns);
        c[id] = sat_add(c[id], s->stacks[i].count);
    }
    /* every path seen and each of its ancestors */
    for (uint32_t id = 1; id < s->string_count; id++) {
        if (!c[id])
            continue;
        const char *p = s->strings[id];
        for (size_t k = 0;; k++) {
            if (p[k] != '/' && p[k] != 0)
                continue;
            if (k == 0 && p[k]) /* no empty ancestor for a path starting with '/' */
                continue;
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                char **np = realloc(paths, ncap * sizeof *np);
                if (!np)
                    goto out;
                paths = np;
                cap = ncap;
            }
            if (!(paths[n] = strndup(p, k)))
                goto out;
            n++;
            if (!p[k])
                break;
        }
    }
    if (n == 0) {
        rc = 0;
        goto out;
    }
    qsort(paths, n, sizeof *paths, cmp_str);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (distinct && !strcmp(paths[distinct - 1], paths[i])) {
            free(paths[i]);
            continue;
        }
        paths[distinct++] = paths[i];
    }
    n = distinct;
    ss_span_total *t = calloc(n + 1, sizeof *t);
    if (!t)
        goto out;
    int by_weight = 0;
    for (uint32_t id = 1; id < s->string_count; id++)
        by_weight |= w[id] != 0;
    for (size_t i = 0; i < n; i++) {
        t[i].path = paths[i];
        size_t len = strlen(paths[i]);
        for (uint32_t id = 1; id < s->string_count; id++)
            if (c[id] && is_under(s->strings[id], paths[i], len)) {
                t[i].weight = sat_add(t[i].weight, by_weight ? w[id] : c[id]);
                t[i].count = sat_add(t[i].count, c[id]);
            }
    }
    free(paths);
    paths = NULL;
    qsort(t, n, sizeof *t, cmp_span_total);
    *out = t;
    *count = (uint32_t)n;
    rc = 0;
out:
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free(w);
    free(c);
    return rc;
}

void ss_span_totals_free(ss_span_total *t, uint32_t count)
{
    for (uint32_t i = 0; t && i < count; i++)
        free(t[i].path);
    free(t);
}

void ss_group_free(ss_group *g)
{
    free(g->funcs);
    free(g->by_self);
    free(g->by_total);
    memset(g, 0, sizeof *g);
}

static double share(const ss_group *g, uint64_t ns, uint64_t count)
{
    if (g->by_weight)
        return g->weight_ns ? (double)ns / (double)g->weight_ns : 0.0;
    return g->count ? (double)count / (double)g->count : 0.0;
}

double ss_lost_share(const store_samples *s)
{
    return s->samples ? (double)s->read_errors / (double)s->samples : 0.0;
}

int ss_lost_biased(const store_samples *s)
{
    return ss_lost_share(s) > SS_LOST_BIAS_SHARE;
}

double ss_self_share(const ss_group *g, const ss_func *f)
{
    return share(g, f->self_ns, f->self_count);
}

double ss_total_share(const ss_group *g, const ss_func *f)
{
    return share(g, f->total_ns, f->total_count);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Adds v to the sorted distinct list out[0..n) when it is not there (n < cap). */
static uint32_t add_i64(int64_t *out, uint32_t n, uint32_t cap, int64_t v)
{
    for (uint32_t i = 0; i < n; i++)
        if (out[i] == v)
            return n;
    if (n < cap)
        out[n++] = v;
    return n;
}

uint32_t ss_pids(const store_samples *s, int64_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->stack_count; i++)
        n = add_i64(out, n, cap, s->stacks[i].pid);
    qsort(out, n, sizeof *out, cmp_i64);
    return n;
}

uint32_t ss_tids(const store_samples *s, int64_t pid, int64_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->stack_count; i++)
        if (s->stacks[i].pid == pid)
            n = add_i64(out, n, cap, s->stacks[i].tid);
    qsort(out, n, sizeof *out, cmp_i64);
    return n;
}

uint32_t ss_spans(const store_samples *s, uint32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->stack_count; i++) {
        uint32_t v = s->stacks[i].span_path;
        if (!v)
            continue;
        uint32_t k = 0;
        while (k < n && out[k] != v)
            k++;
        if (k == n && n < cap)
            out[n++] = v;
    }
    qsort(out, n, sizeof *out, cmp_u32);
    return n;
}

uint32_t ss_thread_name(const store_samples *s, int64_t pid, int64_t tid)
{
    uint32_t best = 0;
    uint64_t best_count = 0;
    for (uint32_t i = 0; i < s->stack_count; i++) {
        const store_sample_stack *st = &s->stacks[i];
        if (st->pid != pid || st->tid != tid || !st->thread_name || st->thread_name == best)
            continue;
        uint64_t c = 0;
        for (uint32_t j = i; j < s->stack_count; j++)
            if (s->stacks[j].pid == pid && s->stacks[j].tid == tid &&
                s->stacks[j].thread_name == st->thread_name)
                c += s->stacks[j].count;
        if (c > best_count) {
            best_count = c;
            best = st->thread_name;
        }
    }
    return best;
}
