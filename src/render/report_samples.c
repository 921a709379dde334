#include "report_samples.h"

#include "analyze/sample_stats.h"
#include "format.h"
#include "store/sample_set.h"

#include <stdlib.h>
#include <string.h>

#define THREAD_ROWS 5 /* functions per thread */
#define SPAN_ROWS 5   /* functions per span */

static const char *str_of(const store_samples *s, uint32_t id)
{
    return id < s->string_count ? s->strings[id] : "";
}

static char *func_label(const store_samples *s, const ss_func *f, char *buf, size_t n)
{
    const char *fn = str_of(s, f->function), *file = str_of(s, f->file);
    if (*file)
        snprintf(buf, n, "%s (%s)", *fn ? fn : "?", file);
    else
        snprintf(buf, n, "%s", *fn ? fn : "?");
    return buf;
}

/* "123 samples standing for ~1.2s" or "123 samples" when no sample carries a time */
static char *amount(const ss_group *g, uint64_t count, uint64_t ns, char *buf, size_t n)
{
    char a[FMT_BUF], b[FMT_BUF];
    if (g->by_weight)
        snprintf(buf, n, "%s sample%s standing for ~%s", fmt_count(a, sizeof a, count),
                 count == 1 ? "" : "s", fmt_duration(b, sizeof b, (double)ns));
    else
        snprintf(buf, n, "%s sample%s", fmt_count(a, sizeof a, count), count == 1 ? "" : "s");
    return buf;
}

/* rows of functions of g, ordered by self (by_total 0) or total share */
static void func_rows(FILE *out, const store_samples *s, const ss_group *g, int by_total,
                      unsigned rows, const char *indent)
{
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF], label[600];
    fprintf(out, "%s%7s %9s %7s %9s %9s  FUNCTION (by %s share)\n", indent, "SELF", "~SELF", "TOTAL",
            "~TOTAL", "SAMPLES", by_total ? "total" : "self");
    const uint32_t *order = by_total ? g->by_total : g->by_self;
    unsigned shown = 0;
    for (uint32_t i = 0; i < g->func_count && shown < rows; i++) {
        const ss_func *f = &g->funcs[order[i]];
        if (!by_total && !f->self_count)
            break;
        fprintf(out, "%s%7s %9s %7s %9s %9s  %s\n", indent,
                fmt_percent(a, sizeof a, ss_self_share(g, f)),
                g->by_weight ? fmt_duration(b, sizeof b, (double)f->self_ns) : "-",
                fmt_percent(c, sizeof c, ss_total_share(g, f)),
                g->by_weight ? fmt_duration(d, sizeof d, (double)f->total_ns) : "-",
                fmt_count(e, sizeof e, by_total ? f->total_count : f->self_count),
                func_label(s, f, label, sizeof label));
        shown++;
    }
    if (!shown)
        fprintf(out, "%s(no Python frame in these samples)\n", indent);
}

static void file_text(FILE *out, const run_model *m, const report_samples *rs, unsigned top)
{
    const rm_worker *w = &m->workers[rs->worker];
    const store_samples *s = rs->samples;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], line[800];
    if (!rs->has_stacks) {
        fprintf(out, "\nPYTHON SAMPLES  %s: no stack sampled (mode %s, %s sampling passes in %s, "
                     "%s read error%s)\n",
                w->file, *s->mode ? s->mode : "?", fmt_count(a, sizeof a, s->samples),
                fmt_duration(b, sizeof b, (double)s->duration_ns),
                fmt_count(c, sizeof c, s->read_errors), s->read_errors == 1 ? "" : "s");
        return;
    }
    fprintf(out, "\nPYTHON SAMPLES  %s  (estimates from sampling: counts of samples and the time\n"
                 "  they stand for, not measured time)\n",
            w->file);
    fprintf(out, "  recording   mode %s, asked %s Hz, achieved %s Hz, %s sampling passes in %s%s\n",
            *s->mode ? s->mode : "?", fmt_decimal(a, sizeof a, s->rate_asked_hz, 1),
            fmt_decimal(b, sizeof b, s->rate_achieved_hz, 1), fmt_count(c, sizeof c, s->samples),
            fmt_duration(line, sizeof line, (double)s->duration_ns),
            s->idle ? ", idle threads kept" : ", idle threads left out");
    fprintf(out, "              %s late sample%s (%s), %s read error%s (%s of passes)\n",
            fmt_count(a, sizeof a, s->late_samples), s->late_samples == 1 ? "" : "s",
            rs->late_share >= 0 ? fmt_percent(b, sizeof b, rs->late_share) : "n/a",
            fmt_count(c, sizeof c, s->read_errors), s->read_errors == 1 ? "" : "s",
            s->samples ? fmt_percent(d, sizeof d, rs->lost_share) : "n/a");
    for (uint32_t p = 0; p < rs->process_count; p++) {
        const report_samples_process *rp = &rs->processes[p];
        const ss_group *g = &rp->group;
        fprintf(out, "\n  process %lld", (long long)rp->pid);
        if (rp->info && *str_of(s, rp->info->command))
            fprintf(out, "  %.200s", str_of(s, rp->info->command));
        if (rp->info && *str_of(s, rp->info->python_version))
            fprintf(out, "  (CPython %s)", str_of(s, rp->info->python_version));
        fprintf(out, "   %s\n", amount(g, g->count, g->weight_ns, line, sizeof line));
        func_rows(out, s, g, 0, top, "    ");
        fputc('\n', out);
        func_rows(out, s, g, 1, top, "    ");
        for (uint32_t t = 0; t < rp->thread_count && rp->thread_count > 1; t++) {
            const report_samples_thread *th = &rp->threads[t];
            const char *name = str_of(s, th->name);
            fprintf(out, "\n    thread %s%s(tid %lld)   %s\n", name, *name ? " " : "",
                    (long long)th->tid, amount(&th->group, th->group.count, th->group.weight_ns, line,
                                               sizeof line));
            func_rows(out, s, &th->group, 0, top < THREAD_ROWS ? top : THREAD_ROWS, "      ");
        }
    }
    if (rs->span_count) {
        fprintf(out, "\n  FUNCTIONS INSIDE SPANS (samples taken while the span was open on the "
                     "sampled thread,\n  nested spans included)\n");
        for (uint32_t i = 0; i < rs->span_count && i < top; i++) {
            const report_samples_span *sp = &rs->spans[i];
            fprintf(out, "    %s   %s\n", sp->path,
                    amount(&sp->group, sp->group.count, sp->group.weight_ns, line, sizeof line));
            func_rows(out, s, &sp->group, 0, top < SPAN_ROWS ? top : SPAN_ROWS, "      ");
        }
        if (rs->span_count > top)
            fprintf(out, "    ... and %u more span paths (--top, --json)\n", rs->span_count - top);
    }
}

void report_samples_text(FILE *out, const report_model *r)
{
    for (uint32_t i = 0; i < r->samples_count; i++)
        file_text(out, r->m, &r->samples[i], r->top);
}

/* ---- JSON ---- */

static void funcs_json(json_out *j, const char *key, const store_samples *s, const ss_group *g,
                       int by_total, unsigned rows)
{
    json_begin_array(j, key);
    const uint32_t *order = by_total ? g->by_total : g->by_self;
    for (uint32_t i = 0; i < g->func_count && i < rows; i++) {
        const ss_func *f = &g->funcs[order[i]];
        if (!by_total && !f->self_count)
            break;
        json_begin_object(j, NULL);
        json_str(j, "function", str_of(s, f->function));
        json_str(j, "file", str_of(s, f->file));
        json_u64(j, "self_samples", f->self_count);
        json_u64(j, "total_samples", f->total_count);
        json_u64(j, "self_ns", f->self_ns);
        json_u64(j, "total_ns", f->total_ns);
        json_double(j, "self_share", ss_self_share(g, f), 6);
        json_double(j, "total_share", ss_total_share(g, f), 6);
        json_end_object(j);
    }
    json_end_array(j);
}

static void group_json(json_out *j, const store_samples *s, const ss_group *g, unsigned rows,
                       int with_total)
{
    json_u64(j, "samples", g->count);
    json_u64(j, "sampled_ns", g->weight_ns);
    json_str(j, "shares_of", g->by_weight ? "time" : "samples");
    funcs_json(j, "top_self", s, g, 0, rows);
    if (with_total)
        funcs_json(j, "top_total", s, g, 1, rows);
}

static void file_json(json_out *j, const run_model *m, const report_samples *rs, unsigned top)
{
    const rm_worker *w = &m->workers[rs->worker];
    const store_samples *s = rs->samples;
    json_begin_object(j, NULL);
    json_str(j, "file", w->file);
    json_i64(j, "pid", w->pid);
    json_str(j, "state", report_state_name(rs->has_stacks ? REPORT_MEASURED : REPORT_NONE_MEASURED));
    json_bool(j, "estimated", 1);
    json_str(j, "mode", s->mode);
    json_double(j, "rate_asked_hz", s->rate_asked_hz, 9);
    json_double(j, "rate_achieved_hz", s->rate_achieved_hz, 9);
    json_u64(j, "samples", s->samples);
    json_u64(j, "late_samples", s->late_samples);
    json_u64(j, "read_errors", s->read_errors);
    json_double(j, "read_error_share", rs->lost_share, 6);
    json_bool(j, "lost_bias_callers", rs->lost_biased);
    json_u64(j, "start_real_ns", s->start_real_ns);
    json_u64(j, "end_real_ns", s->end_real_ns);
    json_u64(j, "duration_ns", s->duration_ns);
    json_bool(j, "idle", (int)s->idle);
    json_begin_array(j, "processes");
    for (uint32_t p = 0; p < rs->process_count; p++) {
        const report_samples_process *rp = &rs->processes[p];
        json_begin_object(j, NULL);
        json_i64(j, "pid", rp->pid);
        if (rp->info) {
            json_i64(j, "ppid", rp->info->ppid);
            json_str(j, "command", str_of(s, rp->info->command));
            json_str(j, "python_version", str_of(s, rp->info->python_version));
        }
        group_json(j, s, &rp->group, top, 1);
        json_begin_array(j, "threads");
        for (uint32_t t = 0; t < rp->thread_count; t++) {
            const report_samples_thread *th = &rp->threads[t];
            json_begin_object(j, NULL);
            json_i64(j, "tid", th->tid);
            json_str(j, "name", str_of(s, th->name));
            group_json(j, s, &th->group, top, 1);
            json_end_object(j);
        }
        json_end_array(j);
        json_end_object(j);
    }
    json_end_array(j);
    json_begin_array(j, "spans");
    for (uint32_t i = 0; i < rs->span_count; i++) {
        json_begin_object(j, NULL);
        json_str(j, "path", rs->spans[i].path);
        group_json(j, s, &rs->spans[i].group, top, 1);
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
}

void report_samples_json(json_out *j, const report_model *r)
{
    json_begin_array(j, "python_samples");
    for (uint32_t i = 0; i < r->samples_count; i++)
        file_json(j, r->m, &r->samples[i], r->top);
    json_end_array(j);
}
