/* The text report: a header, one block per role, CAVEATS. */
#include "report_render.h"

#include "format.h"
#include "report_caveats.h"
#include "report_ranks.h"
#include "report_samples.h"

#include "analyze/wait_share.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RULE_WIDTH 78
#define PATH_MIN 24
#define PATH_MAX_WIDTH 52

static void rule(FILE *out)
{
    for (int i = 0; i < RULE_WIDTH; i++)
        fputs("\xe2\x94\x80", out); /* U+2500 */
    fputc('\n', out);
}

/* path shortened to width characters, keeping its end ("...b/c/leaf"). */
static const char *fit(char *buf, size_t n, const char *path, int width)
{
    size_t len = strlen(path);
    if ((int)len <= width || width < 4) {
        snprintf(buf, n, "%s", path);
    } else {
        const char *tail = path + len - (size_t)(width - 3);
        while ((*tail & 0xc0) == 0x80) /* do not start inside a UTF-8 sequence */
            tail++;
        snprintf(buf, n, "...%s", tail);
    }
    return buf;
}

static void upper(char *buf, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        buf[i] = (char)toupper((unsigned char)s[i]);
    buf[i] = 0;
}

static int header(FILE *out, const run_model *m)
{
    char a[FMT_BUF], b[FMT_BUF];
    double runtime = m->end_real_ns > m->start_real_ns ? (double)(m->end_real_ns - m->start_real_ns) : 0.0;
    uint32_t not_final = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        not_final += !m->workers[i].final;
    fprintf(out, "Run %s   Runtime %s   Processes %u", *m->run_id ? m->run_id : "(unknown)",
            m->worker_count ? fmt_duration(a, sizeof a, runtime) : "n/a", m->worker_count);
    if (not_final)
        fprintf(out, " (%u not final)", not_final);
    if (m->unreadable_count)
        fprintf(out, " + %u unreadable", m->unreadable_count);
    fputs("   Roles ", out);
    for (uint32_t r = 0; r < m->role_count; r++)
        fprintf(out, "%s%s x%u", r ? ", " : "", m->roles[r].name, m->roles[r].processes);
    if (!m->role_count)
        fputs("none", out);
    fputc('\n', out);
    fputs("Hosts ", out);
    for (uint32_t h = 0; h < m->host_count && h < 8; h++)
        fprintf(out, "%s%s", h ? ", " : "", m->hosts[h]);
    if (m->host_count > 8)
        fprintf(out, ", and %u more", m->host_count - 8);
    if (!m->host_count)
        fputs("none", out);
    fprintf(out, " (%u host%s)   Started %s\n", m->host_count, m->host_count == 1 ? "" : "s",
            fmt_utc(b, sizeof b, m->start_real_ns));
    int rc = report_ranks_header(out, m);
    if (rc)
        return rc;
    fprintf(out, "%s %s\n", m->single_file ? "File" : "Dir", m->dir);
    if (m->run_ids > 1)
        fprintf(out, "Note: these files carry %u different run ids; they are merged as one run.\n",
                m->run_ids);
    return 0;
}

static void counter_line(FILE *out, const run_model *m, const rm_path *p, const rm_counter *c,
                         int name_width)
{
    char sum[FMT_BUF], rate[FMT_BUF], per[FMT_BUF], upd[FMT_BUF];
    fmt_int(sum + 1, sizeof sum - 1, c->sum);
    sum[0] = c->sum < 0 ? '<' : '>'; /* an overflowed sum: beyond the bound shown */
    const char *shown = c->overflowed ? sum : sum + 1;
    if (p->parent == RM_NONE) { /* outside any span: no time to relate it to */
        fprintf(out, "    + %-*s %14s total   (%s update%s)\n", name_width, rm_str(m, c->name), shown,
                fmt_count(upd, sizeof upd, c->updates), c->updates == 1 ? "" : "s");
        return;
    }
    if (p->total_ns && !c->overflowed)
        fmt_rate(rate, sizeof rate, (double)c->sum / ((double)p->total_ns / 1e9));
    else
        snprintf(rate, sizeof rate, "n/a");
    if (c->sum > 0 && !c->overflowed) {
        fmt_duration(per, sizeof per, (double)p->total_ns / (double)c->sum);
        strncat(per, "/ea", sizeof per - strlen(per) - 1);
    } else {
        snprintf(per, sizeof per, "n/a");
    }
    fprintf(out, "    + %-*s %14s total %14s %12s   (%s update%s)\n", name_width, rm_str(m, c->name),
            shown, rate, per, fmt_count(upd, sizeof upd, c->updates), c->updates == 1 ? "" : "s");
}

static int counter_name_width(const run_model *m, const rm_path *p)
{
    int w = 12;
    for (uint32_t c = p->first_counter; c != RM_NONE; c = m->counters[c].next) {
        int len = (int)strlen(rm_str(m, m->counters[c].name));
        if (len > w)
            w = len < 40 ? len : 40;
    }
    return w;
}

/* Counters named io.* and mem.* are the figures of io=True phases: the I/O BY
 * PHASE and MEMORY blocks show them. */
static int is_io_counter(const run_model *m, const rm_counter *c)
{
    return strncmp(rm_str(m, c->name), "io.", 3) == 0 || strncmp(rm_str(m, c->name), "mem.", 4) == 0;
}

static void counters_of(FILE *out, const run_model *m, const rm_path *p)
{
    int w = counter_name_width(m, p);
    for (uint32_t c = p->first_counter; c != RM_NONE; c = m->counters[c].next)
        if (!is_io_counter(m, &m->counters[c]))
            counter_line(out, m, p, &m->counters[c], w);
}

/* The sum of the counter `name` on path p, and whether it has one. */
static int counter_sum(const run_model *m, const rm_path *p, const char *name, int64_t *sum)
{
    for (uint32_t c = p->first_counter; c != RM_NONE; c = m->counters[c].next)
        if (!strcmp(rm_str(m, m->counters[c].name), name)) {
            *sum = m->counters[c].sum;
            return 1;
        }
    *sum = 0;
    return 0;
}

/* I/O BY PHASE: the phases opened with io=True, their bytes read at their own
 * entry and exit. */
static void io_block(FILE *out, const run_model *m, const rs_role *rs)
{
    int header = 0;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], pbuf[512];
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        const rm_path *p = &m->paths[rs->phases[i].path];
        int64_t rchar, wchar, rbytes, wbytes, unreadable;
        if (!counter_sum(m, p, "io.read_chars", &rchar))
            continue;
        counter_sum(m, p, "io.write_chars", &wchar);
        counter_sum(m, p, "io.read_bytes", &rbytes);
        counter_sum(m, p, "io.write_bytes", &wbytes);
        counter_sum(m, p, "io.unreadable", &unreadable);
        if (!header) {
            fputs("\nI/O BY PHASE (measured exactly, at each phase's entry and exit)\n", out);
            header = 1;
        }
        double secs = (double)p->total_ns / 1e9;
        fprintf(out, "  %-28s r %10s   w %10s   %s/s from disk\n", fit(pbuf, sizeof pbuf, p->path, 28),
                fmt_bytes(a, sizeof a, (uint64_t)rbytes), fmt_bytes(b, sizeof b, (uint64_t)wbytes),
                secs > 0 ? fmt_bytes(c, sizeof c, (uint64_t)((double)(rbytes + wbytes) / secs)) : "n/a");
        fprintf(out, "  %-28s + %s read from page cache, %s written by the program (write calls)\n", "",
                fmt_bytes(a, sizeof a, (uint64_t)(rchar > rbytes ? rchar - rbytes : 0)),
                fmt_bytes(d, sizeof d, (uint64_t)wchar));
        if (unreadable)
            fprintf(out, "  %-28s (%lld entries could not be measured and count nothing)\n", "",
                    (long long)unreadable);
    }
    if (header)
        fputs("  disk = read_bytes/write_bytes (what reached the device; writes as the kernel\n"
              "  dirtied pages); page cache = bytes read by syscalls that RAM served; lapse's own\n"
              "  file writes are measured and left out\n",
              out);
}

/* Peak RSS of the role's processes (getrusage's ru_maxrss, KiB, at each one's last
 * write): the largest, which process, and the mean. */
static void memory_line(FILE *out, const run_model *m, uint32_t r)
{
    const rm_worker *top = NULL;
    uint64_t sum = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != r || !w->max_rss_kb)
            continue;
        sum += w->max_rss_kb;
        n++;
        if (!top || w->max_rss_kb > top->max_rss_kb)
            top = w;
    }
    if (!top)
        return;
    char a[FMT_BUF], b[FMT_BUF];
    fprintf(out, "  peak RSS per process: max %s (pid %lld on %s)", fmt_bytes(a, sizeof a, top->max_rss_kb * 1024),
            (long long)top->pid, top->host);
    if (n > 1)
        fprintf(out, ", mean %s over %u processes", fmt_bytes(b, sizeof b, sum / n * 1024), n);
    fputs(" (getrusage)\n", out);
}

int report_wants_ascii(void)
{
    const char *v = getenv("LAPSE_ASCII");
    if (v && *v && strcmp(v, "0") != 0)
        return 1;
    v = getenv("TERM");
    if (v && !strcmp(v, "dumb"))
        return 1;
    static const char *const vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        for (const char *c = v; *c; c++)
            if ((c[0] == 'U' || c[0] == 'u') && (c[1] == 'T' || c[1] == 't') &&
                (c[2] == 'F' || c[2] == 'f'))
                return !(c[3] == '8' || (c[3] == '-' && c[4] == '8'));
        return 1;
    }
    return 1; /* no locale: C, ASCII */
}

/* The bins as a sparkline: 8 heights of Unicode block elements, or ASCII. A
 * column with no bytes is a space; any bytes show at least the lowest mark. */
static void sparkline(FILE *out, const double *bins, unsigned n, int ascii)
{
    static const char *const blocks[8] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                          "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                          "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char marks[8] = {'.', ',', ':', '-', '=', '+', '*', '#'};
    double top = 0.0;
    for (unsigned i = 0; i < n; i++)
        if (bins[i] > top)
            top = bins[i];
    for (unsigned i = 0; i < n; i++) {
        if (bins[i] <= 0.0 || top <= 0.0) {
            fputc(' ', out);
            continue;
        }
        int level = (int)(bins[i] / top * 8.0);
        if (level > 7)
            level = 7;
        if (ascii)
            fputc(marks[level], out);
        else
            fputs(blocks[level], out);
    }
}

/* I/O: what the process sampler saw, the whole role's processes summed. */
static void process_io_block(FILE *out, const rs_io *io, int ascii)
{
    if (!io->processes)
        return;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF];
    fprintf(out, "\nI/O  (process sampler, every %s, %u process%s)\n",
            fmt_duration(a, sizeof a, (double)io->interval_ms * 1e6), io->processes,
            io->processes == 1 ? "" : "es");
    if (!io->intervals) {
        fprintf(out, "  no interval could be read (%llu unreadable): nothing to show\n",
                (unsigned long long)io->unreadable);
        return;
    }
    double top = 0.0;
    for (unsigned i = 0; i < RS_IO_BINS; i++)
        if (io->bins[i] > top)
            top = io->bins[i];
    fputs("  bytes moved |", out);
    sparkline(out, io->bins, RS_IO_BINS, ascii);
    fprintf(out, "|  peak %s/s, %s per column\n",
            fmt_bytes(a, sizeof a, io->bin_ns ? (uint64_t)(top / ((double)io->bin_ns / 1e9)) : 0),
            fmt_duration(b, sizeof b, (double)io->bin_ns));
    uint64_t cache = io->read_chars > io->read_bytes ? io->read_chars - io->read_bytes : 0;
    fprintf(out, "  read     %10s   %s from disk, %s from page cache\n",
            fmt_bytes(a, sizeof a, io->read_chars), fmt_bytes(b, sizeof b, io->read_bytes),
            fmt_bytes(c, sizeof c, cache));
    fprintf(out, "  written  %10s   by write calls; %s reached the disk\n",
            fmt_bytes(a, sizeof a, io->write_chars), fmt_bytes(d, sizeof d, io->write_bytes));
    uint64_t chars = io->read_chars + io->write_chars;
    if (chars) {
        uint64_t mixed = chars - io->quiet_chars - io->phased_chars;
        fprintf(out, "  while no phase was open: %s of the bytes (%s with a phase open throughout, %s\n"
                     "  in intervals where phases opened or closed: not attributed)\n",
                fmt_percent(a, sizeof a, (double)io->quiet_chars / (double)chars),
                fmt_percent(b, sizeof b, (double)io->phased_chars / (double)chars),
                fmt_percent(c, sizeof c, (double)mixed / (double)chars));
    }
    if (io->children_in_run)
        fprintf(out, "  note: %u process%s of this run %s children of these: a process's counters\n"
                     "  include the I/O of the children it has waited for, so theirs count here too\n",
                io->children_in_run, io->children_in_run == 1 ? "" : "es",
                io->children_in_run == 1 ? "is a child" : "are");
    if (io->unreadable)
        fprintf(out, "  %llu interval%s could not be read and count nothing\n",
                (unsigned long long)io->unreadable, io->unreadable == 1 ? "" : "s");
    fprintf(out, "  read = read_chars (all read calls) = disk (read_bytes) + page cache; written =\n"
                 "  write_chars, disk = write_bytes; lapse's own writes left out. Sampler cost: %s\n"
                 "  CPU per interval\n",
            fmt_duration(a, sizeof a, (double)io->sampler_cpu_ns / (double)io->intervals));
}

/* MEMORY: peak RSS (getrusage and the process sampler) and RSS growth of the
 * io=True phases, measured at their entry and exit. */
static void memory_block(FILE *out, const run_model *m, const rs_role *rs, uint32_t r)
{
    char a[FMT_BUF], b[FMT_BUF], pbuf[512];
    int any = 0;
    for (uint32_t i = 0; i < m->worker_count && !any; i++)
        any = m->workers[i].role_index == r && m->workers[i].max_rss_kb;
    int growth = 0;
    for (uint32_t i = 0; i < rs->phase_count && !growth; i++) {
        int64_t g;
        growth = counter_sum(m, &m->paths[rs->phases[i].path], "mem.rss_growth", &g);
    }
    if (!any && !rs->io.rss_peak_bytes && !growth)
        return;
    fputs("\nMEMORY\n", out);
    memory_line(out, m, r);
    if (rs->io.rss_peak_bytes) {
        const rm_worker *w = &m->workers[rs->io.rss_peak_worker];
        fprintf(out, "  peak RSS sampled: %s (pid %lld on %s; read every %s, a peak between two\n"
                     "  readings is missed)\n",
                fmt_bytes(a, sizeof a, rs->io.rss_peak_bytes), (long long)w->pid, w->host,
                fmt_duration(b, sizeof b, (double)rs->io.interval_ms * 1e6));
    }
    if (!growth)
        return;
    fputs("  RSS growth by phase (measured at each io=True phase's entry and exit; the whole\n"
          "  process's RSS, so other threads' allocations count too):\n", out);
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        const rm_path *p = &m->paths[rs->phases[i].path];
        int64_t g, bad;
        if (!counter_sum(m, p, "mem.rss_growth", &g))
            continue;
        counter_sum(m, p, "mem.unreadable", &bad);
        uint64_t mag = g < 0 ? (uint64_t)(-g) : (uint64_t)g;
        fprintf(out, "    %-28s %c%s over %llu call%s", fit(pbuf, sizeof pbuf, p->path, 28),
                g < 0 ? '-' : '+', fmt_bytes(a, sizeof a, mag), (unsigned long long)p->calls,
                p->calls == 1 ? "" : "s");
        if (p->calls > 1)
            fprintf(out, ", %c%s per call", g < 0 ? '-' : '+',
                    fmt_bytes(b, sizeof b, mag / p->calls));
        if (bad)
            fprintf(out, " (%lld not measured)", (long long)bad);
        fputc('\n', out);
    }
}

/* 0, or -ENOMEM (the block is cut short there). */
static int role_block(FILE *out, const run_model *m, const run_stats *s, uint32_t r, unsigned top,
                      int ascii)
{
    const rm_role *role = &m->roles[r];
    const rs_role *rs = &s->roles[r];
    char name[256], a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF], f[FMT_BUF], pbuf[512];
    upper(name, sizeof name, *role->name ? role->name : "(no role)");
    if (role->imbalance > 0.0)
        snprintf(a, sizeof a, "%.2f*", role->imbalance);
    else
        snprintf(a, sizeof a, "n/a*");
    fprintf(out, "\n%s  (%u process%s, imbalance %s)\n", name, role->processes,
            role->processes == 1 ? "" : "es", a);
    rule(out);
    if (!rs->phase_count) {
        fputs("no spans recorded in this role\n", out);
    } else {
        int width = PATH_MIN;
        for (uint32_t i = 0; i < rs->top_level_count && i < top; i++) {
            int len = (int)strlen(m->paths[rs->phases[rs->top_level[i]].path].path);
            if (len > width)
                width = len < PATH_MAX_WIDTH ? len : PATH_MAX_WIDTH;
        }
        fprintf(out, "share of %s busy time (sum of top-level spans, %u process%s): %s\n",
                role->name, role->processes, role->processes == 1 ? "" : "es",
                fmt_duration(a, sizeof a, (double)role->busy_ns));
        uint64_t rest = 0;
        for (uint32_t i = 0; i < rs->top_level_count; i++) {
            const rs_phase *ph = &rs->phases[rs->top_level[i]];
            const rm_path *p = &m->paths[ph->path];
            if (i >= top) {
                rest += p->total_ns;
                continue;
            }
            fprintf(out, "%c %-*s %8s %12s\n", p->sample_stride ? '~' : ' ', width,
                    fit(pbuf, sizeof pbuf, p->path, width),
                    fmt_percent(a, sizeof a, ph->share_of_busy),
                    fmt_duration(b, sizeof b, (double)p->total_ns));
        }
        if (rs->top_level_count > top)
            fprintf(out, "  ... %u more top-level spans: %s (%s)\n", rs->top_level_count - top,
                    fmt_percent(a, sizeof a, role->busy_ns ? (double)rest / (double)role->busy_ns : -1.0),
                    fmt_duration(b, sizeof b, (double)rest));
    }
    if (role->processes > 1) {
        const rm_worker *mw = role->busy_max_worker != RM_NONE ? &m->workers[role->busy_max_worker] : NULL;
        fprintf(out, "busy per process: min %s, mean %s, max %s", fmt_duration(a, sizeof a, (double)role->busy_min_ns),
                fmt_duration(b, sizeof b, (double)role->busy_ns / role->processes),
                fmt_duration(c, sizeof c, (double)role->busy_max_ns));
        if (mw && rm_has_rank(mw))
            fprintf(out, " (rank %lld, pid %lld on %s)", (long long)mw->rank, (long long)mw->pid, mw->host);
        else if (mw)
            fprintf(out, " (pid %lld on %s)", (long long)mw->pid, mw->host);
        fputc('\n', out);
    }
    if (!rs->phase_count)
        goto no_span_counters;

    /* DOMINANT PHASES */
    int width = PATH_MIN;
    uint32_t shown = rs->phase_count < top ? rs->phase_count : top;
    for (uint32_t i = 0; i < shown; i++) {
        int len = (int)strlen(m->paths[rs->phases[rs->by_self[i]].path].path);
        if (len > width)
            width = len < PATH_MAX_WIDTH ? len : PATH_MAX_WIDTH;
    }
    fprintf(out, "\n%-*s %12s %10s %7s %10s %10s%s\n", width + 2, "DOMINANT PHASES by self time",
            "calls", "self", "procs", "p50", "p99", rs->has_wait ? "     wait   ticks" : "");
    char *listed = calloc(m->path_count ? m->path_count : 1, 1);
    if (!listed)
        return -ENOMEM;
    uint32_t estimates = 0;
    for (uint32_t i = 0; i < shown; i++) {
        const rs_phase *ph = &rs->phases[rs->by_self[i]];
        const rm_path *p = &m->paths[ph->path];
        listed[ph->path] = 1;
        snprintf(e, sizeof e, "%u/%u", p->in_processes, role->processes);
        estimates += p->sample_stride || p->child_estimated;
        char wait[40] = "";
        if (rs->has_wait) {
            if (ph->wait_share >= 0.0)
                snprintf(wait, sizeof wait, "   ~%4.0f%% %7s", ph->wait_share * 100.0,
                         fmt_count(f, sizeof f, p->cpu_ticks));
            else
                snprintf(wait, sizeof wait, "        - %7s", fmt_count(f, sizeof f, p->cpu_ticks));
        }
        fprintf(out, "%c %-*s %12s %10s %7s %10s %10s%s\n",
                p->sample_stride || p->child_estimated ? '~' : ' ', width,
                fit(pbuf, sizeof pbuf, p->path, width),
                fmt_count(a, sizeof a, p->calls), fmt_duration(b, sizeof b, (double)ph->self_ns), e,
                p->calls ? fmt_duration(c, sizeof c, ph->p50_ns) : "-",
                p->calls ? fmt_duration(d, sizeof d, ph->p99_ns) : "-", wait);
        counters_of(out, m, p);
    }
    if (rs->phase_count > shown)
        fprintf(out, "  ... %u more paths (--top N shows more, --json shows all)\n",
                rs->phase_count - shown);
    fputs("  self = total minus child spans; p50, p99 = wall time per call (merged histogram);\n"
          "  procs = processes that completed a call / processes of the role\n",
          out);
    if (rs->has_wait) {
        const rs_wait_sampler *ws = &rs->wait_sampler;
        fprintf(out,
                "  wait = of the instants sampled while the phase was open (ticks), the share at\n"
                "  which its thread was off CPU (blocked: I/O, locks, the GIL, queues; or waiting\n"
                "  for a CPU), an estimate (~); waiting inside a child counts;\n"
                "  - = too few ticks for +-%.0f points (%.1f%% of the time)\n",
                WAIT_MAX_ERROR * 100.0, WAIT_CONFIDENCE * 100.0);
        if (ws->ticks)
            fprintf(out, "  the sampler: %s ticks, %s of CPU each%s\n",
                    fmt_count(a, sizeof a, ws->ticks),
                    fmt_duration(b, sizeof b, ws->cpu_ns_per_tick),
                    ws->realtime_processes == ws->processes ? "" : "; without real-time priority");
        if (ws->late_share >= 0.05)
            fprintf(out,
                    "  %.0f%% of its ticks came late (every CPU was busy): wait%% may be off by\n"
                    "  several points more\n",
                    ws->late_share * 100.0);
    }
    if (estimates) {
        fputs("  ~ = estimated from a sample, not measured. Totals are scaled by the rate:\n", out);
        for (uint32_t i = 0; i < shown; i++) {
            const rm_path *p = &m->paths[rs->phases[rs->by_self[i]].path];
            if (p->sample_stride)
                fprintf(out, "      %-*s 1 entry in %u\n", width, fit(pbuf, sizeof pbuf, p->path, width),
                        p->sample_stride);
            else if (p->child_estimated)
                fprintf(out, "      %-*s self time: total minus estimated children\n", width,
                        fit(pbuf, sizeof pbuf, p->path, width));
        }
    }

    /* counters of paths not listed */
    int header_done = 0;
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        const rm_path *p = &m->paths[rs->phases[i].path];
        int plain = 0;
        for (uint32_t c = p->first_counter; c != RM_NONE; c = m->counters[c].next)
            plain |= !is_io_counter(m, &m->counters[c]);
        if (!plain || listed[rs->phases[i].path])
            continue;
        if (!header_done) {
            fputs("\nCOUNTERS on paths not listed above (rates per second of the path's total time)\n", out);
            header_done = 1;
        }
        fprintf(out, "  %s  (%s calls, total %s)\n", p->path, fmt_count(a, sizeof a, p->calls),
                fmt_duration(b, sizeof b, (double)p->total_ns));
        counters_of(out, m, p);
    }
    free(listed);

    /* the most-called loop */
    if (rs->loop != RM_NONE) {
        const rs_phase *ph = &rs->phases[rs->loop];
        const rm_path *p = &m->paths[ph->path];
        fprintf(out, "\nMOST-CALLED LOOP  %s%s  (%s calls in %u process%s%s)\n",
                p->sample_stride ? "~" : "", p->path, fmt_count(a, sizeof a, p->calls),
                p->in_processes, p->in_processes == 1 ? "" : "es",
                p->sample_stride ? ", estimated from a sample" : "");
        fprintf(out, "  mean %10s   p50 %10s   p95 %10s   p99 %10s   (wall time per call)\n",
                fmt_duration(a, sizeof a, ph->mean_ns), fmt_duration(b, sizeof b, ph->p50_ns),
                fmt_duration(c, sizeof c, ph->p95_ns), fmt_duration(d, sizeof d, ph->p99_ns));
    }

    int rc = report_ranks_block(out, m, rs, r, top);
    if (rc)
        return rc;

    io_block(out, m, rs);

no_span_counters:
    process_io_block(out, &rs->io, ascii);
    memory_block(out, m, rs, r);
    const rm_path *root = &m->paths[role->root];
    if (root->first_counter != RM_NONE) {
        fputs("\nCOUNTERS outside any span\n", out);
        counters_of(out, m, root);
    }
    return 0;
}

typedef struct caveat_printer { /* prints "CAVEATS" before the first one */
    FILE *out;
    const char *last_kind;
    unsigned same;      /* caveats of last_kind so far */
    unsigned hidden;    /* of last_kind, not printed */
} caveat_printer;

#define CAVEATS_PER_KIND 10

static void flush_hidden(caveat_printer *p)
{
    if (p->hidden)
        fprintf(p->out, "  %-16s ... and %u more (--json lists them all)\n", p->last_kind, p->hidden);
    p->hidden = 0;
}

static void print_caveat(void *ctx, const report_caveat *c)
{
    caveat_printer *p = ctx;
    if (!p->last_kind)
        fputs("CAVEATS\n", p->out);
    if (!p->last_kind || strcmp(p->last_kind, c->kind)) {
        flush_hidden(p);
        p->last_kind = c->kind;
        p->same = 0;
    }
    if (p->same++ >= CAVEATS_PER_KIND) {
        p->hidden++;
        return;
    }
    fprintf(p->out, "  %-16s %s\n", c->kind, c->message);
}

/* A role whose every process holds Python stack samples and no span nor counter
 * (files of `lapse record`). */
static int samples_only(const run_model *m, const run_stats *s, uint32_t r)
{
    if (s->roles[r].phase_count || m->paths[m->roles[r].root].first_counter != RM_NONE)
        return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        if (m->workers[i].role_index != r)
            continue;
        if (!m->workers[i].samples)
            return 0;
        n++;
    }
    return n > 0;
}

int report_write_text(FILE *out, const run_model *m, const run_stats *s, const report_options *o)
{
    unsigned top = o && o->top ? o->top : 10;
    int rc = header(out, m);
    int any_role_imbalance = 0;
    for (uint32_t r = 0; rc == 0 && r < m->role_count; r++) {
        if (samples_only(m, s, r))
            continue; /* its PYTHON SAMPLES block says it all */
        rc = role_block(out, m, s, r, top, o && o->ascii);
        any_role_imbalance = 1;
    }
    if (rc)
        return rc;
    if (any_role_imbalance)
        fputs("\n* imbalance = max / mean of per-process busy time in the role; busy time = sum of\n"
              "  a process's top-level spans over all its threads. 1.00 is perfectly even.\n",
              out);
    if (!m->worker_count)
        fputs("\nNo file of this run could be read.\n", out);
    if ((rc = report_samples_text(out, m, top)) != 0)
        return rc;
    fputc('\n', out);
    caveat_printer p = {out, NULL, 0, 0};
    long n = report_caveats(m, print_caveat, &p);
    if (n < 0)
        return (int)n;
    if (n == 0)
        fputs("CAVEATS none\n", out);
    flush_hidden(&p);
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
