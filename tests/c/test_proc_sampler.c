/* The process sampler: bytes written inside and outside a phase, RSS growth of an
 * io scope that touches 64 MiB, and intervals whose counters cannot be read. Real
 * writes to a real file, read back from the .lapse file the session wrote. */
#include "lapse.h"

#include "../../src/collect/proc_sampler.h"
#include "../../src/store/codec.h"
#include "../../src/store/file_io.h"
#include "check.h"
#include "session_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char run_dir[256];

static void start(uint32_t sample_ms)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.role = "test";
    o.features = LAPSE_FEATURE_SPANS | LAPSE_FEATURE_PROCESS;
    o.process_sample_ms = sample_ms;
    o.snapshot_interval_ms = 60000;
    o.handle_signals = 0;
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "lapse_start: %s\n", lapse_last_error());
        exit(1);
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void write_bytes(int fd, size_t n)
{
    static char buf[65536];
    while (n) {
        size_t k = n < sizeof buf ? n : sizeof buf;
        ssize_t w = write(fd, buf, k);
        if (w <= 0)
            exit(1);
        n -= (size_t)w;
    }
}

static int64_t counter(const store_file *f, const char *node_name, const char *name, int *found)
{
    *found = 0;
    for (uint32_t i = 0; i < f->counter_count; i++) {
        const store_counter *c = &f->counters[i];
        if (!strcmp(f->names[c->name], name) && !strcmp(f->names[f->nodes[c->node].name], node_name)) {
            *found = 1;
            return c->sum;
        }
    }
    return 0;
}

/* The intervals the running sampler has ended, readable or not. */
static uint64_t sampler_intervals(void)
{
    store_proc_samples ps;
    CHECK(proc_sampler_take(&ps) == 0);
    uint64_t n = ps.unreadable;
    for (uint32_t i = 0; i < ps.count; i++)
        n += ps.records[i].intervals;
    free(ps.records);
    return n;
}

/* Waits (10 s at most) until the sampler has ended two more intervals: the second
 * began after this call, so an interval boundary lies between what the program did
 * before it and what it does after, however late the sampler runs. */
static void next_boundary(void)
{
    uint64_t want = sampler_intervals() + 2;
    for (int i = 0; i < 10000 && sampler_intervals() < want; i++)
        sleep_ms(1);
    CHECK(sampler_intervals() >= want);
}

static int within(uint64_t got, uint64_t want, double rel)
{
    double d = (double)got - (double)want;
    return (d < 0 ? -d : d) <= rel * (double)want;
}

/* 200 kB written with no phase open, 300 kB inside one: the sampler's totals are
 * those bytes (lapse's own writes left out), split by whether a phase was open. */
static void test_bytes_inside_and_outside(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/data.bin", run_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    start(20);
    write_bytes(fd, 200000);
    next_boundary(); /* the quiet bytes' interval ends before the phase opens */
    {
        LAPSE_SCOPE("phase");
        next_boundary(); /* and the phased bytes' begins after */
        write_bytes(fd, 300000);
        next_boundary();
    }
    next_boundary();
    lapse_flush(); /* a periodic write in between: its bytes are lapse's own */
    next_boundary();
    store_file f;
    stop_and_read(&f);
    close(fd);
    const store_proc_samples *ps = &f.proc;
    CHECK_EQ_U64(ps->interval_ms, 20);
    CHECK_EQ_U64(ps->per_record, 1);
    CHECK(ps->count >= 8); /* the boundaries waited for */
    uint64_t wchar = 0, rchar = 0, quiet = 0, phased = 0, intervals = 0;
    for (uint32_t i = 0; i < ps->count; i++) {
        wchar += ps->records[i].write_chars;
        rchar += ps->records[i].read_chars;
        quiet += ps->records[i].quiet_chars;
        phased += ps->records[i].phased_chars;
        intervals += ps->records[i].intervals;
        if (i)
            CHECK(ps->records[i].start_ns >= ps->records[i - 1].end_ns);
    }
    printf("process sampler: %llu intervals, write_chars %llu (wrote 500000), read_chars %llu, "
           "quiet %llu (200000 outside phases), phased %llu (300000 inside), %llu ns CPU per "
           "interval\n",
           (unsigned long long)intervals, (unsigned long long)wchar, (unsigned long long)rchar,
           (unsigned long long)quiet, (unsigned long long)phased,
           (unsigned long long)(intervals ? ps->sampler_cpu_ns / intervals : 0));
    CHECK(within(wchar, 500000, 0.01));
    CHECK(rchar < 5000); /* the program read nothing; lapse's /proc reads are its own */
    CHECK(within(quiet, 200000, 0.01));
    CHECK(within(phased, 300000, 0.01));
    CHECK_EQ_U64(ps->unreadable, 0);
    store_file_free(&f);
}

/* The first reading is taken by lapse_start: bytes written at once after it count,
 * even when the sampler's thread has not run yet (here it shares this thread's one
 * CPU, so it runs only at lapse_stop). */
static void test_baseline_at_start(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/early.bin", run_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    cpu_set_t all, one;
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    start(20);
    write_bytes(fd, 100000);
    store_file f;
    stop_and_read(&f);
    CHECK(sched_setaffinity(0, sizeof all, &all) == 0);
    close(fd);
    uint64_t wchar = 0;
    for (uint32_t i = 0; i < f.proc.count; i++)
        wchar += f.proc.records[i].write_chars;
    printf("written at once after lapse_start: write_chars %llu (wrote 100000)\n",
           (unsigned long long)wchar);
    CHECK(within(wchar, 100000, 0.01));
    store_file_free(&f);
}

/* io scopes are exact to the byte, also when the counters' text grows a digit
 * between entry and exit (lapse's own /proc reads are left out). */
static void test_io_scope_exact(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/exact.bin", run_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    write_bytes(fd, 1000000);
    close(fd);
    start(20);
    {
        LAPSE_IO_SCOPE("read_all");
        static char buf[65536];
        int rfd = open(path, O_RDONLY);
        ssize_t n;
        while ((n = read(rfd, buf, sizeof buf)) > 0)
            ;
        close(rfd);
    }
    {
        LAPSE_IO_SCOPE("write_some");
        int wfd = open(path, O_WRONLY | O_APPEND);
        write_bytes(wfd, 12345);
        close(wfd);
    }
    store_file f;
    stop_and_read(&f);
    int found;
    int64_t r = counter(&f, "read_all", "io.read_chars", &found);
    CHECK(found);
    printf("io scope: read_chars %lld (read 1000000), ", (long long)r);
    CHECK_EQ_U64(r, 1000000);
    int64_t w = counter(&f, "write_some", "io.write_chars", &found);
    printf("write_chars %lld (wrote 12345)\n", (long long)w);
    CHECK_EQ_U64(w, 12345);
    CHECK_EQ_U64(counter(&f, "write_some", "io.read_chars", &found), 0);
    store_file_free(&f);
}

/* An io scope that allocates and touches 64 MiB grows RSS by about 64 MiB; the
 * sampler's peak sees it. */
static void test_rss_growth(void)
{
    const size_t mib64 = 64u << 20;
    start(20);
    char *p;
    {
        LAPSE_IO_SCOPE("alloc");
        p = malloc(mib64);
        CHECK(p != NULL);
        if (p)
            memset(p, 1, mib64);
    }
    sleep_ms(60);
    store_file f;
    stop_and_read(&f);
    int found;
    int64_t growth = counter(&f, "alloc", "mem.rss_growth", &found);
    CHECK(found);
    printf("rss growth of alloc: %lld bytes (touched %zu)\n", (long long)growth, mib64);
    CHECK(growth > 0 && within((uint64_t)growth, mib64, 0.05));
    uint64_t peak = 0;
    for (uint32_t i = 0; i < f.proc.count; i++)
        if (f.proc.records[i].rss_max_bytes > peak)
            peak = f.proc.records[i].rss_max_bytes;
    CHECK(peak >= mib64);
    free(p);
    store_file_free(&f);
}

/* Counters that cannot be read: no record, every interval counted. */
static void test_unreadable(void)
{
    setenv("LAPSE_TEST_IO_FILE", "/nonexistent/io", 1);
    start(20);
    unsetenv("LAPSE_TEST_IO_FILE");
    for (int i = 0; i < 10000 && sampler_intervals() < 5; i++)
        sleep_ms(1);
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.proc.interval_ms, 20);
    CHECK_EQ_U64(f.proc.count, 0);
    CHECK(f.proc.unreadable >= 5);
    store_file_free(&f);
}

/* Without the feature the section says the sampler did not run. */
static void test_off(void)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.features = LAPSE_FEATURE_SPANS;
    o.handle_signals = 0;
    CHECK(lapse_start(&o) == 0);
    sleep_ms(30);
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.proc.interval_ms, 0);
    CHECK_EQ_U64(f.proc.count, 0);
    store_file_free(&f);
}

/* Each half of the process sampler, and the spans, switch off alone: the file holds
 * nothing of what was left out; unknown feature bits, and wait% without spans, are
 * refused with a message naming them. */
static void test_features(void)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.handle_signals = 0;
    o.process_sample_ms = 10;
    char data[300];
    snprintf(data, sizeof data, "%s/features.bin", run_dir);
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECK(fd >= 0);
    o.features = LAPSE_FEATURE_SPANS | (1u << 12); /* a bit no feature has */
    CHECK(lapse_start(&o) == -EINVAL);
    CHECK(strstr(lapse_last_error(), "unknown feature bits 0x1000") != NULL);
    CHECK(!lapse_is_active());
    o.features = LAPSE_FEATURE_MARKERS; /* NVTX ranges of spans, without spans */
    CHECK(lapse_start(&o) == -EINVAL);
    CHECK(strstr(lapse_last_error(), "MARKERS") != NULL);
    o.features = LAPSE_FEATURE_CPU | LAPSE_FEATURE_IO;
    CHECK(lapse_start(&o) == -EINVAL);
    CHECK(strstr(lapse_last_error(), "needs SPANS") != NULL);

    o.features = LAPSE_FEATURE_SPANS | LAPSE_FEATURE_MEMORY; /* no I/O */
    CHECK(lapse_start(&o) == 0);
    CHECK_EQ_U64(lapse_features(), LAPSE_FEATURE_SPANS | LAPSE_FEATURE_MEMORY);
    {
        LAPSE_IO_SCOPE("save");
        write_bytes(fd, 100000);
        sleep_ms(40);
    }
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.meta.features, LAPSE_FEATURE_SPANS | LAPSE_FEATURE_MEMORY);
    CHECK(f.meta.max_rss_kb > 0);
    CHECK(f.proc.count > 0);
    for (uint32_t i = 0; i < f.proc.count; i++) {
        CHECK_EQ_U64(f.proc.records[i].write_chars + f.proc.records[i].read_chars, 0);
        CHECK(f.proc.records[i].rss_max_bytes > 0);
    }
    for (uint32_t i = 0; i < f.counter_count; i++)
        CHECK(strncmp(f.names[f.counters[i].name], "io.", 3) != 0);
    store_file_free(&f);

    o.features = LAPSE_FEATURE_SPANS | LAPSE_FEATURE_IO; /* no memory */
    CHECK(lapse_start(&o) == 0);
    {
        LAPSE_IO_SCOPE("save");
        write_bytes(fd, 100000);
        sleep_ms(40);
    }
    stop_and_read(&f);
    CHECK_EQ_U64(f.meta.max_rss_kb, 0);
    uint64_t written = 0;
    for (uint32_t i = 0; i < f.proc.count; i++) {
        written += f.proc.records[i].write_chars;
        CHECK_EQ_U64(f.proc.records[i].rss_max_bytes, 0);
    }
    CHECK(written >= 100000);
    for (uint32_t i = 0; i < f.counter_count; i++)
        CHECK(strncmp(f.names[f.counters[i].name], "mem.", 4) != 0);
    store_file_free(&f);

    o.features = LAPSE_FEATURE_IO; /* no spans */
    CHECK(lapse_start(&o) == 0);
    {
        LAPSE_SCOPE("never");
        lapse_count("nothing", 1);
    }
    stop_and_read(&f);
    CHECK_EQ_U64(f.node_count, f.thread_count); /* the thread roots alone */
    CHECK_EQ_U64(f.counter_count, 0);
    CHECK_EQ_U64(f.span_count, 0);
    store_file_free(&f);
    close(fd);
}

int main(void)
{
    snprintf(run_dir, sizeof run_dir, "/tmp/lapse-test-proc-XXXXXX");
    if (!mkdtemp(run_dir))
        return 1;
    test_bytes_inside_and_outside();
    test_baseline_at_start();
    test_io_scope_exact();
    test_rss_growth();
    test_unreadable();
    test_off();
    test_features();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", run_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", run_dir);
    return check_done("test_proc_sampler");
}
