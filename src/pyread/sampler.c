/* The sampling loop; see sampler.h. */
#include "sampler.h"

#include "pyread.h"

#include "core/hash.h"
#include "core/span_registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 64
#define FRAME_MEMO 8192
#define SCAN_EVERY_NS 200000000ull

typedef struct target {
    pid_t pid;
    int64_t hot_tid; /* the thread that held the GIL in the last pass (0: none) */
    pyread_target *reader; /* NULL: not (yet) readable */
    int dead;
    int tries;
    int ever_read;
    int failed_passes; /* consecutive passes that could not read the runtime */
    uint64_t next_try_ns;
    span_stack_reader *spans; /* the target's lapse core, when it has one */
    uint64_t next_span_try_ns;
    uint64_t span_try_gap_ns;
} target;

typedef struct frame_memo {
    const pyread_code *code;
    uint32_t generation;
    int line;
    uint32_t id;
} frame_memo;

typedef struct loop {
    const sampler_opts *o;
    cpu_set_t allowed; /* the CPUs this thread may run on (as started) */
    int allowed_ok;
    int cpu;           /* the one it is on now, -1 when not pinned here */
    sample_set *set;
    target targets[MAX_TARGETS];
    int ntargets;
    pyread_sample *snap;
    frame_memo memo[FRAME_MEMO];
    uint32_t stack[PYREAD_MAX_DEPTH];
    uint64_t read_errors;
    char span_path[1024];
} loop;

static const char *const mode_names[] = {"wall", "cpu", "gil"};

const char *sampler_mode_name(int mode)
{
    return mode == SAMPLER_CPU || mode == SAMPLER_GIL ? mode_names[mode] : mode_names[SAMPLER_WALL];
}

int sampler_mode_parse(const char *name)
{
    for (int m = SAMPLER_WALL; m <= SAMPLER_GIL; m++)
        if (name && !strcmp(name, mode_names[m]))
            return m;
    return -1;
}

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static pid_t parent_of(pid_t pid)
{
    char stat[512];
    pyread_proc_text(pid, "stat", stat, sizeof stat, 0);
    char *paren = strrchr(stat, ')');
    int ppid = -1;
    if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

/* Whether pid maps a file whose name says lapse (liblapse.so, the _lapse extension):
 * cheaper than looking for the span registry in every file's symbols. */
static int maps_mention_lapse(pid_t pid)
{
    char p[64], line[1024];
    snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        const char *slash = strrchr(line, '/');
        found = slash && strstr(slash, "lapse") != NULL;
    }
    fclose(f);
    return found;
}

static int add_target(loop *L, pid_t pid)
{
    for (int i = 0; i < L->ntargets; i++)
        if (L->targets[i].pid == pid)
            return 0;
    if (L->ntargets == MAX_TARGETS)
        return -1;
    target *t = &L->targets[L->ntargets++];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    return 0;
}

/* Descendants of the targets we know, from every process's parent in /proc. */
static void scan_children(loop *L)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        pid_t pp = parent_of((pid_t)pid);
        for (int i = 0; i < L->ntargets; i++)
            if (L->targets[i].pid == pp) {
                add_target(L, (pid_t)pid);
                break;
            }
    }
    closedir(d);
}

/* Try to attach to t; 0 when readable now. */
static int try_open(loop *L, target *t, char *msg, size_t msglen)
{
    if (t->reader || t->dead)
        return t->reader ? 0 : -1;
    int rc = pyread_open(t->pid, &t->reader, msg, msglen);
    t->tries++;
    if (rc == PYREAD_OK) {
        t->ever_read = 1;
        char cmd[1024];
        pyread_proc_text(t->pid, "cmdline", cmd, sizeof cmd, 1);
        uint32_t c = sample_set_string(L->set, cmd, strlen(cmd));
        const char *v = pyread_version(t->reader);
        uint32_t vs = sample_set_string(L->set, v, strlen(v));
        if (c != SAMPLE_NONE && vs != SAMPLE_NONE)
            sample_set_process(L->set, t->pid, parent_of(t->pid), c, vs);
        return 0;
    }
    if (rc == PYREAD_GONE)
        t->dead = 1;
    return rc;
}

static uint32_t frame_id(loop *L, const pyread_frame *f)
{
    uint64_t h = hash_mix((uint64_t)(uintptr_t)f->code ^ (uint64_t)(uint32_t)f->line << 48);
    frame_memo *m = &L->memo[h % FRAME_MEMO];
    if (m->code == f->code && m->line == f->line && m->generation == f->code->generation && m->code)
        return m->id;
    uint32_t fn = sample_set_string(L->set, f->code->qualname, strlen(f->code->qualname));
    uint32_t file = sample_set_string(L->set, f->code->filename, strlen(f->code->filename));
    if (fn == SAMPLE_NONE || file == SAMPLE_NONE)
        return SAMPLE_NONE;
    uint32_t id = sample_set_frame(L->set, fn, file, f->line > 0 ? (uint32_t)f->line : 0);
    if (id != SAMPLE_NONE) {
        m->code = f->code;
        m->generation = f->code->generation;
        m->line = f->line;
        m->id = id;
    }
    return id;
}

/* Read a target while the thread that runs its Python is off its CPU: on that CPU.
 * A thread read while it runs changes under the read, and what changes fastest is its
 * newest frames: a method that runs for less than a pass takes (__init__, __sub__,
 * called through C or not) has often returned before its frame is read, so the pass
 * finds a frame gone (a torn read) or names the caller, and short calls lose their
 * samples to their callers. On the thread's CPU the pass runs while the thread waits,
 * wherever it was when the pass began, as if it had been stopped there: the cost is
 * the pass's time, taken from the target's CPU instead of another one. The thread is
 * the one that held the GIL in the previous pass (its CPU from /proc); CPUs outside
 * the ones this thread was started on are not used (then the read runs beside it). */
static void follow_cpu(loop *L, target *t)
{
    if (t->hot_tid <= 0 || !L->allowed_ok)
        return;
    int cpu = pyread_thread_cpu(t->reader, t->hot_tid, NULL);
    if (cpu < 0 || cpu == L->cpu || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &L->allowed))
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0)
        L->cpu = cpu;
}

static int hidden_root(const sampler_opts *o, const pyread_code *c)
{
    for (int i = 0; i < o->hide_root_count; i++)
        if (!strcmp(c->filename, o->hide_root[i]))
            return 1;
    return 0;
}

/* One pass over one target; returns PYREAD_GONE when it has exited. */
static int sample_target(loop *L, target *t, uint64_t weight_ns)
{
    const sampler_opts *o = L->o;
    /* wall: whether each thread runs now (its state); cpu: the CPU time each used */
    unsigned flags = PYREAD_WANT_NAMES;
    if (o->mode == SAMPLER_WALL)
        flags |= PYREAD_WANT_WAITING;
    else if (o->mode == SAMPLER_CPU)
        flags |= PYREAD_WANT_CPU_TIME;
    follow_cpu(L, t);
    int rc = pyread_sample_now(t->reader, L->snap, flags);
    if (rc == PYREAD_GONE)
        return rc;
    if (rc != 0) {
        L->read_errors++;
        return rc;
    }
    L->read_errors += (uint64_t)L->snap->read_errors;
    t->hot_tid = 0; /* the thread to follow in the next pass */
    for (int i = 0; i < L->snap->thread_count; i++)
        if (L->snap->threads[i].holds_gil)
            t->hot_tid = L->snap->threads[i].native_id;
    for (int i = 0; i < L->snap->thread_count; i++) {
        const pyread_thread *th = &L->snap->threads[i];
        if (th->torn)
            continue; /* counted in read errors; a cut stack would be rooted wrong */
        /* ran: wall mode, running at this pass: holding the GIL, or on a CPU or
         * runnable (OS state R; a thread in sleep, a lock or I/O is S or D); cpu mode,
         * used CPU time since the previous pass (at a thread's first sight: state R);
         * not known at all in gil mode */
        int ran = o->mode == SAMPLER_WALL ? th->holds_gil || th->os_state == 'R' || th->os_state == 0
                  : th->cpu_known         ? th->cpu_delta_ns > 0
                                          : (th->os_state == 'R' || th->os_state == 0);
        int idle = !ran && !th->holds_gil;
        uint32_t state = 0;
        if (ran)
            state |= SAMPLE_RUNNING;
        if (th->holds_gil)
            state |= SAMPLE_GIL;
        if (idle)
            state |= SAMPLE_IDLE;
        uint64_t w = weight_ns;
        if (o->mode == SAMPLER_GIL && !th->holds_gil)
            continue;
        if (o->mode == SAMPLER_CPU) {
            if (!ran)
                continue;
            if (th->cpu_known && th->cpu_delta_ns < w)
                w = th->cpu_delta_ns; /* the CPU time it used in the interval */
        }
        if (o->mode == SAMPLER_WALL && idle && !o->idle)
            continue;
        uint32_t depth = 0;
        int k = th->depth - 1;
        while (k > 0 && hidden_root(o, th->frames[k].code))
            k--;
        if (k == 0 && hidden_root(o, th->frames[0].code))
            k = th->depth - 1; /* nothing but the launcher: as it is */
        for (; k >= 0; k--) {
            uint32_t id = frame_id(L, &th->frames[k]);
            if (id != SAMPLE_NONE)
                L->stack[depth++] = id;
        }
        sample_key key;
        memset(&key, 0, sizeof key);
        key.pid = t->pid;
        key.tid = th->native_id;
        key.thread_name = sample_set_string(L->set, th->name, strlen(th->name));
        if (key.thread_name == SAMPLE_NONE)
            key.thread_name = 0;
        key.state = state;
        if (t->spans && th->native_id > 0 &&
            span_stack_path(t->spans, th->native_id, L->span_path, sizeof L->span_path) > 0) {
            uint32_t sp = sample_set_string(L->set, L->span_path, strlen(L->span_path));
            if (sp != SAMPLE_NONE)
                key.span_path = sp;
        }
        sample_set_add(L->set, &key, L->stack, depth, w);
    }
    return 0;
}

static int any_alive(const loop *L)
{
    for (int i = 0; i < L->ntargets; i++)
        if (!L->targets[i].dead)
            return 1;
    return 0;
}

static void reap_child(const sampler_opts *o, sampler_result *r, loop *L)
{
    if (o->child <= 0 || r->child_status != -1)
        return;
    int status;
    if (wait4(o->child, &status, WNOHANG, &r->child_usage) == o->child) {
        r->child_status = status;
        for (int i = 0; i < L->ntargets; i++)
            if (L->targets[i].pid == o->child)
                L->targets[i].dead = 1;
    }
}

int sampler_run(const sampler_opts *o, sample_set *set, sampler_result *r, char *msg, size_t msglen)
{
    memset(r, 0, sizeof *r);
    r->child_status = -1;
    msg[0] = 0;
    loop *L = calloc(1, sizeof *L);
    if (!L || !(L->snap = malloc(sizeof *L->snap))) {
        free(L);
        snprintf(msg, msglen, "out of memory");
        return PYREAD_NO_MEMORY;
    }
    L->o = o;
    L->set = set;
    L->cpu = -1;
    L->allowed_ok = sched_getaffinity(0, sizeof L->allowed, &L->allowed) == 0;
    add_target(L, o->root);

    /* Wait for the root to become a readable Python (a launched program is still
     * starting), unless following subprocesses: then the root need not be Python,
     * but a process to attach to must exist. */
    uint64_t t0 = now_ns(CLOCK_MONOTONIC);
    int rc = 0;
    char why[512] = "";
    for (;;) {
        if (o->stop && *o->stop)
            break;
        reap_child(o, r, L);
        rc = try_open(L, &L->targets[0], why, sizeof why);
        if (rc == 0 || (o->subprocesses && !(o->child == 0 && rc == PYREAD_GONE)))
            break;
        if (rc == PYREAD_PERMISSION || rc == PYREAD_UNKNOWN_VERSION || L->targets[0].dead ||
            (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9 > o->start_timeout_s ||
            (o->child == 0 && rc != PYREAD_READ)) {
            snprintf(msg, msglen, "%s", why[0] ? why : "the target never became a readable Python process");
            free(L->snap);
            free(L);
            return rc ? rc : PYREAD_GONE;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }

    if (o->started)
        o->started(o->tick_ctx, L->targets[0].reader ? pyread_version(L->targets[0].reader) : "");
    store_samples *meta = sample_set_data(set);
    sample_set_set_mode(set, sampler_mode_name(o->mode));
    meta->rate_asked_hz = o->rate_hz;
    meta->idle = o->idle ? 1 : 0;
    meta->start_real_ns = now_ns(CLOCK_REALTIME);

    /* wake when asked, not up to 50 us later (the default timer slack) */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uint64_t period = (uint64_t)(1e9 / o->rate_hz);
    if (period < 1000)
        period = 1000;
    uint64_t start = now_ns(CLOCK_MONOTONIC), last = start, last_scan = 0, last_tick = start;
    uint64_t end = o->duration_s > 0 ? start + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
    uint64_t rng = start | 1, k = 1;
    uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    r->ended_by = 1;
    for (;;) {
        if (o->stop && *o->stop) {
            r->ended_by = 2;
            break;
        }
        /* when pass k is due: start + k * period, with jitter of up to period/8 either way */
        uint64_t jitter_span = period / 4;
        int64_t jitter = jitter_span ? (int64_t)(rng_next(&rng) % jitter_span) - (int64_t)(jitter_span / 2) : 0;
        uint64_t due = (uint64_t)((int64_t)(start + k * period) + jitter);
        if (due >= end) {
            due = end;
        }
        struct timespec ts = {(time_t)(due / 1000000000ull), (long)(due % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            if (o->stop && *o->stop)
                break;
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        if (now >= end && o->duration_s > 0) {
            r->ended_by = 0;
            break;
        }
        if (now > due + period)
            r->late++;
        /* the next pass: the next slot after this one, or, when this pass was late,
         * the first slot after now (the missed ones are skipped, not made up) */
        uint64_t next_k = (now - start) / period + 1;
        k = next_k > k + 1 ? next_k : k + 1;

        if (o->subprocesses && now - last_scan >= SCAN_EVERY_NS) {
            scan_children(L);
            last_scan = now;
        }
        reap_child(o, r, L);
        uint64_t weight = now - last;
        last = now;
        for (int i = 0; i < L->ntargets; i++) {
            target *t = &L->targets[i];
            if (t->dead)
                continue;
            if (!t->reader) {
                /* a new descendant: read it once it is a Python (tries 20 ms apart, for 4 s) */
                if (now < t->next_try_ns)
                    continue;
                t->next_try_ns = now + 20000000ull;
                if (try_open(L, t, why, sizeof why) != 0) {
                    if (t->tries >= 200)
                        t->dead = 1;
                    continue;
                }
            }
            if (!t->spans && now >= t->next_span_try_ns) {
                /* a lapse core in the target publishes its threads' open spans: each
                 * sample then carries the span path open on its thread (looked for
                 * again later: `import lapse` may load the core after the start) */
                char smsg[256];
                /* the first look searches every mapped file (an executable linked with
                 * the static library has the registry in its own symbols); later
                 * ones only once a lapse library is mapped */
                int first = t->span_try_gap_ns == 0;
                if ((first || maps_mention_lapse(t->pid)) &&
                    span_stack_open(t->pid, &t->spans, smsg, sizeof smsg) != 0)
                    t->spans = NULL;
                if (t->spans && t->pid == o->root)
                    r->saw_spans = 1;
                /* 250 ms after the first look, then doubling up to every 4 s */
                t->span_try_gap_ns = first ? 250000000ull
                                   : t->span_try_gap_ns >= 2000000000ull ? 4000000000ull
                                                                         : 2 * t->span_try_gap_ns;
                t->next_span_try_ns = now + t->span_try_gap_ns;
            }
            int src = sample_target(L, t, weight);
            if (src == PYREAD_GONE) {
                t->dead = 1;
                pyread_close(t->reader);
                t->reader = NULL;
                span_stack_close(t->spans);
                t->spans = NULL;
            } else if (src != 0 && ++t->failed_passes >= 3) {
                span_stack_close(t->spans);
                t->spans = NULL;
                /* the runtime is no longer where it was: the process exec'd (a child
                 * forked from a Python runs another program): find it again */
                pyread_close(t->reader);
                t->reader = NULL;
                t->tries = 0;
                t->failed_passes = 0;
                t->next_try_ns = now;
            } else if (src == 0) {
                t->failed_passes = 0;
            }
        }
        r->passes++;
        meta->samples = r->passes;
        meta->late_samples = r->late;
        meta->read_errors = L->read_errors;
        if (o->child > 0 && r->child_status != -1 && !o->subprocesses) {
            r->ended_by = 1;
            break;
        }
        if (!any_alive(L) && (o->child <= 0 || r->child_status != -1)) {
            r->ended_by = 1;
            break;
        }
        if (o->tick && o->tick_s > 0 && (double)(now - last_tick) / 1e9 >= o->tick_s) {
            last_tick = now;
            if (o->tick(o->tick_ctx, set)) {
                r->ended_by = 3;
                break;
            }
        }
    }
    r->sampler_cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    r->duration_ns = last - start;
    r->read_errors = L->read_errors;
    for (int i = 0; i < L->ntargets; i++) {
        r->processes += L->targets[i].ever_read;
        pyread_close(L->targets[i].reader);
        span_stack_close(L->targets[i].spans);
    }
    if (L->cpu >= 0)
        sched_setaffinity(0, sizeof L->allowed, &L->allowed);
    meta->samples = r->passes;
    meta->late_samples = r->late;
    meta->read_errors = r->read_errors;
    meta->duration_ns = r->duration_ns;
    meta->end_real_ns = meta->start_real_ns + r->duration_ns;
    meta->rate_achieved_hz = r->duration_ns ? (double)r->passes * 1e9 / (double)r->duration_ns : 0;
    free(L->snap);
    free(L);
    return 0;
}
