/* The GPU block of a role: per device of each of its processes, the whole device's
 * utilisation (busy, idle), this run's, the memory it held, and GPU BY PHASE; and the
 * VRAM peaks torch read per device, joined to NVML's device of the same uuid. A mean over no reading is not a figure: has_* 0
 * (n/a), never 0%. */
#include "report_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *uuid_body(const char *u)
{
    return strncasecmp(u, "GPU-", 4) ? u : u + 4;
}

int report_uuid_same(const char *a, const char *b)
{
    return *a && *b && !strcasecmp(uuid_body(a), uuid_body(b));
}

/* Each torch line to NVML's line of the same uuid on the same host (its own
 * process's first), each NVML line to one at most; else why not. */
static void vram_join(const run_model *m, report_role *rr)
{
    for (uint32_t i = 0; i < rr->gpu_count; i++)
        rr->gpus[i].vram = -1;
    for (uint32_t i = 0; i < rr->vram_count; i++) {
        report_vram *v = &rr->vram[i];
        const char *host = m->workers[v->worker].host;
        int32_t best = -1, on_host = 0;
        const rm_gpu_device *no_uuid = NULL;
        for (uint32_t k = 0; k < rr->gpu_count; k++) {
            const report_gpu *g = &rr->gpus[k];
            if (strcmp(m->workers[g->worker].host, host))
                continue;
            on_host = 1;
            if (!*g->device->uuid && !no_uuid)
                no_uuid = g->device;
            if (g->vram < 0 && report_uuid_same(g->device->uuid, v->device->uuid) &&
                (best < 0 || (g->worker == v->worker && rr->gpus[best].worker != v->worker)))
                best = (int32_t)k;
        }
        if (!*v->device->uuid)
            v->join = REPORT_VRAM_NO_TORCH_UUID;
        else if (best >= 0) {
            v->join = REPORT_VRAM_JOINED;
            v->gpu = (uint32_t)best;
            rr->gpus[best].vram = (int32_t)i;
        } else if (no_uuid) {
            v->join = REPORT_VRAM_NVML_UUID_UNKNOWN;
            v->join_why = no_uuid->uuid_error;
        } else
            v->join = on_host ? REPORT_VRAM_NO_MATCH : REPORT_VRAM_NO_NVML;
    }
}

static int by_ticks(const void *a, const void *b)
{
    const report_gpu_phase *x = a, *y = b;
    if (x->ticks != y->ticks)
        return x->ticks < y->ticks ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name; /* the rest (0) first on a tie */
}

/* VRAM from torch: per device (its uuid), the largest process peaks of the role. */
static int vram_build(const run_model *m, uint32_t r, report_role *rr)
{
    uint32_t n = 0, present = 0;
    rr->vram_error = "";
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].role_index == r && m->workers[i].gpu_memory.present) {
            const rm_gpu_memory *g = &m->workers[i].gpu_memory;
            present++;
            n += g->device_count;
            rr->vram_resets += g->resets;
            if (!*rr->vram_error)
                rr->vram_error = g->error;
        }
    if (!present)
        return 0;
    if (n && !(rr->vram = calloc(n, sizeof *rr->vram)))
        return -ENOMEM;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != r || !w->gpu_memory.present)
            continue;
        for (uint32_t k = 0; k < w->gpu_memory.device_count; k++) {
            const rm_gpu_memory_device *d = &w->gpu_memory.devices[k];
            if (!d->allocated_peak_bytes && !d->reserved_peak_bytes)
                continue; /* a device the process never used */
            report_vram *v = NULL;
            for (uint32_t j = 0; *d->uuid && j < rr->vram_count && !v; j++)
                if (!strcmp(rr->vram[j].device->uuid, d->uuid))
                    v = &rr->vram[j];
            if (!v) {
                v = &rr->vram[rr->vram_count++];
                *v = (report_vram){i, d, 0, 0, 0, REPORT_VRAM_NO_NVML, 0, ""};
            }
            v->processes++;
            if (d->allocated_peak_bytes > v->allocated_peak_bytes) {
                v->allocated_peak_bytes = d->allocated_peak_bytes;
                v->worker = i;
                v->device = d;
            }
            if (d->reserved_peak_bytes > v->reserved_peak_bytes)
                v->reserved_peak_bytes = d->reserved_peak_bytes;
        }
    }
    rr->vram_state = rr->vram_count ? REPORT_MEASURED
                     : *rr->vram_error ? REPORT_UNREADABLE : REPORT_NONE_MEASURED;
    return 0;
}

int report_gpu_build(const run_model *m, uint32_t r, report_role *rr)
{
    int rc = vram_build(m, r, rr);
    if (rc)
        return rc;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].role_index == r)
            n += m->workers[i].gpu.device_count;
    rr->gpu_state = n || rr->vram_state == REPORT_MEASURED ? REPORT_MEASURED
                    : rr->vram_state ? rr->vram_state : REPORT_NOT_COLLECTED;
    if (!n) {
        vram_join(m, rr);
        return 0;
    }
    if (!(rr->gpus = calloc(n, sizeof *rr->gpus)))
        return -ENOMEM;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != r)
            continue;
        for (uint32_t k = 0; k < w->gpu.device_count; k++) {
            const rm_gpu_device *d = &w->gpu.devices[k];
            report_gpu *g = &rr->gpus[rr->gpu_count++];
            g->worker = i;
            g->device = d;
            g->ticks = d->ticks;
            g->interval_ms = w->gpu.interval_ms;
            g->has_busy = d->busy_ticks > 0;
            g->busy_pct = g->has_busy ? (double)d->busy_pct_sum / (double)d->busy_ticks : 0.0;
            g->idle_pct = g->has_busy ? 100.0 - g->busy_pct : 0.0;
            g->has_own = d->own_ticks > 0;
            g->own_pct = g->has_own ? (double)d->own_pct_sum / (double)d->own_ticks : 0.0;
            g->mem_peak_bytes = d->mem_peak_bytes;
            if (d->phase_count && !(g->phases = calloc(d->phase_count, sizeof *g->phases)))
                return -ENOMEM;
            for (uint32_t p = 0; p < d->phase_count; p++) {
                const rm_gpu_phase *ph = &d->phases[p];
                if (!ph->ticks)
                    continue;
                g->phases[g->phase_count++] = (report_gpu_phase){
                    ph->name, ph->ticks, (double)ph->own_pct_sum / (double)ph->ticks};
            }
            if (g->phase_count > 1)
                qsort(g->phases, g->phase_count, sizeof *g->phases, by_ticks);
        }
    }
    vram_join(m, rr);
    return 0;
}

void report_gpu_free(report_role *rr)
{
    for (uint32_t i = 0; i < rr->gpu_count; i++)
        free(rr->gpus[i].phases);
    free(rr->gpus);
    rr->gpus = NULL;
    rr->gpu_count = 0;
    free(rr->vram);
    rr->vram = NULL;
    rr->vram_count = 0;
}
