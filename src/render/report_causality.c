#include "report_causality.h"

#include "format.h"

void report_causality_text(FILE *out, const report_model *r)
{
    const causality *c = &r->causal;
    if (!c->present)
        return;
    char a[FMT_BUF], b[FMT_BUF], d[FMT_BUF], e[FMT_BUF], f[FMT_BUF], g[FMT_BUF];
    fprintf(out, "\nCAUSALITY  %s signals, %s waits: %s pairs, %s blocking (the wait ended after\n"
                 "  its signal); %s waits unmatched, %s signals not waited for\n",
            fmt_count(a, sizeof a, c->signals), fmt_count(b, sizeof b, c->waits),
            fmt_count(d, sizeof d, c->pair_count), fmt_count(e, sizeof e, c->blocking),
            fmt_count(f, sizeof f, c->unmatched_waits),
            fmt_count(g, sizeof g, c->unconsumed_signals));
    if (!c->segment_count)
        return;
    uint64_t length = c->end_ns > c->begin_ns ? (uint64_t)(c->end_ns - c->begin_ns) : 0;
    fprintf(out, "CRITICAL PATH  %s (of the run's %s) through %u process%s, %s hand-off%s;\n"
                 "  wake-ups %s\n",
            fmt_duration(a, sizeof a, (double)length),
            fmt_duration(b, sizeof b, (double)r->header.runtime_ns), c->processes,
            c->processes == 1 ? "" : "es", fmt_count(e, sizeof e, c->segment_count - 1),
            c->segment_count == 2 ? "" : "s", fmt_duration(d, sizeof d, (double)c->wake_ns));
    fprintf(out, "  %-44s %10s %7s\n", "phase on the path (role:path, innermost span)", "time",
            "share");
    size_t shown = c->phase_count < r->top ? c->phase_count : r->top;
    for (size_t i = 0; i < shown; i++) {
        const cz_phase *p = &c->phases[i];
        char key[512];
        snprintf(key, sizeof key, "%s:%s", p->role, p->path);
        fprintf(out, "  %-44s %10s %7s\n", key, fmt_duration(a, sizeof a, (double)p->ns),
                fmt_percent(b, sizeof b, p->share));
    }
    if (c->phase_count > shown)
        fprintf(out, "  ... %zu more (--top N)\n", c->phase_count - shown);
    if (c->spans_dropped)
        fputs("  (a process on the path dropped spans: time there may read as \"(no span)\")\n",
              out);
}

void report_causality_json(json_out *j, const report_model *r)
{
    const causality *c = &r->causal;
    const run_model *m = r->m;
    if (!c->present) {
        json_null(j, "causality");
        return;
    }
    json_begin_object(j, "causality");
    json_u64(j, "signals", c->signals);
    json_u64(j, "waits", c->waits);
    json_u64(j, "blocking_pairs", c->blocking);
    json_u64(j, "unmatched_waits", c->unmatched_waits);
    json_u64(j, "unconsumed_signals", c->unconsumed_signals);
    json_u64(j, "dropped", c->dropped);
    json_begin_array(j, "pairs");
    for (size_t i = 0; i < c->pair_count; i++) {
        const cz_pair *p = &c->pairs[i];
        json_begin_object(j, NULL);
        json_str(j, "name", p->name);
        json_i64(j, "signal_pid", m->workers[p->signal_worker].pid);
        json_i64(j, "signal_tid", p->signal_tid);
        json_i64(j, "signal_ns", p->signal_ns);
        json_i64(j, "wait_pid", m->workers[p->wait_worker].pid);
        json_i64(j, "wait_tid", p->wait_tid);
        json_i64(j, "wait_begin_ns", p->wait_begin_ns);
        json_i64(j, "wait_end_ns", p->wait_end_ns);
        json_bool(j, "blocking", p->blocking);
        json_end_object(j);
    }
    json_end_array(j);
    if (!c->segment_count) {
        json_null(j, "critical_path");
        json_end_object(j);
        return;
    }
    json_begin_object(j, "critical_path");
    json_i64(j, "begin_ns", c->begin_ns);
    json_i64(j, "end_ns", c->end_ns);
    json_u64(j, "length_ns", c->end_ns > c->begin_ns ? (uint64_t)(c->end_ns - c->begin_ns) : 0);
    json_u64(j, "wake_ns", c->wake_ns);
    json_u64(j, "processes", c->processes);
    json_bool(j, "spans_dropped", c->spans_dropped);
    json_begin_array(j, "segments");
    for (size_t i = 0; i < c->segment_count; i++) {
        const cz_segment *s = &c->segments[i];
        json_begin_object(j, NULL);
        json_i64(j, "pid", m->workers[s->worker].pid);
        json_i64(j, "tid", s->tid);
        json_str(j, "role", m->workers[s->worker].role);
        json_i64(j, "begin_ns", s->begin_ns);
        json_i64(j, "end_ns", s->end_ns);
        if (s->from_pair >= 0)
            json_i64(j, "from_pair", s->from_pair);
        else
            json_null(j, "from_pair");
        json_end_object(j);
    }
    json_end_array(j);
    json_begin_array(j, "phases");
    for (size_t i = 0; i < c->phase_count; i++) {
        const cz_phase *p = &c->phases[i];
        json_begin_object(j, NULL);
        json_str(j, "role", p->role);
        json_str(j, "path", p->path);
        json_u64(j, "ns", p->ns);
        json_double(j, "share", p->share, 6);
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
    json_end_object(j);
}
