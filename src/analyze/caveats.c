#include "caveats.h"

#include "causality.h"
#include "run_ranks.h"
#include "sample_stats.h"
#include "store/model.h"
#include "store/sample_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
    [CAVEAT_UNREADABLE] = "unreadable",
    [CAVEAT_DUPLICATE] = "duplicate",
    [CAVEAT_STOPPED_EARLY] = "stale",
    [CAVEAT_GONE] = "stale",
    [CAVEAT_RUNNING] = "not_final",
    [CAVEAT_ENDED_UNSEEN] = "not_final",
    [CAVEAT_SIGNAL] = "signal",
    [CAVEAT_WRITE_FAILED] = "write_failed",
    [CAVEAT_CHILD_NO_FILE] = "child_no_file",
    [CAVEAT_LEFTOVER_TMP] = "leftover_tmp",
    [CAVEAT_SUPERSEDED] = "superseded",
    [CAVEAT_INCONSISTENT] = "inconsistent",
    [CAVEAT_DROPPED_SPANS] = "dropped_spans",
    [CAVEAT_FOLDED] = "folded",
    [CAVEAT_UNMATCHED_ENDS] = "unmatched_ends",
    [CAVEAT_DROPPED_COUNTERS] = "dropped_counters",
    [CAVEAT_DROPPED_CAUSAL] = "dropped_causal",
    [CAVEAT_OVERFLOW] = "overflow",
    [CAVEAT_MISSING_RANKS] = "missing_ranks",
    [CAVEAT_IO_UNREADABLE] = "io_unreadable",
    [CAVEAT_SAMPLING] = "sampling",
    [CAVEAT_ACTIVITY_MISSING] = "activity_missing",
    [CAVEAT_DROPPED_ACTIVITIES] = "dropped_activities",
    [CAVEAT_FEATURE_MISSING] = "feature_missing",
    [CAVEAT_GPU_FAILED] = "gpu_failed",
    [CAVEAT_WINDOW_FAILED] = "window_failed",
    [CAVEAT_ACTIVITY_PAUSED] = "activity_paused",
};

const char *caveat_kind_name(caveat_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof kind_names[0] && kind_names[k] ? kind_names[k]
                                                                                  : "unknown";
}

/* A new caveat at the end of l, zeroed but for its kind; NULL when out of memory. */
static caveat *push(caveat_list *l, caveat_kind kind)
{
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 16;
        caveat *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return NULL;
        l->items = p;
        l->cap = cap;
    }
    caveat *c = &l->items[l->count++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->worker = RM_NONE;
    c->role = RM_NONE;
    return c;
}

/* One caveat about worker i. */
static caveat *about_worker(caveat_list *l, caveat_kind kind, const run_model *m, uint32_t i)
{
    caveat *c = push(l, kind);
    if (c) {
        c->file = m->workers[i].file;
        c->worker = i;
        c->processes = 1;
    }
    return c;
}

static uint64_t w_dropped(const rm_worker *w) { return w->timeline_dropped; }
static uint64_t w_folded(const rm_worker *w) { return w->folded_depth + w->folded_paths; }
static uint64_t w_unmatched(const rm_worker *w) { return w->unmatched_ends; }
static uint64_t w_counters(const rm_worker *w) { return w->dropped_counters; }
static uint64_t w_causal(const rm_worker *w) { return w->causal ? w->causal->dropped : 0; }
static uint64_t w_proc_unreadable(const rm_worker *w) { return w->proc.unreadable; }
static uint64_t w_activity_dropped(const rm_worker *w) { return w->activity_dropped; }

/* A summed caveat: the sum of pick() over the workers, each worker with a count named.
 * The caveat's worker and file are the one worker's when exactly one has a count.
 * Returns the caveat, or NULL (nothing to say, *oom set when out of memory). */
static caveat *summed(caveat_list *l, caveat_kind kind, const run_model *m,
                      uint64_t (*pick)(const rm_worker *), int always, int *oom)
{
    uint64_t sum = 0;
    uint32_t procs = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        uint64_t v = pick(&m->workers[i]);
        sum += v;
        procs += v != 0;
    }
    if (!sum && !always)
        return NULL;
    caveat *c = push(l, kind);
    caveat_named *named = malloc((procs ? procs : 1u) * sizeof *named);
    if (!c || !named) {
        free(named);
        *oom = 1;
        return NULL;
    }
    c->count = sum;
    c->processes = procs;
    c->named = named;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        uint64_t v = pick(&m->workers[i]);
        if (v)
            named[c->named_count++] = (caveat_named){i, v};
    }
    if (procs == 1) {
        c->worker = named[0].worker;
        c->file = m->workers[c->worker].file;
    }
    return c;
}

static int cmp_folded(const void *a_, const void *b_, void *ctx)
{
    const run_model *m = ctx;
    const rm_path *x = &m->paths[*(const uint32_t *)a_], *y = &m->paths[*(const uint32_t *)b_];
    if (x->folded != y->folded)
        return x->folded > y->folded ? -1 : 1;
    int r = strcmp(m->roles[x->role].name, m->roles[y->role].name);
    char a[RM_PATH_BUF], b[RM_PATH_BUF];
    return r ? r : strcmp(rm_path_str(m, *(const uint32_t *)a_, a), rm_path_str(m, *(const uint32_t *)b_, b));
}

static int add_folded(caveat_list *l, const run_model *m)
{
    uint32_t folded_paths = 0;
    for (uint32_t i = 0; i < m->path_count; i++)
        folded_paths += m->paths[i].folded != 0;
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->worker_count; i++)
        n += w_folded(&m->workers[i]);
    if (!n && !folded_paths)
        return 0;
    int oom = 0;
    caveat *c = summed(l, CAVEAT_FOLDED, m, w_folded, 1, &oom);
    if (!c)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        c->a += m->workers[i].folded_depth;
        c->b += m->workers[i].folded_paths;
    }
    c->items = malloc((folded_paths ? folded_paths : 1u) * sizeof *c->items);
    if (!c->items)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->path_count; i++)
        if (m->paths[i].folded)
            c->items[c->item_count++] = i;
    if (c->item_count)
        qsort_r(c->items, c->item_count, sizeof *c->items, cmp_folded, (void *)m);
    return 0;
}

static int add_sampling(caveat_list *l, const run_model *m)
{
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!w->samples)
            continue;
        const store_samples *s = sample_set_view(w->samples);
        unsigned flags = 0;
        if (s->rate_asked_hz > 0 && s->rate_achieved_hz < 0.9 * s->rate_asked_hz)
            flags |= CAVEAT_SAMPLING_SLOW;
        if (s->samples && (double)s->late_samples > 0.01 * (double)s->samples)
            flags |= CAVEAT_SAMPLING_LATE;
        if (s->read_errors)
            flags |= CAVEAT_SAMPLING_LOST;
        if (!flags)
            continue;
        if (!s->samples)
            flags = CAVEAT_SAMPLING_NONE_TAKEN;
        else if (ss_lost_biased(s))
            flags |= CAVEAT_SAMPLING_BIASED;
        caveat *c = about_worker(l, CAVEAT_SAMPLING, m, i);
        if (!c)
            return -ENOMEM;
        c->flags = flags;
        c->x = s->samples ? ss_lost_share(s) : 0.0;
    }
    return 0;
}

static int cmp_pid_host(const void *a, const void *b, void *ctx)
{
    const run_model *m = ctx;
    const rm_worker *x = &m->workers[*(const uint32_t *)a], *y = &m->workers[*(const uint32_t *)b];
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->host, y->host);
}

/* Whether a file of the run is process pid on host (order: the workers by pid, host). */
static int has_file(const run_model *m, const uint32_t *order, int64_t pid, const char *host)
{
    uint32_t lo = 0, hi = m->worker_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const rm_worker *w = &m->workers[order[mid]];
        int c = w->pid != pid ? (w->pid < pid ? -1 : 1) : strcmp(w->host, host);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* Each worker whose recorded children (or some of them) left no file of their own. */
static int add_children_without_files(caveat_list *l, const run_model *m)
{
    int any = 0;
    for (uint32_t i = 0; i < m->worker_count && !any; i++)
        any = m->workers[i].child_count || m->workers[i].children_unrecorded;
    if (!any)
        return 0;
    uint32_t *order = malloc(m->worker_count * sizeof *order);
    if (!order)
        return -ENOMEM;
    for (uint32_t i = 0; i < m->worker_count; i++)
        order[i] = i;
    qsort_r(order, m->worker_count, sizeof *order, cmp_pid_host, (void *)m);
    int rc = 0;
    for (uint32_t i = 0; i < m->worker_count && rc == 0; i++) {
        const rm_worker *w = &m->workers[i];
        caveat *c = NULL;
        for (uint32_t k = 0; k < w->child_count; k++) {
            const rm_child *ch = &w->children[k];
            if (has_file(m, order, ch->pid, w->host))
                continue;
            if (!c && !(c = about_worker(l, CAVEAT_CHILD_NO_FILE, m, i))) {
                rc = -ENOMEM;
                break;
            }
            if (c->pid_count < 8) {
                c->pids[c->pid_count] = ch->pid;
                c->after_ns[c->pid_count++] =
                    ch->forked_real_ns > w->start_real_ns ? ch->forked_real_ns - w->start_real_ns : 0;
            }
            c->count++;
        }
        if (c)
            c->a = w->children_unrecorded;
    }
    free(order);
    return rc;
}

int caveats_build(const run_model *m, const run_ranks *ranks, caveat_list *l)
{
    memset(l, 0, sizeof *l);
    int oom = 0;
    caveat *c;
#define NEW(expr)                                                                          \
    do {                                                                                   \
        if (!(c = (expr)))                                                                 \
            goto fail;                                                                     \
    } while (0)

    for (uint32_t i = 0; i < m->unreadable_count; i++) {
        NEW(push(l, CAVEAT_UNREADABLE));
        c->file = m->unreadable[i].file;
        c->reason = m->unreadable[i].reason;
    }
    for (uint32_t i = 0; i < m->duplicate_count; i++) {
        NEW(push(l, CAVEAT_DUPLICATE));
        c->file = m->duplicates[i].file;
        c->kept = m->duplicates[i].kept;
        c->count = m->duplicates[i].count;
    }
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].state == RM_STOPPED_EARLY)
            NEW(about_worker(l, CAVEAT_STOPPED_EARLY, m, i));
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].state == RM_GONE)
            NEW(about_worker(l, CAVEAT_GONE, m, i));
    for (uint32_t i = 0; i < m->worker_count; i++) {
        if (m->workers[i].state == RM_RUNNING)
            NEW(about_worker(l, CAVEAT_RUNNING, m, i));
        else if (m->workers[i].state == RM_ENDED_UNSEEN)
            NEW(about_worker(l, CAVEAT_ENDED_UNSEEN, m, i));
    }
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->state == RM_FINAL &&
            (!strncmp(w->end_reason, "SIG", 3) || !strcmp(w->end_reason, "signal")))
            NEW(about_worker(l, CAVEAT_SIGNAL, m, i));
    }
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!w->write_failures)
            continue;
        NEW(about_worker(l, CAVEAT_WRITE_FAILED, m, i));
        c->a = w->write_failures;
        c->reason = w->write_error;
    }
    if (add_children_without_files(l, m))
        goto fail;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        /* ACTIVITY that ran in the parent and not in this forked child, or ran and a
         * flush lost records (a start that failed is feature_missing) */
        const rm_worker *w = &m->workers[i];
        if (w->activity_state == STORE_GPU_MISSING ||
            (w->activity_state == STORE_GPU_COLLECTED && *w->activity_note)) {
            NEW(about_worker(l, CAVEAT_ACTIVITY_MISSING, m, i));
            c->reason = w->activity_note;
            c->flags = w->activity_state == STORE_GPU_COLLECTED;
        }
    }
    for (uint32_t i = 0; i < m->leftover_count; i++) {
        const rm_leftover *lo = &m->leftovers[i];
        NEW(push(l, CAVEAT_LEFTOVER_TMP));
        c->file = lo->temp;
        c->of_file = lo->file;
        c->a = (uint64_t)lo->pid;
        c->b = lo->mtime_ns;
        if (lo->worker != RM_NONE)
            c->flags |= CAVEAT_LEFTOVER_READ;
    }
    for (uint32_t i = 0; i < m->superseded_count; i++) {
        NEW(push(l, CAVEAT_SUPERSEDED));
        c->file = m->superseded[i].dir;
        c->a = m->superseded[i].files;
        c->b = m->superseded[i].newest_mtime_ns;
    }
    for (uint32_t r = 0; r < m->role_count; r++) {
        const rm_role *role = &m->roles[r];
        if (!role->over_busy && role->top_total_ns <= role->busy_ns)
            continue;
        NEW(push(l, CAVEAT_INCONSISTENT));
        c->role = r;
        c->count = role->over_busy;
        c->processes = role->processes;
        c->a = role->top_total_ns;
        c->b = role->busy_ns;
    }
    if (!summed(l, CAVEAT_DROPPED_SPANS, m, w_dropped, 0, &oom) && oom)
        goto fail;
    if (add_folded(l, m))
        goto fail;
    if (!summed(l, CAVEAT_UNMATCHED_ENDS, m, w_unmatched, 0, &oom) && oom)
        goto fail;
    if (!summed(l, CAVEAT_DROPPED_COUNTERS, m, w_counters, 0, &oom) && oom)
        goto fail;
    if (!summed(l, CAVEAT_DROPPED_ACTIVITIES, m, w_activity_dropped, 0, &oom) && oom)
    if (!summed(l, CAVEAT_DROPPED_CAUSAL, m, w_causal, 0, &oom) && oom)
        goto fail;
    if (m->overflowed_counters) {
        NEW(push(l, CAVEAT_OVERFLOW));
        c->count = m->overflowed_counters;
        c->items = malloc(m->overflowed_counters * sizeof *c->items);
        if (!c->items)
            goto fail;
        for (uint32_t i = 0; i < m->counter_count && c->item_count < m->overflowed_counters; i++)
            if (m->counters[i].overflowed)
                c->items[c->item_count++] = i;
    }
    if (ranks->missing_count) {
        NEW(push(l, CAVEAT_MISSING_RANKS));
        c->count = ranks->missing_count;
        c->world = ranks->world_size;
        uint32_t k = ranks->missing_count < 8 ? ranks->missing_count : 8;
        memcpy(c->ranks, ranks->missing, k * sizeof *c->ranks);
        c->rank_count = k;
    }
    if (!summed(l, CAVEAT_IO_UNREADABLE, m, w_proc_unreadable, 0, &oom) && oom)
        goto fail;
    if (add_sampling(l, m))
        goto fail;
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].missing[0]) {
            NEW(about_worker(l, CAVEAT_FEATURE_MISSING, m, i));
            c->reason = m->workers[i].missing;
        }
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].gpu.failed_calls) {
            NEW(about_worker(l, CAVEAT_GPU_FAILED, m, i));
            c->count = m->workers[i].gpu.failed_calls;
            c->reason = m->workers[i].gpu.error;
        }
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].window.error[0]) {
            NEW(about_worker(l, CAVEAT_WINDOW_FAILED, m, i));
            c->reason = m->workers[i].window.error;
        }
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (!w->activity_pauses)
            continue;
        NEW(about_worker(l, CAVEAT_ACTIVITY_PAUSED, m, i));
        c->count = w->activity_pauses;
        c->x = (double)w->activity_paused_ns;
        c->a = RM_RUN_CLOCK_NS(m, w, w->activity_pause_from_ns);
        c->b = w->activity_pause_to_ns ? RM_RUN_CLOCK_NS(m, w, w->activity_pause_to_ns) : 0;
        c->flags = !w->activity_pause_to_ns;
    }
#undef NEW
    return 0;
fail:
    caveats_free(l);
    return -ENOMEM;
}

void caveats_free(caveat_list *l)
{
    for (uint32_t i = 0; i < l->count; i++) {
        free(l->items[i].named);
        free(l->items[i].items);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}
