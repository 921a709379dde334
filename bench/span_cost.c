/* What a span costs, against two reads of the clock measured in the same run.
 *
 *   span_cost [REPS]
 *
 * The reference is what a span pair cannot do without: a call that reads the
 * session's clock twice the way a span does (the first reading stored, the second
 * taken after it and the difference added up). The pair does all of that and its
 * bookkeeping besides, so it cannot cost less than the reference, and pair minus
 * reference is the bookkeeping. (Two bare __rdtsc() back to back cost more on their
 * own than inside a span, whose other work overlaps them: measured against them, a
 * pair read 0.94-0.97 x and hid its bookkeeping.)
 *
 * Each figure is the time of a batch of BATCH operations (CLOCK_MONOTONIC around
 * the batch, so its own cost is amortized), divided by BATCH; REPS batches give
 * a minimum and a median. The minimum is the cost without interference, the
 * median what a busy, shared machine gives. See bench/README.md.
 *
 * With LAPSE_CUPTI_PATH naming the fake libcupti (build/fakes/libcupti.so), also the
 * pair with ACTIVITY collecting, what ACTIVITY adds to a launch of the fake (its API
 * callback and the record's way through the collector's buffer), and to a CUDA call
 * that launches nothing (cudaStreamQuery: no callback is enabled for it). */
#include "lapse.h"

#include "core/clock.h"
#include "core/core.h"
#include <dlfcn.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH 20000

static volatile uint64_t sink;

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the operations, each behind a call the compiler cannot remove ---- */

__attribute__((noinline)) static void empty_call(void) { __asm__ volatile(""); }

__attribute__((noinline)) static void scoped_call(void)
{
    LAPSE_SCOPE("bench.pair");
    __asm__ volatile("");
}

/* The reference: two readings of the session's clock in a call, as a span pair
 * takes them (store the start; read again; add the difference). */
static struct {
    uint64_t start, sum;
} ref_slot;

__attribute__((noinline)) static void clock_pair_call(void)
{
    ref_slot.start = core_ticks();
    __asm__ volatile("" ::: "memory");
    uint64_t now = core_ticks();
    ref_slot.sum += now - ref_slot.start;
}

__attribute__((noinline)) static void batch_clock_pair(int n)
{
    for (int i = 0; i < n; i++)
        clock_pair_call();
}

__attribute__((noinline)) static void batch_empty(int n)
{
    for (int i = 0; i < n; i++)
        empty_call();
}

__attribute__((noinline)) static void batch_scoped(int n)
{
    for (int i = 0; i < n; i++)
        scoped_call();
}

__attribute__((noinline)) static void batch_rdtsc(int n)
{
    uint64_t acc = 0;
    for (int i = 0; i < n; i++) {
        uint64_t a = __rdtsc();
        uint64_t b = __rdtsc();
        acc += b - a;
    }
    sink += acc;
}

__attribute__((noinline)) static void batch_gettime(int n)
{
    uint64_t acc = 0;
    for (int i = 0; i < n; i++) {
        uint64_t a = mono_ns();
        uint64_t b = mono_ns();
        acc += b - a;
    }
    sink += acc;
}

__attribute__((noinline)) static void batch_loop(int n)
{
    uint64_t acc = 0;
    for (int i = 0; i < n; i++) {
        __asm__ volatile("" : "+r"(acc));
        acc += (uint64_t)i;
    }
    sink += acc;
}

__attribute__((noinline)) static void batch_count(int n)
{
    LAPSE_SCOPE("bench.counted");
    for (int i = 0; i < n; i++)
        lapse_count("bench.items", 1);
}

/* a launch of the fake libcupti inside an open span (ACTIVITY) */
static void (*fake_launch)(const char *, uint32_t, uint32_t, uint64_t);

__attribute__((noinline)) static void batch_launch(int n)
{
    LAPSE_SCOPE("bench.launching");
    for (int i = 0; i < n; i++)
        fake_launch("bench_kernel", 0, 7, 1000);
}

/* a call of the fake that launches nothing (cudaStreamQuery, runtime API id 132) */
static void (*fake_call)(int, uint32_t);

__attribute__((noinline)) static void batch_query(int n)
{
    LAPSE_SCOPE("bench.querying");
    for (int i = 0; i < n; i++)
        fake_call(2 /* CUPTI_CB_DOMAIN_RUNTIME_API */, 132);
}

/* ---- measuring ---- */

typedef struct stat_ns {
    double min, median;
} stat_ns;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int reps = 41;

/* ns per operation of fn(BATCH) */
static stat_ns measure(void (*fn)(int))
{
    double *v = malloc((size_t)reps * sizeof *v);
    fn(BATCH); /* warm up */
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = mono_ns();
        fn(BATCH);
        uint64_t t1 = mono_ns();
        v[r] = (double)(t1 - t0) / BATCH;
    }
    qsort(v, (size_t)reps, sizeof *v, cmp_double);
    stat_ns s = {v[0], v[reps / 2]};
    free(v);
    return s;
}

/* a - b, per statistic (the cost of what a adds to b) */
static stat_ns minus(stat_ns a, stat_ns b) { return (stat_ns){a.min - b.min, a.median - b.median}; }

static void line(const char *what, stat_ns s)
{
    /* a difference of two measurements: noise can make it slightly negative */
    if (s.min < 0 && s.min > -0.005)
        s.min = 0;
    if (s.median < 0 && s.median > -0.005)
        s.median = 0;
    printf("  %-56s %8.2f %8.2f\n", what, s.min, s.median);
}

static char run_dir[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void start(uint32_t features, uint64_t max_spans)
{
    lapse_options o;
    lapse_options_init(&o);
    o.features = features;
    o.run_dir = run_dir;
    o.role = "bench";
    o.max_spans = max_spans;
    o.snapshot_interval_ms = 3600 * 1000; /* no periodic write inside a measurement */
    o.handle_signals = 0;
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "span_cost: lapse_start: %s\n", lapse_last_error());
        exit(1);
    }
}

static void stop(void)
{
    if (lapse_stop() != 0)
        fprintf(stderr, "span_cost: lapse_stop: %s\n", lapse_last_error());
}

int main(int argc, char **argv)
{
    if (argc > 1)
        reps = atoi(argv[1]) > 2 ? atoi(argv[1]) : 3;
    snprintf(run_dir, sizeof run_dir, "/tmp/lapse-bench-XXXXXX");
    if (!mkdtemp(run_dir)) {
        perror("span_cost: mkdtemp");
        return 1;
    }

    printf("span_cost: %d batches of %d operations; ns per operation\n", reps, BATCH);
    printf("  %-56s %8s %8s\n", "", "min", "median");

    stat_ns loop = measure(batch_loop);
    stat_ns rdtsc2 = minus(measure(batch_rdtsc), loop);
    stat_ns gettime2 = minus(measure(batch_gettime), loop);
    line("two __rdtsc() back to back (context)", rdtsc2);
    line("two clock_gettime(CLOCK_MONOTONIC) back to back (context)", gettime2);

    /* dormant: no session */
    stat_ns call = measure(batch_empty);
    stat_ns dormant = minus(measure(batch_scoped), call);
    line("empty noinline call (subtracted below)", call);
    line("dormant span pair (LAPSE_SCOPE, no session)", dormant);

    /* active: the same function with a session */
    const uint64_t big = (uint64_t)(reps + 4) * BATCH * 2 + 4096; /* never fills */
    start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_TIMELINE, big);
    const char *clock = core_clock_g.use_tsc ? "tsc" : "monotonic (LAPSE_CLOCK=monotonic, or no invariant TSC)";
    stat_ns ref = minus(measure(batch_clock_pair), call); /* the session's clock, chosen now */
    line("two reads of the span clock in a call, as a span takes them (the reference)", ref);
    stat_ns on_cold = minus(measure(batch_scoped), call);
    stat_ns count = measure(batch_count);
    stop();
    /* the timeline buffer is mapped lazily: the spans above also paid the first
     * touch of its pages (a page fault per 128 records). Here the pages are
     * touched before the session records, which leaves the cost of a record. */
    start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_TIMELINE, big);
    memset(core_timeline, 0, big * sizeof(core_span_record));
    stat_ns on = minus(measure(batch_scoped), call);
    stop();
    start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_TIMELINE, 64);
    stat_ns full = minus(measure(batch_scoped), call);
    stop();
    start(LAPSE_FEATURE_SPANS, 0);
    stat_ns off = minus(measure(batch_scoped), call);
    stop();
    /* wait%: the CPU sampler thread, at 1 ms (ten times the default rate) */
    setenv("LAPSE_CPU_SAMPLE_MS", "1", 1);
    start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_CPU, 0);
    unsetenv("LAPSE_CPU_SAMPLE_MS");
    stat_ns cpu = minus(measure(batch_scoped), call);
    stop();
    /* and the process sampler (I/O, RSS) at 10 ms, a hundred times its default rate */
    setenv("LAPSE_CPU_SAMPLE_MS", "1", 1);
    setenv("LAPSE_PROCESS_SAMPLE_MS", "10", 1);
    start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_CPU | LAPSE_FEATURE_PROCESS, 0);
    unsetenv("LAPSE_CPU_SAMPLE_MS");
    unsetenv("LAPSE_PROCESS_SAMPLE_MS");
    stat_ns proc = minus(measure(batch_scoped), call);
    stop();
    /* MARKERS: collected only when an NVTX tool attached (NVTX_INJECTION64_PATH; the
     * build's libfake_nvtx_inject.so is one that records nothing); without one the
     * session leaves it out and spans keep the fast path */
    start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_MARKERS, 0);
    int markers_on = (lapse_features() & LAPSE_FEATURE_MARKERS) != 0;
    char markers_label[160];
    snprintf(markers_label, sizeof markers_label, "%s", lapse_missing());
    stat_ns markers = minus(measure(batch_scoped), call);
    stop();
    line("active span pair, timeline on, room (pages faulted in)", on_cold);
    line("active span pair, timeline on, room (pages resident)", on);
    line("active span pair, timeline on (buffer full: drop)", full);
    line("active span pair, timeline off", off);
    line("active span pair, timeline off, CPU sampler at 1 ms", cpu);
    line("... and the process sampler at 10 ms", proc);
    line("lapse_count on an open span", count);
    line(markers_on ? "active span pair, timeline off, MARKERS (an NVTX tool attached)"
                    : "active span pair, timeline off, MARKERS asked (no NVTX tool)",
         markers);
    if (!markers_on)
        printf("  (MARKERS left out: %s)\n", markers_label);

    /* ACTIVITY, against the fake libcupti */
    const char *cupti = getenv("LAPSE_CUPTI_PATH");
    stat_ns act = {0, 0}, launch_off = {0, 0}, launch_on = {0, 0}, query_off = {0, 0},
            query_on = {0, 0}, both = {0, 0};
    int activity = 0, both_on = 0;
    if (cupti && *cupti) {
        start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_ACTIVITY, 0);
        const char *why = lapse_missing();
        activity = (lapse_features() & LAPSE_FEATURE_ACTIVITY) != 0; /* it started */
        void *lib = dlopen(cupti, RTLD_NOW | RTLD_NOLOAD);
        *(void **)&fake_launch = lib ? dlsym(lib, "fake_cupti_launch") : NULL;
        *(void **)&fake_call = lib ? dlsym(lib, "fake_cupti_call") : NULL;
        if (activity && fake_launch && fake_call) {
            act = minus(measure(batch_scoped), call);
            launch_on = measure(batch_launch);
            query_on = measure(batch_query);
        } else {
            printf("  ACTIVITY did not start (%s): not measured\n", why);
            activity = 0;
        }
        stop();
        if (activity && markers_on) { /* the two span-side GPU features of DEFAULT at once */
            start(LAPSE_FEATURE_SPANS | LAPSE_FEATURE_MARKERS | LAPSE_FEATURE_ACTIVITY, 0);
            uint32_t want = LAPSE_FEATURE_MARKERS | LAPSE_FEATURE_ACTIVITY;
            both_on = (lapse_features() & want) == want;
            if (both_on)
                both = minus(measure(batch_scoped), call);
            stop();
        }
        if (activity) { /* the same launches with no subscriber: the fake's own cost */
            start(LAPSE_FEATURE_SPANS, 0);
            launch_off = measure(batch_launch);
            query_off = measure(batch_query);
            stop();
            line("active span pair, timeline off, ACTIVITY on (the fake libcupti)", act);
            line("a launch of the fake in a span, ACTIVITY off", launch_off);
            line("a launch of the fake in a span, ACTIVITY on", launch_on);
            line("a cudaStreamQuery of the fake in a span, ACTIVITY off", query_off);
            line("a cudaStreamQuery of the fake in a span, ACTIVITY on", query_on);
            if (both_on)
                line("active span pair, timeline off, MARKERS and ACTIVITY on", both);
        }
    }

    printf("\nspan clock: %s\n", clock);
    printf("active pair / reference (timeline on, first touch): %.2f (min)  %.2f (median)\n",
           on_cold.min / ref.min, on_cold.median / ref.median);
    printf("active pair / reference (timeline on):   %.2f (min)  %.2f (median)\n",
           on.min / ref.min, on.median / ref.median);
    printf("active pair / reference (buffer full):   %.2f (min)  %.2f (median)\n",
           full.min / ref.min, full.median / ref.median);
    printf("active pair / reference (timeline off):  %.2f (min)  %.2f (median)\n",
           off.min / ref.min, off.median / ref.median);
    printf("bookkeeping = pair - reference: %.2f ns (timeline on), %.2f ns (off), min\n",
           on.min - ref.min, off.min - ref.min);
    printf("\nacceptance (on the minimum):\n");
    double dormant_ns = dormant.min < 0 && dormant.min > -0.005 ? 0.0 : dormant.min;
    printf("  dormant pair <= 1 ns:                          %s (%.2f ns)\n",
           dormant_ns <= 1.0 ? "PASS" : "FAIL", dormant_ns);
    double worst = on.min > full.min ? on.min : full.min;
    if (off.min > worst)
        worst = off.min;
    printf("  active pair <= 1.5 x the reference:            %s (%.2f x, worst of on/full/off)\n",
           worst <= 1.5 * ref.min ? "PASS" : "FAIL", worst / ref.min);
    printf("  ... while the timeline's pages are first touched: %s (%.2f x)\n",
           on_cold.min <= 1.5 * ref.min ? "PASS" : "FAIL", on_cold.min / ref.min);
    printf("  wait%% on adds <= 100 ns to a span pair:        %s (%+.2f ns)\n",
           cpu.min - off.min <= 100.0 ? "PASS" : "FAIL", cpu.min - off.min);
    printf("  process sampler (at 10 ms) adds to a span pair: %+.2f ns (no bound; its cost is\n"
           "  the sampler thread's CPU per interval, in the report's I/O block)\n",
           proc.min - cpu.min);
    printf("  MARKERS adds to a span pair (timeline off):    %+.2f ns min, %+.2f ns median "
           "(%.2f x the SPANS-only pair, min; goal <= 2 x)\n",
           markers.min - off.min, markers.median - off.median, markers.min / off.min);
    if (activity)
        printf("  ACTIVITY on adds to a span pair:               %+.2f ns (%.2f x the SPANS-only "
               "pair; goal <= 2 x)\n"
               "  ... and to each launch (callback, record):      %+.2f ns (min), %+.2f ns (median)\n"
               "  ... and to a call that launches nothing:         %+.2f ns (min), %+.2f ns (median)\n",
               act.min - off.min, act.min / off.min, launch_on.min - launch_off.min,
               launch_on.median - launch_off.median, query_on.min - query_off.min,
               query_on.median - query_off.median);
    if (both_on)
        printf("  MARKERS and ACTIVITY on add to a span pair:    %+.2f ns min, %+.2f ns median "
               "(%.2f x the SPANS-only pair, min; goal <= 2 x)\n",
               both.min - off.min, both.median - off.median, both.min / off.min);
    else if (activity)
        printf("  MARKERS and ACTIVITY together: not measured (no NVTX tool attached: "
               "NVTX_INJECTION64_PATH=build/fakes/libfake_nvtx_inject.so)\n");
    if (!activity)
        printf("  ACTIVITY: not measured (LAPSE_CUPTI_PATH=build/fakes/libcupti.so to measure it)\n");
    if (on.min < ref.min || off.min < ref.min)
        printf("  note: a pair measured below its reference: the machine was too noisy for\n"
               "  these figures (rerun with more REPS)\n");
    fflush(stdout);
    nftw(run_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
