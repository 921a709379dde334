/* The span engine through the public API: path tree, self time, folding,
 * counters, the timeline bound, threads, unmatched ends, restart and fork. */
#include "lapse.h"

#include "../../src/core/hash.h"
#include "../../src/core/hist.h"
#include "../../src/store/codec.h"
#include "../../src/store/file_io.h"
#include "check.h"
#include "session_file.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char run_dir[256];

static void start(uint32_t max_depth, uint32_t max_paths, uint64_t max_spans)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.role = "test";
    o.max_depth = max_depth;
    o.max_paths = max_paths;
    o.max_spans = max_spans;
    o.snapshot_interval_ms = 60000;
    o.handle_signals = 0;
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "lapse_start: %s\n", lapse_last_error());
        exit(1);
    }
}

/* Index of the node at the path "a/b/c" of thread t, or -1. */
static int find(const store_file *f, uint32_t thread, const char *path)
{
    int parent = -1;
    for (uint32_t i = 0; i < f->node_count; i++)
        if (f->nodes[i].thread == thread && f->nodes[i].parent == -1)
            parent = (int)i;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save, *name = strtok_r(buf, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
        int found = -1;
        for (uint32_t i = 0; i < f->node_count; i++)
            if (f->nodes[i].parent == parent && !strcmp(f->names[f->nodes[i].name], name))
                found = (int)i;
        if (found < 0)
            return -1;
        parent = found;
    }
    return parent;
}

static int64_t counter(const store_file *f, int node, const char *name)
{
    for (uint32_t i = 0; i < f->counter_count; i++)
        if ((int)f->counters[i].node == node && !strcmp(f->names[f->counters[i].name], name))
            return f->counters[i].sum;
    return -1;
}

static void busy(int n)
{
    volatile int x = 0;
    for (int i = 0; i < n; i++)
        x += i;
}

static void test_tree_and_self_time(void)
{
    start(0, 0, 0);
    for (int i = 0; i < 100; i++) {
        LAPSE_SCOPE("outer");
        busy(100);
        for (int k = 0; k < 3; k++) {
            LAPSE_SCOPE("inner");
            busy(100);
            lapse_count("items", 2);
        }
    }
    lapse_count("loose", 7); /* no span open: the thread root */
    store_file f;
    stop_and_read(&f);
    int outer = find(&f, 0, "outer"), inner = find(&f, 0, "outer/inner");
    CHECK(outer >= 0 && inner >= 0);
    if (outer >= 0 && inner >= 0) {
        CHECK_EQ_U64(f.nodes[outer].calls, 100);
        CHECK_EQ_U64(f.nodes[inner].calls, 300);
        CHECK_EQ_U64(f.nodes[outer].child_ns, f.nodes[inner].total_ns);
        CHECK(f.nodes[outer].total_ns > f.nodes[outer].child_ns);
        CHECK(f.nodes[inner].min_ns <= f.nodes[inner].max_ns);
        uint64_t in_hist = 0;
        for (unsigned i = 0; i < f.nodes[inner].hist_n; i++)
            in_hist += f.nodes[inner].hist[i];
        CHECK_EQ_U64(in_hist, 300);
        CHECK_EQ_U64(counter(&f, inner, "items"), 600);
        CHECK_EQ_U64(counter(&f, find(&f, 0, ""), "loose"), 7);
        CHECK_EQ_U64(f.span_count, 400);
    }
    CHECK(f.meta.final == 1);
    CHECK(!strcmp(f.meta.end_reason, "stop"));
    store_file_free(&f);
}

static void nest(int depth)
{
    LAPSE_SCOPE("level");
    if (depth > 1)
        nest(depth - 1);
}

static void test_depth_fold(void)
{
    start(3, 0, 0);
    for (int i = 0; i < 10; i++)
        nest(6); /* levels 4, 5, 6 fold into level 3 */
    store_file f;
    stop_and_read(&f);
    int l3 = find(&f, 0, "level/level/level");
    CHECK(l3 >= 0);
    CHECK(find(&f, 0, "level/level/level/level") < 0);
    if (l3 >= 0) {
        CHECK_EQ_U64(f.nodes[l3].calls, 10);
        CHECK_EQ_U64(f.nodes[l3].folded, 30);
        CHECK_EQ_U64(f.nodes[l3].child_ns, 0); /* folded time stays in its self time */
    }
    CHECK_EQ_U64(f.meta.folded_depth, 30);
    store_file_free(&f);
}

/* The slot of a path in a thread's path table of `slots` slots (as span.c hashes). */
static uint32_t path_slot(uint32_t parent, uint32_t name, uint32_t slots)
{
    uint64_t key = ((uint64_t)parent << 32) | name;
    return (uint32_t)hash_mix(key) & (slots - 1);
}

/* A nest deeper than a stack holds (max_depth + 1 spans) writes nothing past it.
 * The thread's own stack is followed by its path table: a write there replaced the
 * key in slot 0, and that path got a second node. A keyed stack is its own heap
 * block (the ASan build sees a write past it). */
static void test_nesting_past_the_full_stack(void)
{
    start(1, 3, 0); /* 3 frames a stack; 3 paths: a table of 16 slots (16 at least) */
    uint32_t victim = 0;
    char name[32];
    for (int i = 0; i < 256 && !victim; i++) {
        snprintf(name, sizeof name, "victim_%d", i);
        uint32_t id = lapse_intern(name);
        if (path_slot(0, id, 16) == 0)
            victim = id;
    }
    CHECK(victim != 0);
    uint32_t level = lapse_intern("level");
    static int key;
    const void *stacks[2] = {NULL, &key}; /* the thread's own, then a keyed one */
    for (int s = 0; s < 2; s++) {
        lapse_span_end_keyed(stacks[s], lapse_span_begin_keyed(stacks[s], victim));
        int tokens[5];
        for (int k = 0; k < 5; k++)
            tokens[k] = lapse_span_begin_keyed(stacks[s], level);
        for (int k = 4; k >= 0; k--)
            lapse_span_end_keyed(stacks[s], tokens[k]);
    }
    store_file f;
    stop_and_read(&f);
    int victims = 0;
    for (uint32_t i = 0; i < f.node_count; i++)
        if (f.nodes[i].name == victim) {
            victims++;
            CHECK_EQ_U64(f.nodes[i].calls, 2); /* the path in slot 0, one node */
        }
    CHECK(victims == 1);
    int l1 = find(&f, 0, "level");
    CHECK(l1 >= 0);
    if (l1 >= 0) {
        CHECK_EQ_U64(f.nodes[l1].calls, 2); /* the thread's stack, then the keyed one */
        CHECK_EQ_U64(f.nodes[l1].folded, 8);
    }
    CHECK_EQ_U64(f.meta.unmatched_ends, 0);
    store_file_free(&f);
}

static void test_path_fold(void)
{
    start(0, 10, 0);
    for (int i = 0; i < 20; i++) {
        char name[32];
        snprintf(name, sizeof name, "name_%d", i);
        uint32_t id = lapse_intern(name);
        for (int k = 0; k < 5; k++) {
            lapse_span_begin_id(id);
            lapse_span_end_id(id);
        }
    }
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.node_count, 11); /* root + 10 paths */
    CHECK_EQ_U64(f.meta.folded_paths, 50);
    CHECK_EQ_U64(f.nodes[find(&f, 0, "")].folded, 50);
    CHECK(find(&f, 0, "name_9") >= 0);
    CHECK(find(&f, 0, "name_10") < 0);
    store_file_free(&f);
}

static void test_timeline_bound(void)
{
    start(0, 0, 100);
    for (int i = 0; i < 1000; i++) {
        LAPSE_SCOPE("tick");
    }
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.span_count, 100);
    CHECK_EQ_U64(f.meta.timeline_dropped, 900);
    CHECK_EQ_U64(f.meta.max_spans, 100);
    for (uint64_t i = 1; i < f.span_count; i++)
        CHECK(f.spans[i].begin_ns >= f.spans[i - 1].end_ns);
    store_file_free(&f);
}

static void *thread_body(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        LAPSE_SCOPE("work");
        lapse_count("n", 1);
    }
    return NULL;
}

static void test_threads(void)
{
    start(0, 0, 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_body, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.thread_count, 4);
    uint64_t calls = 0;
    for (uint32_t t = 0; t < f.thread_count; t++) {
        int n = find(&f, t, "work");
        CHECK(n >= 0);
        if (n >= 0) {
            CHECK_EQ_U64(f.nodes[n].calls, 1000);
            CHECK_EQ_U64(counter(&f, n, "n"), 1000);
            calls += f.nodes[n].calls;
        }
        CHECK(f.threads[t].tid > 0);
    }
    CHECK_EQ_U64(calls, 4000);
    store_file_free(&f);
}

static void test_unmatched(void)
{
    start(0, 0, 0);
    LAPSE_END("never_begun"); /* counted, ignored */
    {
        LAPSE_SCOPE("scope");
        LAPSE_BEGIN("left_open"); /* closed implicitly when the scope ends */
    }
    LAPSE_BEGIN("a");
    LAPSE_BEGIN("b");
    LAPSE_END("a"); /* closes b implicitly, then a */
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.meta.unmatched_ends, 3);
    CHECK(find(&f, 0, "scope/left_open") >= 0);
    int a = find(&f, 0, "a"), b = find(&f, 0, "a/b");
    CHECK(a >= 0 && b >= 0);
    if (a >= 0 && b >= 0) {
        CHECK_EQ_U64(f.nodes[a].calls, 1);
        CHECK_EQ_U64(f.nodes[b].calls, 1);
    }
    store_file_free(&f);
}

/* Two keyed stacks interleaving on one thread, as two asyncio tasks do. */
static void test_keyed_stacks_interleave(void)
{
    start(0, 0, 0);
    static int task_a, task_b;
    uint32_t a = lapse_intern("task_a"), b = lapse_intern("task_b"), in = lapse_intern("in");
    for (int i = 0; i < 10; i++) {
        int ta = lapse_span_begin_keyed(&task_a, a);
        int tb = lapse_span_begin_keyed(&task_b, b);
        int ti = lapse_span_begin_keyed(&task_a, in);
        lapse_span_end_keyed(&task_a, ti);
        lapse_span_end_keyed(&task_a, ta); /* task_b's span is still open */
        {
            LAPSE_SCOPE("c_code"); /* C spans nest under the key used last */
        }
        lapse_span_end_keyed(&task_b, tb);
    }
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.meta.unmatched_ends, 0);
    int na = find(&f, 0, "task_a"), nb = find(&f, 0, "task_b");
    CHECK(na >= 0 && nb >= 0);
    CHECK(find(&f, 0, "task_a/in") >= 0);
    CHECK(find(&f, 0, "task_b/task_a") < 0 && find(&f, 0, "task_a/task_b") < 0);
    CHECK(find(&f, 0, "c_code") >= 0); /* task_a's stack was empty when it ran */
    if (na >= 0 && nb >= 0) {
        CHECK_EQ_U64(f.nodes[na].calls, 10);
        CHECK_EQ_U64(f.nodes[nb].calls, 10);
    }
    store_file_free(&f);
}

static void spin_ms(int ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* wait%: a phase that computes half of its time and sleeps the other half reads
 * about 50% off CPU; its child that only sleeps reads about 100%. */
static void test_wait_share(void)
{
    setenv("LAPSE_CPU_SAMPLE_MS", "1", 1);
    start(0, 0, 0);
    unsetenv("LAPSE_CPU_SAMPLE_MS");
    /* the truth, from this thread's own CPU clock: on a loaded machine the spinning
     * half also waits for a CPU, which wait% rightly counts */
    double true_wall = 0.0, true_cpu = 0.0;
    for (int i = 0; i < 30; i++) {
        LAPSE_SCOPE("half_busy");
        struct timespec w0, c0, w1, c1;
        clock_gettime(CLOCK_MONOTONIC, &w0);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        spin_ms(5);
        {
            LAPSE_SCOPE("sleeping");
            struct timespec ts = {0, 5 * 1000000L};
            nanosleep(&ts, NULL);
        }
        clock_gettime(CLOCK_MONOTONIC, &w1);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        true_wall += (double)(w1.tv_sec - w0.tv_sec) * 1e9 + (double)(w1.tv_nsec - w0.tv_nsec);
        true_cpu += (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
    }
    double truth = 1.0 - true_cpu / true_wall;
    store_file f;
    stop_and_read(&f);
    CHECK_EQ_U64(f.meta.cpu_sample_ms, 1);
    int nb = find(&f, 0, "half_busy"), ns = find(&f, 0, "half_busy/sleeping");
    CHECK(nb >= 0 && ns >= 0);
    if (nb >= 0 && ns >= 0) {
        const store_node *b = &f.nodes[nb], *z = &f.nodes[ns];
        CHECK(b->cpu_ticks > 0 && z->cpu_ticks > 0);
        double wait_b = (double)b->cpu_wait_ticks / (double)(b->cpu_ticks ? b->cpu_ticks : 1);
        double wait_z = (double)z->cpu_wait_ticks / (double)(z->cpu_ticks ? z->cpu_ticks : 1);
        printf("wait share: half_busy %.2f (expected ~0.50; its thread's CPU clock says %.2f), "
               "sleeping %.2f (expected ~1.00); %llu and %llu ticks\n",
               wait_b, truth, wait_z, (unsigned long long)b->cpu_ticks,
               (unsigned long long)z->cpu_ticks);
        fflush(stdout);
        CHECK(wait_b - truth < 0.12 && truth - wait_b < 0.12);
        if (truth > 0.4 && truth < 0.6)
            CHECK(wait_b > 0.35 && wait_b < 0.65);
        CHECK(wait_z > 0.9); /* its CPU is the sleep's way in and out */
    }
    store_file_free(&f);
}

/* LAPSE_IO_SCOPE: the bytes a span wrote, exactly, less lapse's own writes. */
static void test_io_scope(void)
{
    start(0, 0, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/io-test.bin", run_dir);
    static char block[1 << 16];
    memset(block, 7, sizeof block);
    {
        LAPSE_IO_SCOPE("save");
        FILE *f = fopen(path, "wb");
        for (int i = 0; i < 16; i++)
            fwrite(block, 1, sizeof block, f);
        fclose(f);
        lapse_flush(); /* lapse's own write, inside the span: left out */
    }
    store_file f;
    stop_and_read(&f);
    int n = find(&f, 0, "save");
    CHECK(n >= 0);
    if (n >= 0)
        CHECK_EQ_U64(counter(&f, n, "io.write_chars"), 16u << 16);
    store_file_free(&f);
}

/* A child stack starts with its creator's open spans and never closes them. */
static void test_inherited_stack(void)
{
    start(0, 0, 0);
    static int parent_key, child_key;
    uint32_t req = lapse_intern("req"), work = lapse_intern("work");
    int tr = lapse_span_begin_keyed(&parent_key, req);
    lapse_stack_inherit(&child_key, &parent_key);
    int tw = lapse_span_begin_keyed(&child_key, work);
    lapse_span_end_keyed(&child_key, tw);
    lapse_span_end_keyed_name(&child_key, req); /* not the child's to close */
    lapse_span_end_keyed(&parent_key, tr);
    store_file f;
    stop_and_read(&f);
    int nr = find(&f, 0, "req"), nw = find(&f, 0, "req/work");
    CHECK(nr >= 0 && nw >= 0);
    if (nr >= 0 && nw >= 0) {
        CHECK_EQ_U64(f.nodes[nr].calls, 1); /* closed once, by its own stack */
        CHECK_EQ_U64(f.nodes[nw].calls, 1);
    }
    CHECK_EQ_U64(f.meta.unmatched_ends, 1);
    store_file_free(&f);
}

/* A sampled span: 1 entry in 4 measured and scaled, its subtree too; the others
 * record nothing, not even their children or counters. */
static void test_sampled_spans(void)
{
    start(0, 0, 0);
    uint32_t outer = lapse_intern("outer_loop"), s = lapse_intern("sampled"),
             child = lapse_intern("child");
    int to = lapse_span_begin_keyed(NULL, outer);
    for (int i = 0; i < 40; i++) {
        lapse_span_begin_sampled(NULL, s, i % 4 == 0, 4);
        int tc = lapse_span_begin_keyed(NULL, child);
        lapse_count("work", 3);
        lapse_span_end_keyed(NULL, tc);
        lapse_span_end_keyed_name(NULL, s);
    }
    lapse_span_end_keyed(NULL, to);
    store_file f;
    stop_and_read(&f);
    int no = find(&f, 0, "outer_loop"), ns = find(&f, 0, "outer_loop/sampled"),
        nc = find(&f, 0, "outer_loop/sampled/child");
    CHECK(no >= 0 && ns >= 0 && nc >= 0);
    if (no >= 0 && ns >= 0 && nc >= 0) {
        CHECK_EQ_U64(f.nodes[ns].calls, 40);
        CHECK_EQ_U64(f.nodes[nc].calls, 40);
        CHECK_EQ_U64(f.nodes[ns].sample_stride, 4);
        CHECK_EQ_U64(f.nodes[nc].sample_stride, 4);
        CHECK_EQ_U64(f.nodes[no].sample_stride, 0); /* measured itself... */
        CHECK_EQ_U64(f.nodes[no].child_estimated, 1); /* ...but its self time is not */
        CHECK_EQ_U64(f.nodes[no].calls, 1);
        CHECK_EQ_U64(counter(&f, nc, "work"), 120);
        uint64_t hist = 0;
        for (unsigned i = 0; i < f.nodes[nc].hist_n; i++)
            hist += f.nodes[nc].hist[i];
        CHECK_EQ_U64(hist, 40);
    }
    CHECK_EQ_U64(f.meta.unmatched_ends, 0);
    store_file_free(&f);
}

static void test_restart_is_fresh(void)
{
    start(0, 0, 0);
    {
        LAPSE_SCOPE("first_session");
    }
    store_file f;
    stop_and_read(&f);
    store_file_free(&f);
    start(0, 0, 0);
    {
        LAPSE_SCOPE("second_session");
    }
    stop_and_read(&f);
    CHECK(find(&f, 0, "first_session") < 0);
    CHECK(find(&f, 0, "second_session") >= 0);
    store_file_free(&f);
    /* dormant: nothing is recorded and nothing breaks */
    {
        LAPSE_SCOPE("dormant");
        lapse_count("dormant_count", 1);
    }
    CHECK(lapse_stop() != 0);
}

static void on_usr1(int sig) { (void)sig; }

/* A session changes process-global things (environment, signal handlers) and
 * lapse_stop puts them back. */
static void test_stop_restores_the_process(void)
{
    setenv("LAPSE_RUN_ID", "outer-run", 1);
    unsetenv("LAPSE_PROFILE");
    struct sigaction mine;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = on_usr1;
    sigaction(SIGUSR1, &mine, NULL);

    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.handle_signals = 1;
    CHECK(lapse_start(&o) == 0);
    CHECK(getenv("LAPSE_PROFILE") && !strcmp(getenv("LAPSE_PROFILE"), "1"));
    struct sigaction during;
    sigaction(SIGUSR1, NULL, &during);
    CHECK(during.sa_handler != on_usr1); /* lapse's handler, which chains to mine */
    raise(SIGUSR1);                       /* a flush, then my handler: no exit */
    CHECK(lapse_stop() == 0);

    CHECK(getenv("LAPSE_PROFILE") == NULL);
    CHECK(getenv("LAPSE_RUN_ID") && !strcmp(getenv("LAPSE_RUN_ID"), "outer-run"));
    struct sigaction after;
    sigaction(SIGUSR1, NULL, &after);
    CHECK(after.sa_handler == on_usr1);
    unsetenv("LAPSE_RUN_ID");
    signal(SIGUSR1, SIG_DFL);
}

static void test_fork_child_has_own_file(void)
{
    start(0, 0, 0);
    char parent_path[4096];
    snprintf(parent_path, sizeof parent_path, "%s", lapse_file_path());
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid;
    {
        LAPSE_SCOPE("before_fork");
        pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 10; i++) {
                LAPSE_SCOPE("child_work");
            }
            const char *p = lapse_file_path();
            if (write(fds[1], p, strlen(p)) < 0)
                _exit(3);
            exit(0); /* atexit writes the child's final file */
        }
    }
    close(fds[1]);
    char child_path[4096] = "";
    ssize_t n = read(fds[0], child_path, sizeof child_path - 1);
    child_path[n > 0 ? n : 0] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(strcmp(child_path, parent_path) != 0);
    store_file child;
    char err[256];
    CHECK(store_read_file(child_path, 0, &child, err, sizeof err) == 0);
    CHECK_EQ_U64(child.meta.pid, pid);
    CHECK(child.meta.final == 1);
    int w = find(&child, 0, "child_work");
    CHECK(w >= 0); /* at top level: the child's stack is clean */
    if (w >= 0)
        CHECK_EQ_U64(child.nodes[w].calls, 10);
    CHECK(find(&child, 0, "before_fork") < 0);
    char child_run[64];
    snprintf(child_run, sizeof child_run, "%s", child.meta.run_id);
    store_file_free(&child);
    store_file f;
    stop_and_read(&f);
    int bf = find(&f, 0, "before_fork");
    CHECK(bf >= 0 && f.nodes[bf].calls == 1);
    CHECK(find(&f, 0, "child_work") < 0);
    CHECK(!strcmp(f.meta.run_id, child_run)); /* the child joined the parent's run */
    store_file_free(&f);
}

int main(void)
{
    snprintf(run_dir, sizeof run_dir, "/tmp/lapse-test-tree-XXXXXX");
    if (!mkdtemp(run_dir))
        return 1;
    test_tree_and_self_time();
    test_depth_fold();
    test_path_fold();
    test_nesting_past_the_full_stack();
    test_timeline_bound();
    test_threads();
    test_unmatched();
    test_keyed_stacks_interleave();
    test_sampled_spans();
    test_inherited_stack();
    test_wait_share();
    test_io_scope();
    test_restart_is_fresh();
    test_stop_restores_the_process();
    test_fork_child_has_own_file();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", run_dir);
    return check_done("test_tree");
}
