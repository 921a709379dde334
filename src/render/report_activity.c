#include "report_activity.h"

#include "caveat_text.h"
#include "format.h"
#include "json_out.h"

#include <errno.h>
#include <string.h>

#define GPU_PATH_WIDTH 28

static const char *span_label(const run_model *m, const report_role *rr,
                              const report_activity_span *s, char *buf)
{
    if (s->unseen)
        return "(launch not seen)";
    if (s->path == rr->role->root)
        return "(no span open)";
    return rm_path_str(m, s->path, buf);
}

static void fit_left(char *buf, size_t n, const char *s, int width)
{
    size_t len = strlen(s);
    if ((int)len <= width || width < 4)
        snprintf(buf, n, "%s", s);
    else
        snprintf(buf, n, "...%s", s + len - (size_t)(width - 3));
}

void report_activity_block(FILE *out, const run_model *m, const report_role *rr)
{
    const report_activity *g = &rr->activity;
    if (g->state != REPORT_MEASURED)
        return;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], path[RM_PATH_BUF], pbuf[512];
    fprintf(out, "\nGPU ACTIVITY BY SPAN  (CUPTI, %u process%s: %llu kernel%s %s GPU time, "
                 "%llu cop%s %s, %llu set%s %s)\n",
            g->processes, g->processes == 1 ? "" : "es", (unsigned long long)g->kernels,
            g->kernels == 1 ? "" : "s", fmt_duration(a, sizeof a, (double)g->kernel_ns),
            (unsigned long long)g->copies, g->copies == 1 ? "y" : "ies",
            fmt_bytes(b, sizeof b, g->copy_bytes), (unsigned long long)g->sets,
            g->sets == 1 ? "" : "s", fmt_bytes(c, sizeof c, g->set_bytes));
    fprintf(out, "  %-*s %8s %10s %7s %7s %10s  %s\n", GPU_PATH_WIDTH, "span (launched in)",
            "kernels", "GPU time", "share", "copies", "bytes", "top kernels by GPU time");
    for (uint32_t i = 0; i < g->span_count; i++) {
        const report_activity_span *s = &g->spans[i];
        fit_left(pbuf, sizeof pbuf, span_label(m, rr, s, path), GPU_PATH_WIDTH);
        fprintf(out, "  %-*s %8llu %10s %7s %7llu %10s", GPU_PATH_WIDTH, pbuf,
                (unsigned long long)s->kernels, fmt_duration(a, sizeof a, (double)s->kernel_ns),
                s->share >= 0 ? fmt_percent(b, sizeof b, s->share) : "-",
                (unsigned long long)(s->copies + s->sets),
                fmt_bytes(c, sizeof c, s->copy_bytes + s->set_bytes));
        for (uint32_t k = 0; k < s->top_count; k++) {
            const report_activity_kernel *kn = &g->span_top[s->top_first + k];
            fprintf(out, "%s %s %s x%llu", k ? "," : " ", rm_str(m, kn->name),
                    fmt_duration(a, sizeof a, (double)kn->ns), (unsigned long long)kn->count);
        }
        fputc('\n', out);
    }
    if (!g->top_count)
        return;
    fputs("  kernels by GPU time:\n", out);
    for (uint32_t k = 0; k < g->top_count; k++) {
        const report_activity_kernel *kn = &g->top[k];
        fprintf(out, "    %10s %7s x%-6llu %s\n", fmt_duration(a, sizeof a, (double)kn->ns),
                fmt_percent(b, sizeof b, g->kernel_ns ? (double)kn->ns / (double)g->kernel_ns : 0),
                (unsigned long long)kn->count, rm_str(m, kn->name));
    }
}

static void kernel_json(json_out *j, const run_model *m, const report_activity_kernel *k)
{
    json_begin_object(j, NULL);
    json_str(j, "name", rm_str(m, k->name));
    json_u64(j, "count", k->count);
    json_u64(j, "gpu_ns", k->ns);
    json_end_object(j);
}

void report_activity_json(json_out *j, const run_model *m, const report_role *rr)
{
    const report_activity *g = &rr->activity;
    char path[RM_PATH_BUF];
    json_str(j, "gpu_activity_state", report_state_name((report_state)g->state));
    if (g->state != REPORT_MEASURED) {
        json_null(j, "gpu_activity");
        return;
    }
    json_begin_object(j, "gpu_activity");
    json_u64(j, "processes", g->processes);
    json_u64(j, "kernels", g->kernels);
    json_u64(j, "kernel_gpu_ns", g->kernel_ns);
    json_u64(j, "copies", g->copies);
    json_u64(j, "copy_bytes", g->copy_bytes);
    json_u64(j, "copy_gpu_ns", g->copy_ns);
    json_u64(j, "sets", g->sets);
    json_u64(j, "set_bytes", g->set_bytes);
    json_u64(j, "set_gpu_ns", g->set_ns);
    json_u64(j, "dropped_activities", g->dropped);
    json_begin_array(j, "by_span");
    for (uint32_t i = 0; i < g->span_count; i++) {
        const report_activity_span *s = &g->spans[i];
        json_begin_object(j, NULL);
        if (s->unseen || s->path == rr->role->root)
            json_null(j, "path");
        else
            json_str(j, "path", rm_path_str(m, s->path, path));
        json_str(j, "launched", s->unseen ? "not_seen" : s->path == rr->role->root ? "no_span" : "span");
        json_u64(j, "kernels", s->kernels);
        json_u64(j, "kernel_gpu_ns", s->kernel_ns);
        if (s->share >= 0)
            json_double(j, "share_of_kernel_time", s->share, 6);
        else
            json_null(j, "share_of_kernel_time");
        json_u64(j, "copies", s->copies);
        json_u64(j, "copy_bytes", s->copy_bytes);
        json_u64(j, "copy_gpu_ns", s->copy_ns);
        json_u64(j, "sets", s->sets);
        json_u64(j, "set_bytes", s->set_bytes);
        json_u64(j, "set_gpu_ns", s->set_ns);
        json_begin_array(j, "top_kernels");
        for (uint32_t k = 0; k < s->top_count; k++)
            kernel_json(j, m, &g->span_top[s->top_first + k]);
        json_end_array(j);
        json_end_object(j);
    }
    json_end_array(j);
    json_begin_array(j, "top_kernels");
    for (uint32_t k = 0; k < g->top_count; k++)
        kernel_json(j, m, &g->top[k]);
    json_end_array(j);
    json_end_object(j);
}

int report_write_activity_text(FILE *out, const report_model *r)
{
    const run_model *m = r->m;
    int any = 0;
    for (uint32_t i = 0; i < m->role_count; i++) {
        const report_role *rr = &r->roles[i];
        if (rr->activity.state != REPORT_MEASURED)
            continue;
        fprintf(out, "%srole %s\n", any ? "\n" : "", *rr->role->name ? rr->role->name : "(no role)");
        report_activity_block(out, m, rr);
        any = 1;
    }
    if (!any)
        fputs("no GPU activity recorded\n", out);
    char msg[CAVEAT_TEXT_MAX];
    for (uint32_t i = 0; i < r->caveats.count; i++) {
        const caveat *c = &r->caveats.items[i];
        int about = c->kind == CAVEAT_ACTIVITY_MISSING || c->kind == CAVEAT_DROPPED_ACTIVITIES ||
                    (c->kind == CAVEAT_FEATURE_MISSING && c->reason && strstr(c->reason, "activity: "));
        if (about)
            fprintf(out, "caveat %s: %s\n", caveat_kind_name(c->kind), caveat_text(m, c, msg, sizeof msg));
    }
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
