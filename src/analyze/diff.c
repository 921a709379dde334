#include "diff.h"

#include "run_ranks.h"
#include "wait_share.h"

#include "core/hist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double diff_ks_statistic(const uint64_t *ha, const uint64_t *hb)
{
    uint64_t n = 0, m = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        n += ha[b];
        m += hb[b];
    }
    if (!n || !m)
        return 0.0;
    uint64_t ca = 0, cb = 0;
    double d = 0.0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        ca += ha[b];
        cb += hb[b];
        double x = fabs((double)ca / (double)n - (double)cb / (double)m);
        if (x > d)
            d = x;
    }
    return d;
}

double diff_ks_threshold(uint64_t n, uint64_t m)
{
    if (!n || !m)
        return 0.0;
    return DIFF_KS_C * sqrt(((double)n + (double)m) / ((double)n * (double)m));
}

/* One side's rows before matching: a key and the merged numbers behind it. */
typedef struct side_row {
    char *key, *role, *path;
    uint64_t calls, total_ns, min_ns, max_ns;
    uint64_t cpu_ticks, cpu_wait_ticks;
    uint32_t in_processes;
    hist_window hist;
} side_row;

static int cmp_side_row(const void *a, const void *b)
{
    return strcmp(((const side_row *)a)->key, ((const side_row *)b)->key);
}

static void side_free(side_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].key);
        free(rows[i].role);
        free(rows[i].path);
        hist_window_free(&rows[i].hist);
    }
    free(rows);
}

/* The rows of one model, sorted by key, equal keys merged. */
static int side_rows(const run_model *m, unsigned flags, side_row **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    side_row *rows = calloc(m->path_count ? m->path_count : 1, sizeof *rows);
    if (!rows)
        return -ENOMEM;
    size_t n = 0;
    char buf[RM_PATH_BUF];
    for (uint32_t i = 0; i < m->path_count; i++) {
        const rm_path *p = &m->paths[i];
        if (p->parent == RM_NONE)
            continue;
        side_row *r = &rows[n++];
        const char *role = m->roles[p->role].name;
        const char *path = rm_path_str(m, i, buf);
        if (flags & DIFF_BY_PATH) {
            r->key = strdup(path);
            r->role = strdup("");
        } else {
            size_t len = strlen(role) + strlen(path) + 2;
            r->key = malloc(len);
            if (r->key)
                snprintf(r->key, len, "%s:%s", role, path);
            r->role = strdup(role);
        }
        r->path = strdup(path);
        r->calls = p->calls;
        r->total_ns = p->total_ns;
        r->min_ns = p->min_ns;
        r->max_ns = p->max_ns;
        r->in_processes = p->in_processes;
        r->cpu_ticks = p->cpu_ticks;
        r->cpu_wait_ticks = p->cpu_wait_ticks;
        if (!r->key || !r->role || !r->path || hist_window_add(&r->hist, &p->hist)) {
            side_free(rows, n);
            return -ENOMEM;
        }
    }
    qsort(rows, n, sizeof *rows, cmp_side_row);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && !strcmp(rows[k - 1].key, rows[i].key)) { /* same path in another role */
            side_row *d = &rows[k - 1];
            if (rows[i].calls && (!d->calls || rows[i].min_ns < d->min_ns))
                d->min_ns = rows[i].min_ns;
            if (rows[i].max_ns > d->max_ns)
                d->max_ns = rows[i].max_ns;
            d->calls += rows[i].calls;
            d->total_ns += rows[i].total_ns;
            d->in_processes += rows[i].in_processes;
            d->cpu_ticks += rows[i].cpu_ticks;
            d->cpu_wait_ticks += rows[i].cpu_wait_ticks;
            int rc = hist_window_add(&d->hist, &rows[i].hist);
            free(rows[i].key);
            free(rows[i].role);
            free(rows[i].path);
            hist_window_free(&rows[i].hist);
            memset(&rows[i], 0, sizeof rows[i]);
            if (rc) { /* every row is live exactly once or zeroed */
                side_free(rows, n);
                return -ENOMEM;
            }
            continue;
        }
        if (k != i) {
            rows[k] = rows[i];
            memset(&rows[i], 0, sizeof rows[i]);
        }
        k++;
    }
    *out = rows;
    *count = k;
    return 0;
}

static void fill_side(diff_side *s, const side_row *r)
{
    memset(s, 0, sizeof *s);
    s->wait_share = -1.0;
    if (!r)
        return;
    s->calls = r->calls;
    s->total_ns = r->total_ns;
    s->in_processes = r->in_processes;
    s->mean_ns = r->calls ? (double)r->total_ns / (double)r->calls : 0.0;
    static const double qs[2] = {0.50, 0.99};
    double q[2];
    hist_window_quantiles(&r->hist, qs, 2, q);
    if (r->calls)
        hist_window_clamp(q, 2, r->min_ns, r->max_ns);
    s->p50_ns = q[0];
    s->p99_ns = q[1];
    s->ticks = r->cpu_ticks;
    s->wait_ticks = r->cpu_wait_ticks;
    s->wait_share = wait_share(r->cpu_ticks, r->cpu_wait_ticks);
}

static double ratio(double b, double a)
{
    return a > 0.0 ? b / a : -1.0;
}

static int make_row(diff_row *row, const side_row *a, const side_row *b)
{
    memset(row, 0, sizeof *row);
    const side_row *any = a ? a : b;
    row->key = strdup(any->key);
    row->role = strdup(any->role);
    row->path = strdup(any->path);
    if (!row->key || !row->role || !row->path)
        return -ENOMEM;
    row->presence = a && b ? DIFF_BOTH : a ? DIFF_ONLY_A : DIFF_ONLY_B;
    fill_side(&row->a, a);
    fill_side(&row->b, b);
    row->mean_ratio = ratio(row->b.mean_ns, row->a.mean_ns);
    row->p50_ratio = ratio(row->b.p50_ns, row->a.p50_ns);
    row->p99_ratio = ratio(row->b.p99_ns, row->a.p99_ns);
    row->total_delta_ns = (int64_t)(row->b.total_ns - row->a.total_ns);
    if (row->presence != DIFF_BOTH)
        return 0;
    if (row->a.wait_share >= 0.0 && row->b.wait_share >= 0.0) {
        row->has_wait_delta = 1;
        row->wait_delta = row->b.wait_share - row->a.wait_share;
    }
    row->few_calls = row->a.calls < DIFF_FEW_CALLS || row->b.calls < DIFF_FEW_CALLS;
    if (row->p50_ratio >= 0.0 && row->p99_ratio >= 0.0)
        row->tail_moved = fabs(row->p99_ratio - row->p50_ratio) > DIFF_TAIL_MOVE;
    uint64_t da[HIST_BUCKETS], db[HIST_BUCKETS];
    hist_window_to_dense(&a->hist, da);
    hist_window_to_dense(&b->hist, db);
    uint64_t n = hist_window_count(&a->hist), m = hist_window_count(&b->hist);
    row->ks_d = diff_ks_statistic(da, db);
    row->ks_threshold = diff_ks_threshold(n, m);
    row->ks_significant = n && m && row->ks_d > row->ks_threshold;
    double moved = row->p50_ratio >= 0.0 ? fabs(row->p50_ratio - 1.0)
                                          : (row->b.p50_ns > 0.0 ? 1.0 : 0.0);
    row->changed = row->ks_significant && moved >= DIFF_MIN_P50_MOVE;
    return 0;
}

static uint64_t abs_delta(const diff_row *r)
{
    return r->total_delta_ns < 0 ? (uint64_t)0 - (uint64_t)r->total_delta_ns
                                 : (uint64_t)r->total_delta_ns;
}

static int cmp_row(const void *x, const void *y)
{
    const diff_row *a = x, *b = y;
    int oa = a->presence != DIFF_BOTH, ob = b->presence != DIFF_BOTH;
    if (oa != ob)
        return oa ? -1 : 1;
    uint64_t da = abs_delta(a), db = abs_delta(b);
    if (oa) { /* one side only: A-only first, then the larger total */
        if (a->presence != b->presence)
            return a->presence == DIFF_ONLY_A ? -1 : 1;
        uint64_t ta = a->a.total_ns + a->b.total_ns, tb = b->a.total_ns + b->b.total_ns;
        if (ta != tb)
            return ta > tb ? -1 : 1;
    } else if (da != db) {
        return da > db ? -1 : 1;
    }
    return strcmp(a->key, b->key);
}

static int roles_in_common(const run_model *a, const run_model *b)
{
    for (uint32_t i = 0; i < a->role_count; i++)
        for (uint32_t k = 0; k < b->role_count; k++)
            if (!strcmp(a->roles[i].name, b->roles[k].name))
                return 1;
    return 0;
}

int diff_runs(const run_model *a, const run_model *b, unsigned flags, diff_result *out)
{
    memset(out, 0, sizeof *out);
    out->flags = flags;
    out->roles_in_common = roles_in_common(a, b);
    side_row *ra = NULL, *rb = NULL;
    size_t na = 0, nb = 0;
    int rc = side_rows(a, flags, &ra, &na);
    if (!rc)
        rc = side_rows(b, flags, &rb, &nb);
    if (!rc) {
        out->rows = calloc(na + nb ? na + nb : 1, sizeof *out->rows);
        if (!out->rows)
            rc = -ENOMEM;
    }
    size_t i = 0, k = 0;
    while (!rc && (i < na || k < nb)) {
        int c = i == na ? 1 : k == nb ? -1 : strcmp(ra[i].key, rb[k].key);
        const side_row *x = c <= 0 ? &ra[i] : NULL, *y = c >= 0 ? &rb[k] : NULL;
        rc = make_row(&out->rows[out->count], x, y);
        out->count++;
        if (c <= 0)
            i++;
        if (c >= 0)
            k++;
    }
    side_free(ra, na);
    side_free(rb, nb);
    if (rc) {
        diff_result_free(out);
        return rc;
    }
    qsort(out->rows, out->count, sizeof *out->rows, cmp_row);
    for (size_t r = 0; r < out->count; r++) {
        const diff_row *row = &out->rows[r];
        if (row->presence == DIFF_ONLY_A)
            out->only_a++;
        else if (row->presence == DIFF_ONLY_B)
            out->only_b++;
        else if (row->changed)
            out->changed++;
        else
            out->unchanged++;
    }
    run_ranks ranks;
    const run_model *sides[2] = {a, b};
    caveat_list *lists[2] = {&out->caveats_a, &out->caveats_b};
    for (int side = 0; side < 2; side++) {
        if (run_ranks_build(sides[side], &ranks)) {
            diff_result_free(out);
            return -ENOMEM;
        }
        rc = caveats_build(sides[side], &ranks, lists[side]);
        run_ranks_free(&ranks);
        if (rc) {
            diff_result_free(out);
            return rc;
        }
    }
    return 0;
}

size_t diff_changed_from(const diff_result *d, size_t first)
{
    size_t n = 0;
    for (size_t i = first; i < d->count; i++)
        n += d->rows[i].changed != 0;
    return n;
}

void diff_result_free(diff_result *d)
{
    for (size_t i = 0; i < d->count; i++) {
        free(d->rows[i].key);
        free(d->rows[i].role);
        free(d->rows[i].path);
    }
    free(d->rows);
    caveats_free(&d->caveats_a);
    caveats_free(&d->caveats_b);
    memset(d, 0, sizeof *d);
}
