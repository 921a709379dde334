/* The four numbers of the header: wall, CPU and cores busy, user/sys, context
 * switches, of each process and of each role. */
#include "report_model.h"

#include <string.h>

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static void finish(report_usage *u)
{
    u->cpu_ns = sat_add(u->cpu_user_ns, u->cpu_sys_ns);
    u->has_cores_busy = u->has_cpu && u->wall_ns > 0;
    u->cores_busy = u->has_cores_busy ? (double)u->cpu_ns / (double)u->wall_ns : 0.0;
    if (!u->has_cpu)
        u->cpu_ns = u->cpu_user_ns = u->cpu_sys_ns = 0;
    if (!u->has_ctx)
        u->ctx_voluntary = u->ctx_involuntary = 0;
}

void report_usage_of_worker(const rm_worker *w, report_usage *u)
{
    memset(u, 0, sizeof *u);
    u->processes = 1;
    u->wall_ns = w->wall_ns;
    u->has_cpu = w->cpu_known;
    u->cpu_user_ns = w->cpu_user_ns;
    u->cpu_sys_ns = w->cpu_sys_ns;
    u->has_ctx = w->ctx_voluntary >= 0 && w->ctx_involuntary >= 0;
    u->ctx_voluntary = (uint64_t)w->ctx_voluntary;
    u->ctx_involuntary = (uint64_t)w->ctx_involuntary;
    finish(u);
}

void report_usage_of_role(const run_model *m, uint32_t r, report_usage *u)
{
    memset(u, 0, sizeof *u);
    u->has_cpu = u->has_ctx = 1;
    uint64_t first = 0, last = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != r)
            continue;
        report_usage one;
        report_usage_of_worker(w, &one);
        uint64_t end = sat_add(w->start_real_ns, w->wall_ns);
        if (!u->processes || w->start_real_ns < first)
            first = w->start_real_ns;
        if (!u->processes || end > last)
            last = end;
        u->processes++;
        u->has_cpu &= one.has_cpu;
        u->has_ctx &= one.has_ctx;
        u->cpu_user_ns = sat_add(u->cpu_user_ns, one.cpu_user_ns);
        u->cpu_sys_ns = sat_add(u->cpu_sys_ns, one.cpu_sys_ns);
        u->ctx_voluntary = sat_add(u->ctx_voluntary, one.ctx_voluntary);
        u->ctx_involuntary = sat_add(u->ctx_involuntary, one.ctx_involuntary);
    }
    if (!u->processes)
        u->has_cpu = u->has_ctx = 0;
    u->wall_ns = last - first;
    finish(u);
}
