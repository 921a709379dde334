/* The JSON diff: schema "lapse.diff", version 1 (docs/report.md). */
#include "diff_render.h"

#include "json_out.h"
#include "report_caveats.h"

#include <errno.h>

static void side_json(json_out *j, const char *key, const run_model *m)
{
    json_begin_object(j, key);
    json_str(j, "input", m->input);
    json_str(j, "dir", m->dir);
    json_str(j, "run_id", m->run_id);
    json_u64(j, "processes", m->worker_count);
    json_begin_object(j, "roles");
    for (uint32_t r = 0; r < m->role_count; r++)
        json_u64(j, m->roles[r].name, m->roles[r].processes);
    json_end_object(j);
    json_u64(j, "unreadable_files", m->unreadable_count);
    json_end_object(j);
}

static void ratio_json(json_out *j, const char *key, double r)
{
    if (r >= 0.0)
        json_double(j, key, r, 6);
    else
        json_null(j, key);
}

static void side_values(json_out *j, const diff_side *s, int present, const char *calls,
                        const char *total, const char *mean, const char *p50, const char *p99,
                        const char *procs)
{
    json_u64(j, calls, s->calls);
    json_u64(j, total, s->total_ns);
    json_u64(j, procs, s->in_processes);
    if (present && s->calls) {
        json_ns(j, mean, s->mean_ns);
        json_ns(j, p50, s->p50_ns);
        json_ns(j, p99, s->p99_ns);
    } else {
        json_null(j, mean);
        json_null(j, p50);
        json_null(j, p99);
    }
}

int diff_write_json(FILE *out, const run_model *a, const run_model *b, const diff_result *d,
                    const diff_options *o)
{
    (void)o;
    json_out j;
    json_init(&j, out);
    json_begin_object(&j, NULL);
    json_str(&j, "schema", DIFF_SCHEMA);
    json_u64(&j, "schema_version", DIFF_SCHEMA_VERSION);
    json_str(&j, "key", d->flags & DIFF_BY_PATH ? "path" : "role:path");
    side_json(&j, "a", a);
    side_json(&j, "b", b);

    json_begin_object(&j, "rule");
    json_str(&j, "test", "two-sample Kolmogorov-Smirnov on the binned histograms");
    json_double(&j, "alpha", DIFF_KS_ALPHA, 6);
    json_double(&j, "c_alpha", DIFF_KS_C, 6);
    json_str(&j, "threshold", "c_alpha * sqrt((n + m) / (n * m))");
    json_double(&j, "min_p50_change", DIFF_MIN_P50_MOVE, 6);
    json_u64(&j, "few_calls_below", DIFF_FEW_CALLS);
    json_double(&j, "tail_moved_above", DIFF_TAIL_MOVE, 6);
    json_str(&j, "text", diff_rule_text);
    json_end_object(&j);

    json_begin_object(&j, "summary");
    json_u64(&j, "rows", d->count);
    json_u64(&j, "changed", d->changed);
    json_u64(&j, "only_a", d->only_a);
    json_u64(&j, "only_b", d->only_b);
    json_u64(&j, "unchanged", d->unchanged);
    json_bool(&j, "roles_in_common", d->roles_in_common);
    json_end_object(&j);

    json_begin_array(&j, "rows");
    for (size_t i = 0; i < d->count; i++) {
        const diff_row *r = &d->rows[i];
        int both = r->presence == DIFF_BOTH;
        json_begin_object(&j, NULL);
        json_str(&j, "key", r->key);
        json_str(&j, "role", r->role);
        json_str(&j, "path", r->path);
        json_str(&j, "presence", both ? "both" : r->presence == DIFF_ONLY_A ? "only_a" : "only_b");
        side_values(&j, &r->a, r->presence != DIFF_ONLY_B, "calls_a", "total_a_ns", "mean_a_ns",
                    "p50_a_ns", "p99_a_ns", "in_processes_a");
        side_values(&j, &r->b, r->presence != DIFF_ONLY_A, "calls_b", "total_b_ns", "mean_b_ns",
                    "p50_b_ns", "p99_b_ns", "in_processes_b");
        json_i64(&j, "total_delta_ns", r->total_delta_ns);
        ratio_json(&j, "mean_ratio", both ? r->mean_ratio : -1.0);
        ratio_json(&j, "p50_ratio", both ? r->p50_ratio : -1.0);
        ratio_json(&j, "p99_ratio", both ? r->p99_ratio : -1.0);
        /* wait%: estimates (the CPU sampler's), on each side where it saw the path */
        if (r->a.wait_share >= 0.0)
            json_double(&j, "wait_share_a", r->a.wait_share, 4);
        else
            json_null(&j, "wait_share_a");
        if (r->b.wait_share >= 0.0)
            json_double(&j, "wait_share_b", r->b.wait_share, 4);
        else
            json_null(&j, "wait_share_b");
        if (r->a.wait_share >= 0.0 && r->b.wait_share >= 0.0)
            json_double(&j, "wait_share_delta", r->b.wait_share - r->a.wait_share, 4);
        else
            json_null(&j, "wait_share_delta");
        json_u64(&j, "ticks_a", r->a.ticks);
        json_u64(&j, "wait_ticks_a", r->a.wait_ticks);
        json_u64(&j, "ticks_b", r->b.ticks);
        json_u64(&j, "wait_ticks_b", r->b.wait_ticks);
        if (both && r->ks_threshold > 0.0) {
            json_double(&j, "ks_d", r->ks_d, 6);
            json_double(&j, "ks_threshold", r->ks_threshold, 6);
        } else {
            json_null(&j, "ks_d");
            json_null(&j, "ks_threshold");
        }
        json_bool(&j, "ks_significant", r->ks_significant);
        json_bool(&j, "changed", r->changed);
        json_bool(&j, "few_calls", r->few_calls);
        json_bool(&j, "tail_moved", r->tail_moved);
        json_end_object(&j);
    }
    json_end_array(&j);

    json_begin_array(&j, "caveats");
    report_caveat_json_ctx ca = {&j, a, "a"}, cb = {&j, b, "b"};
    if (report_caveats(a, report_caveat_json, &ca) < 0 || report_caveats(b, report_caveat_json, &cb) < 0)
        return -ENOMEM; /* the document stays open: never one that parses */
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
