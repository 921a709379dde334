/* Start, stop, the periodic flusher, exit and fork handling. */
#include "session.h"

#include "lapse.h"

#include "../core/causal.h"
#include "../core/clock.h"
#include "../core/core.h"
#include "../core/names.h"
#include "../collect/collector.h"
#include "../collect/cupti.h"
#include "../collect/io.h"
#include "../store/file_io.h"
#include "fork_children.h"
#include "backend_window.h"
#include "gpu_memory.h"
#include "gpu_phase.h"
#include "launcher.h"
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* What a session exports to the processes it starts: they join its run, as role
 * "child" unless they choose one, and collect what it collects (its features, bounds
 * and periods: a session the environment starts reads them). */
#define ENV_SAVED 12
static const char *const exported_env[ENV_SAVED] = {
    "LAPSE_PROFILE",     "LAPSE_RUN_DIR",      "LAPSE_RUN_ID",           "LAPSE_ROLE",
    "LAPSE_SHARE",       "LAPSE_FEATURES",     "LAPSE_MAX_SPANS",        "LAPSE_CPU_SAMPLE_MS",
    "LAPSE_SNAPSHOT_MS", "LAPSE_THREAD_NAMES", "LAPSE_PROCESS_SAMPLE_MS",
    "LAPSE_DEVICE_INTERVAL_MS"};
#define CHILD_ROLE "child"

/* A thread of the session: the flusher, the sampler. Started without waiting for
 * it to run (a forked child that execs or exits at once never waits for a thread
 * of its own): only a fork waits for that, since one before the thread runs could
 * copy a lock its start-up holds (seen with ASan's allocator) into the child. */
enum { THREAD_NEW, THREAD_RUNNING, THREAD_ABANDONED };
typedef struct {
    pthread_t id;
    int created;   /* pthread_create succeeded; not joined yet */
    int state;     /* atomic: THREAD_* */
    int confirmed; /* a fork saw it run (under write_mu) */
    sem_t started; /* posted once it runs */
} session_thread;

static struct session {
    int active;
    int inherited; /* started by LAPSE_PROFILE=1, or continued in a forked child, and
                      not adopted since by a binding's session object */
    lapse_options opts;
    char role[128];
    char run_dir[PATH_MAX];
    char run_id[64];
    char host[256];
    char job_id[128];
    int64_t rank, world_size, local_rank;
    const char *launcher;
    struct rusage start_usage; /* the process's at the session's start: the files' CPU
                                  time and switches are the session's, as its wall is */
    char dir[PATH_MAX];
    char file[PATH_MAX];
    uint64_t start_real_ns, start_mono_ns;
    uint64_t write_seq;
    int write_warned;
    uint64_t write_failures; /* this session's writes that failed */
    char write_error[512];   /* the last failure */
    pthread_mutex_t write_mu;
    session_thread flusher;
    int flusher_stop;
    sem_t flusher_wake;
    sem_t flusher_done;
    session_thread sampler;
    int sampler_stop;
    sem_t sampler_wake;
    uint32_t cpu_sample_ms; /* 0: no CPU sampler */
    uint32_t proc_sample_ms; /* 0: no process sampler */
    uint32_t device_interval_ms; /* the GPU collector's period, with LAPSE_FEATURE_DEVICE */
    int collecting[COLLECT_MAX]; /* collectors[i] runs (its start returned 0) */
    char missing[1024]; /* the features asked for that failed to start, with why ("; ") */
    char absent[1024];  /* those whose library this machine does not have, with why */
    char missing_all[2048]; /* both, for lapse_missing */
    /* writes asked for by signal handlers, served by the flusher (a handler may not
     * allocate): the reason of a non-final write still to do (a later signal's
     * replaces it: one write serves both), and of the final write, which its handler
     * waits for (final_written) */
    const char *signal_snapshot;
    const char *signal_final;
    int final_written;
    char *saved_env[ENV_SAVED];
    int saved_env_set[ENV_SAVED];
    int saved_env_kept[ENV_SAVED]; /* not exported: left as it was */
    uint32_t features; /* LAPSE_FEATURE_* in force */
} S = {.write_mu = PTHREAD_MUTEX_INITIALIZER};

static char last_error[512];
static void block_handled_signals(sigset_t *saved);

/* Periodic snapshots written so far, for live export: waiters (a binding's thread)
 * wake at each one and at the end of the session. */
static pthread_mutex_t snap_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t snap_cond = PTHREAD_COND_INITIALIZER;
static uint64_t snap_seq;
static uint64_t snap_wakeups; /* bumped by lapse_session_wake_snapshot_waiters and at the end */

static void snapshot_written(int wake_only)
{
    pthread_mutex_lock(&snap_mu);
    if (wake_only)
        snap_wakeups++;
    else
        snap_seq++;
    pthread_cond_broadcast(&snap_cond);
    pthread_mutex_unlock(&snap_mu);
}

int lapse_session_wait_snapshot(uint64_t after_seq, uint32_t timeout_ms, uint64_t *seq)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&snap_mu);
    uint64_t wakeups = snap_wakeups;
    int rc = 0;
    while (snap_seq <= after_seq && snap_wakeups == wakeups && rc == 0)
        rc = pthread_cond_timedwait(&snap_cond, &snap_mu, &deadline);
    *seq = snap_seq;
    int got = snap_seq > after_seq;
    pthread_mutex_unlock(&snap_mu);
    return got ? 1 : 0;
}

void lapse_session_wake_snapshot_waiters(void) { snapshot_written(1); }

int lapse_session_with_snapshot(void (*fn)(const store_file *f, void *arg), void *arg)
{
    sigset_t saved;
    block_handled_signals(&saved);
    pthread_mutex_lock(&S.write_mu);
    int rc = -EINVAL;
    if (S.active) {
        store_file f;
        memset(&f, 0, sizeof f);
        rc = snapshot_take(&f);
        if (rc == 0)
            fn(&f, arg);
        snapshot_free(&f);
    }
    pthread_mutex_unlock(&S.write_mu);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return rc;
}
static int process_hooks_installed;


const char *lapse_last_error(void) { return last_error; }
int lapse_is_active(void) { return S.active; }
const char *lapse_file_path(void) { return S.active ? S.file : NULL; }

/* Records "what: reason" as the last error and returns code. */
static int set_error(int code, const char *what, const char *detail)
{
    snprintf(last_error, sizeof last_error, "%s%s: %s", what, detail ? detail : "",
             strerror(-code));
    return code;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

static uint64_t env_u64(const char *name, uint64_t fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return *end == 0 ? (uint64_t)x : fallback;
}

void lapse_options_init(lapse_options *o)
{
    memset(o, 0, sizeof *o);
    o->handle_signals = 1;
}

static void make_run_id(char *out, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm);
    snprintf(out, len, "%s-%06x", stamp, store_random_u32() & 0xffffff);
}

static void choose_file(void)
{
    char role[128];
    snprintf(role, sizeof role, "%s", S.role);
    launcher_sanitize(role);
    snprintf(S.file, sizeof S.file, "%s/%s-%ld-%04x.lapse", S.dir, role, (long)getpid(),
             store_random_u32() & 0xffff);
}

const char *lapse_session_exported_env_name(unsigned i) { return i < ENV_SAVED ? exported_env[i] : NULL; }

static core_span_hook binding_hook; /* lapse_session_set_span_hook's */

/* The names of LAPSE_FEATURES, as LAPSE_FEATURE_* bits from bit 0 (SPANS). */
static const char *const feature_names[] = {"spans",  "timeline", "cpu",    "io",
                                            "memory", "markers",  "device", "activity"};
#define FEATURE_NAMES (sizeof feature_names / sizeof feature_names[0])

/* Parses LAPSE_FEATURES ("spans,cpu,..."); 0, or -EINVAL with *bad the unknown name. */
static int parse_features(const char *v, uint32_t *out, char *bad, size_t bad_len)
{
    *out = 0;
    while (*v) {
        size_t n = strcspn(v, ",");
        unsigned i = 0;
        while (i < FEATURE_NAMES && !(strlen(feature_names[i]) == n && !strncmp(v, feature_names[i], n)))
            i++;
        if (i == FEATURE_NAMES && n) {
            snprintf(bad, bad_len, "%.*s", (int)(n < 64 ? n : 64), v);
            return -EINVAL;
        }
        if (n)
            *out |= 1u << i;
        v += n + (v[n] == ',');
    }
    return 0;
}

static void save_and_export_env(void)
{
    char features[96] = "", max_spans[24], cpu_ms[16], snapshot_ms[16], process_ms[16],
         device_ms[16];
    for (unsigned i = 0; i < FEATURE_NAMES; i++)
        if (S.features & (1u << i))
            snprintf(features + strlen(features), sizeof features - strlen(features), "%s%s",
                     features[0] ? "," : "", feature_names[i]);
    snprintf(max_spans, sizeof max_spans, "%llu", (unsigned long long)S.opts.max_spans);
    snprintf(cpu_ms, sizeof cpu_ms, "%u", S.cpu_sample_ms);
    snprintf(snapshot_ms, sizeof snapshot_ms, "%u", S.opts.snapshot_interval_ms);
    snprintf(process_ms, sizeof process_ms, "%u", S.proc_sample_ms);
    snprintf(device_ms, sizeof device_ms, "%u", S.device_interval_ms);
    /* NULL: left as it is (a period of a collector that is off stays the user's) */
    const char *values[ENV_SAVED] = {"1", S.run_dir, S.run_id, CHILD_ROLE, S.opts.share ? "1" : "0",
                                     features, S.opts.max_spans ? max_spans : NULL,
                                     S.cpu_sample_ms ? cpu_ms : NULL, snapshot_ms,
                                     S.opts.thread_names ? "1" : "0",
                                     S.proc_sample_ms ? process_ms : NULL,
                                     S.opts.features & LAPSE_FEATURE_DEVICE ? device_ms : NULL};
    for (int i = 0; i < ENV_SAVED; i++) {
        S.saved_env_kept[i] = values[i] == NULL;
        if (S.saved_env_kept[i])
            continue;
        const char *old = getenv(exported_env[i]);
        S.saved_env_set[i] = old != NULL;
        S.saved_env[i] = old ? strdup(old) : NULL;
        setenv(exported_env[i], values[i], 1);
    }
}

static void restore_env(void)
{
    for (int i = 0; i < ENV_SAVED; i++) {
        if (S.saved_env_kept[i])
            continue;
        if (S.saved_env_set[i] && S.saved_env[i])
            setenv(exported_env[i], S.saved_env[i], 1);
        else
            unsetenv(exported_env[i]);
        free(S.saved_env[i]);
        S.saved_env[i] = NULL;
    }
}

static uint64_t timeval_ns(const struct timeval *t)
{
    return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_usec * 1000ull;
}

static void fill_meta(store_meta *m, int final, const char *reason)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t mono = core_mono_ns();
    m->format_version = STORE_FORMAT_VERSION;
    m->lapse_version = "0.1.0";
    m->host = S.host;
    m->role = S.role;
    m->run_id = S.run_id;
    m->job_id = S.job_id;
    m->end_reason = (char *)reason;
    m->clock_source = core_clock_g.use_tsc ? "tsc" : "monotonic";
    m->pid = getpid();
    m->ppid = getppid();
    m->rank = S.rank;
    m->world_size = S.world_size;
    m->local_rank = S.local_rank;
    m->launcher = (char *)S.launcher;
    m->start_real_ns = S.start_real_ns;
    m->start_mono_ns = S.start_mono_ns;
    m->write_mono_ns = mono;
    m->write_real_ns = core_real_ns();
    m->anchor_real_ns = core_clock_g.anchor_real_ns;
    m->anchor_mono_ns = core_clock_g.anchor_mono_ns;
    m->wall_ns = mono - S.start_mono_ns;
    m->cpu_user_ns = timeval_ns(&ru.ru_utime) - timeval_ns(&S.start_usage.ru_utime);
    m->cpu_sys_ns = timeval_ns(&ru.ru_stime) - timeval_ns(&S.start_usage.ru_stime);
    m->max_rss_kb = S.opts.features & LAPSE_FEATURE_MEMORY ? (uint64_t)ru.ru_maxrss : 0;
    m->ctx_voluntary = (int64_t)(ru.ru_nvcsw - S.start_usage.ru_nvcsw);
    m->ctx_involuntary = (int64_t)(ru.ru_nivcsw - S.start_usage.ru_nivcsw);
    m->features = S.opts.features;
    m->tsc_hz = core_clock_g.tsc_hz;
    m->write_seq = ++S.write_seq;
    m->write_failures = S.write_failures;
    m->write_error = S.write_error;
    m->gpu_time_missing = (char *)session_gpu_time_missing();
    m->final = (uint32_t)final;
    m->snapshot_interval_ms = S.opts.snapshot_interval_ms;
    m->max_spans = core_cfg.max_spans;
    m->max_depth = core_cfg.max_depth;
    m->max_paths = core_cfg.max_paths;
    m->max_counters = core_cfg.max_counters;
    m->thread_names = S.opts.thread_names ? 1u : 0u;
    m->missing = S.missing;
    m->absent = S.absent;
    session_window_fill(m, S.start_mono_ns);
}

static int write_locked(int final, const char *reason);

/* The signals lapse handles, blocked in the writing thread while it writes: a
 * handler that interrupted a write of its own thread could neither wait for it nor
 * write itself, and the process would die with the file half written. */
static void block_handled_signals(sigset_t *saved) { collect_block_handled_signals(saved); }

int session_write(int final, const char *reason)
{
    sigset_t saved;
    block_handled_signals(&saved);
    pthread_mutex_lock(&S.write_mu);
    int rc = write_locked(final, reason);
    pthread_sigmask(SIG_SETMASK, &saved, NULL); /* a pending signal is handled now */
    return rc;
}

int session_write_nowait(int final, const char *reason)
{
    if (pthread_mutex_trylock(&S.write_mu) != 0)
        return -EBUSY;
    return write_locked(final, reason);
}

/* Called with write_mu held; releases it. */
static int write_locked(int final, const char *reason)
{
    if (!S.file[0]) {
        pthread_mutex_unlock(&S.write_mu);
        return -EINVAL;
    }
    store_file f;
    memset(&f, 0, sizeof f);
    char err[512] = "";
    /* what this thread's snapshot (the threads' names from /proc) and write move is
     * lapse's own, kept out of the phases' I/O */
    collect_own_write own;
    collect_io_write_begin(&own);
    int rc = snapshot_take(&f);
    for (unsigned i = 0; rc == 0 && collectors[i]; i++)
        if (S.collecting[i] && collectors[i]->take)
            rc = collectors[i]->take(&f);
    if (rc == 0)
        rc = fork_children_take(&f);
    if (rc == 0)
        gpu_memory_take(&f);
    int wrote = rc == 0;
    if (wrote) {
        fill_meta(&f.meta, final, reason);
        rc = store_write_file(S.file, &f, session_store_flags(), err, sizeof err);
    } else {
        snprintf(err, sizeof err, "out of memory taking a snapshot for %s", S.file);
    }
    collect_io_write_end(&own, wrote);
    free(f.children);
    snapshot_free(&f);
    if (rc) {
        /* never break the host program: a line, and carry on. The next write that
         * lands carries the count and the last failure (meta write_failures,
         * write_error), for the reader. */
        S.write_failures++;
        snprintf(S.write_error, sizeof S.write_error, "%s", err);
        snprintf(last_error, sizeof last_error, "%s", err);
        if (final) {
            fprintf(stderr, "lapse: profile not saved: %s\n", err);
        } else if (!S.write_warned) {
            S.write_warned = 1;
            fprintf(stderr, "lapse: warning: %s (profiling continues; at its end lapse says "
                            "whether the profile was saved)\n", err);
        }
    }
    pthread_mutex_unlock(&S.write_mu);
    return rc;
}

int lapse_flush(void)
{
    if (!S.active)
        return set_error(-EINVAL, "lapse_flush: no active session", NULL);
    return session_write(0, "");
}

static void timespec_after_ns(struct timespec *ts, uint64_t ns)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += (time_t)(ns / 1000000000ull);
    ts->tv_nsec += (long)(ns % 1000000000ull);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static uint64_t ms_to_ns(uint32_t ms) { return (uint64_t)ms * 1000000ull; }

/* The shortest time between two writes that signals ask for: a storm of them
 * (thousands a second) costs the process one write per 100 ms, not one per signal.
 * A write is mostly the kernel's (ext4, the fsync's I/O), charged to the process:
 * on a loaded 2-CPU VM one every 10 ms cost the program's own handlers 5% of their
 * deliveries in a storm (median of 30 storms of 1,000 signals, the program in a
 * session of its own: 866 vs 917 without lapse), one every 50 ms or none did not
 * (939, 952); one every 100 ms: 953 vs 945. A signal after a quiet spell is written
 * at once. */
#define SIGNAL_WRITE_GAP_NS 100000000ull

static int thread_start(session_thread *t, void *(*fn)(void *))
{
    t->state = THREAD_NEW;
    t->confirmed = 0;
    sem_init(&t->started, 0, 0);
    t->created = pthread_create(&t->id, NULL, fn, t) == 0;
    if (!t->created)
        sem_destroy(&t->started);
    return t->created ? 0 : -EAGAIN;
}

/* First thing a session thread does: 0 when the session gave up on it (its
 * process exited before it ran): it returns at once, touching nothing. */
static int thread_begin(session_thread *t, const char *name)
{
    int expected = THREAD_NEW;
    if (!__atomic_compare_exchange_n(&t->state, &expected, THREAD_RUNNING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return 0;
    /* named from inside: prctl, where naming another thread writes to /proc */
    pthread_setname_np(pthread_self(), name);
    /* signals go to the program's threads, whose handler hands the write to us */
    sigset_t ignored;
    block_handled_signals(&ignored);
    sem_post(&t->started);
    return 1;
}

/* Before a fork (write_mu held): the thread has run. */
static void thread_wait_started(session_thread *t)
{
    if (!t->created || t->confirmed)
        return;
    while (sem_wait(&t->started) != 0 && errno == EINTR)
        ;
    t->confirmed = 1;
}

/* Ends a thread that was asked to stop: joined, or at the process's exit, if it
 * has not run yet, left to die with the process (joining it would wait for the
 * scheduler to run it, a few ms on a busy machine, for nothing). */
static void thread_end(session_thread *t, int at_exit)
{
    if (!t->created)
        return;
    int expected = THREAD_NEW;
    if (at_exit && __atomic_compare_exchange_n(&t->state, &expected, THREAD_ABANDONED, 0,
                                               __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        pthread_detach(t->id);
    else
        pthread_join(t->id, NULL);
    t->created = 0;
    sem_destroy(&t->started);
}

static void *flusher_main(void *arg)
{
    if (!thread_begin(arg, "lapse-flush"))
        return NULL;
    uint64_t interval = ms_to_ns(S.opts.snapshot_interval_ms);
    uint64_t last = core_mono_ns(), periodic = last + interval;
    for (;;) {
        uint64_t now = core_mono_ns(), due = periodic;
        if (__atomic_load_n(&S.signal_snapshot, __ATOMIC_ACQUIRE) && last + SIGNAL_WRITE_GAP_NS < due)
            due = last + SIGNAL_WRITE_GAP_NS;
        uint64_t look = fork_children_look_due(); /* a forked child: does it run as ours? */
        if (look && look < due)
            due = look;
        if (due > now) {
            struct timespec deadline;
            timespec_after_ns(&deadline, due - now);
            if (sem_timedwait(&S.flusher_wake, &deadline) == 0)
                while (sem_trywait(&S.flusher_wake) == 0) /* one look serves them all */
                    ;
        }
        const char *final = __atomic_load_n(&S.signal_final, __ATOMIC_ACQUIRE);
        if (final && !S.final_written) {
            /* the process dies of the signal once this is in place: nothing after */
            session_write(1, final);
            __atomic_store_n(&S.final_written, 1, __ATOMIC_RELEASE);
            sem_post(&S.flusher_done);
            continue;
        }
        if (final) { /* written: the process dies of the signal; nothing more */
            while (!__atomic_load_n(&S.flusher_stop, __ATOMIC_ACQUIRE))
                sem_wait(&S.flusher_wake);
            break;
        }
        if (__atomic_load_n(&S.flusher_stop, __ATOMIC_ACQUIRE))
            break; /* the session's end writes the file */
        now = core_mono_ns();
        if (look && now >= look) /* a span of its own: not exec'd, a worker of the program */
            fork_children_look(now, core_threads_count() > 0, S.write_seq > 0);
        const char *reason = NULL;
        if (now >= last + SIGNAL_WRITE_GAP_NS) /* taken before the write: a signal */
            reason = __atomic_exchange_n(&S.signal_snapshot, NULL, __ATOMIC_ACQ_REL);
        if (reason) { /* during it asks for another */
            session_write(0, reason);
        } else if (now >= periodic) {
            if (session_write(0, "") == 0)
                snapshot_written(0);
        } else {
            continue;
        }
        last = core_mono_ns();
        periodic = last + interval;
    }
    return NULL;
}

/* From a handler of one of the signals lapse handles (async-signal-safe: atomics
 * and sem_post). A signal the program goes on after (it handles or ignores it) only
 * asks the flusher for a write and returns at once, so that the handler chains to
 * the program's at once too, and a storm of signals reaches it as it would without
 * lapse; a terminating one waits (up to 3 s) for the final file, which must be in
 * place before the process dies. */
int session_write_from_signal(int final, const char *reason)
{
    if (!S.active)
        return 0;
    if (S.flusher.created && !pthread_equal(pthread_self(), S.flusher.id)) {
        if (!final) {
            /* one wake per write asked for: a storm wakes the flusher no more often
             * than it writes */
            if (!__atomic_exchange_n(&S.signal_snapshot, reason, __ATOMIC_ACQ_REL))
                sem_post(&S.flusher_wake);
            return 0;
        }
        const char *none = NULL;
        if (__atomic_compare_exchange_n(&S.signal_final, &none, reason, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            sem_post(&S.flusher_wake);
        struct timespec deadline;
        timespec_after_ns(&deadline, ms_to_ns(3000));
        while (!__atomic_load_n(&S.final_written, __ATOMIC_ACQUIRE))
            if (sem_timedwait(&S.flusher_done, &deadline) != 0 && errno != EINTR)
                return -ETIMEDOUT; /* give up rather than hang the exit */
        sem_post(&S.flusher_done); /* a terminating signal on another thread waits too */
        return 0;
    }
    /* no flusher to hand over to: write here unless a write is in progress */
    return session_write_nowait(final, reason);
}

static int flusher_start(void)
{
    S.flusher_stop = 0;
    S.signal_snapshot = NULL;
    S.signal_final = NULL;
    S.final_written = 0;
    sem_init(&S.flusher_wake, 0, 0);
    sem_init(&S.flusher_done, 0, 0);
    int rc = thread_start(&S.flusher, flusher_main);
    if (rc) {
        sem_destroy(&S.flusher_wake);
        sem_destroy(&S.flusher_done);
    }
    return rc;
}

static void flusher_stop(int at_exit)
{
    if (!S.flusher.created)
        return;
    __atomic_store_n(&S.flusher_stop, 1, __ATOMIC_RELEASE);
    sem_post(&S.flusher_wake);
    thread_end(&S.flusher, at_exit);
    sem_destroy(&S.flusher_wake);
    sem_destroy(&S.flusher_done);
}

/* The collectors' clock: each ticks when it asked to (collector.h); the first
 * ticks at once, in table order. */
static void *sampler_main(void *arg)
{
    if (!thread_begin(arg, "lapse-sampler"))
        return NULL;
    uint64_t due[COLLECT_MAX];
    for (unsigned i = 0; collectors[i]; i++)
        due[i] = S.collecting[i] && collectors[i]->tick ? collectors[i]->tick(0) : UINT64_MAX;
    for (;;) {
        uint64_t next = UINT64_MAX, now = core_mono_ns();
        for (unsigned i = 0; collectors[i]; i++)
            if (due[i] < next)
                next = due[i];
        if (next == UINT64_MAX) {
            sem_wait(&S.sampler_wake);
        } else if (next > now) {
            struct timespec deadline;
            timespec_after_ns(&deadline, next - now);
            sem_timedwait(&S.sampler_wake, &deadline);
        }
        if (__atomic_load_n(&S.sampler_stop, __ATOMIC_ACQUIRE))
            break;
        for (unsigned i = 0; collectors[i]; i++)
            if (due[i] != UINT64_MAX && core_mono_ns() >= due[i])
                due[i] = collectors[i]->tick(due[i]);
    }
    return NULL;
}

static void sampler_start(int ticks)
{
    if (!ticks)
        return;
    S.sampler_stop = 0;
    sem_init(&S.sampler_wake, 0, 0);
    if (thread_start(&S.sampler, sampler_main) != 0)
        sem_destroy(&S.sampler_wake);
}

static void sampler_stop(int at_exit)
{
    if (!S.sampler.created)
        return;
    __atomic_store_n(&S.sampler_stop, 1, __ATOMIC_RELEASE);
    sem_post(&S.sampler_wake);
    thread_end(&S.sampler, at_exit);
    sem_destroy(&S.sampler_wake);
}

/* Starts the collectors of the features asked for (their data reset) that have a
 * span hook (hooked != 0: before the span engine's session, which fixes its hooks)
 * or that have none; one that cannot run is left out, and said (S.missing, or
 * S.absent when what it needs is not on this machine). Returns whether one that
 * started ticks. */
static int collectors_start(int hooked)
{
    collect_config cfg = {S.opts.features, S.cpu_sample_ms, S.proc_sample_ms, S.device_interval_ms};
    int ticks = 0;
    for (unsigned i = 0; collectors[i]; i++) {
        const collector *c = collectors[i];
        if ((c->span_hook.begin != NULL) != (hooked != 0))
            continue;
        char why[256] = "";
        int rc = S.opts.features & c->features ? c->start(&cfg, why, sizeof why) : 1;
        S.collecting[i] = rc == 0;
        ticks |= S.collecting[i] && c->tick;
        if (rc >= 0)
            continue;
        /* the session runs without it, and says why */
        S.opts.features &= ~c->features;
        S.features &= ~c->features;
        char *to = rc == -ENOENT ? S.absent : S.missing;
        size_t used = strlen(to);
        snprintf(to + used, sizeof S.missing - used, "%s%s: %s", used ? "; " : "", c->name,
                 why[0] ? why : strerror(-rc));
    }
    snprintf(S.missing_all, sizeof S.missing_all, "%s%s%s", S.missing,
             S.missing[0] && S.absent[0] ? "; " : "", S.absent);
    return ticks;
}

/* In a forked child: its collectors forget the parent's data, its own sampler. */
static void collectors_fork_child(void)
{
    int ticks = 0;
    session_window_fork_child(); /* the parent's window is the parent's */
    for (unsigned i = 0; collectors[i]; i++) {
        if (!S.collecting[i])
            continue;
        if (collectors[i]->fork_child)
            collectors[i]->fork_child();
        ticks |= collectors[i]->tick != NULL;
    }
    sampler_start(ticks);
}

/* The sampler thread first, then each collector's last reading. */
static void collectors_stop(int at_exit)
{
    sampler_stop(at_exit);
    for (unsigned i = 0; collectors[i]; i++)
        if (S.collecting[i] && collectors[i]->stop)
            collectors[i]->stop();
}

static void end_session(const char *reason, int at_exit)
{
    /* a terminating signal waits until the final file is in place (then finds no
     * session and only chains): handled meanwhile, it could stop the flusher
     * half-way or kill the process before the write */
    sigset_t saved;
    block_handled_signals(&saved);
    lapse_enabled_ = 0;
    collectors_stop(at_exit);
    flusher_stop(at_exit);
    int rc = session_write(1, reason);
    (void)rc;
    if (S.opts.handle_signals)
        signals_restore();
    restore_env();
    S.active = 0;
    S.inherited = 0;
    snapshot_written(1); /* live export waiters see the end */
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

static void at_exit(void)
{
    if (S.active)
        end_session("exit", 1);
}

static void fork_prepare(void)
{
    /* no write may be in progress across fork, and no lock held by our thread */
    pthread_mutex_lock(&S.write_mu);
    collect_io_fork_prepare();
    if (S.active)
        fork_children_prepare();
    thread_wait_started(&S.flusher);
    thread_wait_started(&S.sampler);
    core_fork_prepare();
}

static void fork_parent(void)
{
    core_fork_parent();
    collect_io_fork_parent();
    pthread_mutex_unlock(&S.write_mu);
}

static void fork_child(void)
{
    core_fork_child();
    causal_begin(); /* the parent's signals and waits are not the child's */
    gpu_memory_reset(1); /* nor its torch readings */
    pthread_mutex_init(&S.write_mu, NULL);
    collect_io_fork_child();
    /* a waiter of the parent may have held it; none of its threads is here */
    pthread_mutex_init(&snap_mu, NULL);
    pthread_cond_init(&snap_cond, NULL);
    if (!S.active) {
        fork_children_child(0, 0); /* not the parent's list: its own, at its first fork */
        return;
    }
    /* a new process: its own file, an empty tree, its own clock of time and CPU;
     * its own threads, started and not waited for */
    S.flusher.created = S.sampler.created = 0;
    S.write_seq = 0;
    S.write_warned = 0;
    S.write_failures = 0;
    S.write_error[0] = 0;
    S.start_real_ns = core_real_ns();
    S.start_mono_ns = core_mono_ns();
    getrusage(RUSAGE_SELF, &S.start_usage);
    fork_children_child(1, S.start_mono_ns);
    S.inherited = 1; /* the child's own session object may adopt it */
    snprintf(S.role, sizeof S.role, "%s", CHILD_ROLE); /* a process of its own */
    choose_file();
    collectors_fork_child(); /* their data reset before the flusher can take it */
    flusher_start();
}

static void install_process_hooks(void)
{
    if (process_hooks_installed)
        return;
    process_hooks_installed = 1;
    atexit(at_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* 0 when a session can collect every feature asked for; else the error of the first
 * one it cannot (lapse_last_error names it). */
static int check_features(uint32_t features)
{
    /* every feature has its collector now: none is reserved */
    uint32_t known = LAPSE_FEATURE_SPANS | LAPSE_FEATURE_TIMELINE | LAPSE_FEATURE_CPU |
                     LAPSE_FEATURE_IO | LAPSE_FEATURE_MEMORY | LAPSE_FEATURE_DEVICE |
                     LAPSE_FEATURE_MARKERS | LAPSE_FEATURE_ACTIVITY;
    if (features & ~known) {
        char bits[32];
        snprintf(bits, sizeof bits, "0x%x", features & ~known);
        return set_error(-EINVAL, "lapse_start: unknown feature bits ", bits);
    }
    if (!(features & LAPSE_FEATURE_SPANS) && (features & LAPSE_FEATURE_TIMELINE))
        return set_error(-EINVAL, "lapse_start: feature TIMELINE needs SPANS", NULL);
    if (!(features & LAPSE_FEATURE_SPANS) && (features & LAPSE_FEATURE_CPU))
        return set_error(-EINVAL, "lapse_start: feature CPU (wait% per span) needs SPANS", NULL);
    if (!(features & LAPSE_FEATURE_SPANS) && (features & LAPSE_FEATURE_MARKERS))
        return set_error(-EINVAL, "lapse_start: feature MARKERS (NVTX ranges of spans) needs SPANS", NULL);
    return 0;
}

int lapse_start(const lapse_options *options)
{
    if (S.active)
        return set_error(-EBUSY, "lapse_start: a session is already active", NULL);
    lapse_options o;
    if (options)
        o = *options;
    else
        lapse_options_init(&o);
    if (o.features == 0) { /* a parent session's (exported), else the default */
        const char *v = getenv("LAPSE_FEATURES");
        char bad[80];
        o.features = LAPSE_FEATURES_DEFAULT;
        if (v && *v && parse_features(v, &o.features, bad, sizeof bad))
            return set_error(-EINVAL, "lapse_start: LAPSE_FEATURES: unknown feature ", bad);
    }
    int rc = check_features(o.features);
    if (rc)
        return rc;
    if (!o.role)
        o.role = env_or("LAPSE_ROLE", "main");
    if (!o.run_dir)
        o.run_dir = env_or("LAPSE_RUN_DIR", "lapse-runs");
    if (!o.max_spans)
        o.max_spans = env_u64("LAPSE_MAX_SPANS", 100000);
    if (!o.snapshot_interval_ms)
        o.snapshot_interval_ms = (uint32_t)env_u64("LAPSE_SNAPSHOT_MS", 5000);
    if (o.snapshot_interval_ms < 10)
        o.snapshot_interval_ms = 10;
    if (!(o.features & LAPSE_FEATURE_TIMELINE) || env_u64("LAPSE_TIMELINE", 1) == 0)
        o.max_spans = 0;
    if (!o.thread_names)
        o.thread_names = env_u64("LAPSE_THREAD_NAMES", 0) != 0;
    if (!o.share)
        o.share = store_share_from_env() != 0;
    S.cpu_sample_ms = o.features & LAPSE_FEATURE_CPU ? (uint32_t)env_u64("LAPSE_CPU_SAMPLE_MS", 10) : 0;
    if (!o.process_sample_ms) /* LAPSE_PROCESS_SAMPLE_MS=0 turns it off */
        o.process_sample_ms = (uint32_t)env_u64("LAPSE_PROCESS_SAMPLE_MS", 1000);
    if (o.process_sample_ms && o.process_sample_ms < 10)
        o.process_sample_ms = 10;
    S.proc_sample_ms = o.features & (LAPSE_FEATURE_IO | LAPSE_FEATURE_MEMORY) ? o.process_sample_ms : 0;
    S.device_interval_ms = (uint32_t)env_u64("LAPSE_DEVICE_INTERVAL_MS", 1000);
    if (S.device_interval_ms < 10)
        S.device_interval_ms = 10;
    collect_io_configure();

    memset(S.role, 0, sizeof S.role);
    snprintf(S.role, sizeof S.role, "%s", o.role);
    if (o.run_dir[0] == '/') {
        snprintf(S.run_dir, sizeof S.run_dir, "%s", o.run_dir);
    } else {
        /* absolute, so that children in other working directories join the same run */
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return set_error(-errno, "lapse_start: cannot resolve ", o.run_dir);
        snprintf(S.run_dir, sizeof S.run_dir, "%.2000s/%.2000s", cwd, o.run_dir);
    }
    launcher_info li;
    launcher_read(&li);
    const char *inherited = getenv("LAPSE_RUN_ID");
    if (inherited && *inherited)
        snprintf(S.run_id, sizeof S.run_id, "%s", inherited);
    else if (li.run_id[0]) /* the ranks of one launch share it: one run */
        snprintf(S.run_id, sizeof S.run_id, "%s", li.run_id);
    else
        make_run_id(S.run_id, sizeof S.run_id);
    launcher_sanitize(S.run_id);
    snprintf(S.host, sizeof S.host, "%s", li.host);
    char host_dir[256];
    snprintf(host_dir, sizeof host_dir, "%s", S.host);
    launcher_sanitize(host_dir);
    snprintf(S.job_id, sizeof S.job_id, "%s", li.job_id);
    S.rank = li.rank;
    S.world_size = li.world_size;
    S.local_rank = li.local_rank;
    S.launcher = li.launcher;

    if (snprintf(S.dir, sizeof S.dir, "%s/%s/%s", S.run_dir, S.run_id, host_dir) >=
        (int)sizeof S.dir)
        return set_error(-ENAMETOOLONG, "lapse_start: run directory too long: ", S.run_dir);
    rc = store_make_dirs(S.dir, o.share ? STORE_SHARE : 0);
    if (rc)
        return set_error(rc, "lapse_start: cannot create ", S.dir);
    choose_file();

    core_clock_calibrate(5, getenv("LAPSE_CLOCK") && strcmp(getenv("LAPSE_CLOCK"), "monotonic") == 0);
    S.opts = o;
    S.features = (o.features & ~(uint32_t)(LAPSE_FEATURE_TIMELINE | LAPSE_FEATURE_CPU)) |
                 (o.max_spans ? LAPSE_FEATURE_TIMELINE : 0) | (S.cpu_sample_ms ? LAPSE_FEATURE_CPU : 0);
    session_gpu_time_reset();
    session_window_reset();
    /* the collectors with a span hook first (MARKERS, when an NVTX tool attaches: else
     * every span would pay for nothing), their hooks then the binding's */
    S.missing[0] = S.absent[0] = 0;
    collectors_start(1);
    core_span_hook hooks[CORE_SPAN_HOOKS];
    uint32_t n_hooks = 0;
    for (unsigned i = 0; collectors[i]; i++)
        if (S.collecting[i] && collectors[i]->span_hook.begin && n_hooks < CORE_SPAN_HOOKS - 1)
            hooks[n_hooks++] = collectors[i]->span_hook;
    if (binding_hook.begin && (S.opts.features & LAPSE_FEATURE_SPANS))
        hooks[n_hooks++] = binding_hook;
    core_span_hooks_set(hooks, n_hooks);
    core_config cfg = {o.max_depth, o.max_paths, 0, o.max_spans};
    core_begin_session(&cfg);
    causal_begin(); /* without its buffer, signals and waits are not recorded */
    S.write_seq = 0;
    S.write_warned = 0;
    S.write_failures = 0;
    S.write_error[0] = 0;
    S.start_real_ns = core_real_ns();
    S.start_mono_ns = core_mono_ns();
    getrusage(RUSAGE_SELF, &S.start_usage);
    install_process_hooks();
    fork_children_reset();
    gpu_memory_reset(0);
    save_and_export_env();
    S.active = 1;
    if (o.handle_signals)
        signals_install();
    /* the others before any write: a collector that cannot run is said in the first */
    sampler_start(collectors_start(0));
    flusher_start();
    /* The session's first file before lapse_start returns, so that a process killed
     * before its first interval is still named in its run. (A forked child writes its
     * first file when it takes a role: one that execs at once, the usual fork, would
     * leave the file of a process that never ran.) */
    session_write(0, "");
    if (o.features & LAPSE_FEATURE_SPANS) /* without it every span stays dormant */
        __atomic_store_n(&lapse_enabled_, 1, __ATOMIC_RELEASE);
    return 0;
}

void lapse_session_set_span_hook(uint64_t (*begin)(uint32_t name), void (*end)(uint64_t value))
{
    binding_hook = (core_span_hook){begin && end ? begin : NULL, begin && end ? end : NULL};
}

/* ACTIVITY's CUPTI, let go to torch.profiler and taken back (cupti.h) */
int lapse_session_activity_yield(void) { return S.active ? cupti_yield() : 0; }

int lapse_session_activity_resume(void) { return S.active ? cupti_resume() : 0; }

uint32_t lapse_features(void) { return S.active ? S.opts.features : 0; }

const char *lapse_missing(void) { return S.active ? S.missing_all : ""; }

int lapse_check_features(uint32_t features, char *why, size_t why_len)
{
    if (why_len)
        why[0] = 0;
    if (S.active)
        return -EBUSY;
    collect_config cfg = {features, 10, 1000, 1000};
    for (unsigned i = 0; collectors[i]; i++) {
        const collector *c = collectors[i];
        char reason[256] = "";
        int rc = features & c->features ? c->start(&cfg, reason, sizeof reason) : 1;
        if (rc == 0 && c->stop)
            c->stop();
        if (rc < 0) {
            snprintf(why, why_len, "%s: %s", c->name, reason[0] ? reason : strerror(-rc));
            return rc;
        }
    }
    return 0;
}

void session_mark_from_environment(void) { S.inherited = 1; }

void session_set_rank(int64_t rank, int64_t world_size)
{
    pthread_mutex_lock(&S.write_mu);
    S.rank = rank;
    S.world_size = world_size;
    if (!S.launcher || !*S.launcher)
        S.launcher = "mpi";
    pthread_mutex_unlock(&S.write_mu);
}

const char *session_run_id(void) { return S.active ? S.run_id : ""; }

unsigned session_store_flags(void) { return S.opts.share ? STORE_SHARE : 0; }

int lapse_session_settings(session_settings *out)
{
    if (!S.active)
        return -EINVAL;
    *out = (session_settings){S.run_dir, S.opts.max_spans, S.opts.snapshot_interval_ms,
                              S.cpu_sample_ms, S.proc_sample_ms, S.features,
                              S.opts.thread_names != 0,
                              S.opts.share != 0, S.inherited};
    return 0;
}

void lapse_session_set_thread_names(int on)
{
    pthread_mutex_lock(&S.write_mu);
    S.opts.thread_names = on != 0;
    pthread_mutex_unlock(&S.write_mu);
    setenv("LAPSE_THREAD_NAMES", on ? "1" : "0", 1); /* restored at the end as exported */
}

int lapse_adopt_environment_session(void)
{
    if (!S.active || !S.inherited)
        return -1;
    S.inherited = 0;
    return 0;
}

int lapse_set_role(const char *role)
{
    if (!S.active)
        return set_error(-EINVAL, "lapse_set_role: no active session", NULL);
    if (!role || !*role)
        return set_error(-EINVAL, "lapse_set_role: empty role", NULL);
    pthread_mutex_lock(&S.write_mu);
    char old[PATH_MAX];
    snprintf(old, sizeof old, "%s", S.file);
    snprintf(S.role, sizeof S.role, "%s", role);
    choose_file();
    int moved = S.write_seq > 0;
    pthread_mutex_unlock(&S.write_mu);
    /* written at once: a process that takes a role does real work (a forked child too,
     * which otherwise waits a snapshot interval), and is named if killed early */
    if (session_write(0, "") == 0 && moved)
        unlink(old); /* its content now lives in the new file */
    return 0;
}

int lapse_stop(void)
{
    if (!S.active)
        return set_error(-EINVAL, "lapse_stop: no active session", NULL);
    end_session("stop", 0);
    return 0;
}
