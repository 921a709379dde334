#include "run_ranks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct ranks of the workers on host (NULL: all hosts), ascending. */
static uint32_t ranks_on(const run_model *m, const char *host, int64_t *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (rm_has_rank(w) && (!host || !strcmp(w->host, host)))
            out[n++] = w->rank;
    }
    if (n)
        qsort(out, n, sizeof *out, cmp_i64);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || out[k - 1] != out[i])
            out[k++] = out[i];
    return k;
}

static void world_size_of(const run_model *m, run_ranks *r)
{
    r->world_size = -1;
    r->world_differ = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!rm_has_rank(w) || w->world_size < 0)
            continue;
        if (r->world_size >= 0 && r->world_size != w->world_size)
            r->world_differ = 1;
        if (w->world_size > r->world_size)
            r->world_size = w->world_size;
    }
}

static void launchers_of(const run_model *m, char *buf, size_t n)
{
    buf[0] = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!rm_has_rank(w) || !*w->launcher)
            continue;
        int seen = 0;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = rm_has_rank(&m->workers[k]) && !strcmp(m->workers[k].launcher, w->launcher);
        if (!seen && strlen(buf) + strlen(w->launcher) + 3 < n)
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? ", " : "", w->launcher);
    }
}

/* Walks the gaps between the ranks present (sorted, distinct), never the whole world:
 * a file may claim any world size. */
static void missing_of(const int64_t *ranks, uint32_t n, run_ranks *r)
{
    r->missing_count = 0;
    if (r->world_differ || r->world_size < 0)
        return;
    uint32_t listed = 0;
    uint64_t present = 0;
    int64_t next = 0; /* the lowest rank not yet seen or listed */
    for (uint32_t i = 0; i <= n; i++) {
        int64_t upto = i < n && ranks[i] < r->world_size ? ranks[i] : r->world_size;
        for (int64_t k = next; k < upto && listed < RUN_RANKS_MISSING_LISTED; k++)
            r->missing[listed++] = k;
        if (i < n && ranks[i] >= 0 && ranks[i] < r->world_size) {
            present++;
            next = ranks[i] + 1;
        }
    }
    uint64_t missing = (uint64_t)r->world_size - present;
    r->missing_count = missing > UINT32_MAX ? UINT32_MAX : (uint32_t)missing;
}

int run_ranks_build(const run_model *m, run_ranks *r)
{
    memset(r, 0, sizeof *r);
    r->world_size = -1;
    int64_t *ranks = malloc((m->worker_count ? m->worker_count : 1u) * sizeof *ranks);
    if (!ranks)
        return -ENOMEM;
    uint32_t n = ranks_on(m, NULL, ranks);
    r->count = n;
    world_size_of(m, r);
    if (n) {
        launchers_of(m, r->launchers, sizeof r->launchers);
        r->hosts = calloc(m->host_count ? m->host_count : 1u, sizeof *r->hosts);
        if (!r->hosts) {
            free(ranks);
            return -ENOMEM;
        }
        int64_t *on = malloc((m->worker_count ? m->worker_count : 1u) * sizeof *on);
        if (!on) {
            free(ranks);
            run_ranks_free(r);
            return -ENOMEM;
        }
        for (uint32_t h = 0; h < m->host_count; h++) {
            uint32_t k = ranks_on(m, m->hosts[h], on);
            if (!k)
                continue;
            run_ranks_host *rh = &r->hosts[r->host_count];
            rh->ranks = malloc(k * sizeof *rh->ranks);
            if (!rh->ranks) {
                free(on);
                free(ranks);
                run_ranks_free(r);
                return -ENOMEM;
            }
            memcpy(rh->ranks, on, k * sizeof *on);
            rh->count = k;
            rh->host = m->hosts[h];
            r->host_count++;
        }
        free(on);
    }
    missing_of(ranks, n, r);
    free(ranks);
    return 0;
}

void run_ranks_free(run_ranks *r)
{
    for (uint32_t h = 0; h < r->host_count; h++)
        free(r->hosts[h].ranks);
    free(r->hosts);
    r->hosts = NULL;
    r->host_count = 0;
}
