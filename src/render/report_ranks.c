#include "report_ranks.h"

#include "format.h"
#include "json_out.h"

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

void report_ranks_header(FILE *out, const run_ranks *rk)
{
    if (!rk->count)
        return;
    char list[256];
    fprintf(out, "Ranks %u", rk->count);
    if (rk->world_size >= 0)
        fprintf(out, " of world size %lld%s", (long long)rk->world_size,
                rk->world_differ ? " (the files disagree)" : "");
    if (rk->launchers[0])
        fprintf(out, " (%s)", rk->launchers);
    fputc(':', out);
    for (uint32_t h = 0; h < rk->host_count; h++) {
        if (h == HOSTS_SHOWN) {
            fputs("; ...", out);
            break;
        }
        fprintf(out, "%s %s %s", h ? ";" : "", rk->hosts[h].host,
                report_fmt_ranks(list, sizeof list, rk->hosts[h].ranks, rk->hosts[h].count));
    }
    fputc('\n', out);
    if (rk->missing_count)
        fprintf(out, "Missing ranks: %s%s (of world size %lld, no readable file)\n",
                report_fmt_ranks(list, sizeof list, rk->missing, rk->missing_count < 64 ? rk->missing_count : 64),
                rk->missing_count > 64 ? ",..." : "", (long long)rk->world_size);
}

void report_ranks_block(FILE *out, const run_model *m, const report_role *rr)
{
    const rm_role *role = rr->role;
    const rs_role *rs = rr->stats;
    const uint32_t *order = rr->by_rank_max;
    if (!order)
        return;
    uint32_t shown = rr->rank_rows_shown;
    int width = 24;
    char path[RM_PATH_BUF];
    for (uint32_t i = 0; i < shown; i++) {
        int len = (int)strlen(rm_path_str(m, rs->phases[order[i]], path));
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
        rs_phase phase;
        run_stats_phase(m, rs, order[i], &phase);
        const rs_phase *ph = &phase;
        const rank_spread *sp = &ph->across_ranks;
        const char *ps = rm_path_str(m, ph->path, path);
        size_t len = strlen(ps);
        if ((int)len > width)
            snprintf(pbuf, sizeof pbuf, "...%s", ps + len - (size_t)(width - 3));
        else
            snprintf(pbuf, sizeof pbuf, "%s", ps);
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
}

void report_ranks_json_run(json_out *j, const run_ranks *rk)
{
    if (!rk->count) {
        json_null(j, "ranks");
        return;
    }
    json_begin_object(j, "ranks");
    json_u64(j, "count", rk->count);
    if (rk->world_size >= 0 && !rk->world_differ)
        json_i64(j, "world_size", rk->world_size);
    else
        json_null(j, "world_size");
    json_str(j, "launchers", rk->launchers);
    /* the first missing ranks: a file may claim any world size */
    json_begin_array(j, "missing");
    for (uint32_t i = 0; i < rk->missing_count && i < RUN_RANKS_MISSING_LISTED; i++)
        json_i64(j, NULL, rk->missing[i]);
    json_end_array(j);
    json_u64(j, "missing_count", rk->missing_count);
    json_begin_object(j, "by_host");
    for (uint32_t h = 0; h < rk->host_count; h++) {
        json_begin_array(j, rk->hosts[h].host);
        for (uint32_t i = 0; i < rk->hosts[h].count; i++)
            json_i64(j, NULL, rk->hosts[h].ranks[i]);
        json_end_array(j);
    }
    json_end_object(j);
    json_end_object(j);
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
