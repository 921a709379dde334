/* The text diff: a summary, one two-line entry per row, the rule, the caveats. */
#include "diff_render.h"

#include "format.h"
#include "report_caveats.h"

#include <errno.h>
#include <string.h>

const char diff_rule_text[] =
    "A row is CHANGED when a two-sample Kolmogorov-Smirnov test on its two binned "
    "histograms rejects \"same distribution\" at alpha = 0.01 - D = max |CDF_A - CDF_B| over "
    "the bucket edges exceeds 1.628 * sqrt((n + m) / (n * m)), n and m the calls on each "
    "side - AND its p50 moved by at least 5%. \"few calls\": fewer than 30 calls on a side "
    "(the test has little power there). \"tail moved\": |p99 ratio - p50 ratio| > 0.25, the "
    "slow calls moved differently from the typical one. Ratios are B / A.";

static void side_line(FILE *out, const char *label, const run_model *m)
{
    fprintf(out, "%s %s  (run %s, %u process%s", label, m->dir, *m->run_id ? m->run_id : "unknown",
            m->worker_count, m->worker_count == 1 ? "" : "es");
    if (m->unreadable_count)
        fprintf(out, ", %u unreadable", m->unreadable_count);
    fputs(")\n", out);
}

/* Wraps text at width columns, each line indented by indent spaces. */
static void wrap(FILE *out, const char *text, int indent, int width)
{
    const char *p = text;
    while (*p) {
        int avail = width - indent;
        int len = (int)strlen(p);
        int cut = len;
        if (len > avail) {
            cut = avail;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = avail;
        }
        fprintf(out, "%*s%.*s\n", indent, "", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

static void row_text(FILE *out, const diff_row *r)
{
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF], f[FMT_BUF], g[FMT_BUF];
    char h[FMT_BUF], k[FMT_BUF], verdict[160];
    if (r->presence == DIFF_ONLY_A)
        snprintf(verdict, sizeof verdict, "ONLY IN A");
    else if (r->presence == DIFF_ONLY_B)
        snprintf(verdict, sizeof verdict, "ONLY IN B");
    else if (r->changed)
        snprintf(verdict, sizeof verdict, "CHANGED, %s (KS D %.3f > %.3f)",
                 r->p50_ratio > 1.0 || r->p50_ratio < 0.0 ? "slower" : "faster", r->ks_d, r->ks_threshold);
    else if (r->ks_significant)
        snprintf(verdict, sizeof verdict, "no real change (KS D %.3f > %.3f, but p50 within 5%%)",
                 r->ks_d, r->ks_threshold);
    else
        snprintf(verdict, sizeof verdict, "no real change (KS D %.3f <= %.3f)", r->ks_d, r->ks_threshold);
    fprintf(out, "%s   %s\n", r->key, verdict);
    if (r->presence == DIFF_ONLY_A || r->presence == DIFF_ONLY_B) {
        const diff_side *s = r->presence == DIFF_ONLY_A ? &r->a : &r->b;
        fprintf(out, "    calls %s   mean %s   p50 %s   p99 %s   total %s",
                fmt_count(a, sizeof a, s->calls), fmt_duration(b, sizeof b, s->mean_ns),
                fmt_duration(c, sizeof c, s->p50_ns), fmt_duration(d, sizeof d, s->p99_ns),
                fmt_duration(e, sizeof e, (double)s->total_ns));
        if (s->wait_share >= 0.0)
            fprintf(out, "   wait ~%.0f%% (%llu ticks)", s->wait_share * 100.0,
                    (unsigned long long)s->ticks);
        fputc('\n', out);
        return;
    }
    fprintf(out, "    calls %s -> %s   mean %s -> %s (%s)   p50 %s -> %s (%s)   total %s\n",
            fmt_count(a, sizeof a, r->a.calls), fmt_count(b, sizeof b, r->b.calls),
            fmt_duration(c, sizeof c, r->a.mean_ns), fmt_duration(d, sizeof d, r->b.mean_ns),
            fmt_ratio(e, sizeof e, r->mean_ratio), fmt_duration(f, sizeof f, r->a.p50_ns),
            fmt_duration(g, sizeof g, r->b.p50_ns), fmt_ratio(h, sizeof h, r->p50_ratio),
            fmt_duration_signed(k, sizeof k, (double)r->total_delta_ns));
    if (r->a.wait_share >= 0.0 && r->b.wait_share >= 0.0) {
        double points = (r->b.wait_share - r->a.wait_share) * 100.0;
        if (points > -0.5 && points < 0.5)
            points = 0.0; /* no "-0" */
        fprintf(out, "    wait ~%.0f%% -> ~%.0f%% (%+.0f points; %llu -> %llu ticks of the CPU sampler)\n",
                r->a.wait_share * 100.0, r->b.wait_share * 100.0, points,
                (unsigned long long)r->a.ticks, (unsigned long long)r->b.ticks);
    }
    if (r->few_calls || r->tail_moved) {
        fputs("    ", out);
        if (r->few_calls)
            fprintf(out, "[few calls: < %u on a side] ", DIFF_FEW_CALLS);
        if (r->tail_moved)
            fprintf(out, "[tail moved: p99 %s -> %s (%s) vs p50 %s]",
                    fmt_duration(b, sizeof b, r->a.p99_ns), fmt_duration(c, sizeof c, r->b.p99_ns),
                    fmt_ratio(d, sizeof d, r->p99_ratio), fmt_ratio(e, sizeof e, r->p50_ratio));
        fputc('\n', out);
    }
}

typedef struct caveat_lines {
    FILE *out;
    const char *side;
    int *any; /* "CAVEATS" printed, before the first caveat of either side */
} caveat_lines;

static void print_caveat(void *ctx, const report_caveat *c)
{
    caveat_lines *x = ctx;
    if (!*x->any)
        fputs("CAVEATS\n", x->out);
    *x->any = 1;
    fprintf(x->out, "  %s %-16s %s\n", x->side, c->kind, c->message);
}

int diff_write_text(FILE *out, const run_model *a, const run_model *b, const diff_result *d,
                    const diff_options *o)
{
    unsigned top = o && o->top ? o->top : 30;
    side_line(out, "A", a);
    side_line(out, "B", b);
    fprintf(out, "Rows keyed by %s. %zu paths: %zu changed, %zu only in A, %zu only in B, %zu no real change.\n",
            d->flags & DIFF_BY_PATH ? "path (roles merged)" : "role:path", d->count, d->changed, d->only_a,
            d->only_b, d->unchanged);
    if (!(d->flags & DIFF_BY_PATH) && !d->roles_in_common && a->role_count && b->role_count)
        fputs("No role is on both sides, so no path matches; --by-path merges the roles of each side.\n",
              out);
    fputc('\n', out);
    size_t shown = d->count < top ? d->count : top;
    for (size_t i = 0; i < shown; i++)
        row_text(out, &d->rows[i]);
    if (d->count > shown) {
        size_t changed = 0;
        for (size_t i = shown; i < d->count; i++)
            changed += d->rows[i].changed;
        fprintf(out, "... %zu more rows (%zu of them changed); --top N shows more, --json all\n",
                d->count - shown, changed);
    }
    if (!d->count)
        fputs("(no paths on either side)\n", out);
    fputs("\nRULE\n", out);
    wrap(out, diff_rule_text, 2, 88);
    fputc('\n', out);
    int any = 0;
    caveat_lines ca = {out, "A", &any}, cb = {out, "B", &any};
    if (report_caveats(a, print_caveat, &ca) < 0 || report_caveats(b, print_caveat, &cb) < 0)
        return -ENOMEM;
    if (!any)
        fputs("CAVEATS none\n", out);
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
