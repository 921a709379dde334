#include "run_stats.h"

#include "path_order.h"
#include "lapse.h"

#include "wait_share.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Byte d of the order's sort value: (~key, tie) ascending is (key descending, tie
 * ascending); bytes 0..3 are the tie's, 4..11 the inverted key's, least first. */
static inline unsigned digit(const rs_key *k, unsigned d)
{
    return d < 4 ? (k->tie >> (8 * d)) & 0xff : (unsigned)((~k->key >> (8 * (d - 4))) & 0xff);
}

/* A least-significant-digit radix sort: twelve passes at most, a byte each, each
 * stable; a byte that all keys share is skipped. */
int rs_key_sort(rs_key *keys, uint32_t n)
{
    if (n < 2)
        return 0;
    rs_key *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp)
        return -ENOMEM;
    rs_key *from = keys, *to = tmp;
    for (unsigned d = 0; d < 12; d++) {
        uint32_t count[257] = {0};
        for (uint32_t i = 0; i < n; i++)
            count[digit(&from[i], d) + 1]++;
        if (count[digit(&from[0], d) + 1] == n)
            continue;
        for (unsigned b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (uint32_t i = 0; i < n; i++)
            to[count[digit(&from[i], d)]++] = from[i];
        rs_key *t = from;
        from = to;
        to = t;
    }
    if (from != keys)
        memcpy(keys, from, (size_t)n * sizeof *keys);
    free(tmp);
    return 0;
}

/* a comes before b: the larger key, then the smaller tie */
static inline int key_before(const rs_key *a, const rs_key *b)
{
    return a->key > b->key || (a->key == b->key && a->tie < b->tie);
}

int rs_top_init(rs_top *t, uint32_t k)
{
    memset(t, 0, sizeof *t);
    t->k = k;
    t->cap = k ? k : 16u;
    t->keys = malloc((size_t)t->cap * sizeof *t->keys);
    return t->keys ? 0 : -ENOMEM;
}

/* Moves keys[i] down the heap (the last in the order at the root) to its place. */
static void sift_down(rs_key *keys, uint32_t n, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, last = i;
        if (l < n && key_before(&keys[last], &keys[l]))
            last = l;
        if (r < n && key_before(&keys[last], &keys[r]))
            last = r;
        if (last == i)
            return;
        rs_key tmp = keys[i];
        keys[i] = keys[last];
        keys[last] = tmp;
        i = last;
    }
}

int rs_top_push(rs_top *t, rs_key key)
{
    if (!t->k || t->n < t->k) {
        if (t->n == t->cap) {
            if (t->cap >= UINT32_MAX / 2u)
                return -ENOMEM;
            rs_key *keys = realloc(t->keys, (size_t)t->cap * 2u * sizeof *keys);
            if (!keys)
                return -ENOMEM;
            t->keys = keys;
            t->cap *= 2u;
        }
        t->keys[t->n++] = key;
        return 0;
    }
    if (!t->heap) {
        for (uint32_t i = t->k / 2; i-- > 0;)
            sift_down(t->keys, t->k, i);
        t->heap = 1;
    }
    if (key_before(&key, &t->keys[0])) {
        t->keys[0] = key;
        sift_down(t->keys, t->k, 0);
    }
    return 0;
}

int rs_top_sort(rs_top *t)
{
    t->heap = 0;
    return rs_key_sort(t->keys, t->n);
}

void rs_top_free(rs_top *t)
{
    free(t->keys);
    memset(t, 0, sizeof *t);
}

uint32_t run_stats_pick_loop(const run_model *m, const uint32_t *phases, uint32_t count)
{
    /* in string order: of two otherwise equal, the first */
    uint32_t best = RM_NONE;
    for (uint32_t i = 0; i < count; i++) {
        const rm_path *p = &m->paths[phases[i]];
        if (p->calls < 2)
            continue;
        if (best == RM_NONE) {
            best = i;
            continue;
        }
        const rm_path *b = &m->paths[phases[best]];
        int better = p->depth < b->depth ||
                     (p->depth == b->depth &&
                      (p->calls > b->calls || (p->calls == b->calls && p->total_ns > b->total_ns)));
        if (better)
            best = i;
    }
    return best;
}

void run_stats_phase(const run_model *m, const rs_role *rs, uint32_t k, rs_phase *out)
{
    static const double qs[4] = {0.50, 0.90, 0.95, 0.99};
    const rm_role *role = &m->roles[rs->role];
    uint32_t i = rs->phases[k];
    const rm_path *p = &m->paths[i];
    memset(out, 0, sizeof *out);
    out->path = i;
    out->self_ns = rm_self_ns(p);
    out->mean_ns = p->calls ? (double)p->total_ns / (double)p->calls : 0.0;
    double q[4];
    hist_window_quantiles(&p->hist, qs, 4, q);
    if (p->calls)
        hist_window_clamp(q, 4, p->min_ns, p->max_ns);
    out->p50_ns = q[0];
    out->p90_ns = q[1];
    out->p95_ns = q[2];
    out->p99_ns = q[3];
    out->share_of_busy =
        role->busy_ns && !rm_over_busy(m, p) ? (double)p->total_ns / (double)role->busy_ns : -1.0;
    out->wait_share = p->cpu_ticks ? wait_share(p->cpu_ticks, p->cpu_wait_ticks) : -1.0;
    out->gpu_mean_ns = p->gpu_timed ? (double)p->gpu_ns / (double)p->gpu_timed : -1.0;
    /* a model built by hand may disagree (-EINVAL): no figures */
    if (role->rank_count && rank_spread_compute(rm_rank_totals(p), role->slot_ranks + p->rank_lo,
                                                p->rank_n, role->rank_count, rs->scratch,
                                                &out->across_ranks))
        memset(&out->across_ranks, 0, sizeof out->across_ranks);
}

static void build_io(const run_model *m, uint32_t r, rs_io *io)
{
    io->rss_peak_worker = RM_NONE;
    uint64_t t0 = m->start_real_ns, t1 = m->end_real_ns;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        const rm_proc *p = &w->proc;
        if (w->role_index != r || !p->interval_ms)
            continue;
        if ((w->features & LAPSE_FEATURE_MEMORY) && p->rss_peak_bytes > io->rss_peak_bytes) {
            io->rss_peak_bytes = p->rss_peak_bytes;
            io->rss_peak_worker = i;
            io->rss_interval_ms = p->interval_ms;
        }
        if (!(w->features & LAPSE_FEATURE_IO))
            continue; /* its sampler read RSS alone */
        io->processes++;
        if (p->interval_ms > io->interval_ms)
            io->interval_ms = p->interval_ms;
        io->intervals += p->intervals;
        io->quiet_intervals += p->quiet_intervals;
        io->unreadable += p->unreadable;
        io->sampler_cpu_ns += p->sampler_cpu_ns;
        io->read_chars += p->read_chars;
        io->write_chars += p->write_chars;
        io->read_bytes += p->read_bytes;
        io->write_bytes += p->write_bytes;
        io->quiet_chars += p->quiet_chars;
        io->phased_chars += p->phased_chars;
        for (uint32_t c = 0; c < m->worker_count; c++)
            io->children_in_run += c != i && m->workers[c].ppid == w->pid &&
                                   !strcmp(m->workers[c].host, w->host);
        for (uint32_t k = 0; k < p->series_count; k++) {
            if (p->series[k].start_real_ns < t0)
                t0 = p->series[k].start_real_ns;
            if (p->series[k].end_real_ns > t1)
                t1 = p->series[k].end_real_ns;
        }
    }
    if (!io->processes || t1 <= t0)
        return;
    io->bins_start_real_ns = t0;
    io->bin_ns = (t1 - t0 + RS_IO_BINS - 1) / RS_IO_BINS;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != r || !(w->features & LAPSE_FEATURE_IO))
            continue;
        for (uint32_t k = 0; k < w->proc.series_count; k++) {
            const rm_io_point *pt = &w->proc.series[k];
            if (pt->end_real_ns <= pt->start_real_ns || !pt->chars)
                continue;
            double per_ns = (double)pt->chars / (double)(pt->end_real_ns - pt->start_real_ns);
            for (uint32_t b = 0; b < RS_IO_BINS; b++) {
                uint64_t lo = t0 + b * io->bin_ns, hi = lo + io->bin_ns;
                uint64_t a = pt->start_real_ns > lo ? pt->start_real_ns : lo;
                uint64_t z = pt->end_real_ns < hi ? pt->end_real_ns : hi;
                if (z > a)
                    io->bins[b] += per_ns * (double)(z - a);
            }
        }
    }
}

static void build_wait_sampler(const run_model *m, uint32_t r, rs_wait_sampler *ws)
{
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_cpu_sampler *c = &m->workers[i].cpu_sampler;
        if (m->workers[i].role_index != r || !c->period_ms)
            continue;
        ws->processes++;
        ws->realtime_processes += c->realtime;
        ws->ticks += c->ticks;
        ws->late_ticks += c->late_ticks;
        ws->cpu_ns += c->cpu_ns;
    }
    ws->late_share = ws->ticks ? (double)ws->late_ticks / (double)ws->ticks : -1.0;
    ws->cpu_ns_per_tick = ws->ticks ? (double)ws->cpu_ns / (double)ws->ticks : -1.0;
}

static int build_role(const run_model *m, uint32_t r, uint32_t top, rs_role *out)
{
    const rm_role *role = &m->roles[r];
    out->role = r;
    uint32_t n = 0, widest = 1;
    for (uint32_t i = 0; i < m->path_count; i++)
        if (m->paths[i].role == r && i != role->root) {
            n++;
            widest = m->paths[i].rank_n > widest ? m->paths[i].rank_n : widest;
        }
    out->phases = malloc((n ? n : 1u) * sizeof *out->phases);
    out->scratch = malloc((size_t)widest * sizeof *out->scratch);
    if (!out->phases || !out->scratch || path_order(m, r, out->phases, n))
        return -ENOMEM;
    out->phase_count = n;
    rs_top self, level;
    int rc = rs_top_init(&self, top);
    if (rs_top_init(&level, top))
        rc = -ENOMEM;
    /* ties in self or total time go in path order: the order of the phases */
    for (uint32_t k = 0; k < n && !rc; k++) {
        const rm_path *p = &m->paths[out->phases[k]];
        rc = rs_top_push(&self, (rs_key){rm_self_ns(p), k, k});
        if (!rc && p->depth == 1) {
            out->top_level_count++;
            out->top_level_ns += p->total_ns;
            rc = rs_top_push(&level, (rs_key){p->total_ns, k, k});
        }
        out->has_wait |= p->cpu_ticks != 0;
    }
    if (!rc)
        rc = rs_top_sort(&self);
    if (!rc)
        rc = rs_top_sort(&level);
    if (!rc) {
        out->by_self = malloc((self.n ? self.n : 1u) * sizeof *out->by_self);
        out->top_level = malloc((level.n ? level.n : 1u) * sizeof *out->top_level);
        if (!out->by_self || !out->top_level)
            rc = -ENOMEM;
    }
    for (uint32_t i = 0; !rc && i < self.n; i++)
        out->by_self[i] = self.keys[i].index;
    for (uint32_t i = 0; !rc && i < level.n; i++)
        out->top_level[i] = level.keys[i].index;
    out->by_self_count = self.n;
    out->top_level_shown = level.n;
    rs_top_free(&self);
    rs_top_free(&level);
    if (rc)
        return rc;
    out->loop = run_stats_pick_loop(m, out->phases, n);
    build_io(m, r, &out->io);
    build_wait_sampler(m, r, &out->wait_sampler);
    return 0;
}

int run_stats_build(const run_model *m, uint32_t top, run_stats *s)
{
    memset(s, 0, sizeof *s);
    s->roles = calloc(m->role_count ? m->role_count : 1, sizeof *s->roles);
    if (!s->roles)
        return -ENOMEM;
    s->role_count = m->role_count;
    for (uint32_t r = 0; r < m->role_count; r++)
        if (build_role(m, r, top, &s->roles[r])) {
            run_stats_free(s);
            return -ENOMEM;
        }
    return 0;
}

void run_stats_free(run_stats *s)
{
    for (uint32_t r = 0; r < s->role_count; r++) {
        free(s->roles[r].phases);
        free(s->roles[r].by_self);
        free(s->roles[r].top_level);
        free(s->roles[r].scratch);
    }
    free(s->roles);
    memset(s, 0, sizeof *s);
}
