/* The process sampler: every interval, the process's I/O counters (less lapse's
 * own writes) and its RSS, and whether a phase was open. Bounded: at most
 * PROC_MAX_RECORDS records; when they are full, neighbours merge in pairs and each
 * record holds twice as many intervals from then on. No allocation. */
#include "proc_sampler.h"

#include "collector.h"
#include "io.h"

#include "lapse.h"

#include "../core/clock.h"
#include "../core/core.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROC_MAX_RECORDS 1024u

typedef struct reading {
    int ok;
    uint64_t mono_ns;
    uint64_t io[4]; /* read_chars, write_chars, read_bytes, write_bytes */
    uint64_t rss_bytes;
    int phase_open;
    uint64_t top_closed_ns;
} reading;

static struct {
    pthread_mutex_t mu;
    uint32_t interval_ms;
    uint32_t per_record;
    uint64_t unreadable;
    uint64_t cpu_ns;
    reading last;
    store_proc_sample records[PROC_MAX_RECORDS];
    uint32_t count;
    store_proc_sample pending; /* intervals not yet making a whole record */
} P = {.mu = PTHREAD_MUTEX_INITIALIZER};

int proc_rss_bytes(uint64_t *out)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[128];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    collect_own_read((uint64_t)n);
    buf[n] = 0;
    char *end;
    strtoull(buf, &end, 10); /* size */
    if (end == buf)
        return -1;
    const char *at = end;
    unsigned long long pages = strtoull(at, &end, 10); /* resident */
    if (end == at)
        return -1;
    long page = sysconf(_SC_PAGESIZE);
    *out = (uint64_t)pages * (uint64_t)(page > 0 ? page : 4096);
    return 0;
}

static void add_into(store_proc_sample *dst, const store_proc_sample *src)
{
    if (!dst->intervals)
        dst->start_ns = src->start_ns;
    dst->end_ns = src->end_ns;
    dst->read_chars += src->read_chars;
    dst->write_chars += src->write_chars;
    dst->read_bytes += src->read_bytes;
    dst->write_bytes += src->write_bytes;
    dst->quiet_chars += src->quiet_chars;
    dst->phased_chars += src->phased_chars;
    if (src->rss_max_bytes > dst->rss_max_bytes)
        dst->rss_max_bytes = src->rss_max_bytes;
    dst->intervals += src->intervals;
    dst->quiet_intervals += src->quiet_intervals;
}

/* Called with P.mu held: halves the resolution. Neighbours merge in pairs; from
 * now on a record holds twice as many intervals. */
static void halve(void)
{
    for (uint32_t i = 0; i < P.count / 2; i++) {
        store_proc_sample merged = P.records[2 * i];
        add_into(&merged, &P.records[2 * i + 1]);
        P.records[i] = merged;
    }
    if (P.count & 1)
        P.records[P.count / 2] = P.records[P.count - 1];
    P.count = (P.count + 1) / 2;
    P.per_record *= 2;
}

/* Called with P.mu held: one interval into the pending record, and the pending
 * record into the list once whole. */
static void add_interval(const store_proc_sample *one)
{
    /* a gap (an unreadable interval) ends the pending record: records stay
     * contiguous inside */
    if (P.pending.intervals && P.pending.end_ns != one->start_ns) {
        store_proc_sample flushed = P.pending;
        memset(&P.pending, 0, sizeof P.pending);
        if (P.count == PROC_MAX_RECORDS)
            halve();
        P.records[P.count++] = flushed;
    }
    add_into(&P.pending, one);
    if (P.pending.intervals < P.per_record)
        return;
    if (P.count == PROC_MAX_RECORDS) {
        halve();
        return; /* the pending record grows on to the new size */
    }
    P.records[P.count++] = P.pending;
    memset(&P.pending, 0, sizeof P.pending);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void proc_sampler_reset(uint32_t interval_ms)
{
    pthread_mutex_init(&P.mu, NULL); /* also after fork: the sampler may have held it */
    P.interval_ms = interval_ms;
    P.per_record = interval_ms ? 1 : 0;
    P.unreadable = 0;
    P.cpu_ns = 0;
    P.count = 0;
    memset(&P.last, 0, sizeof P.last);
    memset(&P.pending, 0, sizeof P.pending);
}

void proc_sampler_tick(int (*read_io)(uint64_t out[4]), int (*read_rss)(uint64_t *out))
{
    if (!P.interval_ms)
        return;
    uint64_t cpu0 = thread_cpu_ns();
    reading now;
    memset(&now, 0, sizeof now);
    now.ok = !read_io || read_io(now.io) == 0;
    now.ok = (!read_rss || read_rss(&now.rss_bytes) == 0) && now.ok;
    now.mono_ns = core_mono_ns();
    now.phase_open = core_phase_state(&now.top_closed_ns);
    pthread_mutex_lock(&P.mu);
    const reading *prev = &P.last;
    if (prev->mono_ns) { /* an interval ends here */
        if (prev->ok && now.ok && now.mono_ns > prev->mono_ns) {
            store_proc_sample one;
            memset(&one, 0, sizeof one);
            one.start_ns = prev->mono_ns;
            one.end_ns = now.mono_ns;
            uint64_t *d[4] = {&one.read_chars, &one.write_chars, &one.read_bytes, &one.write_bytes};
            for (int i = 0; i < 4; i++)
                *d[i] = now.io[i] > prev->io[i] ? now.io[i] - prev->io[i] : 0;
            uint64_t chars = one.read_chars + one.write_chars;
            if (prev->phase_open && now.phase_open)
                one.phased_chars = chars;
            else if (!prev->phase_open && !now.phase_open &&
                     prev->top_closed_ns == now.top_closed_ns) {
                one.quiet_chars = chars;
                one.quiet_intervals = 1;
            }
            one.rss_max_bytes = now.rss_bytes > prev->rss_bytes ? now.rss_bytes : prev->rss_bytes;
            one.intervals = 1;
            add_interval(&one);
        } else {
            P.unreadable++; /* contributes nothing */
        }
    }
    P.last = now;
    P.cpu_ns += thread_cpu_ns() - cpu0;
    pthread_mutex_unlock(&P.mu);
}

int proc_sampler_take(store_proc_samples *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&P.mu);
    out->interval_ms = P.interval_ms;
    out->per_record = P.per_record;
    out->unreadable = P.unreadable;
    out->sampler_cpu_ns = P.cpu_ns;
    uint32_t n = P.count + (P.pending.intervals ? 1u : 0u);
    if (n) {
        out->records = malloc(n * sizeof(store_proc_sample));
        if (!out->records) {
            pthread_mutex_unlock(&P.mu);
            return -1;
        }
        memcpy(out->records, P.records, P.count * sizeof(store_proc_sample));
        if (P.pending.intervals)
            out->records[P.count] = P.pending;
        out->count = n;
    }
    pthread_mutex_unlock(&P.mu);
    return 0;
}

/* The collector (collector.h): runs with LAPSE_FEATURE_IO or _MEMORY at
 * process_sample_ms, each half only when its feature is asked for. */
static uint32_t proc_features;

static void proc_reading(void)
{
    proc_sampler_tick(proc_features & LAPSE_FEATURE_IO ? lapse_io_counters : NULL,
                      proc_features & LAPSE_FEATURE_MEMORY ? lapse_rss_bytes : NULL);
}

static int proc_start(const collect_config *cfg, char *why, size_t why_len)
{
    (void)why, (void)why_len;
    proc_features = cfg->features;
    proc_sampler_reset(cfg->process_sample_ms);
    if (!cfg->process_sample_ms)
        return 1;
    /* the baseline here, on the starting thread: what the program does once
     * lapse_start returns counts, however late the sampler thread first runs */
    proc_reading();
    return 0;
}

/* Its first reading at once where it has none (a forked child: the baseline), then
 * on its own schedule. */
static uint64_t proc_tick(uint64_t due_ns)
{
    pthread_mutex_lock(&P.mu);
    int baseline = P.last.mono_ns != 0;
    pthread_mutex_unlock(&P.mu);
    if (due_ns || !baseline)
        proc_reading();
    uint64_t now = core_mono_ns(), interval = (uint64_t)P.interval_ms * 1000000ull;
    uint64_t next = (due_ns ? due_ns : now) + interval;
    return next > now ? next : now + interval;
}

static int proc_take(store_file *f) { return proc_sampler_take(&f->proc); }

static void proc_stop(void) { proc_reading(); /* the last, partial interval */ }

static void proc_fork_child(void) { proc_sampler_reset(P.interval_ms); }

const collector collect_process = {"process", LAPSE_FEATURE_IO | LAPSE_FEATURE_MEMORY, proc_start,
                                   proc_tick, proc_take, proc_stop, proc_fork_child, {NULL, NULL}};
