#include "report_ranks.h"

#include "format.h"
#include "json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOSTS_SHOWN 8

char *report_fmt_ranks(char *buf, size_t n, const int64_t *ranks, uint32_t count)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < count;) {
        uint32_t j = i;
        while (j + 1 < count && ranks[j + 1] == ranks[j] + 1)
            j++;
        char item[64];
        if (j == i)
            snprintf(item, sizeof item, "%s%lld", i ? "," : "", (long long)ranks[i]);
        else
            snprintf(item, sizeof item, "%s%lld-%lld", i ? "," : "", (long long)ranks[i],
                     (long long)ranks[j]);
        size_t len = strlen(item);
        if (used + len + 4 >= n) {
            snprintf(buf + used, n - used, ",...");
            break;
        }
        memcpy(buf + used, item, len + 1);
        used += len;
        i = j + 1;
    }
    return buf;
}

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
    qsort(out, n, sizeof *out, cmp_i64);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || out[k - 1] != out[i])
            out[k++] = out[i];
    return k;
}

/* The world size all ranked workers agree on, or -1 (none known, or they differ). */
static int64_t world_size_of(const run_model *m, int *differ)
{
    int64_t ws = -1;
    *differ = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!rm_has_rank(w) || w->world_size < 0)
            continue;
        if (ws >= 0 && ws != w->world_size)
            *differ = 1;
        if (w->world_size > ws)
            ws = w->world_size;
    }
    return ws;
}

/* The launchers named by ranked workers, distinct, joined with ", ". */
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

int64_t report_missing_ranks(const run_model *m, int64_t *out, uint32_t max, int64_t *world)
{
    int differ;
    *world = world_size_of(m, &differ);
    if (differ || *world < 0)
        return 0;
    int64_t *ranks = malloc((m->worker_count ? m->worker_count : 1u) * sizeof *ranks);
    if (!ranks)
        return -ENOMEM;
    /* walk the gaps between the ranks present (sorted, distinct), never the whole
     * world: a file may claim any world size */
    uint32_t n = ranks_on(m, NULL, ranks), listed = 0;
    uint64_t present = 0;
    int64_t next = 0; /* the lowest rank not yet seen or listed */
    for (uint32_t i = 0; i <= n; i++) {
        int64_t upto = i < n && ranks[i] < *world ? ranks[i] : *world;
        for (int64_t r = next; r < upto && listed < max; r++)
            out[listed++] = r;
        if (i < n && ranks[i] >= 0 && ranks[i] < *world) {
            present++;
            next = ranks[i] + 1;
        }
    }
    free(ranks);
    uint64_t missing = (uint64_t)*world - present;
    return missing > UINT32_MAX ? UINT32_MAX : (int64_t)missing;
}

int report_ranks_header(FILE *out, const run_model *m)
{
    int64_t *ranks = malloc((m->worker_count ? m->worker_count : 1u) * sizeof *ranks);
    if (!ranks)
        return -ENOMEM;
    uint32_t n = ranks_on(m, NULL, ranks);
    if (!n) {
        free(ranks);
        return 0;
    }
    int64_t gone[64], world;
    int64_t missing = report_missing_ranks(m, gone, 64, &world);
    if (missing < 0) {
        free(ranks);
        return (int)missing;
    }
    int differ;
    int64_t ws = world_size_of(m, &differ);
    char launchers[128], list[256];
    launchers_of(m, launchers, sizeof launchers);
    fprintf(out, "Ranks %u", n);
    if (ws >= 0)
        fprintf(out, " of world size %lld%s", (long long)ws, differ ? " (the files disagree)" : "");
    if (launchers[0])
        fprintf(out, " (%s)", launchers);
    fputc(':', out);
    uint32_t shown = 0;
    for (uint32_t h = 0; h < m->host_count; h++) {
        uint32_t k = ranks_on(m, m->hosts[h], ranks);
        if (!k)
            continue;
        if (shown++ == HOSTS_SHOWN) {
            fputs("; ...", out);
            break;
        }
        fprintf(out, "%s %s %s", shown > 1 ? ";" : "", m->hosts[h], report_fmt_ranks(list, sizeof list, ranks, k));
    }
    fputc('\n', out);
    if (missing)
        fprintf(out, "Missing ranks: %s%s (of world size %lld, no readable file)\n",
                report_fmt_ranks(list, sizeof list, gone, missing < 64 ? (uint32_t)missing : 64),
                missing > 64 ? ",..." : "", (long long)world);
    free(ranks);
    return 0;
}

static _Thread_local const rs_phase *sort_phases;

static int cmp_by_rank_max(const void *a, const void *b)
{
    const rs_phase *x = &sort_phases[*(const uint32_t *)a], *y = &sort_phases[*(const uint32_t *)b];
    if (x->across_ranks.max_ns != y->across_ranks.max_ns)
        return x->across_ranks.max_ns > y->across_ranks.max_ns ? -1 : 1;
    return x->path < y->path ? -1 : x->path > y->path;
}

int report_ranks_block(FILE *out, const run_model *m, const rs_role *rs, uint32_t r, unsigned top)
{
    const rm_role *role = &m->roles[r];
    if (role->rank_count < 2 || !rs->phase_count)
        return 0;
    uint32_t *order = malloc(rs->phase_count * sizeof *order);
    if (!order)
        return -ENOMEM;
    for (uint32_t i = 0; i < rs->phase_count; i++)
        order[i] = i;
    sort_phases = rs->phases;
    qsort(order, rs->phase_count, sizeof *order, cmp_by_rank_max);
    uint32_t shown = rs->phase_count < top ? rs->phase_count : top;
    int width = 24;
    for (uint32_t i = 0; i < shown; i++) {
        int len = (int)strlen(m->paths[rs->phases[order[i]].path].path);
        if (len > width)
            width = len < 44 ? len : 44;
    }
    char list[128];
    fprintf(out, "\nACROSS RANKS  %u ranks (%s): per-rank total time of each phase\n", role->rank_count,
            report_fmt_ranks(list, sizeof list, role->ranks, role->rank_count));
    fprintf(out, "  %-*s %10s %10s %10s %9s %10s\n", width, "phase", "min", "median", "max", "slowest",
            "entered");
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[32], e[32], pbuf[512];
    for (uint32_t i = 0; i < shown; i++) {
        const rs_phase *ph = &rs->phases[order[i]];
        const rank_spread *sp = &ph->across_ranks;
        const char *path = m->paths[ph->path].path;
        size_t len = strlen(path);
        if ((int)len > width)
            snprintf(pbuf, sizeof pbuf, "...%s", path + len - (size_t)(width - 3));
        else
            snprintf(pbuf, sizeof pbuf, "%s", path);
        if (sp->slowest_rank >= 0)
            snprintf(d, sizeof d, "rank %lld", (long long)sp->slowest_rank);
        else
            snprintf(d, sizeof d, "-");
        snprintf(e, sizeof e, "in %u/%u", sp->entered, sp->ranks);
        fprintf(out, "%c %-*s %10s %10s %10s %9s %10s\n", m->paths[ph->path].sample_stride ? '~' : ' ',
                width, pbuf, sp->min_ns ? fmt_duration(a, sizeof a, (double)sp->min_ns) : "0",
                sp->median_ns > 0 ? fmt_duration(b, sizeof b, sp->median_ns) : "0",
                sp->max_ns ? fmt_duration(c, sizeof c, (double)sp->max_ns) : "0", d, e);
    }
    if (rs->phase_count > shown)
        fprintf(out, "  ... %u more paths (--top N shows more, --json shows all)\n", rs->phase_count - shown);
    fputs("  min, median, max over the role's ranks of each rank's total time in the phase (its\n"
          "  processes added); a rank that never entered the phase counts as 0; entered = ranks\n"
          "  with time in it / ranks of the role\n",
          out);
    if (role->unranked)
        fprintf(out, "  %u process%s of the role without a rank %s not in these figures\n", role->unranked,
                role->unranked == 1 ? "" : "es", role->unranked == 1 ? "is" : "are");
    free(order);
    return 0;
}

int report_ranks_json_run(json_out *j, const run_model *m)
{
    int64_t *ranks = malloc((m->worker_count ? m->worker_count : 1u) * sizeof *ranks);
    if (!ranks)
        return -ENOMEM;
    uint32_t n = ranks_on(m, NULL, ranks);
    if (!n) {
        free(ranks);
        json_null(j, "ranks");
        return 0;
    }
    /* the missing ranks, the first REPORT_MISSING_LISTED of them: a file may claim
     * any world size */
    int64_t world, gone[REPORT_MISSING_LISTED];
    int64_t missing = report_missing_ranks(m, gone, REPORT_MISSING_LISTED, &world);
    if (missing < 0) {
        free(ranks);
        return (int)missing;
    }
    int differ;
    int64_t ws = world_size_of(m, &differ);
    char launchers[128];
    launchers_of(m, launchers, sizeof launchers);
    json_begin_object(j, "ranks");
    json_u64(j, "count", n);
    if (ws >= 0 && !differ)
        json_i64(j, "world_size", ws);
    else
        json_null(j, "world_size");
    json_str(j, "launchers", launchers);
    json_begin_array(j, "missing");
    for (int64_t i = 0; i < missing && i < REPORT_MISSING_LISTED; i++)
        json_i64(j, NULL, gone[i]);
    json_end_array(j);
    json_u64(j, "missing_count", missing);
    json_begin_object(j, "by_host");
    for (uint32_t h = 0; h < m->host_count; h++) {
        uint32_t k = ranks_on(m, m->hosts[h], ranks);
        if (!k)
            continue;
        json_begin_array(j, m->hosts[h]);
        for (uint32_t i = 0; i < k; i++)
            json_i64(j, NULL, ranks[i]);
        json_end_array(j);
    }
    json_end_object(j);
    json_end_object(j);
    free(ranks);
    return 0;
}

void report_ranks_json_phase(json_out *j, const rs_phase *ph)
{
    const rank_spread *sp = &ph->across_ranks;
    if (!sp->ranks) {
        json_null(j, "across_ranks");
        return;
    }
    json_begin_object(j, "across_ranks");
    json_u64(j, "ranks", sp->ranks);
    json_u64(j, "entered", sp->entered);
    json_u64(j, "min_ns", sp->min_ns);
    json_ns(j, "median_ns", sp->median_ns);
    json_u64(j, "max_ns", sp->max_ns);
    if (sp->slowest_rank >= 0)
        json_i64(j, "slowest_rank", sp->slowest_rank);
    else
        json_null(j, "slowest_rank");
    json_end_object(j);
}
