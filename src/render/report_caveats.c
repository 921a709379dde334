#include "report_caveats.h"
#include "report_ranks.h"

#include "analyze/sample_stats.h"
#include "format.h"
#include "store/sample_set.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *report_worker_name(char *buf, size_t n, const rm_worker *w)
{
    if (w->rank >= 0)
        snprintf(buf, n, "%s pid %lld on %s (rank %lld)", w->role, (long long)w->pid, w->host,
                 (long long)w->rank);
    else
        snprintf(buf, n, "%s pid %lld on %s", w->role, (long long)w->pid, w->host);
    return buf;
}

typedef struct emitter {
    report_caveat_fn fn;
    void *ctx;
    size_t count;
    char msg[4096];
} emitter;

static void emit(emitter *e, report_caveat *c)
{
    c->message = e->msg;
    e->fn(e->ctx, c);
    e->count++;
}

/* Appends to e->msg. */
static void add(emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(emitter *e, const char *fmt, ...)
{
    size_t len = strlen(e->msg);
    if (len >= sizeof e->msg - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + len, sizeof e->msg - len, fmt, ap);
    va_end(ap);
}

/* Names up to `limit` workers for which pick() is nonzero. */
static void name_workers(emitter *e, const run_model *m, uint64_t (*pick)(const rm_worker *),
                         unsigned limit)
{
    unsigned shown = 0, total = 0;
    char name[512], num[FMT_BUF];
    for (uint32_t i = 0; i < m->worker_count; i++) {
        uint64_t v = pick(&m->workers[i]);
        if (!v)
            continue;
        if (shown < limit) {
            add(e, "%s%s: %s", shown ? "; " : "", report_worker_name(name, sizeof name, &m->workers[i]),
                fmt_count(num, sizeof num, v));
            shown++;
        }
        total++;
    }
    if (total > shown)
        add(e, "; and %u more", total - shown);
}

static uint64_t w_dropped(const rm_worker *w) { return w->timeline_dropped; }
static uint64_t w_folded(const rm_worker *w) { return w->folded_depth + w->folded_paths; }
static uint64_t w_unmatched(const rm_worker *w) { return w->unmatched_ends; }
static uint64_t w_counters(const rm_worker *w) { return w->dropped_counters; }
static uint64_t w_proc_unreadable(const rm_worker *w) { return w->proc.unreadable; }

/* Sums pick() over workers; *procs counts the workers with a nonzero value, *one is
 * the worker when exactly one has. */
static uint64_t sum_workers(const run_model *m, uint64_t (*pick)(const rm_worker *),
                            uint32_t *procs, const rm_worker **one)
{
    uint64_t s = 0;
    *procs = 0;
    *one = NULL;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        uint64_t v = pick(&m->workers[i]);
        if (!v)
            continue;
        s += v;
        if (++*procs == 1)
            *one = &m->workers[i];
    }
    if (*procs != 1)
        *one = NULL;
    return s;
}

static _Thread_local const run_model *folded_model; /* for the qsort comparator */

static int cmp_folded(const void *a, const void *b)
{
    const rm_path *x = &folded_model->paths[*(const uint32_t *)a];
    const rm_path *y = &folded_model->paths[*(const uint32_t *)b];
    if (x->folded != y->folded)
        return x->folded > y->folded ? -1 : 1;
    int r = strcmp(folded_model->roles[x->role].name, folded_model->roles[y->role].name);
    return r ? r : strcmp(x->path, y->path);
}

long report_caveats(const run_model *m, report_caveat_fn fn, void *ctx)
{
    /* what needs memory first: out of it, no caveat is emitted */
    emitter *e = calloc(1, sizeof *e);
    uint32_t folded_paths = 0;
    for (uint32_t i = 0; i < m->path_count; i++)
        folded_paths += m->paths[i].folded != 0;
    uint32_t *paths = malloc((folded_paths ? folded_paths : 1) * sizeof *paths);
    int64_t gone[8], world;
    int64_t missing = e && paths ? report_missing_ranks(m, gone, 8, &world) : -ENOMEM;
    if (missing < 0) {
        free(e);
        free(paths);
        return -ENOMEM;
    }
    e->fn = fn;
    e->ctx = ctx;
    char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], name[512];

    for (uint32_t i = 0; i < m->unreadable_count; i++) {
        report_caveat cv = {.kind = "unreadable", .file = m->unreadable[i].file};
        e->msg[0] = 0;
        add(e, "%s: %s; left out of every number", m->unreadable[i].file,
            m->unreadable[i].reason);
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->duplicate_count; i++) {
        const rm_duplicate *d = &m->duplicates[i];
        report_caveat cv = {.kind = "duplicate", .file = d->file, .kept = d->kept, .count = d->count};
        e->msg[0] = 0;
        if (d->count == 1)
            add(e, "%s is the same process as %s", d->file, d->kept);
        else
            add(e, "%s and %s more images are the same process as %s", d->file,
                fmt_count(a, sizeof a, d->count - 1), d->kept);
        add(e, " (a copy with the same host, pid and session start, or pack members that share "
               "its bytes): counted once, from %s", d->kept);
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->state != RM_STOPPED_EARLY)
            continue;
        report_caveat cv = {.kind = "stale", .file = w->file, .worker = w, .processes = 1};
        e->msg[0] = 0;
        add(e, "%s stopped writing %s before the run's end (last of %llu writes at %s; "
               "snapshots every %s; no final write): killed, or its later writes failed (a "
               "full disk, a permission: its stderr then says \"lapse: profile not saved\"); "
               "the file cannot tell which; its numbers end there",
            report_worker_name(name, sizeof name, w), fmt_duration(a, sizeof a, (double)w->stale_by_ns),
            (unsigned long long)w->write_seq, fmt_utc(b, sizeof b, w->written_real_ns),
            fmt_duration(c, sizeof c, (double)w->snapshot_interval_ms * 1e6));
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->state != RM_GONE)
            continue;
        report_caveat cv = {.kind = "stale", .file = w->file, .worker = w, .processes = 1};
        e->msg[0] = 0;
        add(e, "%s is gone (no process %lld on this host) and its file holds no final write: "
               "after its last write that landed, at %s (snapshots every %s), it was killed "
               "(SIGKILL, the OOM killer), left by _exit, or its writes failed (a full disk, a "
               "permission: its stderr then says \"lapse: profile not saved\"); the file cannot "
               "tell which; its numbers end there",
            report_worker_name(name, sizeof name, w), (long long)w->pid,
            fmt_utc(b, sizeof b, w->written_real_ns),
            fmt_duration(c, sizeof c, (double)w->snapshot_interval_ms * 1e6));
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->state != RM_RUNNING && w->state != RM_ENDED_UNSEEN)
            continue;
        report_caveat cv = {.kind = "not_final", .file = w->file, .worker = w, .processes = 1};
        e->msg[0] = 0;
        if (w->state == RM_RUNNING)
            add(e, "%s is still running (last snapshot %s ago, snapshots every %s): "
                   "the run is not over and its numbers are a snapshot",
                report_worker_name(name, sizeof name, w), fmt_duration(a, sizeof a, (double)w->silent_ns),
                fmt_duration(b, sizeof b, (double)w->snapshot_interval_ms * 1e6));
        else
            add(e, "%s wrote no final file and no snapshot for %s (snapshots every %s): "
                   "killed, wedged, or its writes failed after its last snapshot; up to one "
                   "interval of its work is missing",
                report_worker_name(name, sizeof name, w), fmt_duration(a, sizeof a, (double)w->silent_ns),
                fmt_duration(b, sizeof b, (double)w->snapshot_interval_ms * 1e6));
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->state != RM_FINAL ||
            (strncmp(w->end_reason, "SIG", 3) != 0 && strcmp(w->end_reason, "signal") != 0))
            continue;
        report_caveat cv = {.kind = "signal", .file = w->file, .worker = w, .processes = 1};
        e->msg[0] = 0;
        add(e, "%s ended on %s (its last file was written at the signal; work it had not "
               "reached is not in the run)",
            report_worker_name(name, sizeof name, w), w->end_reason);
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!w->write_failures)
            continue;
        report_caveat cv = {.kind = "write_failed", .file = w->file, .worker = w, .processes = 1};
        e->msg[0] = 0;
        add(e, "%s: %llu of its writes failed before the one its file holds (write %llu; "
               "the last failure: %s); a write holds everything up to it, so none of that is "
               "lost",
            report_worker_name(name, sizeof name, w), (unsigned long long)w->write_failures,
            (unsigned long long)w->write_seq, w->write_error[0] ? w->write_error : "no reason recorded");
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->leftover_count; i++) {
        const rm_leftover *l = &m->leftovers[i];
        report_caveat cv = {.kind = "leftover_tmp", .file = l->temp};
        e->msg[0] = 0;
        add(e, "%s: a temporary left by pid %lld, which is gone (killed while it wrote, or "
               "its rename failed), last written at %s; %s %s (the next write of that file "
               "removes the temporary)",
            l->temp, (long long)l->pid, fmt_utc(a, sizeof a, l->mtime_ns), l->file,
            l->worker != RM_NONE ? "holds the write before it" : "was not read");
        emit(e, &cv);
    }

    for (uint32_t i = 0; i < m->superseded_count; i++) {
        const rm_superseded *s = &m->superseded[i];
        report_caveat cv = {.kind = "superseded", .file = s->dir};
        e->msg[0] = 0;
        add(e, "superseded attempt %s (%zu file%s, last written %s) is not included; pass "
               "its path to report it",
            s->dir, s->files, s->files == 1 ? "" : "s", fmt_utc(a, sizeof a, s->newest_mtime_ns));
        emit(e, &cv);
    }

    for (uint32_t r = 0; r < m->role_count; r++) {
        const rm_role *role = &m->roles[r];
        if (!role->over_busy && role->top_total_ns <= role->busy_ns)
            continue;
        report_caveat cv = {.kind = "inconsistent", .count = role->over_busy,
                            .processes = role->processes};
        e->msg[0] = 0;
        add(e, "the sums of role %s do not hold together: its top-level spans hold %s, its "
               "busy time (the sum of each thread's top-level spans as the files record it) is %s",
            role->name, fmt_duration(a, sizeof a, (double)role->top_total_ns),
            fmt_duration(b, sizeof b, (double)role->busy_ns));
        if (role->over_busy)
            add(e, "; %s path%s hold%s more time than that and show%s no share", 
                fmt_count(c, sizeof c, role->over_busy), role->over_busy == 1 ? "" : "s",
                role->over_busy == 1 ? "s" : "", role->over_busy == 1 ? "s" : "");
        add(e, " (a file damaged or not written by lapse, or a snapshot written as a span ended)");
        emit(e, &cv);
    }

    uint32_t procs;
    const rm_worker *one;
    uint64_t n = sum_workers(m, w_dropped, &procs, &one);
    if (n) {
        report_caveat cv = {.kind = "dropped_spans", .worker = one, .file = one ? one->file : NULL,
                            .count = n, .processes = procs};
        e->msg[0] = 0;
        add(e, "the timeline had no room for %s spans in %u of %u processes (bounded by "
               "max_spans): span totals, calls and histograms are complete, exported "
               "timelines miss them (",
            fmt_count(a, sizeof a, n), procs, m->worker_count);
        name_workers(e, m, w_dropped, 4);
        add(e, ")");
        emit(e, &cv);
    }

    n = sum_workers(m, w_folded, &procs, &one);
    if (n || folded_paths) {
        uint32_t k = 0;
        uint64_t by_depth = 0, by_paths = 0;
        for (uint32_t i = 0; i < m->worker_count; i++) {
            by_depth += m->workers[i].folded_depth;
            by_paths += m->workers[i].folded_paths;
        }
        for (uint32_t i = 0; i < m->path_count; i++)
            if (m->paths[i].folded)
                paths[k++] = i;
        folded_model = m;
        qsort(paths, k, sizeof *paths, cmp_folded);
        report_caveat cv = {.kind = "folded", .worker = one, .file = one ? one->file : NULL,
                            .count = n, .processes = procs, .paths = paths, .path_count = k};
        e->msg[0] = 0;
        add(e, "%s spans were folded into their parent in %u of %u processes (%s past the depth "
               "bound, %s past the path bound); their time counts as the parent's self time. "
               "Parents that received them: ",
            fmt_count(a, sizeof a, n), procs, m->worker_count, fmt_count(b, sizeof b, by_depth),
            fmt_count(c, sizeof c, by_paths));
        for (uint32_t i = 0; i < k && i < 6; i++) {
            const rm_path *p = &m->paths[paths[i]];
            add(e, "%s%s:%s (%s)", i ? ", " : "", m->roles[p->role].name,
                p->parent == RM_NONE ? "(outside any span)" : p->path,
                fmt_count(a, sizeof a, p->folded));
        }
        if (k > 6)
            add(e, ", and %u more", k - 6);
        emit(e, &cv);
    }

    n = sum_workers(m, w_unmatched, &procs, &one);
    if (n) {
        report_caveat cv = {.kind = "unmatched_ends", .worker = one, .file = one ? one->file : NULL,
                            .count = n, .processes = procs};
        e->msg[0] = 0;
        add(e, "%s span ends did not match the innermost open span in %u of %u processes (an "
               "end with nothing of that name open, or spans closed implicitly by an outer end); "
               "spans closed that way end at the outer end (",
            fmt_count(a, sizeof a, n), procs, m->worker_count);
        name_workers(e, m, w_unmatched, 4);
        add(e, ")");
        emit(e, &cv);
    }

    n = sum_workers(m, w_counters, &procs, &one);
    if (n) {
        report_caveat cv = {.kind = "dropped_counters", .worker = one,
                            .file = one ? one->file : NULL, .count = n, .processes = procs};
        e->msg[0] = 0;
        add(e, "%s counter updates found no room in the counter table in %u of %u processes "
               "(bounded by max_counters): counter totals are low (",
            fmt_count(a, sizeof a, n), procs, m->worker_count);
        name_workers(e, m, w_counters, 4);
        add(e, ")");
        emit(e, &cv);
    }

    if (m->overflowed_counters) {
        report_caveat cv = {.kind = "overflow", .count = m->overflowed_counters};
        e->msg[0] = 0;
        add(e, "%s counter%s overflowed a 64-bit sum when the processes' counts were added (",
            fmt_count(a, sizeof a, m->overflowed_counters), m->overflowed_counters == 1 ? "" : "s");
        unsigned shown = 0;
        for (uint32_t i = 0; i < m->counter_count && shown < 4; i++) {
            const rm_counter *ct = &m->counters[i];
            if (!ct->overflowed)
                continue;
            const rm_path *p = &m->paths[ct->path];
            add(e, "%s%s:%s%s%s", shown++ ? ", " : "", m->roles[p->role].name,
                p->parent == RM_NONE ? "" : p->path, p->parent == RM_NONE ? "" : " ",
                rm_str(m, ct->name));
        }
        if (m->overflowed_counters > shown)
            add(e, ", and %u more", m->overflowed_counters - shown);
        add(e, "): each is shown at the bound it passed, with no rate");
        emit(e, &cv);
    }

    if (missing) {
        report_caveat cv = {.kind = "missing_ranks", .count = missing};
        char list[128];
        e->msg[0] = 0;
        add(e, "%u of the %lld ranks of the world left no readable file: rank%s %s%s (died before "
               "their first write, wrote elsewhere, or their file is unreadable); every "
               "cross-rank figure is over the ranks that did",
            (unsigned)missing, (long long)world, missing == 1 ? "" : "s",
            report_fmt_ranks(list, sizeof list, gone, missing < 8 ? (uint32_t)missing : 8),
            missing > 8 ? ",..." : "");
        emit(e, &cv);
    }

    n = sum_workers(m, w_proc_unreadable, &procs, &one);
    if (n) {
        report_caveat cv = {.kind = "io_unreadable", .worker = one,
                            .file = one ? one->file : NULL, .count = n, .processes = procs};
        e->msg[0] = 0;
        add(e, "%s process-sampler intervals could not be read (/proc/self/io or "
               "/proc/self/statm) in %u of %u processes: the I/O and MEMORY blocks leave "
               "them out (",
            fmt_count(a, sizeof a, n), procs, m->worker_count);
        name_workers(e, m, w_proc_unreadable, 4);
        add(e, ")");
        emit(e, &cv);
    }
    /* Python stack sampling that fell short: the shares rest on fewer samples */
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!w->samples)
            continue;
        const store_samples *s = sample_set_view(w->samples);
        int slow = s->rate_asked_hz > 0 && s->rate_achieved_hz < 0.9 * s->rate_asked_hz;
        int late = s->samples && (double)s->late_samples > 0.01 * (double)s->samples;
        if (!slow && !late && !s->read_errors)
            continue;
        report_caveat cv = {.kind = "sampling", .file = w->file, .worker = w, .processes = 1};
        e->msg[0] = 0;
        if (!s->samples) {
            add(e, "%s: Python stack sampling was asked for (%s Hz) and took no pass: the sampler could not "
                   "start or read the process; no PYTHON samples",
                report_worker_name(name, sizeof name, w), fmt_decimal(b, sizeof b, s->rate_asked_hz, 1));
            emit(e, &cv);
            continue;
        }
        add(e, "%s: Python stack sampling fell short:", report_worker_name(name, sizeof name, w));
        const char *sep = " ";
        if (slow) {
            add(e, "%sachieved %s Hz of %s Hz asked", sep,
                fmt_decimal(b, sizeof b, s->rate_achieved_hz, 1),
                fmt_decimal(c, sizeof c, s->rate_asked_hz, 1));
            sep = "; ";
        }
        if (late) {
            add(e, "%s%s of %s samples late (%s)", sep, fmt_count(b, sizeof b, s->late_samples),
                fmt_count(c, sizeof c, s->samples),
                fmt_percent(a, sizeof a, (double)s->late_samples / (double)s->samples));
            sep = "; ";
        }
        if (s->read_errors)
            add(e, "%s%s read error%s (%s of passes: stacks unreadable or torn, left out)", sep,
                fmt_count(b, sizeof b, s->read_errors), s->read_errors == 1 ? "" : "s",
                fmt_percent(a, sizeof a, ss_lost_share(s)));
        add(e, ": its shares rest on fewer samples");
        if (ss_lost_biased(s))
            add(e, ", and lean toward callers: a short call is the likeliest to be torn, so the samples "
                   "lost are its own");
        emit(e, &cv);
    }

    long count = (long)e->count;
    free(e);
    free(paths);
    return count;
}
