#include "caveat_text.h"

#include "format.h"
#include "json_out.h"
#include "report_ranks.h"

#include "store/sample_set.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *caveat_worker_name(char *buf, size_t n, const rm_worker *w)
{
    if (w->rank >= 0)
        snprintf(buf, n, "%s pid %lld on %s (rank %lld)", w->role, (long long)w->pid, w->host,
                 (long long)w->rank);
    else
        snprintf(buf, n, "%s pid %lld on %s", w->role, (long long)w->pid, w->host);
    return buf;
}

typedef struct text {
    char *buf;
    size_t n, len;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    if (t->len + 1 >= t->n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->len, t->n - t->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->len = t->len + (size_t)k < t->n ? t->len + (size_t)k : t->n - 1;
}

/* The first `limit` workers of a summed caveat, with their counts. */
static void name_workers(text *t, const run_model *m, const caveat *c, unsigned limit)
{
    char name[512], num[FMT_BUF];
    unsigned shown = 0;
    for (; shown < c->named_count && shown < limit; shown++)
        add(t, "%s%s: %s", shown ? "; " : "",
            caveat_worker_name(name, sizeof name, &m->workers[c->named[shown].worker]),
            fmt_count(num, sizeof num, c->named[shown].value));
    if (c->named_count > shown)
        add(t, "; and %u more", c->named_count - shown);
}

static void sampling(text *t, const run_model *m, const caveat *c)
{
    const rm_worker *w = &m->workers[c->worker];
    const store_samples *s = sample_set_view(w->samples);
    char a[FMT_BUF], b[FMT_BUF], d[FMT_BUF], name[512];
    if (c->flags & CAVEAT_SAMPLING_NONE_TAKEN) {
        add(t, "%s: Python stack sampling was asked for (%s Hz) and took no pass: the sampler "
               "could not start or read the process; no PYTHON samples",
            caveat_worker_name(name, sizeof name, w), fmt_decimal(b, sizeof b, s->rate_asked_hz, 1));
        return;
    }
    add(t, "%s: Python stack sampling fell short:", caveat_worker_name(name, sizeof name, w));
    const char *sep = " ";
    if (c->flags & CAVEAT_SAMPLING_SLOW) {
        add(t, "%sachieved %s Hz of %s Hz asked", sep, fmt_decimal(b, sizeof b, s->rate_achieved_hz, 1),
            fmt_decimal(d, sizeof d, s->rate_asked_hz, 1));
        sep = "; ";
    }
    if (c->flags & CAVEAT_SAMPLING_LATE) {
        add(t, "%s%s of %s samples late (%s)", sep, fmt_count(b, sizeof b, s->late_samples),
            fmt_count(d, sizeof d, s->samples),
            fmt_percent(a, sizeof a, (double)s->late_samples / (double)s->samples));
        sep = "; ";
    }
    if (c->flags & CAVEAT_SAMPLING_LOST)
        add(t, "%s%s read error%s (%s of passes: stacks unreadable or torn, left out)", sep,
            fmt_count(b, sizeof b, s->read_errors), s->read_errors == 1 ? "" : "s",
            fmt_percent(a, sizeof a, c->x));
    add(t, ": its shares rest on fewer samples");
    if (c->flags & CAVEAT_SAMPLING_BIASED)
        add(t, ", and lean toward callers: a short call is the likeliest to be torn, so the samples "
               "lost are its own");
}

char *caveat_text(const run_model *m, const caveat *c, char *buf, size_t n)
{
    char pbuf[RM_PATH_BUF];
    text t = {buf, n, 0};
    buf[0] = 0;
    char a[FMT_BUF], b[FMT_BUF], d[FMT_BUF], name[512];
    const rm_worker *w = c->worker != RM_NONE ? &m->workers[c->worker] : NULL;
    switch (c->kind) {
    case CAVEAT_UNREADABLE:
        add(&t, "%s: %s; left out of every number", c->file, c->reason);
        break;
    case CAVEAT_DUPLICATE:
        if (c->count == 1)
            add(&t, "%s is the same process as %s", c->file, c->kept);
        else
            add(&t, "%s and %s more images are the same process as %s", c->file,
                fmt_count(a, sizeof a, c->count - 1), c->kept);
        add(&t, " (a copy with the same host, pid and session start, or pack members that share "
                "its bytes): counted once, from %s", c->kept);
        break;
    case CAVEAT_STOPPED_EARLY:
        add(&t, "%s stopped writing %s before the run's end (last of %llu writes at %s; "
                "snapshots every %s; no final write): killed, or its later writes failed (a "
                "full disk, a permission: its stderr then says \"lapse: profile not saved\"); "
                "the file cannot tell which; its numbers end there",
            caveat_worker_name(name, sizeof name, w), fmt_duration(a, sizeof a, (double)w->stale_by_ns),
            (unsigned long long)w->write_seq, fmt_utc(b, sizeof b, w->written_real_ns),
            fmt_duration(d, sizeof d, (double)w->snapshot_interval_ms * 1e6));
        break;
    case CAVEAT_GONE:
        add(&t, "%s is gone (no process %lld on this host) and its file holds no final write: "
                "after its last write that landed, at %s (snapshots every %s), it was killed "
                "(SIGKILL, the OOM killer), left by _exit, or its writes failed (a full disk, a "
                "permission: its stderr then says \"lapse: profile not saved\"); the file cannot "
                "tell which; its numbers end there",
            caveat_worker_name(name, sizeof name, w), (long long)w->pid,
            fmt_utc(b, sizeof b, w->written_real_ns),
            fmt_duration(d, sizeof d, (double)w->snapshot_interval_ms * 1e6));
        break;
    case CAVEAT_RUNNING:
        add(&t, "%s is still running (last snapshot %s ago, snapshots every %s): "
                "the run is not over and its numbers are a snapshot",
            caveat_worker_name(name, sizeof name, w), fmt_duration(a, sizeof a, (double)w->silent_ns),
            fmt_duration(b, sizeof b, (double)w->snapshot_interval_ms * 1e6));
        break;
    case CAVEAT_ENDED_UNSEEN:
        add(&t, "%s wrote no final file and no snapshot for %s (snapshots every %s): "
                "killed, wedged, or its writes failed after its last snapshot; up to one "
                "interval of its work is missing",
            caveat_worker_name(name, sizeof name, w), fmt_duration(a, sizeof a, (double)w->silent_ns),
            fmt_duration(b, sizeof b, (double)w->snapshot_interval_ms * 1e6));
        break;
    case CAVEAT_SIGNAL:
        add(&t, "%s ended on %s (its last file was written at the signal; work it had not "
                "reached is not in the run)",
            caveat_worker_name(name, sizeof name, w), w->end_reason);
        break;
    case CAVEAT_WRITE_FAILED:
        add(&t, "%s: %llu of its writes failed before the one its file holds (write %llu; "
                "the last failure: %s); a write holds everything up to it, so none of that is "
                "lost",
            caveat_worker_name(name, sizeof name, w), (unsigned long long)c->a,
            (unsigned long long)w->write_seq, c->reason && c->reason[0] ? c->reason : "no reason recorded");
        break;
    case CAVEAT_CHILD_NO_FILE:
        add(&t, "%s: %llu of the processes it forked left no file: ",
            caveat_worker_name(name, sizeof name, w), (unsigned long long)c->count);
        for (uint32_t k = 0; k < c->pid_count; k++)
            add(&t, "%spid %lld (forked %s into its session)", k ? ", " : "", (long long)c->pids[k],
                fmt_duration(a, sizeof a, (double)c->after_ns[k]));
        add(&t, "%s; each ended before its first snapshot or role (killed, or left through "
                "_exit) and nothing it did is in this report",
            c->count > c->pid_count ? ", ..." : "");
        if (c->a)
            add(&t, " (and %llu more forks were not recorded)", (unsigned long long)c->a);
        break;
    case CAVEAT_LEFTOVER_TMP:
        add(&t, "%s: a temporary left by pid %lld, which is gone (killed while it wrote, or "
                "its rename failed), last written at %s; %s %s (the next write of a lapse file "
                "in that directory removes the temporary)",
            c->file, (long long)c->a, fmt_utc(a, sizeof a, c->b), c->of_file,
            c->flags & CAVEAT_LEFTOVER_READ ? "holds the write before it" : "was not read");
        break;
    case CAVEAT_SUPERSEDED:
        add(&t, "superseded attempt %s (%llu file%s, last written %s) is not included; pass "
                "its path to report it",
            c->file, (unsigned long long)c->a, c->a == 1 ? "" : "s", fmt_utc(a, sizeof a, c->b));
        break;
    case CAVEAT_INCONSISTENT:
        add(&t, "the sums of role %s do not hold together: its top-level spans hold %s, its "
                "busy time (the sum of each thread's top-level spans as the files record it) is %s",
            m->roles[c->role].name, fmt_duration(a, sizeof a, (double)c->a),
            fmt_duration(b, sizeof b, (double)c->b));
        if (c->count)
            add(&t, "; %s path%s hold%s more time than that and show%s no share",
                fmt_count(d, sizeof d, c->count), c->count == 1 ? "" : "s",
                c->count == 1 ? "s" : "", c->count == 1 ? "s" : "");
        add(&t, " (a file damaged or not written by lapse, or a snapshot written as a span ended)");
        break;
    case CAVEAT_DROPPED_SPANS:
        add(&t, "the timeline had no room for %s spans in %u of %u processes (bounded by "
                "max_spans): span totals, calls and histograms are complete, exported "
                "timelines miss them (",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count);
        name_workers(&t, m, c, 4);
        add(&t, ")");
        break;
    case CAVEAT_FOLDED:
        add(&t, "%s spans were folded into their parent in %u of %u processes (%s past the depth "
                "bound, %s past the path bound); their time counts as the parent's self time. "
                "Parents that received them: ",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count,
            fmt_count(b, sizeof b, c->a), fmt_count(d, sizeof d, c->b));
        for (uint32_t i = 0; i < c->item_count && i < 6; i++) {
            const rm_path *p = &m->paths[c->items[i]];
            add(&t, "%s%s:%s (%s)", i ? ", " : "", m->roles[p->role].name,
                p->parent == RM_NONE ? "(outside any span)" : rm_path_str(m, c->items[i], pbuf),
                fmt_count(a, sizeof a, p->folded));
        }
        if (c->item_count > 6)
            add(&t, ", and %u more", c->item_count - 6);
        break;
    case CAVEAT_UNMATCHED_ENDS:
        add(&t, "%s span ends did not match the innermost open span in %u of %u processes (an "
                "end with nothing of that name open, or spans closed implicitly by an outer end); "
                "spans closed that way end at the outer end (",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count);
        name_workers(&t, m, c, 4);
        add(&t, ")");
        break;
    case CAVEAT_DROPPED_COUNTERS:
        add(&t, "%s counter updates found no room in the counter table in %u of %u processes "
                "(bounded by max_counters): counter totals are low (",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count);
        name_workers(&t, m, c, 4);
        add(&t, ")");
        break;
    case CAVEAT_DROPPED_CAUSAL:
        add(&t, "%s signals and waits found no room in their buffer in %u of %u processes "
                "(65,536 a process): the pairs and the critical path leave them out (",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count);
        name_workers(&t, m, c, 4);
        add(&t, ")");
        break;
    case CAVEAT_OVERFLOW: {
        add(&t, "%s counter%s overflowed a 64-bit sum when the processes' counts were added (",
            fmt_count(a, sizeof a, c->count), c->count == 1 ? "" : "s");
        unsigned shown = 0;
        for (; shown < c->item_count && shown < 4; shown++) {
            const rm_counter *ct = &m->counters[c->items[shown]];
            const rm_path *p = &m->paths[ct->path];
            add(&t, "%s%s:%s%s%s", shown ? ", " : "", m->roles[p->role].name,
                p->parent == RM_NONE ? "" : rm_path_str(m, ct->path, pbuf),
                p->parent == RM_NONE ? "" : " ",
                rm_str(m, ct->name));
        }
        if (c->count > shown)
            add(&t, ", and %llu more", (unsigned long long)(c->count - shown));
        add(&t, "): each is shown at the bound it passed, with no rate");
        break;
    }
    case CAVEAT_MISSING_RANKS: {
        char list[128];
        add(&t, "%llu of the %lld ranks of the world left no readable file: rank%s %s%s (died "
                "before their first write, wrote elsewhere, or their file is unreadable); every "
                "cross-rank figure is over the ranks that did",
            (unsigned long long)c->count, (long long)c->world, c->count == 1 ? "" : "s",
            report_fmt_ranks(list, sizeof list, c->ranks, c->rank_count),
            c->count > 8 ? ",..." : "");
        break;
    }
    case CAVEAT_IO_UNREADABLE:
        add(&t, "%s process-sampler intervals could not be read (/proc/self/io or "
                "/proc/self/statm) in %u of %u processes: the I/O and MEMORY blocks leave "
                "them out (",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count);
        name_workers(&t, m, c, 4);
        add(&t, ")");
        break;
    case CAVEAT_SAMPLING:
        sampling(&t, m, c);
        break;
    case CAVEAT_ACTIVITY_MISSING:
        if (c->flags) /* collected, and a flush failed */
            add(&t, "%s: GPU activity is incomplete: %s", caveat_worker_name(name, sizeof name, w),
                c->reason);
        else
            add(&t, "%s: GPU activity (ACTIVITY) was not collected: %s; its report has no GPU "
                    "activity of it",
                caveat_worker_name(name, sizeof name, w), c->reason);
        break;
    case CAVEAT_DROPPED_ACTIVITIES:
        add(&t, "%s GPU records (kernels, copies, sets) found no room in the collector's buffer "
                "in %u of %u processes (bounded by LAPSE_MAX_ACTIVITIES, default 262,144): GPU "
                "ACTIVITY BY SPAN misses them (",
            fmt_count(a, sizeof a, c->count), c->processes, m->worker_count);
        name_workers(&t, m, c, 4);
        add(&t, ")");
        break;
    case CAVEAT_FEATURE_MISSING:
        add(&t, "%s ran without what it was asked to collect: %s; nothing of it is in this "
                "report",
            caveat_worker_name(name, sizeof name, w), c->reason);
        break;
    case CAVEAT_GPU_FAILED:
        add(&t, "%s: %s NVML calls failed while the GPU collector ran (the last: %s); the GPU "
                "figures leave those readings out",
            caveat_worker_name(name, sizeof name, w), fmt_count(a, sizeof a, c->count),
            c->reason && c->reason[0] ? c->reason : "no reason recorded");
        break;
    case CAVEAT_WINDOW_FAILED:
        add(&t, "%s: the %s window (backend=) wrote no trace: %s; the program ran on without it",
            caveat_worker_name(name, sizeof name, w), w->window.backend, c->reason);
        break;
    case CAVEAT_ACTIVITY_PAUSED: {
        char from[32], to[32], paused[32];
        fmt_duration(from, sizeof from, (double)c->a);
        fmt_duration(to, sizeof to, (double)c->b);
        fmt_duration(paused, sizeof paused, c->x);
        add(&t, "%s: ACTIVITY was paused %llu time%s while torch.profiler recorded CUDA (it "
                "needs CUPTI, which has one subscriber), %s in all between %s and %s after the "
                "run's start: GPU ACTIVITY BY SPAN has no kernels of those intervals (they are in "
                "torch's trace), which is not \"no kernels\"",
            caveat_worker_name(name, sizeof name, w), (unsigned long long)c->count,
            c->count == 1 ? "" : "s", paused, from, c->flags ? "the end of its file" : to);
        break;
    }
    }
    return buf;
}

void caveat_list_json(json_out *j, const run_model *m, const caveat_list *l, const char *side)
{
    char msg[CAVEAT_TEXT_MAX], pbuf[RM_PATH_BUF];
    for (uint32_t i = 0; i < l->count; i++) {
        const caveat *c = &l->items[i];
        json_begin_object(j, NULL);
        json_str(j, "kind", caveat_kind_name(c->kind));
        if (side)
            json_str(j, "side", side);
        json_str(j, "message", caveat_text(m, c, msg, sizeof msg));
        if (c->file)
            json_str(j, "file", c->file);
        if (c->kept)
            json_str(j, "kept", c->kept);
        if (c->worker != RM_NONE) {
            const rm_worker *w = &m->workers[c->worker];
            json_i64(j, "pid", w->pid);
            json_str(j, "host", w->host);
            json_str(j, "role", w->role);
        }
        if (c->count)
            json_u64(j, "count", c->count);
        if (c->kind == CAVEAT_ACTIVITY_MISSING || c->kind == CAVEAT_WINDOW_FAILED)
            json_str(j, "reason", c->reason);
        if (c->kind == CAVEAT_ACTIVITY_PAUSED) {
            json_ns(j, "paused_ns", c->x);
            json_ns(j, "from_ns", (double)c->a);
            if (c->flags)
                json_null(j, "to_ns");
            else
                json_ns(j, "to_ns", (double)c->b);
        }
        if (c->processes)
            json_u64(j, "processes", c->processes);
        if (c->kind == CAVEAT_CHILD_NO_FILE) { /* the first of them, as the message */
            json_begin_array(j, "children");
            for (uint32_t k = 0; k < c->pid_count; k++) {
                json_begin_object(j, NULL);
                json_i64(j, "pid", c->pids[k]);
                json_ns(j, "forked_after_ns", (double)c->after_ns[k]);
                json_end_object(j);
            }
            json_end_array(j);
        }
        if (c->kind == CAVEAT_FOLDED) {
            json_begin_array(j, "paths");
            for (uint32_t k = 0; k < c->item_count; k++) {
                const rm_path *p = &m->paths[c->items[k]];
                json_begin_object(j, NULL);
                json_str(j, "role", m->roles[p->role].name);
                json_str(j, "path", rm_path_str(m, c->items[k], pbuf));
                json_u64(j, "folded", p->folded);
                json_end_object(j);
            }
            json_end_array(j);
        }
        json_end_object(j);
    }
}
