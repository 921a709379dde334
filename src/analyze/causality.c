#include "causality.h"

#include "run_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int causal_file_take(const store_file *f, causal_file **out)
{
    *out = NULL;
    if (!f->causal_count && !f->causal_dropped)
        return 0;
    causal_file *cf = calloc(1, sizeof *cf);
    if (!cf)
        return -ENOMEM;
    uint64_t off = timeline_clock_offset(f);
    cf->dropped = f->causal_dropped;
    cf->events = malloc((f->causal_count ? f->causal_count : 1) * sizeof *cf->events);
    cf->names = calloc(f->name_count ? f->name_count : 1, sizeof *cf->names);
    if (!cf->events || !cf->names || timeline_build(f, 0, &cf->tl))
        goto fail;
    cf->name_count = f->name_count;
    for (uint32_t i = 0; i < f->name_count; i++)
        if (!(cf->names[i] = strdup(f->names[i] ? f->names[i] : "")))
            goto fail;
    for (uint32_t i = 0; i < cf->tl.thread_count; i++)
        cf->tl.threads[i].name = ""; /* the file's memory goes: only tids are kept */
    for (uint32_t i = 0; i < f->causal_count; i++) {
        const store_causal *c = &f->causal[i];
        cf->events[i] = (cz_event){c->thread, c->kind, c->name, (int64_t)(c->begin_ns + off),
                                   (int64_t)(c->end_ns + off)};
    }
    cf->count = f->causal_count;
    if (!(cf->max_end = malloc((cf->tl.span_count ? cf->tl.span_count : 1) * sizeof(int64_t))))
        goto fail;
    for (uint32_t t = 0; t < cf->tl.thread_count; t++) {
        const tl_thread *th = &cf->tl.threads[t];
        int64_t m = INT64_MIN;
        for (uint64_t k = th->first; k < th->first + th->count; k++) {
            int64_t e = cf->tl.spans[k].begin_ns + (int64_t)cf->tl.spans[k].dur_ns;
            cf->max_end[k] = m = e > m ? e : m;
        }
    }
    *out = cf;
    return 0;
fail:
    causal_file_free(cf);
    return -ENOMEM;
}

void causal_file_free(causal_file *cf)
{
    if (!cf)
        return;
    for (uint32_t i = 0; cf->names && i < cf->name_count; i++)
        free(cf->names[i]);
    free(cf->names);
    free(cf->events);
    free(cf->max_end);
    timeline_free(&cf->tl);
    free(cf);
}

/* ---- pairing ---- */

typedef struct ev_ref {
    uint32_t worker;
    const cz_event *e;
    const char *name;
} ev_ref;

static int64_t ev_time(const ev_ref *r)
{
    return r->e->kind == STORE_CAUSAL_WAIT ? r->e->end_ns : r->e->begin_ns;
}

/* by name, then signals before waits, then time (a wait: its end) */
static int cmp_ev(const void *a, const void *b)
{
    const ev_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    if (x->e->kind != y->e->kind)
        return x->e->kind < y->e->kind ? -1 : 1;
    int64_t tx = ev_time(x), ty = ev_time(y);
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return x->worker < y->worker ? -1 : x->worker > y->worker;
}

static int cmp_pair_end(const void *a, const void *b)
{
    const cz_pair *x = a, *y = b;
    if (x->wait_end_ns != y->wait_end_ns)
        return x->wait_end_ns < y->wait_end_ns ? -1 : 1;
    return x->signal_ns < y->signal_ns ? -1 : x->signal_ns > y->signal_ns;
}

static int64_t tid_of(const run_model *m, uint32_t worker, uint32_t thread)
{
    const causal_file *cf = m->workers[worker].causal;
    return thread < cf->tl.thread_count ? cf->tl.threads[thread].tid : -1;
}

static int pair_up(const run_model *m, causality *c, ev_ref *refs, size_t n)
{
    qsort(refs, n, sizeof *refs, cmp_ev);
    c->pairs = malloc((n ? n : 1) * sizeof *c->pairs);
    if (!c->pairs)
        return -ENOMEM;
    int64_t base = (int64_t)m->start_real_ns;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(refs[j].name, refs[i].name))
            j++;
        size_t s = i, w = i; /* signals [i, k), waits [k, j) */
        while (w < j && refs[w].e->kind == STORE_CAUSAL_SIGNAL)
            w++;
        size_t signals_end = w;
        c->signals += signals_end - i;
        c->waits += j - signals_end;
        for (; w < j; w++) {
            const ev_ref *wr = &refs[w];
            if (s < signals_end && refs[s].e->begin_ns <= wr->e->end_ns) {
                const ev_ref *sr = &refs[s++];
                c->pairs[c->pair_count++] = (cz_pair){
                    .name = wr->name,
                    .signal_worker = sr->worker,
                    .wait_worker = wr->worker,
                    .signal_tid = tid_of(m, sr->worker, sr->e->thread),
                    .wait_tid = tid_of(m, wr->worker, wr->e->thread),
                    .signal_ns = sr->e->begin_ns - base,
                    .wait_begin_ns = wr->e->begin_ns - base,
                    .wait_end_ns = wr->e->end_ns - base,
                    .blocking = sr->e->begin_ns > wr->e->begin_ns,
                };
                c->blocking += c->pairs[c->pair_count - 1].blocking;
            } else {
                c->unmatched_waits++;
            }
        }
        c->unconsumed_signals += signals_end - s;
        i = j;
    }
    qsort(c->pairs, c->pair_count, sizeof *c->pairs, cmp_pair_end);
    return 0;
}

/* ---- the critical path ---- */

/* The thread (worker, index in its tl) of tid; UINT32_MAX when none. */
static uint32_t thread_index(const causal_file *cf, int64_t tid)
{
    for (uint32_t i = 0; i < cf->tl.thread_count; i++)
        if (cf->tl.threads[i].tid == tid)
            return i;
    return UINT32_MAX;
}

/* The earliest record of a thread (span or event), from the run's start. */
static int64_t thread_first(const causal_file *cf, uint32_t thread, int64_t base, int64_t upto)
{
    int64_t first = upto;
    const tl_thread *t = &cf->tl.threads[thread];
    if (t->count && cf->tl.spans[t->first].begin_ns - base < first)
        first = cf->tl.spans[t->first].begin_ns - base;
    for (uint32_t i = 0; i < cf->count; i++)
        if (cf->events[i].thread == thread && cf->events[i].begin_ns - base < first)
            first = cf->events[i].begin_ns - base;
    return first;
}

static int add_segment(causality *c, size_t *cap, cz_segment s)
{
    if (c->segment_count == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        cz_segment *p = realloc(c->segments, n * sizeof *p);
        if (!p)
            return -ENOMEM;
        c->segments = p;
        *cap = n;
    }
    c->segments[c->segment_count++] = s;
    return 0;
}

static int walk_path(const run_model *m, causality *c)
{
    int64_t base = (int64_t)m->start_real_ns, end = INT64_MIN;
    uint32_t worker = UINT32_MAX;
    int64_t tid = -1;
    for (uint32_t wi = 0; wi < m->worker_count; wi++) {
        const causal_file *cf = m->workers[wi].causal;
        if (!cf)
            continue;
        for (uint32_t t = 0; t < cf->tl.thread_count; t++) {
            const tl_thread *th = &cf->tl.threads[t];
            for (uint64_t k = th->first; k < th->first + th->count; k++) {
                int64_t e = cf->tl.spans[k].begin_ns + (int64_t)cf->tl.spans[k].dur_ns - base;
                if (e > end)
                    end = e, worker = wi, tid = th->tid;
            }
        }
        for (uint32_t i = 0; i < cf->count; i++)
            if (cf->events[i].end_ns - base > end) {
                end = cf->events[i].end_ns - base;
                worker = wi;
                tid = cf->tl.threads[cf->events[i].thread].tid;
            }
    }
    if (worker == UINT32_MAX)
        return 0;
    size_t cap = 0;
    int64_t t = end;
    /* each step takes an earlier pair than the one before: at most pair_count + 1 */
    size_t upto = c->pair_count; /* pairs [0, upto) may still be taken */
    for (size_t step = 0; step <= c->pair_count; step++) {
        int64_t best = -1;
        for (size_t p = upto; p-- > 0;) { /* by end: the latest that ended by t */
            const cz_pair *pr = &c->pairs[p];
            if (pr->wait_end_ns <= t && pr->blocking && pr->wait_worker == worker &&
                pr->wait_tid == tid) {
                best = (int64_t)p;
                break;
            }
        }
        if (best < 0) {
            const causal_file *cf = m->workers[worker].causal;
            uint32_t ti = thread_index(cf, tid);
            int64_t first = ti == UINT32_MAX ? t : thread_first(cf, ti, base, t);
            if (add_segment(c, &cap, (cz_segment){worker, tid, first, t, -1}))
                return -ENOMEM;
            c->begin_ns = first;
            break;
        }
        const cz_pair *pr = &c->pairs[best];
        if (add_segment(c, &cap, (cz_segment){worker, tid, pr->wait_end_ns, t, best}))
            return -ENOMEM;
        c->wake_ns += (uint64_t)(pr->wait_end_ns - pr->signal_ns);
        worker = pr->signal_worker;
        tid = pr->signal_tid;
        t = pr->signal_ns;
        upto = (size_t)best;
    }
    c->end_ns = end;
    /* in time order */
    for (size_t i = 0, j = c->segment_count; i + 1 < j; i++, j--) {
        cz_segment x = c->segments[i];
        c->segments[i] = c->segments[j - 1];
        c->segments[j - 1] = x;
    }
    return 0;
}

/* ---- the phases on it ---- */

typedef struct phase_acc {
    uint32_t worker;
    uint32_t path; /* UINT32_MAX: no span */
    uint64_t ns;
} phase_acc;

typedef struct acc_list {
    phase_acc *items;
    size_t count, cap;
} acc_list;

static int acc_add(acc_list *l, uint32_t worker, uint32_t path, int64_t ns)
{
    for (size_t i = l->count; i-- > 0;) /* recent ones first: a segment's few paths */
        if (l->items[i].worker == worker && l->items[i].path == path) {
            l->items[i].ns += (uint64_t)ns;
            return 0;
        }
    if (l->count == l->cap) {
        size_t n = l->cap ? l->cap * 2 : 32;
        phase_acc *p = realloc(l->items, n * sizeof *p);
        if (!p)
            return -ENOMEM;
        l->items = p;
        l->cap = n;
    }
    l->items[l->count++] = (phase_acc){worker, path, (uint64_t)ns};
    return 0;
}

/* The self time of each span of the thread within [a, b) (from the run's start). */
static int segment_phases(const run_model *m, const cz_segment *s, acc_list *acc, int64_t base,
                          uint32_t *levels_path, uint32_t levels_cap)
{
    const causal_file *cf = m->workers[s->worker].causal;
    uint32_t ti = thread_index(cf, s->tid);
    int64_t a = s->begin_ns + base, b = s->end_ns + base, none = b - a;
    if (ti != UINT32_MAX) {
        const tl_thread *th = &cf->tl.threads[ti];
        /* the first span that may reach past a (max_end rises): the spans that hold
         * one that overlaps [a, b) overlap it too, so they come from here on */
        uint64_t lo_k = th->first, hi_k = th->first + th->count;
        while (lo_k < hi_k) {
            uint64_t mid = lo_k + (hi_k - lo_k) / 2;
            if (cf->max_end[mid] > a)
                hi_k = mid;
            else
                lo_k = mid + 1;
        }
        for (uint64_t k = lo_k; k < th->first + th->count; k++) {
            const tl_span *sp = &cf->tl.spans[k];
            if (sp->begin_ns >= b)
                break;
            if (sp->level < levels_cap)
                levels_path[sp->level] = sp->path;
            int64_t lo = sp->begin_ns > a ? sp->begin_ns : a;
            int64_t e = sp->begin_ns + (int64_t)sp->dur_ns;
            int64_t hi = e < b ? e : b;
            if (hi <= lo || sp->level >= levels_cap)
                continue;
            if (acc_add(acc, s->worker, sp->path, hi - lo))
                return -ENOMEM;
            if (sp->level == 0)
                none -= hi - lo;
            else if (acc_add(acc, s->worker, levels_path[sp->level - 1], -(hi - lo)))
                return -ENOMEM;
        }
    }
    if (none > 0 && acc_add(acc, s->worker, UINT32_MAX, none))
        return -ENOMEM;
    return 0;
}

static int cmp_phase(const void *a, const void *b)
{
    const cz_phase *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    int c = strcmp(x->role, y->role);
    return c ? c : strcmp(x->path, y->path);
}

static int name_phases(const run_model *m, causality *c)
{
    acc_list acc = {0};
    int64_t base = (int64_t)m->start_real_ns;
    enum { LEVELS = 4096 };
    uint32_t *levels = malloc(LEVELS * sizeof *levels);
    int rc = levels ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < c->segment_count; i++) {
        rc = segment_phases(m, &c->segments[i], &acc, base, levels, LEVELS);
        if (m->workers[c->segments[i].worker].causal->tl.dropped)
            c->spans_dropped = 1;
    }
    free(levels);
    if (!rc && !(c->phases = malloc((acc.count ? acc.count : 1) * sizeof *c->phases)))
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < acc.count; i++) {
        const phase_acc *p = &acc.items[i];
        if ((int64_t)p->ns <= 0)
            continue;
        const rm_worker *w = &m->workers[p->worker];
        const char *path = p->path == UINT32_MAX ? "(no span)" : w->causal->tl.paths[p->path];
        size_t k = 0; /* the same role and path in another process: one phase */
        while (k < c->phase_count && (strcmp(c->phases[k].role, w->role) ||
                                      strcmp(c->phases[k].path, path)))
            k++;
        if (k == c->phase_count)
            c->phases[c->phase_count++] = (cz_phase){w->role, path, 0, 0.0};
        c->phases[k].ns += p->ns;
    }
    free(acc.items);
    if (rc)
        return rc;
    uint64_t length = c->end_ns > c->begin_ns ? (uint64_t)(c->end_ns - c->begin_ns) : 0;
    for (size_t i = 0; i < c->phase_count; i++)
        c->phases[i].share = length ? (double)c->phases[i].ns / (double)length : 0.0;
    qsort(c->phases, c->phase_count, sizeof *c->phases, cmp_phase);
    for (size_t i = 0; i < c->segment_count; i++) {
        size_t k = 0;
        while (k < i && c->segments[k].worker != c->segments[i].worker)
            k++;
        c->processes += k == i;
    }
    return 0;
}

int causality_build(const run_model *m, causality *c)
{
    memset(c, 0, sizeof *c);
    size_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].causal) {
            c->present = 1;
            n += m->workers[i].causal->count;
            c->dropped += m->workers[i].causal->dropped;
        }
    if (!c->present)
        return 0;
    ev_ref *refs = malloc((n ? n : 1) * sizeof *refs);
    if (!refs)
        return -ENOMEM;
    size_t k = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const causal_file *cf = m->workers[i].causal;
        for (uint32_t e = 0; cf && e < cf->count; e++) {
            const cz_event *ev = &cf->events[e];
            refs[k++] = (ev_ref){i, ev, ev->name < cf->name_count ? cf->names[ev->name] : ""};
        }
    }
    int rc = pair_up(m, c, refs, n);
    free(refs);
    if (!rc)
        rc = walk_path(m, c);
    if (!rc)
        rc = name_phases(m, c);
    if (rc) {
        causality_free(c);
        return rc;
    }
    return 0;
}

void causality_free(causality *c)
{
    free(c->pairs);
    free(c->segments);
    free(c->phases);
    memset(c, 0, sizeof *c);
}
