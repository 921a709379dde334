/* The JSON report: schema "lapse.report", version 1 (docs/report.md). */
#include "report_render.h"

#include "json_out.h"
#include "caveat_text.h"
#include "report_activity.h"
#include "report_ranks.h"
#include "report_causality.h"
#include "report_windows.h"
#include "report_samples.h"

#include "lapse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *state_name(rm_state s)
{
    switch (s) {
    case RM_FINAL: return "final";
    case RM_STOPPED_EARLY: return "stopped_early";
    case RM_RUNNING: return "running";
    case RM_ENDED_UNSEEN: return "ended_unseen";
    case RM_GONE: return "gone";
    }
    return "unknown";
}

static void counters_json(json_out *j, const run_model *m, const report_role *rr,
                          const report_counter_range *range, int with_time)
{
    for (uint32_t i = 0; i < range->count; i++) {
        const report_counter *rc = &rr->counters[range->first + i];
        const rm_counter *ct = &m->counters[rc->counter];
        json_begin_object(j, NULL);
        json_str(j, "name", rm_str(m, ct->name));
        json_i64(j, "sum", ct->sum);
        json_bool(j, "overflowed", ct->overflowed);
        json_u64(j, "updates", ct->updates);
        if (with_time) {
            if (rc->has_rate)
                json_double(j, "per_second", rc->per_second, 9);
            else
                json_null(j, "per_second");
            if (rc->has_per_unit)
                json_double(j, "ns_per_unit", rc->ns_per_unit, 9);
            else
                json_null(j, "ns_per_unit");
        }
        json_end_object(j);
    }
}

/* A phase names its own span and its parent phase, never the chain of names above
 * it: the document grows with the number of paths, not with their depth. */
static void phase_json(json_out *j, const run_model *m, const report_role *rr, uint32_t k,
                       uint32_t parent)
{
    rs_phase phase;
    run_stats_phase(m, rr->stats, k, &phase);
    const rs_phase *ph = &phase;
    const rm_path *p = &m->paths[ph->path];
    char path[RM_PATH_BUF];
    json_begin_object(j, NULL);
    json_str(j, "path", rm_path_str(m, ph->path, path));
    json_str(j, "name", rm_str(m, p->name));
    if (parent != RM_NONE)
        json_u64(j, "parent", parent);
    else
        json_null(j, "parent");
    json_u64(j, "depth", p->depth);
    json_u64(j, "calls", p->calls);
    json_u64(j, "total_ns", p->total_ns);
    json_u64(j, "self_ns", ph->self_ns);
    if (p->calls) {
        json_ns(j, "mean_ns", ph->mean_ns);
        json_ns(j, "p50_ns", ph->p50_ns);
        json_ns(j, "p90_ns", ph->p90_ns);
        json_ns(j, "p95_ns", ph->p95_ns);
        json_ns(j, "p99_ns", ph->p99_ns);
        json_u64(j, "min_ns", p->min_ns);
        json_u64(j, "max_ns", p->max_ns);
    } else {
        static const char *keys[] = {"mean_ns", "p50_ns", "p90_ns", "p95_ns", "p99_ns", "min_ns", "max_ns"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            json_null(j, keys[k]);
    }
    if (ph->share_of_busy >= 0.0)
        json_double(j, "share_of_busy", ph->share_of_busy, 6);
    else
        json_null(j, "share_of_busy");
    json_u64(j, "in_processes", p->in_processes);
    json_u64(j, "folded", p->folded);
    json_bool(j, "estimated", p->sample_stride != 0);
    if (p->sample_stride)
        json_u64(j, "sample_stride", p->sample_stride);
    else
        json_null(j, "sample_stride");
    json_bool(j, "self_estimated", p->sample_stride != 0 || p->child_estimated != 0);
    if (ph->wait_share >= 0.0)
        json_double(j, "wait_share", ph->wait_share, 4);
    else
        json_null(j, "wait_share");
    json_u64(j, "ticks", p->cpu_ticks);
    json_u64(j, "wait_ticks", p->cpu_wait_ticks);
    if (p->gpu_timed || p->gpu_untimed) { /* a gpu_time phase */
        json_begin_object(j, "gpu_time");
        json_u64(j, "ns", p->gpu_ns);
        json_u64(j, "timed", p->gpu_timed);
        json_u64(j, "untimed", p->gpu_untimed);
        if (ph->gpu_mean_ns >= 0.0)
            json_ns(j, "mean_ns", ph->gpu_mean_ns);
        else
            json_null(j, "mean_ns");
        json_end_object(j);
    } else {
        json_null(j, "gpu_time");
    }
    report_ranks_json_phase(j, ph);
    json_begin_array(j, "counters");
    counters_json(j, m, rr, &rr->phase_counters[k], 1);
    json_end_array(j);
    json_end_object(j);
}

/* The process sampler's figures of a role; null when none of its processes ran it. */
static void io_json(json_out *j, const run_model *m, const report_role *rr)
{
    const rs_io *io = &rr->stats->io;
    const report_process_io *pio = &rr->process_io;
    json_str(j, "io_state", report_state_name(rr->process_io_state));
    if (rr->process_io_state == REPORT_NOT_COLLECTED) {
        json_null(j, "io");
        return;
    }
    json_begin_object(j, "io");
    json_u64(j, "processes", io->processes);
    json_u64(j, "interval_ms", io->interval_ms);
    json_u64(j, "intervals", io->intervals);
    json_u64(j, "unreadable_intervals", io->unreadable);
    json_u64(j, "children_in_run", io->children_in_run);
    if (io->intervals) {
        json_u64(j, "read_chars", io->read_chars);
        json_u64(j, "read_bytes", io->read_bytes);
        json_u64(j, "read_cache_bytes", pio->read_cache_bytes);
        json_u64(j, "write_chars", io->write_chars);
        json_u64(j, "write_bytes", io->write_bytes);
        json_u64(j, "quiet_chars", io->quiet_chars);
        json_u64(j, "phased_chars", io->phased_chars);
        if (pio->has_shares) {
            json_double(j, "share_no_phase_open", pio->quiet_share, 6);
            json_double(j, "share_phase_open", pio->phased_share, 6);
        } else {
            json_null(j, "share_no_phase_open");
            json_null(j, "share_phase_open");
        }
        json_double(j, "sampler_cpu_ns_per_interval", pio->sampler_cpu_ns_per_interval, 1);
    } else {
        static const char *keys[] = {"read_chars", "read_bytes", "read_cache_bytes", "write_chars",
                                     "write_bytes", "quiet_chars", "phased_chars",
                                     "share_no_phase_open", "share_phase_open",
                                     "sampler_cpu_ns_per_interval"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            json_null(j, keys[k]);
    }
    json_u64(j, "bins_start_real_ns", io->bins_start_real_ns);
    json_u64(j, "bin_ns", io->bin_ns);
    json_begin_array(j, "bins_chars");
    for (unsigned b = 0; b < RS_IO_BINS && io->intervals; b++)
        json_double(j, NULL, io->bins[b], 0);
    json_end_array(j);
    if (io->rss_peak_worker != RM_NONE) {
        json_u64(j, "rss_peak_bytes", io->rss_peak_bytes);
        json_i64(j, "rss_peak_pid", m->workers[io->rss_peak_worker].pid);
    } else {
        json_null(j, "rss_peak_bytes");
        json_null(j, "rss_peak_pid");
    }
    json_end_object(j);
}

/* MEMORY: peak RSS by getrusage, and the RSS growth of io=True phases. */
static void memory_json(json_out *j, const run_model *m, const report_role *rr)
{
    char path[RM_PATH_BUF];
    const report_memory *mem = &rr->memory;
    json_str(j, "memory_state", report_state_name(mem->state));
    json_begin_object(j, "memory");
    if (mem->rusage_peak_worker != RM_NONE) {
        json_u64(j, "peak_rss_getrusage_bytes", mem->rusage_peak_bytes);
        json_i64(j, "peak_rss_getrusage_pid", m->workers[mem->rusage_peak_worker].pid);
    } else {
        json_null(j, "peak_rss_getrusage_bytes");
        json_null(j, "peak_rss_getrusage_pid");
    }
    if (rr->stats->io.rss_peak_worker != RM_NONE)
        json_u64(j, "peak_rss_sampled_bytes", rr->stats->io.rss_peak_bytes);
    else
        json_null(j, "peak_rss_sampled_bytes");
    json_begin_array(j, "growth_by_phase");
    for (uint32_t i = 0; i < mem->growth_count; i++) {
        const report_growth *g = &mem->growth[i];
        json_begin_object(j, NULL);
        json_str(j, "path", rm_path_str(m, rr->stats->phases[g->phase], path));
        json_i64(j, "rss_growth_bytes", g->growth_bytes);
        json_u64(j, "calls", g->calls);
        json_i64(j, "unmeasured_calls", g->unmeasured);
        json_str(j, "method", "measured: RSS read at each call's entry and exit (io=True)");
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
}

static const char *const vram_join_names[] = {"uuid", "no_torch_uuid", "no_nvml",
                                              "no_match", "nvml_uuid_unknown"};

/* VRAM from torch, per device: the largest process peaks; joined (join "uuid"), NVML's
 * figures of its line (nvml_line: its index in gpu); else null. */
static void vram_json(json_out *j, const run_model *m, const report_role *rr)
{
    json_str(j, "vram_state", report_state_name(rr->vram_state));
    json_begin_array(j, "vram");
    for (uint32_t i = 0; i < rr->vram_count; i++) {
        const report_vram *v = &rr->vram[i];
        const rm_worker *w = &m->workers[v->worker];
        json_begin_object(j, NULL);
        json_i64(j, "pid", w->pid);
        json_str(j, "host", w->host);
        json_u64(j, "torch_index", v->device->index);
        json_str(j, "uuid", v->device->uuid);
        json_str(j, "device_name", v->device->name);
        json_u64(j, "processes", v->processes);
        json_u64(j, "allocated_peak_bytes", v->allocated_peak_bytes);
        json_u64(j, "reserved_peak_bytes", v->reserved_peak_bytes);
        json_str(j, "join", vram_join_names[v->join]);
        if (*v->join_why)
            json_str(j, "join_why", v->join_why);
        else
            json_null(j, "join_why");
        const report_gpu *g = v->join == REPORT_VRAM_JOINED ? &rr->gpus[v->gpu] : NULL;
        if (g)
            json_u64(j, "nvml_line", v->gpu);
        else
            json_null(j, "nvml_line");
        if (g && g->has_busy) {
            json_double(j, "busy_pct", g->busy_pct, 6);
            json_double(j, "idle_pct", g->idle_pct, 6);
        } else {
            json_null(j, "busy_pct"); /* NVML's figures: not joined (unknown) or not read */
            json_null(j, "idle_pct");
        }
        if (g && g->has_own)
            json_double(j, "this_run_pct", g->own_pct, 6);
        else
            json_null(j, "this_run_pct");
        if (g)
            json_u64(j, "vram_held_peak_bytes", g->mem_peak_bytes);
        else
            json_null(j, "vram_held_peak_bytes");
        json_end_object(j);
    }
    json_end_array(j);
    json_u64(j, "vram_resets", rr->vram_resets);
    if (*rr->vram_error)
        json_str(j, "vram_error", rr->vram_error);
    else
        json_null(j, "vram_error");
}

/* GPU: per device of each process; null where not read (n/a is not 0). */
static void gpu_json(json_out *j, const run_model *m, const report_role *rr)
{
    json_str(j, "gpu_state", report_state_name(rr->gpu_state));
    json_begin_array(j, "gpu");
    for (uint32_t i = 0; i < rr->gpu_count; i++) {
        const report_gpu *g = &rr->gpus[i];
        const rm_worker *w = &m->workers[g->worker];
        json_begin_object(j, NULL);
        json_i64(j, "pid", w->pid);
        json_str(j, "host", w->host);
        json_u64(j, "device_index", g->device->index);
        json_str(j, "device_name", g->device->name);
        json_u64(j, "readings", g->ticks);
        json_u64(j, "interval_ms", g->interval_ms);
        if (g->has_busy) {
            json_double(j, "busy_pct", g->busy_pct, 6);
            json_double(j, "idle_pct", g->idle_pct, 6);
        } else {
            json_null(j, "busy_pct");
            json_null(j, "idle_pct");
        }
        if (g->has_own)
            json_double(j, "this_run_pct", g->own_pct, 6);
        else
            json_null(j, "this_run_pct");
        json_u64(j, "vram_held_peak_bytes", g->mem_peak_bytes);
        if (*g->device->uuid)
            json_str(j, "uuid", g->device->uuid);
        else
            json_null(j, "uuid");
        if (*g->device->uuid_error)
            json_str(j, "uuid_error", g->device->uuid_error);
        else
            json_null(j, "uuid_error");
        json_bool(j, "uuid_recorded", g->device->uuid_recorded);
        if (g->vram >= 0) { /* torch's line of the same device: its peaks here too */
            const report_vram *v = &rr->vram[g->vram];
            json_u64(j, "vram_line", (uint64_t)g->vram);
            json_u64(j, "torch_index", v->device->index);
            json_u64(j, "vram_allocated_peak_bytes", v->allocated_peak_bytes);
            json_u64(j, "vram_reserved_peak_bytes", v->reserved_peak_bytes);
        } else {
            json_null(j, "vram_line");
            json_null(j, "torch_index");
            json_null(j, "vram_allocated_peak_bytes");
            json_null(j, "vram_reserved_peak_bytes");
        }
        json_begin_array(j, "by_phase");
        for (uint32_t k = 0; k < g->phase_count; k++) {
            const report_gpu_phase *p = &g->phases[k];
            json_begin_object(j, NULL);
            if (p->name)
                json_str(j, "phase", rm_str(m, p->name));
            else
                json_null(j, "phase"); /* the phases past the writer's bound */
            json_u64(j, "readings", p->ticks);
            json_double(j, "this_run_pct", p->own_pct, 6);
            json_end_object(j);
        }
        json_end_array(j);
        json_end_object(j);
    }
    json_end_array(j);
}

/* The four numbers of a process or a role; null where not measured. */
static void usage_json(json_out *j, const report_usage *u)
{
    json_begin_object(j, "usage");
    json_u64(j, "processes", u->processes);
    json_u64(j, "wall_ns", u->wall_ns);
    const char *cpu_keys[] = {"cpu_ns", "cpu_user_ns", "cpu_sys_ns"};
    const uint64_t cpu[] = {u->cpu_ns, u->cpu_user_ns, u->cpu_sys_ns};
    for (int k = 0; k < 3; k++) {
        if (u->has_cpu)
            json_u64(j, cpu_keys[k], cpu[k]);
        else
            json_null(j, cpu_keys[k]);
    }
    if (u->has_cores_busy)
        json_double(j, "cores_busy", u->cores_busy, 6);
    else
        json_null(j, "cores_busy");
    if (u->has_ctx) {
        json_u64(j, "ctx_voluntary", u->ctx_voluntary);
        json_u64(j, "ctx_involuntary", u->ctx_involuntary);
    } else {
        json_null(j, "ctx_voluntary");
        json_null(j, "ctx_involuntary");
    }
    json_end_object(j);
}

static int role_json(json_out *j, const report_model *rep, uint32_t r)
{
    const run_model *m = rep->m;
    const report_role *rr = &rep->roles[r];
    const rm_role *role = rr->role;
    const rs_role *rs = rr->stats;
    /* each path's place in "phases", for its children's "parent" */
    uint32_t *phase_of = malloc(((size_t)m->path_count + 1) * sizeof *phase_of);
    if (!phase_of)
        return -ENOMEM;
    for (uint32_t i = 0; i < rs->phase_count; i++)
        phase_of[rs->phases[i]] = i;
    json_begin_object(j, NULL);
    json_str(j, "role", role->name);
    json_u64(j, "processes", role->processes);
    usage_json(j, &rr->usage);
    json_str(j, "spans_state", report_state_name(rr->spans));
    if (role->imbalance > 0.0)
        json_double(j, "imbalance", role->imbalance, 6);
    else
        json_null(j, "imbalance");
    json_str(j, "imbalance_definition",
             "max / mean of per-process busy_ns over the role's processes (1 = even)");
    json_u64(j, "busy_ns", role->busy_ns);
    json_bool(j, "busy_estimated", rr->busy_estimated);
    json_str(j, "busy_definition",
             "sum of the top-level spans of every thread of every process of the role; "
             "the denominator of share_of_busy");
    json_u64(j, "busy_min_ns", role->busy_min_ns);
    json_u64(j, "busy_max_ns", role->busy_max_ns);
    if (role->busy_max_worker != RM_NONE)
        json_i64(j, "busy_max_pid", m->workers[role->busy_max_worker].pid);
    else
        json_null(j, "busy_max_pid");
    if (role->busy_max_worker != RM_NONE && rm_has_rank(&m->workers[role->busy_max_worker]))
        json_i64(j, "busy_max_rank", m->workers[role->busy_max_worker].rank);
    else
        json_null(j, "busy_max_rank");
    json_begin_array(j, "ranks");
    for (uint32_t i = 0; i < role->rank_count; i++)
        json_i64(j, NULL, role->ranks[i]);
    json_end_array(j);
    json_u64(j, "unranked_processes", role->unranked);
    json_begin_array(j, "phases");
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        uint32_t up = m->paths[rs->phases[i]].parent;
        phase_json(j, m, rr, i, up == role->root ? RM_NONE : phase_of[up]);
    }
    json_end_array(j);
    free(phase_of);
    char path[RM_PATH_BUF];
    json_begin_array(j, "dominant");
    for (uint32_t i = 0; i < rr->dominant_shown; i++)
        json_str(j, NULL, rm_path_str(m, rs->phases[rs->by_self[i]], path));
    json_end_array(j);
    if (rs->loop != RM_NONE) {
        rs_phase phase;
        run_stats_phase(m, rs, rs->loop, &phase);
        const rs_phase *ph = &phase;
        const rm_path *p = &m->paths[ph->path];
        json_begin_object(j, "loop");
        json_str(j, "path", rm_path_str(m, ph->path, path));
        json_u64(j, "calls", p->calls);
        json_ns(j, "mean_ns", ph->mean_ns);
        json_ns(j, "p50_ns", ph->p50_ns);
        json_ns(j, "p95_ns", ph->p95_ns);
        json_ns(j, "p99_ns", ph->p99_ns);
        json_u64(j, "in_processes", p->in_processes);
        json_end_object(j);
    } else {
        json_null(j, "loop");
    }
    json_begin_array(j, "no_span_counters");
    counters_json(j, m, rr, &rr->root_counters, 0);
    json_end_array(j);
    io_json(j, m, rr);
    memory_json(j, m, rr);
    gpu_json(j, m, rr);
    vram_json(j, m, rr);
    if (*rr->gpu_missing_why)
        json_str(j, "gpu_time_missing", rr->gpu_missing_why);
    else
        json_null(j, "gpu_time_missing");
    report_activity_json(j, m, rr);
    json_end_object(j);
    return 0;
}

/* A span path merged over every role: it names its own span and its parent's place in
 * "run_paths", never its "/" path (each role's phases have those). */
static void run_path_json(json_out *j, const report_model *r, const report_run_path *rp)
{
    const run_model *m = r->m;
    json_begin_object(j, NULL);
    json_str(j, "name", rm_str(m, rp->name));
    if (rp->parent != RM_NONE)
        json_u64(j, "parent", rp->parent);
    else
        json_null(j, "parent");
    json_u64(j, "calls", rp->calls);
    json_u64(j, "total_ns", rp->total_ns);
    json_u64(j, "self_ns", rp->self_ns);
    json_bool(j, "estimated", rp->estimated);
    json_begin_array(j, "roles");
    for (uint32_t i = 0; i < rp->role_count; i++)
        json_str(j, NULL, m->roles[r->run_path_roles[rp->roles_first + i]].name);
    json_end_array(j);
    json_begin_array(j, "counters");
    for (uint32_t i = 0; i < rp->counter_count; i++) {
        const report_run_counter *c = &r->run_counters[rp->counters_first + i];
        json_begin_object(j, NULL);
        json_str(j, "name", rm_str(m, c->name));
        json_i64(j, "sum", c->sum);
        json_bool(j, "overflowed", c->overflowed);
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
}

static const struct {
    uint32_t bit;
    const char *name;
} feature_names[] = {{LAPSE_FEATURE_SPANS, "spans"},   {LAPSE_FEATURE_TIMELINE, "timeline"},
                     {LAPSE_FEATURE_CPU, "cpu"},       {LAPSE_FEATURE_IO, "io"},
                     {LAPSE_FEATURE_MEMORY, "memory"}, {LAPSE_FEATURE_MARKERS, "markers"},
                     {LAPSE_FEATURE_DEVICE, "device"}, {LAPSE_FEATURE_ACTIVITY, "activity"}};

static void worker_json(json_out *j, const rm_worker *w, const report_usage *u)
{
    json_begin_object(j, NULL);
    json_str(j, "file", w->file);
    json_str(j, "host", w->host);
    json_i64(j, "pid", w->pid);
    json_i64(j, "ppid", w->ppid);
    json_str(j, "role", w->role);
    if (w->rank >= 0)
        json_i64(j, "rank", w->rank);
    else
        json_null(j, "rank");
    if (w->world_size >= 0)
        json_i64(j, "world_size", w->world_size);
    else
        json_null(j, "world_size");
    if (w->local_rank >= 0)
        json_i64(j, "local_rank", w->local_rank);
    else
        json_null(j, "local_rank");
    json_str(j, "launcher", w->launcher);
    json_str(j, "job_id", w->job_id);
    json_str(j, "run_id", w->run_id);
    json_bool(j, "final", (int)w->final);
    json_str(j, "end_reason", w->end_reason);
    json_str(j, "state", state_name(w->state));
    json_u64(j, "write_seq", w->write_seq);
    json_u64(j, "write_failures", w->write_failures);
    json_str(j, "write_error", w->write_error);
    json_u64(j, "start_real_ns", w->start_real_ns);
    json_u64(j, "written_real_ns", w->written_real_ns);
    json_u64(j, "wall_ns", w->wall_ns);
    json_u64(j, "cpu_user_ns", w->cpu_user_ns);
    json_begin_array(j, "features");
    for (size_t f = 0; f < sizeof feature_names / sizeof feature_names[0]; f++)
        if (w->features & feature_names[f].bit)
            json_str(j, NULL, feature_names[f].name);
    json_end_array(j);
    json_str(j, "missing", w->missing); /* asked for, failed to start, with why; "" none */
    json_str(j, "absent", w->absent);   /* asked for, not on this machine, with why */
    json_u64(j, "cpu_sys_ns", w->cpu_sys_ns);
    json_u64(j, "max_rss_kb", w->max_rss_kb);
    usage_json(j, u);
    json_u64(j, "threads", w->threads);
    json_u64(j, "busy_ns", w->busy_ns);
    json_u64(j, "span_calls", w->span_calls);
    json_bool(j, "stale", w->state == RM_STOPPED_EARLY || w->state == RM_GONE);
    json_u64(j, "stale_by_ns", w->stale_by_ns);
    json_u64(j, "stale_limit_ns", w->stale_limit_ns);
    json_u64(j, "silent_ns", w->silent_ns);
    json_u64(j, "snapshot_interval_ms", w->snapshot_interval_ms);
    json_u64(j, "timeline_dropped", w->timeline_dropped);
    json_u64(j, "folded_depth", w->folded_depth);
    json_u64(j, "folded_paths", w->folded_paths);
    json_u64(j, "unmatched_ends", w->unmatched_ends);
    json_u64(j, "dropped_counters", w->dropped_counters);
    if (w->cpu_sampler.period_ms) {
        json_begin_object(j, "cpu_sampler");
        json_u64(j, "period_ms", w->cpu_sampler.period_ms);
        json_u64(j, "ticks", w->cpu_sampler.ticks);
        json_u64(j, "late_ticks", w->cpu_sampler.late_ticks);
        json_u64(j, "cpu_ns", w->cpu_sampler.cpu_ns);
        json_bool(j, "realtime", (int)w->cpu_sampler.realtime);
        json_end_object(j);
    } else {
        json_null(j, "cpu_sampler");
    }
    if (w->activity_state) { /* the ACTIVITY collector's: collected, or missing (why) */
        static const char *const states[] = {"", "collected", "missing"};
        json_begin_object(j, "gpu_activity");
        json_str(j, "state", w->activity_state < 3 ? states[w->activity_state] : "");
        json_str(j, "note", w->activity_note);
        json_u64(j, "records", w->activity_records);
        json_u64(j, "dropped_activities", w->activity_dropped);
        json_end_object(j);
    } else {
        json_null(j, "gpu_activity");
    }
    json_u64(j, "max_depth", w->max_depth);
    json_u64(j, "max_paths", w->max_paths);
    json_u64(j, "max_spans", w->max_spans);
    json_u64(j, "max_counters", w->max_counters);
    json_end_object(j);
}

int report_write_json(FILE *out, const report_model *r, const report_options *o)
{
    (void)o;
    const run_model *m = r->m;
    json_out j;
    json_init(&j, out);
    json_begin_object(&j, NULL);
    json_str(&j, "schema", REPORT_SCHEMA);
    json_u64(&j, "schema_version", REPORT_SCHEMA_VERSION);

    json_begin_object(&j, "run");
    json_str(&j, "id", m->run_id);
    json_str(&j, "dir", m->dir);
    json_str(&j, "input", m->input);
    json_bool(&j, "single_file", m->single_file);
    json_u64(&j, "runtime_ns", r->header.runtime_ns);
    json_u64(&j, "processes", m->worker_count);
    json_begin_array(&j, "hosts");
    for (uint32_t h = 0; h < m->host_count; h++)
        json_str(&j, NULL, m->hosts[h]);
    json_end_array(&j);
    json_begin_object(&j, "roles");
    for (uint32_t i = 0; i < m->role_count; i++)
        json_u64(&j, m->roles[i].name, m->roles[i].processes);
    json_end_object(&j);
    json_u64(&j, "start_real_ns", m->start_real_ns);
    json_u64(&j, "end_real_ns", m->end_real_ns);
    json_u64(&j, "read_real_ns", m->read_real_ns);
    json_u64(&j, "run_ids", m->run_ids);
    json_begin_array(&j, "joined");
    for (uint32_t i = 0; i < m->joined_count; i++) {
        json_begin_object(&j, NULL);
        json_str(&j, "dir", m->joined[i].dir);
        json_u64(&j, "files", m->joined[i].files);
        json_u64(&j, "start_real_ns", m->joined[i].start_real_ns);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_u64(&j, "final_processes", r->header.final);
    json_u64(&j, "unreadable_files", m->unreadable_count);
    report_ranks_json_run(&j, &r->ranks);
    json_end_object(&j);

    json_begin_array(&j, "roles");
    for (uint32_t i = 0; i < m->role_count; i++)
        if (role_json(&j, r, i))
            return -ENOMEM;
    json_end_array(&j);

    if (r->run_paths_built) {
        json_begin_array(&j, "run_paths");
        for (uint32_t i = 0; i < r->run_path_count; i++)
            run_path_json(&j, r, &r->run_paths[i]);
        json_end_array(&j);
    } else {
        json_null(&j, "run_paths"); /* not built: never an empty list that reads as none */
    }

    json_begin_array(&j, "workers");
    for (uint32_t i = 0; i < m->worker_count; i++)
        worker_json(&j, &m->workers[i], &r->worker_usage[i]);
    json_end_array(&j);

    json_begin_array(&j, "unreadable");
    for (uint32_t i = 0; i < m->unreadable_count; i++) {
        json_begin_object(&j, NULL);
        json_str(&j, "file", m->unreadable[i].file);
        json_str(&j, "reason", m->unreadable[i].reason);
        json_end_object(&j);
    }
    json_end_array(&j);

    json_begin_array(&j, "superseded");
    for (uint32_t i = 0; i < m->superseded_count; i++)
        json_str(&j, NULL, m->superseded[i].dir);
    json_end_array(&j);

    report_samples_json(&j, r);
    report_causality_json(&j, r);
    report_windows_json(&j, r);

    json_begin_array(&j, "caveats");
    caveat_list_json(&j, m, &r->caveats, NULL);
    json_end_array(&j);

    json_end_object(&j);
    json_finish(&j);
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
