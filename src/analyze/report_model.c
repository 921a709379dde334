#include "report_model.h"

#include "store/sample_set.h"

#include "lapse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TOP_DEFAULT 10
#define SAMPLES_LISTED 4096 /* pids and threads a file's tables list */

/* ---- counters ---- */

static uint32_t counter_kind(const run_model *m, const rm_counter *c)
{
    const char *name = rm_str(m, c->name);
    if (!strncmp(name, "io.", 3))
        return REPORT_COUNTER_IO;
    if (!strncmp(name, "mem.", 4))
        return REPORT_COUNTER_MEM;
    return REPORT_COUNTER_PLAIN;
}

/* Appends the counters of path p to rr->counters; their range into *range. */
static void add_counters(const run_model *m, const rm_path *p, report_role *rr,
                         report_counter_range *range)
{
    range->first = rr->counter_count;
    range->count = range->plain = 0;
    for (uint32_t c = p->first_counter; c != RM_NONE; c = m->counters[c].next) {
        const rm_counter *ct = &m->counters[c];
        report_counter *rc = &rr->counters[rr->counter_count++];
        memset(rc, 0, sizeof *rc);
        rc->counter = c;
        rc->kind = counter_kind(m, ct);
        if (p->total_ns && !ct->overflowed) {
            rc->has_rate = 1;
            rc->per_second = (double)ct->sum / ((double)p->total_ns / 1e9);
        }
        if (ct->sum > 0 && !ct->overflowed) {
            rc->has_per_unit = 1;
            rc->ns_per_unit = (double)p->total_ns / (double)ct->sum;
        }
        range->count++;
        range->plain += rc->kind == REPORT_COUNTER_PLAIN;
    }
}

static const report_counter *named(const run_model *m, const report_role *rr,
                                   const report_counter_range *range, const char *name)
{
    for (uint32_t i = 0; i < range->count; i++) {
        const report_counter *rc = &rr->counters[range->first + i];
        if (!strcmp(rm_str(m, m->counters[rc->counter].name), name))
            return rc;
    }
    return NULL;
}

/* The sum of counter `name` of a phase, and whether it has one. */
static int sum_of(const run_model *m, const report_role *rr, uint32_t phase, const char *name,
                  int64_t *sum)
{
    const report_counter *rc = named(m, rr, &rr->phase_counters[phase], name);
    *sum = rc ? m->counters[rc->counter].sum : 0;
    return rc != NULL;
}

const report_counter *report_counter_named(const report_model *r, uint32_t role, uint32_t phase,
                                           const char *name)
{
    const report_role *rr = &r->roles[role];
    return named(r->m, rr, &rr->phase_counters[phase], name);
}

/* ---- blocks of a role ---- */

static int build_io_phases(const run_model *m, report_role *rr)
{
    const rs_role *rs = rr->stats;
    rr->io_phases = calloc(rs->phase_count ? rs->phase_count : 1u, sizeof *rr->io_phases);
    if (!rr->io_phases)
        return -ENOMEM;
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        report_io_phase io = {.phase = i};
        if (!sum_of(m, rr, i, "io.read_chars", &io.read_chars))
            continue;
        sum_of(m, rr, i, "io.write_chars", &io.write_chars);
        sum_of(m, rr, i, "io.read_bytes", &io.read_bytes);
        sum_of(m, rr, i, "io.write_bytes", &io.write_bytes);
        sum_of(m, rr, i, "io.unreadable", &io.unreadable);
        io.cache_read_bytes = io.read_chars > io.read_bytes ? (uint64_t)(io.read_chars - io.read_bytes) : 0;
        double secs = (double)m->paths[rs->phases[i]].total_ns / 1e9;
        if (secs > 0) {
            io.has_disk_rate = 1;
            io.disk_bytes_per_second = (uint64_t)((double)(io.read_bytes + io.write_bytes) / secs);
        }
        rr->io_phases[rr->io_phase_count++] = io;
    }
    return 0;
}

static int build_gpu_phases(const run_model *m, uint32_t r, report_role *rr)
{
    const rs_role *rs = rr->stats;
    rr->gpu_phases = calloc(rs->phase_count ? rs->phase_count : 1u, sizeof *rr->gpu_phases);
    if (!rr->gpu_phases)
        return -ENOMEM;
    uint64_t untimed = 0;
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        const rm_path *p = &m->paths[rs->phases[i]];
        if (p->gpu_timed || p->gpu_untimed)
            rr->gpu_phases[rr->gpu_phase_count++] = i;
        untimed += p->gpu_untimed;
    }
    rr->gpu_missing_why = "";
    for (uint32_t w = 0; untimed && w < m->worker_count && !*rr->gpu_missing_why; w++)
        if (m->workers[w].role_index == r)
            rr->gpu_missing_why = m->workers[w].gpu_time_missing;
    if (untimed && !*rr->gpu_missing_why)
        rr->gpu_missing_why = "unknown (the files do not say)";
    return 0;
}

static report_state process_io_state(const rs_io *io)
{
    if (!io->processes)
        return REPORT_NOT_COLLECTED;
    if (!io->intervals)
        return REPORT_UNREADABLE;
    if (!io->read_chars && !io->write_chars && !io->read_bytes && !io->write_bytes)
        return REPORT_NONE_MEASURED;
    return REPORT_MEASURED;
}

/* NOT_COLLECTED when no process of role r recorded spans, NONE_MEASURED when they
 * recorded none. */
static report_state spans_state(const run_model *m, const rs_role *rs, uint32_t r)
{
    if (rs->phase_count || m->paths[m->roles[r].root].first_counter != RM_NONE)
        return REPORT_MEASURED;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].role_index == r && (m->workers[i].features & LAPSE_FEATURE_SPANS))
            return REPORT_NONE_MEASURED;
    return REPORT_NOT_COLLECTED;
}

const char *report_state_name(report_state s)
{
    switch (s) {
    case REPORT_NOT_COLLECTED: return "not_collected";
    case REPORT_UNREADABLE: return "unreadable";
    case REPORT_NONE_MEASURED: return "none_measured";
    case REPORT_MEASURED: return "measured";
    }
    return "unknown";
}

/* with_phases: the role recorded spans, so "while no phase was open" means something */
static void build_process_io(const rs_io *io, int with_phases, report_process_io *out)
{
    memset(out, 0, sizeof *out);
    if (!io->processes || !io->intervals)
        return;
    for (unsigned i = 0; i < RS_IO_BINS; i++)
        if (io->bins[i] > out->peak_bin)
            out->peak_bin = io->bins[i];
    out->peak_bytes_per_second =
        io->bin_ns ? (uint64_t)(out->peak_bin / ((double)io->bin_ns / 1e9)) : 0;
    out->read_cache_bytes = io->read_chars > io->read_bytes ? io->read_chars - io->read_bytes : 0;
    uint64_t chars = io->read_chars + io->write_chars;
    if (chars && with_phases) {
        uint64_t mixed = chars - io->quiet_chars - io->phased_chars;
        out->has_shares = 1;
        out->quiet_share = (double)io->quiet_chars / (double)chars;
        out->phased_share = (double)io->phased_chars / (double)chars;
        out->mixed_share = (double)mixed / (double)chars;
    }
    out->has_sampler_cost = 1;
    out->sampler_cpu_ns_per_interval = (double)io->sampler_cpu_ns / (double)io->intervals;
}

static int build_memory(const run_model *m, uint32_t r, report_role *rr)
{
    report_memory *mem = &rr->memory;
    const rs_role *rs = rr->stats;
    mem->rusage_peak_worker = RM_NONE;
    uint64_t sum_kb = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != r || !w->max_rss_kb)
            continue;
        sum_kb += w->max_rss_kb;
        mem->rusage_processes++;
        if (mem->rusage_peak_worker == RM_NONE ||
            w->max_rss_kb > m->workers[mem->rusage_peak_worker].max_rss_kb)
            mem->rusage_peak_worker = i;
    }
    if (mem->rusage_processes) {
        mem->rusage_peak_bytes = m->workers[mem->rusage_peak_worker].max_rss_kb * 1024;
        mem->rusage_mean_bytes = sum_kb / mem->rusage_processes * 1024;
    }
    mem->growth = calloc(rs->phase_count ? rs->phase_count : 1u, sizeof *mem->growth);
    if (!mem->growth)
        return -ENOMEM;
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        report_growth g = {.phase = i};
        if (!sum_of(m, rr, i, "mem.rss_growth", &g.growth_bytes))
            continue;
        sum_of(m, rr, i, "mem.unreadable", &g.unmeasured);
        g.calls = m->paths[rs->phases[i]].calls;
        uint64_t mag = g.growth_bytes < 0 ? (uint64_t)(-g.growth_bytes) : (uint64_t)g.growth_bytes;
        g.per_call_bytes = g.calls ? mag / g.calls : 0;
        mem->growth[mem->growth_count++] = g;
    }
    int collected = 0;
    for (uint32_t i = 0; i < m->worker_count && !collected; i++)
        collected = m->workers[i].role_index == r && (m->workers[i].features & LAPSE_FEATURE_MEMORY);
    if (mem->rusage_processes || rs->io.rss_peak_bytes || mem->growth_count)
        mem->state = REPORT_MEASURED;
    else
        mem->state = collected ? REPORT_UNREADABLE : REPORT_NOT_COLLECTED;
    return 0;
}

/* A role whose every process holds Python stack samples and no span nor counter, and
 * that has no I/O nor MEMORY block. */
static int samples_only(const run_model *m, const report_role *rr, uint32_t r)
{
    if (rr->spans == REPORT_MEASURED || rr->process_io_state != REPORT_NOT_COLLECTED ||
        rr->memory.state != REPORT_NOT_COLLECTED || rr->gpu_state != REPORT_NOT_COLLECTED)
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

static int build_role(const run_model *m, uint32_t r, unsigned top, report_role *rr)
{
    const rm_role *role = &m->roles[r];
    const rs_role *rs = rr->stats;
    rr->role = role;
    rr->busy_mean_ns = role->processes ? (double)role->busy_ns / role->processes : 0.0;
    for (uint32_t i = 0; i < rs->phase_count && !rr->busy_estimated; i++) {
        const rm_path *p = &m->paths[rs->phases[i]];
        rr->busy_estimated = p->depth == 1 && p->sample_stride;
    }
    rr->top_shown = rs->top_level_shown;
    rr->rest_count = rs->top_level_count - rr->top_shown;
    rr->rest_ns = rs->top_level_ns;
    for (uint32_t i = 0; i < rr->top_shown; i++)
        rr->rest_ns -= m->paths[rs->phases[rs->top_level[i]]].total_ns;
    rr->rest_share = role->busy_ns ? (double)rr->rest_ns / (double)role->busy_ns : -1.0;
    rr->dominant_shown = rs->by_self_count;
    for (uint32_t i = 0; i < rr->dominant_shown; i++) {
        const rm_path *p = &m->paths[rs->phases[rs->by_self[i]]];
        rr->estimated_shown += p->sample_stride || p->child_estimated;
    }

    uint32_t counters = 0;
    for (uint32_t i = 0; i < rs->phase_count; i++)
        for (uint32_t c = m->paths[rs->phases[i]].first_counter; c != RM_NONE; c = m->counters[c].next)
            counters++;
    for (uint32_t c = m->paths[role->root].first_counter; c != RM_NONE; c = m->counters[c].next)
        counters++;
    rr->counters = calloc(counters ? counters : 1u, sizeof *rr->counters);
    rr->phase_counters = calloc(rs->phase_count ? rs->phase_count : 1u, sizeof *rr->phase_counters);
    if (!rr->counters || !rr->phase_counters)
        return -ENOMEM;
    for (uint32_t i = 0; i < rs->phase_count; i++)
        add_counters(m, &m->paths[rs->phases[i]], rr, &rr->phase_counters[i]);
    add_counters(m, &m->paths[role->root], rr, &rr->root_counters);

    if (role->rank_count >= 2 && rs->phase_count) {
        /* the slowest rank's total, largest first; ties in the order the paths were made */
        rs_top t;
        int rc = rs_top_init(&t, top);
        for (uint32_t i = 0; i < rs->phase_count && !rc; i++) {
            const rm_path *p = &m->paths[rs->phases[i]];
            const uint64_t *totals = rm_rank_totals(p);
            uint64_t max = 0; /* across_ranks.max_ns (none for more ranks than the role's) */
            for (uint32_t k = 0; p->rank_n <= role->rank_count && k < p->rank_n; k++)
                max = totals[k] > max ? totals[k] : max;
            rc = rs_top_push(&t, (rs_key){max, rs->phases[i], i});
        }
        if (!rc)
            rc = rs_top_sort(&t);
        if (!rc && !(rr->by_rank_max = malloc((t.n ? t.n : 1u) * sizeof *rr->by_rank_max)))
            rc = -ENOMEM;
        for (uint32_t i = 0; i < t.n && !rc; i++)
            rr->by_rank_max[i] = t.keys[i].index;
        rr->rank_rows_shown = t.n;
        rs_top_free(&t);
        if (rc)
            return rc;
    }
    if (build_io_phases(m, rr) || build_gpu_phases(m, r, rr))
        return -ENOMEM;
    rr->spans = spans_state(m, rs, r);
    rr->process_io_state = process_io_state(&rs->io);
    build_process_io(&rs->io, rr->spans != REPORT_NOT_COLLECTED, &rr->process_io);
    if (build_memory(m, r, rr) || report_gpu_build(m, r, rr))
        return -ENOMEM;
    rr->samples_only = samples_only(m, rr, r);
    return report_activity_build(m, r, top, &rr->activity);
}

static void free_role(report_role *rr)
{
    free(rr->counters);
    free(rr->phase_counters);
    free(rr->by_rank_max);
    free(rr->io_phases);
    free(rr->gpu_phases);
    free(rr->memory.growth);
    report_activity_free(&rr->activity);
    report_gpu_free(rr);
}

/* ---- Python samples ---- */

static int build_samples(const run_model *m, uint32_t wi, report_samples *out)
{
    memset(out, 0, sizeof *out);
    const store_samples *s = sample_set_view(m->workers[wi].samples);
    out->worker = wi;
    out->samples = s;
    out->late_share = s->samples ? (double)s->late_samples / (double)s->samples : -1.0;
    out->lost_share = ss_lost_share(s);
    out->lost_biased = ss_lost_biased(s);
    int64_t *pids = malloc(SAMPLES_LISTED * sizeof *pids);
    int64_t *tids = malloc(SAMPLES_LISTED * sizeof *tids);
    int rc = -ENOMEM;
    if (!pids || !tids)
        goto done;
    uint32_t np = ss_pids(s, pids, SAMPLES_LISTED);
    out->processes = calloc(np ? np : 1u, sizeof *out->processes);
    if (!out->processes)
        goto done;
    for (uint32_t p = 0; p < np; p++) {
        report_samples_process *rp = &out->processes[out->process_count];
        rp->pid = pids[p];
        for (uint32_t k = 0; k < s->process_count && !rp->info; k++)
            if (s->processes[k].pid == pids[p])
                rp->info = &s->processes[k];
        if (ss_group_build(s, pids[p], SS_ANY, SS_ANY_SPAN, &rp->group))
            goto done;
        out->process_count++;
        uint32_t nt = ss_tids(s, pids[p], tids, SAMPLES_LISTED);
        rp->threads = calloc(nt ? nt : 1u, sizeof *rp->threads);
        if (!rp->threads)
            goto done;
        for (uint32_t t = 0; t < nt; t++) {
            report_samples_thread *th = &rp->threads[rp->thread_count];
            th->tid = tids[t];
            th->name = ss_thread_name(s, pids[p], tids[t]);
            if (ss_group_build(s, pids[p], tids[t], SS_ANY_SPAN, &th->group))
                goto done;
            rp->thread_count++;
        }
    }
    out->has_stacks = out->process_count > 0;
    if (ss_span_totals(s, &out->span_totals, &out->span_total_count))
        goto done;
    out->spans = calloc(out->span_total_count ? out->span_total_count : 1u, sizeof *out->spans);
    if (!out->spans)
        goto done;
    for (uint32_t i = 0; i < out->span_total_count; i++) {
        report_samples_span *sp = &out->spans[out->span_count];
        sp->path = out->span_totals[i].path;
        if (ss_group_build_under(s, sp->path, &sp->group))
            goto done;
        out->span_count++;
    }
    rc = 0;
done:
    free(pids);
    free(tids);
    return rc;
}

static void free_samples(report_samples *s)
{
    for (uint32_t p = 0; p < s->process_count; p++) {
        report_samples_process *rp = &s->processes[p];
        ss_group_free(&rp->group);
        for (uint32_t t = 0; t < rp->thread_count; t++)
            ss_group_free(&rp->threads[t].group);
        free(rp->threads);
    }
    free(s->processes);
    for (uint32_t i = 0; i < s->span_count; i++)
        ss_group_free(&s->spans[i].group);
    free(s->spans);
    ss_span_totals_free(s->span_totals, s->span_total_count);
}

/* ---- the report ---- */

int report_model_build(const run_model *m, const report_inputs *in, report_model *r)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->top = in && in->top ? in->top : TOP_DEFAULT;
    r->header.has_runtime = m->worker_count > 0;
    r->header.runtime_ns = m->end_real_ns > m->start_real_ns ? m->end_real_ns - m->start_real_ns : 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        r->header.final += m->workers[i].final != 0;
        r->header.not_final += !m->workers[i].final;
    }
    r->header.mixed_run_ids = m->run_ids > (m->joined_count ? m->joined_count : 1u);
    if (run_ranks_build(m, &r->ranks) || run_stats_build(m, r->top, &r->stats))
        goto oom;
    r->roles = calloc(m->role_count ? m->role_count : 1u, sizeof *r->roles);
    r->worker_usage = calloc(m->worker_count ? m->worker_count : 1u, sizeof *r->worker_usage);
    if (!r->roles || !r->worker_usage)
        goto oom;
    for (uint32_t i = 0; i < m->worker_count; i++)
        report_usage_of_worker(&m->workers[i], &r->worker_usage[i]);
    for (uint32_t i = 0; i < m->role_count; i++) {
        r->roles[i].stats = &r->stats.roles[i];
        report_usage_of_role(m, i, &r->roles[i].usage);
        if (build_role(m, i, r->top, &r->roles[i]))
            goto oom;
    }
    uint32_t with_samples = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        with_samples += m->workers[i].samples != NULL;
    r->samples = calloc(with_samples ? with_samples : 1u, sizeof *r->samples);
    if (!r->samples)
        goto oom;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        if (!m->workers[i].samples)
            continue;
        int rc = build_samples(m, i, &r->samples[r->samples_count]);
        r->samples_count++; /* freed whole or in part */
        if (rc)
            goto oom;
    }
    r->run_paths_built = in && in->run_paths;
    if (caveats_build(m, &r->ranks, &r->caveats) || (r->run_paths_built && report_run_paths_build(r)))
        goto oom;
    if (causality_build(m, &r->causal) || report_windows_build(m, &r->windows, &r->window_count))
        goto oom;
    return 0;
oom:
    report_model_free(r);
    return -ENOMEM;
}

void report_model_free(report_model *r)
{
    if (r->roles)
        for (uint32_t i = 0; i < r->m->role_count; i++)
            free_role(&r->roles[i]);
    free(r->roles);
    free(r->worker_usage);
    for (uint32_t i = 0; i < r->samples_count; i++)
        free_samples(&r->samples[i]);
    free(r->samples);
    caveats_free(&r->caveats);
    free(r->run_paths);
    free(r->run_path_roles);
    free(r->run_counters);
    run_stats_free(&r->stats);
    run_ranks_free(&r->ranks);
    causality_free(&r->causal);
    free(r->windows);
    const run_model *m = r->m;
    memset(r, 0, sizeof *r);
    r->m = m;
}
