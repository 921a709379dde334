/* The text report: a header, one block per role, CAVEATS. Every figure comes from
 * the report model (analyze/report_model.h); this file only lays them out. */
#include "report_render.h"

#include "caveat_text.h"
#include "report_windows.h"
#include "format.h"
#include "report_activity.h"
#include "report_ranks.h"
#include "report_causality.h"
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

#define USAGE_PROCESSES_SHOWN 8 /* process rows under a role; --json has them all */

static void usage_row(FILE *out, const char *label, const report_usage *u)
{
    char wall[FMT_BUF], cpu[FMT_BUF], busy[FMT_BUF], user[FMT_BUF], sys[FMT_BUF];
    char vol[FMT_BUF], invol[FMT_BUF], us[2 * FMT_BUF + 4], cs[2 * FMT_BUF + 4];
    fmt_duration(wall, sizeof wall, (double)u->wall_ns);
    if (u->has_cpu) {
        fmt_duration(cpu, sizeof cpu, (double)u->cpu_ns);
        snprintf(us, sizeof us, "%s / %s", fmt_duration(user, sizeof user, (double)u->cpu_user_ns),
                 fmt_duration(sys, sizeof sys, (double)u->cpu_sys_ns));
    } else {
        snprintf(cpu, sizeof cpu, "-");
        snprintf(us, sizeof us, "-");
    }
    if (u->has_cores_busy)
        fmt_decimal(busy, sizeof busy, u->cores_busy, 2);
    else
        snprintf(busy, sizeof busy, "-");
    if (u->has_ctx)
        snprintf(cs, sizeof cs, "%s / %s", fmt_count(vol, sizeof vol, u->ctx_voluntary),
                 fmt_count(invol, sizeof invol, u->ctx_involuntary));
    else
        snprintf(cs, sizeof cs, "-");
    fprintf(out, "  %-22s %10s %10s %6s %23s %21s\n", label, wall, cpu, busy, us, cs);
}

/* The four numbers per role and per process: wall, CPU and cores busy, user/sys,
 * context switches (voluntary / involuntary). */
static void usage_block(FILE *out, const report_model *r)
{
    const run_model *m = r->m;
    if (!m->worker_count)
        return;
    fprintf(out, "  %-22s %10s %10s %6s %23s %21s\n", "Usage", "wall", "CPU", "cores",
            "user / sys", "ctx switches vol/inv");
    char label[64];
    for (uint32_t i = 0; i < m->role_count; i++) {
        snprintf(label, sizeof label, "%.40s x%u", m->roles[i].name, m->roles[i].processes);
        usage_row(out, label, &r->roles[i].usage);
        uint32_t shown = 0, more = 0;
        for (uint32_t k = 0; k < m->worker_count; k++) {
            if (m->workers[k].role_index != i)
                continue;
            if (shown == USAGE_PROCESSES_SHOWN) {
                more++;
                continue;
            }
            snprintf(label, sizeof label, "  pid %lld", (long long)m->workers[k].pid);
            usage_row(out, label, &r->worker_usage[k]);
            shown++;
        }
        if (more)
            fprintf(out, "    ... and %u more process%s (--json lists them all)\n", more,
                    more == 1 ? "" : "es");
    }
    fputs("  cores = CPU / wall, the cores kept busy; - = not measured (an older file, or a target\n"
          "  lapse record could not read at its end)\n", out);
}

static void header(FILE *out, const report_model *r)
{
    const run_model *m = r->m;
    char a[FMT_BUF], b[FMT_BUF];
    fprintf(out, "Run %s   Runtime %s   Processes %u", *m->run_id ? m->run_id : "(unknown)",
            r->header.has_runtime ? fmt_duration(a, sizeof a, (double)r->header.runtime_ns) : "n/a",
            m->worker_count);
    if (r->header.not_final)
        fprintf(out, " (%u not final)", r->header.not_final);
    if (m->unreadable_count)
        fprintf(out, " + %u unreadable", m->unreadable_count);
    fputs("   Roles ", out);
    for (uint32_t i = 0; i < m->role_count; i++)
        fprintf(out, "%s%s x%u", i ? ", " : "", m->roles[i].name, m->roles[i].processes);
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
    report_ranks_header(out, &r->ranks);
    fprintf(out, "%s %s\n", m->single_file ? "File" : "Dir", m->dir);
    if (m->joined_count)
        fprintf(out, "Joined: %u attempts started separately that ran at the same time, as one "
                     "run (each has a run id of its own):\n", m->joined_count);
    for (uint32_t i = 0; i < m->joined_count; i++)
        fprintf(out, "  %s  (%zu file%s, started %s)\n", m->joined[i].dir, m->joined[i].files,
                m->joined[i].files == 1 ? "" : "s", fmt_utc(b, sizeof b, m->joined[i].start_real_ns));
    if (r->header.mixed_run_ids)
        fprintf(out, "Note: these files carry %u different run ids; they are merged as one run.\n",
                m->run_ids);
    usage_block(out, r);
}

static void counter_line(FILE *out, const run_model *m, const report_counter *rc, int with_time,
                         int name_width)
{
    const rm_counter *c = &m->counters[rc->counter];
    char sum[FMT_BUF], rate[FMT_BUF], per[FMT_BUF], upd[FMT_BUF];
    fmt_int(sum + 1, sizeof sum - 1, c->sum);
    sum[0] = c->sum < 0 ? '<' : '>'; /* an overflowed sum: beyond the bound shown */
    const char *shown = c->overflowed ? sum : sum + 1;
    if (!with_time) { /* outside any span: no time to relate it to */
        fprintf(out, "    + %-*s %14s total   (%s update%s)\n", name_width, rm_str(m, c->name), shown,
                fmt_count(upd, sizeof upd, c->updates), c->updates == 1 ? "" : "s");
        return;
    }
    if (rc->has_rate)
        fmt_rate(rate, sizeof rate, rc->per_second);
    else
        snprintf(rate, sizeof rate, "n/a");
    if (rc->has_per_unit) {
        fmt_duration(per, sizeof per, rc->ns_per_unit);
        strncat(per, "/ea", sizeof per - strlen(per) - 1);
    } else {
        snprintf(per, sizeof per, "n/a");
    }
    fprintf(out, "    + %-*s %14s total %14s %12s   (%s update%s)\n", name_width, rm_str(m, c->name),
            shown, rate, per, fmt_count(upd, sizeof upd, c->updates), c->updates == 1 ? "" : "s");
}

/* The plain counters of one path (its io.* and mem.* are in the I/O and MEMORY
 * blocks), names aligned over all of its counters. */
static void counters_of(FILE *out, const run_model *m, const report_role *rr,
                        const report_counter_range *range, int with_time)
{
    int w = 12;
    for (uint32_t i = 0; i < range->count; i++) {
        int len = (int)strlen(rm_str(m, m->counters[rr->counters[range->first + i].counter].name));
        if (len > w)
            w = len < 40 ? len : 40;
    }
    for (uint32_t i = 0; i < range->count; i++) {
        const report_counter *rc = &rr->counters[range->first + i];
        if (rc->kind == REPORT_COUNTER_PLAIN)
            counter_line(out, m, rc, with_time, w);
    }
}

/* I/O BY PHASE: the phases opened with io=True, their bytes read at their own
 * entry and exit. */
static void io_block(FILE *out, const run_model *m, const report_role *rr)
{
    if (!rr->io_phase_count)
        return;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], pbuf[512], path[RM_PATH_BUF];
    fputs("\nI/O BY PHASE (measured exactly, at each phase's entry and exit)\n", out);
    for (uint32_t i = 0; i < rr->io_phase_count; i++) {
        const report_io_phase *io = &rr->io_phases[i];
        const char *ps = rm_path_str(m, rr->stats->phases[io->phase], path);
        fprintf(out, "  %-28s r %10s   w %10s   %s/s from disk\n", fit(pbuf, sizeof pbuf, ps, 28),
                fmt_bytes(a, sizeof a, (uint64_t)io->read_bytes),
                fmt_bytes(b, sizeof b, (uint64_t)io->write_bytes),
                io->has_disk_rate ? fmt_bytes(c, sizeof c, io->disk_bytes_per_second) : "n/a");
        fprintf(out, "  %-28s + %s read from page cache, %s written by the program (write calls)\n", "",
                fmt_bytes(a, sizeof a, io->cache_read_bytes),
                fmt_bytes(d, sizeof d, (uint64_t)io->write_chars));
        if (io->unreadable)
            fprintf(out, "  %-28s (%lld entries could not be measured and count nothing)\n", "",
                    (long long)io->unreadable);
    }
    fputs("  disk = read_bytes/write_bytes (what reached the device; writes as the kernel\n"
          "  dirtied pages); page cache = bytes read by syscalls that RAM served; lapse's own\n"
          "  file writes are measured and left out\n",
          out);
}

/* GPU TIME BY PHASE: the gpu_time phases, their GPU time (CUDA events at entry and
 * exit) beside their wall time. */
static void gpu_time_block(FILE *out, const run_model *m, const report_role *rr)
{
    if (!rr->gpu_phase_count)
        return;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], pbuf[512], path[RM_PATH_BUF];
    fputs("\nGPU TIME BY PHASE (CUDA events at each entry and exit, beside wall time)\n", out);
    fprintf(out, "  %-28s %10s %12s %12s %12s\n", "phase", "entries", "wall", "GPU", "GPU/entry");
    for (uint32_t i = 0; i < rr->gpu_phase_count; i++) {
        rs_phase ph;
        run_stats_phase(m, rr->stats, rr->gpu_phases[i], &ph);
        const rm_path *p = &m->paths[ph.path];
        fprintf(out, "  %-28s %10s %12s %12s %12s\n",
                fit(pbuf, sizeof pbuf, rm_path_str(m, ph.path, path), 28),
                fmt_count(a, sizeof a, p->calls), fmt_duration(b, sizeof b, (double)p->total_ns),
                p->gpu_timed ? fmt_duration(c, sizeof c, (double)p->gpu_ns) : "n/a",
                ph.gpu_mean_ns >= 0.0 ? fmt_duration(d, sizeof d, ph.gpu_mean_ns) : "n/a");
        if (p->gpu_untimed)
            fprintf(out, "  %-28s (%s entr%s without GPU time: not in its GPU figures)\n", "",
                    fmt_count(a, sizeof a, p->gpu_untimed), p->gpu_untimed == 1 ? "y" : "ies");
    }
    if (*rr->gpu_missing_why)
        fprintf(out, "  no GPU time: %s\n", rr->gpu_missing_why);
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

/* The bins as a sparkline, scaled to the largest (top): 8 heights of Unicode block
 * elements, or ASCII. A column with no bytes is a space; any bytes show at least the
 * lowest mark. */
static void sparkline(FILE *out, const double *bins, unsigned n, double top, int ascii)
{
    static const char *const blocks[8] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                          "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                          "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char marks[8] = {'.', ',', ':', '-', '=', '+', '*', '#'};
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
static void process_io_block(FILE *out, const report_role *rr, int ascii)
{
    const rs_io *io = &rr->stats->io;
    const report_process_io *pio = &rr->process_io;
    if (rr->process_io_state == REPORT_NOT_COLLECTED)
        return;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF];
    if (rr->process_io_state == REPORT_NONE_MEASURED) {
        fprintf(out, "\nI/O  none measured: no byte read or written in %s interval%s of %s "
                     "(%u process%s; lapse's own writes left out)\n",
                fmt_count(b, sizeof b, io->intervals), io->intervals == 1 ? "" : "s",
                fmt_duration(a, sizeof a, (double)io->interval_ms * 1e6), io->processes,
                io->processes == 1 ? "" : "es");
        return;
    }
    fprintf(out, "\nI/O  (process sampler, every %s, %u process%s)\n",
            fmt_duration(a, sizeof a, (double)io->interval_ms * 1e6), io->processes,
            io->processes == 1 ? "" : "es");
    if (rr->process_io_state == REPORT_UNREADABLE) {
        fprintf(out, "  no interval could be read (%llu unreadable): nothing to show\n",
                (unsigned long long)io->unreadable);
        return;
    }
    fputs("  bytes moved |", out);
    sparkline(out, io->bins, RS_IO_BINS, pio->peak_bin, ascii);
    fprintf(out, "|  peak %s/s, %s per column\n", fmt_bytes(a, sizeof a, pio->peak_bytes_per_second),
            fmt_duration(b, sizeof b, (double)io->bin_ns));
    fprintf(out, "  read     %10s   %s from disk, %s from page cache\n",
            fmt_bytes(a, sizeof a, io->read_chars), fmt_bytes(b, sizeof b, io->read_bytes),
            fmt_bytes(c, sizeof c, pio->read_cache_bytes));
    fprintf(out, "  written  %10s   by write calls; %s reached the disk\n",
            fmt_bytes(a, sizeof a, io->write_chars), fmt_bytes(d, sizeof d, io->write_bytes));
    if (pio->has_shares)
        fprintf(out, "  while no phase was open: %s of the bytes (%s with a phase open throughout, %s\n"
                     "  in intervals where phases opened or closed: not attributed)\n",
                fmt_percent(a, sizeof a, pio->quiet_share), fmt_percent(b, sizeof b, pio->phased_share),
                fmt_percent(c, sizeof c, pio->mixed_share));
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
            fmt_duration(a, sizeof a, pio->sampler_cpu_ns_per_interval));
}

/* Why a torch line met no NVML line (report_vram_join). */
static void vram_unjoined(FILE *out, const run_model *m, const report_vram *v)
{
    const char *host = m->workers[v->worker].host;
    switch (v->join) {
    case REPORT_VRAM_NO_TORCH_UUID: fputs("    not joined to NVML: torch gave no uuid\n", out); break;
    case REPORT_VRAM_NO_NVML:
        fprintf(out, "    not joined to NVML: no NVML reading of the role's devices on %s\n", host);
        break;
    case REPORT_VRAM_NO_MATCH:
        fprintf(out, "    not joined to NVML: no NVML device of %s has its uuid\n", host);
        break;
    case REPORT_VRAM_NVML_UUID_UNKNOWN:
        fprintf(out, "    not joined to NVML: a device NVML read on %s has no uuid (%s)\n", host,
                *v->join_why ? v->join_why : "its file records none: an older lapse wrote it");
        break;
    default: break;
    }
}

/* VRAM from torch, per device: the largest process peaks. Those joined to an NVML
 * line are on it (gpu_block); the others here, NVML's figures "-" (unknown, not 0). */
static void vram_lines(FILE *out, const run_model *m, const report_role *rr)
{
    char a[FMT_BUF], b[FMT_BUF];
    uint32_t unjoined = 0;
    if (rr->vram_state == REPORT_NOT_COLLECTED)
        return;
    for (uint32_t i = 0; i < rr->vram_count; i++)
        unjoined += rr->vram[i].join != REPORT_VRAM_JOINED;
    if (unjoined || rr->vram_state != REPORT_MEASURED)
        fputs("  VRAM from torch (its caching allocator; per device the largest process peak of the\n"
              "  role: a sum of peaks is no peak), not joined to an NVML line\n",
              out);
    if (rr->vram_state == REPORT_NONE_MEASURED)
        fputs("    no memory allocated through torch\n", out);
    for (uint32_t i = 0; i < rr->vram_count; i++) {
        const report_vram *v = &rr->vram[i];
        const rm_worker *w = &m->workers[v->worker];
        if (v->join == REPORT_VRAM_JOINED)
            continue;
        fprintf(out, "  cuda:%u %s (%s, pid %lld on %s%s): busy -, idle -, this run -;\n"
                     "    VRAM held peak -; VRAM allocated (peak) %s; VRAM reserved (peak) %s\n",
                v->device->index, *v->device->name ? v->device->name : "(unnamed)",
                *v->device->uuid ? v->device->uuid : "no uuid", (long long)w->pid, w->host,
                v->processes > 1 ? ", the largest of its processes" : "",
                fmt_bytes(a, sizeof a, v->allocated_peak_bytes),
                fmt_bytes(b, sizeof b, v->reserved_peak_bytes));
        vram_unjoined(out, m, v);
    }
    if (rr->vram_resets)
        fprintf(out, "    torch's peak stats were reset (seen at %llu reading%s): a peak reset "
                     "before lapse read it (after each snapshot) is missed\n",
                (unsigned long long)rr->vram_resets, rr->vram_resets == 1 ? "" : "s");
    if (*rr->vram_error)
        fprintf(out, "    a reading failed: %s\n", rr->vram_error);
}

/* torch's peaks on the NVML line they joined (by uuid), or why the line joins none. */
static void gpu_torch_line(FILE *out, const report_role *rr, const report_gpu *g)
{
    char a[FMT_BUF], b[FMT_BUF];
    if (g->vram >= 0) {
        const report_vram *v = &rr->vram[g->vram];
        fprintf(out, "    torch cuda:%u (joined by uuid %s%s): VRAM allocated (peak) %s; "
                     "VRAM reserved (peak) %s\n",
                v->device->index, v->device->uuid,
                v->processes > 1 ? ", the largest of the role's processes" : "",
                fmt_bytes(a, sizeof a, v->allocated_peak_bytes),
                fmt_bytes(b, sizeof b, v->reserved_peak_bytes));
    } else if (rr->vram_count && !*g->device->uuid) {
        fprintf(out, "    uuid unknown (%s): no torch line can join it\n",
                *g->device->uuid_error ? g->device->uuid_error
                                       : "its file records none: an older lapse wrote it");
    }
}

/* GPU: per device of each process, the whole device's utilisation, this run's (n/a
 * when never read: not 0%), the memory the process held, and GPU BY PHASE; torch's
 * VRAM peaks on the line of the device they joined. */
static void gpu_block(FILE *out, const run_model *m, const report_role *rr)
{
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF], pbuf[512];
    if (rr->gpu_state == REPORT_NOT_COLLECTED)
        return;
    fputs("\nGPU  (NVML: busy = the whole device, every process on it; this run = this process;\n"
          "  over the readings taken while the device held the process)\n", out);
    for (uint32_t i = 0; i < rr->gpu_count; i++) {
        const report_gpu *g = &rr->gpus[i];
        const rm_worker *w = &m->workers[g->worker];
        fprintf(out, "  %s (device %u, pid %lld on %s): busy %s, idle %s, this run %s;\n"
                     "    VRAM held peak %s; %llu readings, every %s\n",
                g->device->name, g->device->index, (long long)w->pid, w->host,
                g->has_busy ? fmt_percent(a, sizeof a, g->busy_pct / 100.0) : "n/a",
                g->has_busy ? fmt_percent(b, sizeof b, g->idle_pct / 100.0) : "n/a",
                g->has_own ? fmt_percent(c, sizeof c, g->own_pct / 100.0) : "n/a",
                fmt_bytes(d, sizeof d, g->mem_peak_bytes), (unsigned long long)g->ticks,
                fmt_duration(e, sizeof e, (double)g->interval_ms * 1e6));
        gpu_torch_line(out, rr, g);
        if (!g->phase_count)
            continue;
        fputs("  GPU BY PHASE (this run's utilisation while each top-level span was open)\n", out);
        for (uint32_t k = 0; k < g->phase_count; k++) {
            const report_gpu_phase *p = &g->phases[k];
            fprintf(out, "    %-28s %7s  %llu reading%s\n",
                    fit(pbuf, sizeof pbuf, p->name ? rm_str(m, p->name) : "(other phases)", 28),
                    fmt_percent(a, sizeof a, p->own_pct / 100.0), (unsigned long long)p->ticks,
                    p->ticks == 1 ? "" : "s");
        }
    }
    vram_lines(out, m, rr);
}

/* MEMORY: peak RSS (getrusage and the process sampler) and RSS growth of the
 * io=True phases, measured at their entry and exit. */
static void memory_block(FILE *out, const run_model *m, const report_role *rr)
{
    const report_memory *mem = &rr->memory;
    const rs_io *io = &rr->stats->io;
    char a[FMT_BUF], b[FMT_BUF], pbuf[512], path[RM_PATH_BUF];
    if (mem->state == REPORT_NOT_COLLECTED)
        return;
    if (mem->state == REPORT_UNREADABLE) {
        fputs("\nMEMORY  could not be read (no RSS reading succeeded)\n", out);
        return;
    }
    fputs("\nMEMORY\n", out);
    if (mem->rusage_peak_worker != RM_NONE) {
        const rm_worker *top = &m->workers[mem->rusage_peak_worker];
        fprintf(out, "  peak RSS per process: max %s (pid %lld on %s)",
                fmt_bytes(a, sizeof a, mem->rusage_peak_bytes), (long long)top->pid, top->host);
        if (mem->rusage_processes > 1)
            fprintf(out, ", mean %s over %u processes", fmt_bytes(b, sizeof b, mem->rusage_mean_bytes),
                    mem->rusage_processes);
        fputs(" (getrusage)\n", out);
    }
    if (io->rss_peak_bytes) {
        const rm_worker *w = &m->workers[io->rss_peak_worker];
        fprintf(out, "  peak RSS sampled: %s (pid %lld on %s; read every %s, a peak between two\n"
                     "  readings is missed)\n",
                fmt_bytes(a, sizeof a, io->rss_peak_bytes), (long long)w->pid, w->host,
                fmt_duration(b, sizeof b, (double)io->rss_interval_ms * 1e6));
    }
    if (!mem->growth_count)
        return;
    fputs("  RSS growth by phase (measured at each io=True phase's entry and exit; the whole\n"
          "  process's RSS, so other threads' allocations count too):\n", out);
    for (uint32_t i = 0; i < mem->growth_count; i++) {
        const report_growth *g = &mem->growth[i];
        const char *ps = rm_path_str(m, rr->stats->phases[g->phase], path);
        uint64_t mag = g->growth_bytes < 0 ? (uint64_t)(-g->growth_bytes) : (uint64_t)g->growth_bytes;
        fprintf(out, "    %-28s %c%s over %llu call%s", fit(pbuf, sizeof pbuf, ps, 28),
                g->growth_bytes < 0 ? '-' : '+', fmt_bytes(a, sizeof a, mag),
                (unsigned long long)g->calls, g->calls == 1 ? "" : "s");
        if (g->calls > 1)
            fprintf(out, ", %c%s per call", g->growth_bytes < 0 ? '-' : '+',
                    fmt_bytes(b, sizeof b, g->per_call_bytes));
        if (g->unmeasured)
            fprintf(out, " (%lld not measured)", (long long)g->unmeasured);
        fputc('\n', out);
    }
}

static void dominant_block(FILE *out, const report_model *r, const report_role *rr)
{
    const run_model *m = r->m;
    const rm_role *role = rr->role;
    const rs_role *rs = rr->stats;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF], f[FMT_BUF], pbuf[512];
    char path[RM_PATH_BUF];
    int width = PATH_MIN;
    uint32_t shown = rr->dominant_shown;
    for (uint32_t i = 0; i < shown; i++) {
        int len = (int)strlen(rm_path_str(m, rs->phases[rs->by_self[i]], path));
        if (len > width)
            width = len < PATH_MAX_WIDTH ? len : PATH_MAX_WIDTH;
    }
    fprintf(out, "\n%-*s %12s %10s %7s %10s %10s%s\n", width + 2, "DOMINANT PHASES by self time",
            "calls", "self", "procs", "p50", "p99", rs->has_wait ? "     wait   ticks" : "");
    for (uint32_t i = 0; i < shown; i++) {
        uint32_t k = rs->by_self[i];
        rs_phase phase;
        run_stats_phase(m, rs, k, &phase);
        const rs_phase *ph = &phase;
        const rm_path *p = &m->paths[ph->path];
        snprintf(e, sizeof e, "%u/%u", p->in_processes, role->processes);
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
                fit(pbuf, sizeof pbuf, rm_path_str(m, ph->path, path), width),
                fmt_count(a, sizeof a, p->calls), fmt_duration(b, sizeof b, (double)ph->self_ns), e,
                p->calls ? fmt_duration(c, sizeof c, ph->p50_ns) : "-",
                p->calls ? fmt_duration(d, sizeof d, ph->p99_ns) : "-", wait);
        counters_of(out, m, rr, &rr->phase_counters[k], 1);
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
    if (rr->estimated_shown) {
        fputs("  ~ = estimated from a sample, not measured. Totals are scaled by the rate:\n", out);
        for (uint32_t i = 0; i < shown; i++) {
            uint32_t pi = rs->phases[rs->by_self[i]];
            const rm_path *p = &m->paths[pi];
            if (p->sample_stride)
                fprintf(out, "      %-*s 1 entry in %u\n", width,
                        fit(pbuf, sizeof pbuf, rm_path_str(m, pi, path), width), p->sample_stride);
            else if (p->child_estimated)
                fprintf(out, "      %-*s self time: total minus estimated children\n", width,
                        fit(pbuf, sizeof pbuf, rm_path_str(m, pi, path), width));
        }
    }

    /* counters of paths not listed */
    int header_done = 0;
    for (uint32_t i = 0; i < rs->phase_count; i++) {
        if (!rr->phase_counters[i].plain)
            continue;
        int listed = 0;
        for (uint32_t k = 0; k < shown && !listed; k++)
            listed = rs->by_self[k] == i;
        if (listed)
            continue;
        const rm_path *p = &m->paths[rs->phases[i]];
        if (!header_done) {
            fputs("\nCOUNTERS on paths not listed above (rates per second of the path's total time)\n", out);
            header_done = 1;
        }
        fprintf(out, "  %s  (%s calls, total %s)\n", rm_path_str(m, rs->phases[i], path),
                fmt_count(a, sizeof a, p->calls),
                fmt_duration(b, sizeof b, (double)p->total_ns));
        counters_of(out, m, rr, &rr->phase_counters[i], 1);
    }

    /* the most-called loop */
    if (rs->loop != RM_NONE) {
        rs_phase phase;
        run_stats_phase(m, rs, rs->loop, &phase);
        const rs_phase *ph = &phase;
        const rm_path *p = &m->paths[ph->path];
        fprintf(out, "\nMOST-CALLED LOOP  %s%s  (%s calls in %u process%s%s)\n",
                p->sample_stride ? "~" : "", rm_path_str(m, ph->path, path),
                fmt_count(a, sizeof a, p->calls),
                p->in_processes, p->in_processes == 1 ? "" : "es",
                p->sample_stride ? ", estimated from a sample" : "");
        fprintf(out, "  mean %10s   p50 %10s   p95 %10s   p99 %10s   (wall time per call)\n",
                fmt_duration(a, sizeof a, ph->mean_ns), fmt_duration(b, sizeof b, ph->p50_ns),
                fmt_duration(c, sizeof c, ph->p95_ns), fmt_duration(d, sizeof d, ph->p99_ns));
    }
}

static void role_block(FILE *out, const report_model *r, uint32_t ri, int ascii)
{
    const run_model *m = r->m;
    const report_role *rr = &r->roles[ri];
    const rm_role *role = rr->role;
    const rs_role *rs = rr->stats;
    char name[256], a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], pbuf[512], path[RM_PATH_BUF];
    upper(name, sizeof name, *role->name ? role->name : "(no role)");
    if (rr->spans == REPORT_NOT_COLLECTED) /* no busy time to compare */
        snprintf(a, sizeof a, "spans not collected");
    else if (role->imbalance > 0.0)
        snprintf(a, sizeof a, "imbalance %.2f*", role->imbalance);
    else
        snprintf(a, sizeof a, "imbalance n/a*");
    fprintf(out, "\n%s  (%u process%s, %s)\n", name, role->processes,
            role->processes == 1 ? "" : "es", a);
    rule(out);
    if (rr->spans == REPORT_NOT_COLLECTED) {
        /* the header says so */
    } else if (!rs->phase_count) {
        fputs("no spans recorded in this role\n", out);
    } else {
        int width = PATH_MIN;
        for (uint32_t i = 0; i < rr->top_shown; i++) {
            int len = (int)strlen(rm_path_str(m, rs->phases[rs->top_level[i]], path));
            if (len > width)
                width = len < PATH_MAX_WIDTH ? len : PATH_MAX_WIDTH;
        }
        fprintf(out, "share of %s busy time (sum of top-level spans, %u process%s): %s%s\n",
                role->name, role->processes, role->processes == 1 ? "" : "es",
                rr->busy_estimated ? "~" : "", fmt_duration(a, sizeof a, (double)role->busy_ns));
        for (uint32_t i = 0; i < rr->top_shown; i++) {
            rs_phase phase;
            run_stats_phase(m, rs, rs->top_level[i], &phase);
            const rs_phase *ph = &phase;
            const rm_path *p = &m->paths[ph->path];
            fprintf(out, "%c %-*s %8s %12s\n", p->sample_stride ? '~' : ' ', width,
                    fit(pbuf, sizeof pbuf, rm_path_str(m, ph->path, path), width),
                    fmt_percent(a, sizeof a, ph->share_of_busy),
                    fmt_duration(b, sizeof b, (double)p->total_ns));
        }
        if (rr->rest_count)
            fprintf(out, "  ... %u more top-level spans: %s (%s)\n", rr->rest_count,
                    fmt_percent(a, sizeof a, rr->rest_share), fmt_duration(b, sizeof b, (double)rr->rest_ns));
    }
    if (role->processes > 1 && rr->spans != REPORT_NOT_COLLECTED) {
        const rm_worker *mw = role->busy_max_worker != RM_NONE ? &m->workers[role->busy_max_worker] : NULL;
        fprintf(out, "busy per process%s: min %s, mean %s, max %s",
                rr->busy_estimated ? " (~ estimates: a top-level span is sampled)" : "",
                fmt_duration(a, sizeof a, (double)role->busy_min_ns),
                fmt_duration(b, sizeof b, rr->busy_mean_ns),
                fmt_duration(c, sizeof c, (double)role->busy_max_ns));
        if (mw && rm_has_rank(mw))
            fprintf(out, " (rank %lld, pid %lld on %s)", (long long)mw->rank, (long long)mw->pid, mw->host);
        else if (mw)
            fprintf(out, " (pid %lld on %s)", (long long)mw->pid, mw->host);
        fputc('\n', out);
    }
    if (rs->phase_count) {
        dominant_block(out, r, rr);
        report_ranks_block(out, m, rr);
        io_block(out, m, rr);
        gpu_time_block(out, m, rr);
    }
    process_io_block(out, rr, ascii);
    memory_block(out, m, rr);
    gpu_block(out, m, rr);
    report_activity_block(out, m, rr);
    if (rr->root_counters.count) {
        fputs("\nCOUNTERS outside any span\n", out);
        counters_of(out, m, rr, &rr->root_counters, 0);
    }
}

#define CAVEATS_PER_KIND 10

static void caveats_block(FILE *out, const report_model *r)
{
    const caveat_list *l = &r->caveats;
    if (!l->count) {
        fputs("CAVEATS none\n", out);
        return;
    }
    fputs("CAVEATS\n", out);
    char msg[CAVEAT_TEXT_MAX];
    const char *last = NULL;
    unsigned same = 0, hidden = 0;
    for (uint32_t i = 0; i < l->count; i++) {
        const char *kind = caveat_kind_name(l->items[i].kind);
        if (!last || strcmp(last, kind)) {
            if (hidden)
                fprintf(out, "  %-16s ... and %u more (--json lists them all)\n", last, hidden);
            hidden = 0;
            last = kind;
            same = 0;
        }
        if (same++ >= CAVEATS_PER_KIND) {
            hidden++;
            continue;
        }
        fprintf(out, "  %-16s %s\n", kind, caveat_text(r->m, &l->items[i], msg, sizeof msg));
    }
    if (hidden)
        fprintf(out, "  %-16s ... and %u more (--json lists them all)\n", last, hidden);
}

int report_write_text(FILE *out, const report_model *r, const report_options *o)
{
    const run_model *m = r->m;
    header(out, r);
    int any_role_block = 0;
    for (uint32_t i = 0; i < m->role_count; i++) {
        if (r->roles[i].samples_only)
            continue; /* its PYTHON SAMPLES block says it all */
        role_block(out, r, i, o && o->ascii);
        any_role_block |= r->roles[i].spans != REPORT_NOT_COLLECTED;
    }
    if (any_role_block)
        fputs("\n* imbalance = max / mean of per-process busy time in the role; busy time = sum of\n"
              "  a process's top-level spans over all its threads. 1.00 is perfectly even.\n",
              out);
    if (!m->worker_count)
        fputs("\nNo file of this run could be read.\n", out);
    report_samples_text(out, r);
    report_causality_text(out, r);
    report_windows_text(out, r);
    fputc('\n', out);
    caveats_block(out, r);
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
