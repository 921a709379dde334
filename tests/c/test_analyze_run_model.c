/* The merged run model: two roles, processes and threads merged by path, counters,
 * unreadable files, staleness, superseded attempts. Files are written with the real
 * writer into a temporary directory and read back through run_model_load. */
#include "analyze/run_model.h"
#include "analyze/run_stats.h"
#include "core/hist.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/pack.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>


/* ---- building files in memory ---- */

#define MAXN 32
typedef struct builder {
    store_file f;
    char *names[MAXN];
    store_thread threads[4];
    store_node nodes[MAXN];
    uint64_t hist[MAXN][HIST_BUCKETS];
    store_counter counters[MAXN];
} builder;

static const uint64_t T0 = 1700000000000000000ull; /* a realtime origin */

static void b_init(builder *b, const char *role, const char *host, int64_t pid)
{
    memset(b, 0, sizeof *b);
    store_meta *m = &b->f.meta;
    m->lapse_version = "test";
    m->host = (char *)host;
    m->role = (char *)role;
    m->run_id = "run-1";
    m->job_id = "";
    m->end_reason = "exit";
    m->clock_source = "monotonic";
    m->pid = pid;
    m->ppid = 1;
    m->rank = -1;
    m->world_size = -1;
    m->start_real_ns = T0;
    m->write_real_ns = T0 + 10000000000ull;
    m->wall_ns = 10000000000ull;
    m->write_seq = 3;
    m->final = 1;
    m->snapshot_interval_ms = 5000;
    b->names[0] = "";
    b->f.names = b->names;
    b->f.name_count = 1;
    b->f.threads = b->threads;
    b->f.nodes = b->nodes;
    b->f.counters = b->counters;
}

static uint32_t b_name(builder *b, const char *s)
{
    for (uint32_t i = 0; i < b->f.name_count; i++)
        if (!strcmp(b->names[i], s))
            return i;
    b->names[b->f.name_count] = (char *)s;
    return b->f.name_count++;
}

/* Adds a thread and its root; returns the root's node index. */
static int32_t b_thread(builder *b, int64_t tid)
{
    uint32_t t = b->f.thread_count++;
    b->threads[t].tid = tid;
    b->threads[t].name = "t";
    uint32_t i = b->f.node_count++;
    store_node *n = &b->nodes[i];
    n->parent = -1;
    n->thread = t;
    n->hist = b->hist[i];
    return (int32_t)i;
}

/* Adds a path below parent with one call per value (ns). */
static int32_t b_node(builder *b, int32_t parent, const char *name, const uint64_t *v, size_t nv)
{
    uint32_t i = b->f.node_count++;
    store_node *n = &b->nodes[i];
    n->parent = parent;
    n->thread = b->nodes[parent].thread;
    n->depth = b->nodes[parent].depth + 1;
    n->name = b_name(b, name);
    n->hist = b->hist[i];
    for (size_t k = 0; k < nv; k++) {
        n->calls++;
        n->total_ns += v[k];
        if (k == 0 || v[k] < n->min_ns)
            n->min_ns = v[k];
        if (v[k] > n->max_ns)
            n->max_ns = v[k];
        n->hist[hist_bucket(v[k])]++;
    }
    b->nodes[parent].child_ns += n->total_ns;
    return (int32_t)i;
}

static void b_counter(builder *b, int32_t node, const char *name, int64_t sum, uint64_t updates)
{
    store_counter *c = &b->counters[b->f.counter_count++];
    c->node = (uint32_t)node;
    c->name = b_name(b, name);
    c->sum = sum;
    c->updates = updates;
}

static void b_write(builder *b, const char *dir, const char *host, const char *file)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, host);
    CHECK(store_make_dirs(path, 0) == 0);
    snprintf(path, sizeof path, "%s/%s/%s", dir, host, file);
    char err[256];
    int rc = store_write_file(path, &b->f, 0, err, sizeof err);
    if (rc)
        fprintf(stderr, "store_write_file: %s\n", err);
    CHECK(rc == 0);
}

static const rm_path *find_path(const run_model *m, const char *role, const char *path)
{
    char buf[RM_PATH_BUF];
    for (uint32_t i = 0; i < m->path_count; i++)
        if (!strcmp(rm_path_str(m, i, buf), path) && !strcmp(m->roles[m->paths[i].role].name, role))
            return &m->paths[i];
    return NULL;
}

static const rm_counter *find_counter(const run_model *m, const rm_path *p, const char *name)
{
    for (uint32_t c = p->first_counter; c != RM_NONE; c = m->counters[c].next)
        if (!strcmp(rm_str(m, m->counters[c].name), name))
            return &m->counters[c];
    return NULL;
}

static const rm_worker *find_worker(const run_model *m, int64_t pid)
{
    for (uint32_t i = 0; i < m->worker_count; i++)
        if (m->workers[i].pid == pid)
            return &m->workers[i];
    return NULL;
}

static double dense_quantile(const uint64_t *v, size_t n, double q)
{
    static uint64_t h[HIST_BUCKETS];
    memset(h, 0, sizeof h);
    for (size_t i = 0; i < n; i++)
        h[hist_bucket(v[i])]++;
    return hist_quantile(h, q);
}

/* ---- the run ---- */

static void write_run(const char *run)
{
    builder *b = calloc(1, sizeof *b);

    /* worker 100 on h1: two threads, both run "iter"; final, written at T0 + 30 s */
    b_init(b, "worker", "h1", 100);
    int32_t r0 = b_thread(b, 100);
    static const uint64_t iter_a[] = {1000, 2000, 3000};
    int32_t it = b_node(b, r0, "iter", iter_a, 3);
    static const uint64_t step_a[] = {400, 500, 600, 700, 800, 900};
    int32_t st = b_node(b, it, "step", step_a, 6);
    b_counter(b, st, "items", 10, 2);
    b_counter(b, r0, "free", 5, 1);
    int32_t r1 = b_thread(b, 101);
    static const uint64_t iter_b[] = {4000};
    b_node(b, r1, "iter", iter_b, 1);
    b->f.meta.timeline_dropped = 7;
    b->f.meta.unmatched_ends = 2;
    b->f.meta.write_real_ns = T0 + 30000000000ull;
    b_write(b, run, "h1", "worker-100-aaaa.lapse");

    /* worker 101 on h2: stopped writing 20 s before the run's end, not final */
    b_init(b, "worker", "h2", 101);
    r0 = b_thread(b, 201);
    static const uint64_t iter_c[] = {1500, 2500};
    it = b_node(b, r0, "iter", iter_c, 2);
    static const uint64_t step_c[] = {100, 200};
    st = b_node(b, it, "step", step_c, 2);
    b_counter(b, st, "items", 7, 1);
    static const uint64_t setup[] = {10000};
    int32_t su = b_node(b, r0, "setup", setup, 1);
    b->nodes[su].folded = 3;
    b->f.meta.folded_paths = 3;
    b->f.meta.rank = 1;
    b->f.meta.world_size = 2;
    b->f.meta.final = 0;
    b->f.meta.end_reason = "";
    b->f.meta.write_real_ns = T0 + 10000000000ull; /* the run ends at T0 + 30 s */
    b_write(b, run, "h2", "worker-101-bbbb.lapse");

    /* the learner on h1: the newest write, not final */
    b_init(b, "learner", "h1", 50);
    r0 = b_thread(b, 50);
    static const uint64_t train[] = {50000, 60000};
    b_node(b, r0, "train", train, 2);
    b->f.meta.final = 0;
    b->f.meta.end_reason = "";
    b->f.meta.write_real_ns = T0 + 30000000000ull;
    b_write(b, run, "h1", "learner-50-cccc.lapse");

    free(b);
}

static void write_bad_files(const char *run)
{
    /* a truncated copy of a good file */
    builder *b = calloc(1, sizeof *b);
    b_init(b, "worker", "h1", 300);
    int32_t r0 = b_thread(b, 300);
    static const uint64_t v[] = {1, 2, 3};
    b_node(b, r0, "iter", v, 3);
    b_write(b, run, "h1", "worker-300-dddd.lapse");
    free(b);
    char path[4096];
    snprintf(path, sizeof path, "%s/h1/worker-300-dddd.lapse", run);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK(truncate(path, st.st_size / 2) == 0);

    /* random bytes */
    snprintf(path, sizeof path, "%s/h2/junk-1-eeee.lapse", run);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    srand(7);
    for (int i = 0; i < 3000 && f; i++)
        fputc(rand() & 0xff, f);
    if (f)
        fclose(f);
}

static void test_merge(const char *run)
{
    run_model m;
    char err[512];
    rm_options opt = {.now_real_ns = T0 + 30000000000ull + 500000000ull}; /* read 0.5 s after the last write */
    int rc = run_model_load(run, &opt, &m, err, sizeof err);
    if (rc)
        fprintf(stderr, "run_model_load: %s\n", err);
    CHECK(rc == 0);
    if (rc)
        return;

    CHECK_U64(m.worker_count, 3);
    CHECK_U64(m.unreadable_count, 2);
    CHECK_U64(m.role_count, 2);
    CHECK(!strcmp(m.roles[0].name, "learner"));
    CHECK(!strcmp(m.roles[1].name, "worker"));
    CHECK_U64(m.roles[0].processes, 1);
    CHECK_U64(m.roles[1].processes, 2);
    CHECK_U64(m.host_count, 2);
    CHECK(m.host_count == 2 && !strcmp(m.hosts[0], "h1") && !strcmp(m.hosts[1], "h2"));
    CHECK(!strcmp(m.run_id, "run-1"));
    CHECK_U64(m.run_ids, 1);
    CHECK_U64(m.start_real_ns, T0);
    CHECK_U64(m.end_real_ns, T0 + 30000000000ull);
    CHECK_U64(m.superseded_count, 0);

    /* iter: 3 + 1 calls in worker 100 (two threads), 2 in worker 101 */
    const rm_path *iter = find_path(&m, "worker", "iter");
    CHECK(iter != NULL);
    if (iter) {
        CHECK_U64(iter->calls, 6);
        CHECK_U64(iter->total_ns, 14000);
        CHECK_U64(iter->child_ns, 4200);
        CHECK_U64(iter->min_ns, 1000);
        CHECK_U64(iter->max_ns, 4000);
        CHECK_U64(iter->in_processes, 2);
        CHECK_U64(iter->depth, 1);
        CHECK_U64(hist_window_count(&iter->hist), 6);
        static const uint64_t all[] = {1000, 2000, 3000, 4000, 1500, 2500};
        double q[2];
        static const double qs[2] = {0.5, 0.99};
        hist_window_quantiles(&iter->hist, qs, 2, q);
        CHECK(q[0] == dense_quantile(all, 6, 0.5));
        CHECK(q[1] == dense_quantile(all, 6, 0.99));
        CHECK(q[0] >= 1792 && q[0] < 2048); /* the bucket of the exact p50, 2000 */
    }
    const rm_path *step = find_path(&m, "worker", "iter/step");
    CHECK(step != NULL);
    if (step) {
        CHECK_U64(step->calls, 8);
        CHECK_U64(step->total_ns, 4200);
        CHECK_U64(step->min_ns, 100);
        CHECK_U64(step->max_ns, 900);
        CHECK_U64(step->depth, 2);
        CHECK_U64(step->in_processes, 2);
        const rm_counter *items = find_counter(&m, step, "items");
        CHECK(items != NULL);
        if (items) {
            CHECK_U64(items->sum, 17);
            CHECK_U64(items->updates, 3);
        }
    }
    const rm_path *setup = find_path(&m, "worker", "setup");
    CHECK(setup != NULL);
    if (setup) {
        CHECK_U64(setup->calls, 1);
        CHECK_U64(setup->in_processes, 1);
        CHECK_U64(setup->folded, 3);
    }
    const rm_path *root = &m.paths[m.roles[1].root];
    const rm_counter *free_c = find_counter(&m, root, "free");
    CHECK(free_c != NULL && free_c->sum == 5 && free_c->updates == 1);
    CHECK(find_path(&m, "learner", "iter") == NULL);
    const rm_path *train = find_path(&m, "learner", "train");
    CHECK(train != NULL && train->calls == 2 && train->total_ns == 110000);

    /* busy and imbalance: 6000 + 4000 and 4000 + 10000 */
    const rm_worker *w100 = find_worker(&m, 100), *w101 = find_worker(&m, 101),
                    *w50 = find_worker(&m, 50);
    CHECK(w100 && w101 && w50);
    if (w100 && w101 && w50) {
        CHECK_U64(w100->busy_ns, 10000);
        CHECK_U64(w101->busy_ns, 14000);
        CHECK_U64(w100->span_calls, 3 + 6 + 1);
        CHECK_U64(w101->span_calls, 2 + 2 + 1);
        CHECK_U64(w100->threads, 2);
        CHECK(!strcmp(w100->host, "h1") && !strcmp(w101->host, "h2"));
        CHECK_U64(w101->rank, 1);
        CHECK(w100->rank == -1);
        CHECK_U64(w100->timeline_dropped, 7);
        CHECK_U64(w100->unmatched_ends, 2);
        /* staleness: 101 stopped 20 s before the end (limit 2 x 5 s + 1 s = 11 s) */
        CHECK(w100->state == RM_FINAL);
        CHECK(w101->state == RM_STOPPED_EARLY);
        CHECK_U64(w101->stale_by_ns, 20000000000ull);
        CHECK_U64(w101->stale_limit_ns, 11000000000ull);
        CHECK(w50->state == RM_RUNNING); /* newest, written 0.5 s before reading */
    }
    CHECK_U64(m.roles[1].busy_ns, 24000);
    CHECK_U64(m.roles[1].busy_max_ns, 14000);
    CHECK_U64(m.roles[1].busy_min_ns, 10000);
    CHECK(fabs(m.roles[1].imbalance - 14000.0 / 12000.0) < 1e-12);
    CHECK(fabs(m.roles[0].imbalance - 1.0) < 1e-12);

    /* unreadable files keep their one-line reason */
    int truncated = 0, junk = 0;
    for (uint32_t i = 0; i < m.unreadable_count; i++) {
        const rm_unreadable *u = &m.unreadable[i];
        CHECK(strchr(u->reason, '\n') == NULL);
        if (strstr(u->file, "worker-300-dddd.lapse") && strstr(u->reason, "truncated"))
            truncated = 1;
        if (strstr(u->file, "junk-1-eeee.lapse") && strstr(u->reason, "not a .lapse file"))
            junk = 1;
    }
    CHECK(truncated);
    CHECK(junk);

    /* derived statistics */
    run_stats s;
    CHECK(run_stats_build(&m, 0, &s) == 0);
    const rs_role *wr = &s.roles[1];
    char pb[RM_PATH_BUF];
    CHECK_U64(wr->phase_count, 3);
    CHECK(!strcmp(rm_path_str(&m, wr->phases[0], pb), "iter"));
    CHECK(!strcmp(rm_path_str(&m, wr->phases[1], pb), "iter/step"));
    CHECK(!strcmp(rm_path_str(&m, wr->phases[2], pb), "setup"));
    /* self: iter 9800, setup 10000, step 4200 */
    CHECK_U64(wr->by_self_count, 3);
    CHECK(!strcmp(rm_path_str(&m, wr->phases[wr->by_self[0]], pb), "setup"));
    CHECK(!strcmp(rm_path_str(&m, wr->phases[wr->by_self[1]], pb), "iter"));
    rs_phase ph0;
    run_stats_phase(&m, wr, 0, &ph0);
    CHECK_U64(ph0.self_ns, 9800);
    CHECK(fabs(ph0.share_of_busy - 14000.0 / 24000.0) < 1e-12);
    CHECK(fabs(ph0.mean_ns - 14000.0 / 6.0) < 1e-9);
    CHECK(wr->loop != RM_NONE && !strcmp(rm_path_str(&m, wr->phases[wr->loop], pb), "iter"));
    CHECK_U64(wr->top_level_count, 2);
    CHECK(!strcmp(rm_path_str(&m, wr->phases[wr->top_level[0]], pb), "iter"));
    run_stats_free(&s);
    /* a top of 1: the first by self time and by total, the others not held */
    CHECK(run_stats_build(&m, 1, &s) == 0);
    wr = &s.roles[1];
    CHECK_U64(wr->by_self_count, 1);
    CHECK(!strcmp(rm_path_str(&m, wr->phases[wr->by_self[0]], pb), "setup"));
    CHECK_U64(wr->top_level_count, 2);
    CHECK_U64(wr->top_level_shown, 1);
    CHECK(!strcmp(rm_path_str(&m, wr->phases[wr->top_level[0]], pb), "iter"));
    run_stats_free(&s);
    run_model_free(&m);

    /* read a minute after the last write: the learner's next snapshot is overdue */
    opt.now_real_ns = T0 + 90000000000ull;
    CHECK(run_model_load(run, &opt, &m, err, sizeof err) == 0);
    const rm_worker *l = find_worker(&m, 50);
    CHECK(l && l->state == RM_ENDED_UNSEEN);
    run_model_free(&m);
}

static void test_all_unreadable(const char *tmp)
{
    char run[4096], path[4096];
    snprintf(run, sizeof run, "%s/bad-run", tmp);
    snprintf(path, sizeof path, "%s/h", run);
    CHECK(store_make_dirs(path, 0) == 0);
    snprintf(path, sizeof path, "%s/h/a-1-0000.lapse", run);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs("not a profile", f);
        fclose(f);
    }
    run_model m;
    char err[256];
    CHECK(run_model_load(run, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.worker_count, 0);
    CHECK_U64(m.unreadable_count, 1);
    CHECK_U64(m.role_count, 0);
    run_stats s;
    CHECK(run_stats_build(&m, 0, &s) == 0);
    run_stats_free(&s);
    run_model_free(&m);

    snprintf(path, sizeof path, "%s/does-not-exist", tmp);
    err[0] = 0;
    CHECK(run_model_load(path, NULL, &m, err, sizeof err) != 0);
    CHECK(strstr(err, "does-not-exist") != NULL);
    CHECK(strchr(err, '\n') == NULL);
}

static void set_mtime(const char *path, time_t t)
{
    struct timeval tv[2] = {{t, 0}, {t, 0}};
    CHECK(utimes(path, tv) == 0);
}

/* Writes one process of one attempt: runs/<attempt>/h/main-<pid>-0000.lapse, its
 * session from start_s to write_s (seconds after T0), final or a snapshot. */
static void write_attempt(const char *runs, const char *attempt, int64_t pid, uint64_t start_s,
                          uint64_t write_s, int final)
{
    char dir[4096], name[64];
    snprintf(dir, sizeof dir, "%s/%s", runs, attempt);
    snprintf(name, sizeof name, "main-%lld-0000.lapse", (long long)pid);
    builder *bl = calloc(1, sizeof *bl);
    b_init(bl, "main", "h", pid);
    bl->f.meta.start_real_ns = T0 + start_s * 1000000000ull;
    bl->f.meta.write_real_ns = T0 + write_s * 1000000000ull;
    bl->f.meta.wall_ns = (write_s - start_s) * 1000000000ull;
    bl->f.meta.final = (uint32_t)final;
    bl->f.meta.end_reason = final ? "exit" : "";
    int32_t r = b_thread(bl, pid);
    static const uint64_t v[] = {5, 6};
    b_node(bl, r, attempt, v, 2);
    b_write(bl, dir, "h", name);
    free(bl);
}

/* An attempt that ended before the newest began is superseded, whatever the
 * modification times say. */
static void test_superseded(const char *tmp)
{
    char runs[4096], a[4096], b[4096], path[4096];
    snprintf(runs, sizeof runs, "%s/attempts", tmp);
    snprintf(a, sizeof a, "%s/old", runs);
    snprintf(b, sizeof b, "%s/new", runs);
    write_attempt(runs, "old", 1, 0, 10, 1);
    write_attempt(runs, "new", 2, 20, 30, 1);
    snprintf(path, sizeof path, "%s/h/main-1-0000.lapse", a);
    set_mtime(path, 2000000); /* touched later: it still ended first */
    snprintf(path, sizeof path, "%s/h/main-2-0000.lapse", b);
    set_mtime(path, 1000000);
    run_model m;
    char err[256];
    CHECK(run_model_load(runs, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.worker_count, 1);
    CHECK(!strcmp(m.dir, b));
    CHECK_U64(m.joined_count, 0);
    CHECK_U64(m.superseded_count, 1);
    CHECK(m.superseded_count == 1 && !strcmp(m.superseded[0].dir, a));
    CHECK(find_path(&m, "main", "new") != NULL);
    CHECK(find_path(&m, "main", "old") == NULL);
    run_model_free(&m);
}

/* Attempts that ran at the same time are one run: one that had not ended when the
 * last began (a final file written after it began, or a snapshot whose next one was
 * not yet due) is joined; one that ended before is superseded. */
static void test_joined(const char *tmp)
{
    char runs[4096];
    snprintf(runs, sizeof runs, "%s/joined", tmp);
    write_attempt(runs, "gone", 1, 0, 10, 1);     /* ended at 10 */
    write_attempt(runs, "long", 2, 15, 60, 1);    /* ran through the last's start */
    write_attempt(runs, "snap", 3, 16, 40, 0);    /* last snapshot at 40, 5 s interval: by 51 */
    write_attempt(runs, "died", 4, 17, 30, 0);    /* last snapshot at 30: ended by 41 */
    write_attempt(runs, "last", 5, 50, 55, 1);
    run_model m;
    char err[256];
    CHECK(run_model_load(runs, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.worker_count, 3);
    CHECK(!strcmp(m.dir, runs));
    CHECK_U64(m.joined_count, 3);
    static const char *const order[] = {"long", "snap", "last"}; /* by start */
    for (uint32_t i = 0; i < m.joined_count && i < 3; i++) {
        char want[4096];
        snprintf(want, sizeof want, "%s/%s", runs, order[i]);
        CHECK(!strcmp(m.joined[i].dir, want));
        CHECK_U64(m.joined[i].files, 1);
    }
    CHECK_U64(m.superseded_count, 2);
    for (int i = 0; i < 3; i++)
        CHECK(find_path(&m, "main", order[i]) != NULL);
    CHECK(find_path(&m, "main", "gone") == NULL);
    CHECK(find_path(&m, "main", "died") == NULL);
    run_model_free(&m);
}

/* A chain of 3000 nested spans: path strings stay bounded, the end is kept. */
static void test_deep_chain(void)
{
    enum { DEPTH = 3000 };
    store_file f;
    memset(&f, 0, sizeof f);
    char *names[3] = {"", "abcd", "leaf"};
    store_thread th = {1, "t"};
    store_node *nodes = calloc(DEPTH + 1, sizeof *nodes);
    CHECK(nodes != NULL);
    if (!nodes)
        return;
    f.meta.role = "deep";
    f.meta.host = "h";
    f.meta.run_id = f.meta.end_reason = "";
    f.meta.final = 1;
    f.names = names;
    f.name_count = 3;
    f.threads = &th;
    f.thread_count = 1;
    f.nodes = nodes;
    f.node_count = DEPTH + 1;
    nodes[0].parent = -1;
    nodes[0].child_ns = 10;
    for (uint32_t i = 1; i <= DEPTH; i++) {
        nodes[i].parent = (int32_t)i - 1;
        nodes[i].depth = i;
        nodes[i].name = i == DEPTH ? 2 : 1;
        nodes[i].calls = 1;
        nodes[i].total_ns = nodes[i].min_ns = nodes[i].max_ns = 10;
        nodes[i].child_ns = i == DEPTH ? 0 : 10; /* each call holds the one inside it */
    }
    run_model m;
    memset(&m, 0, sizeof m);
    CHECK(run_model_add(&m, "deep.lapse", &f) == 0);
    CHECK(run_model_finish(&m, NULL) == 0);
    CHECK(m.path_count == DEPTH + 1);
    const rm_path *last = &m.paths[m.path_count - 1];
    CHECK(last->depth == DEPTH);
    char buf[RM_PATH_BUF];
    const char *ls = rm_path_str(&m, m.path_count - 1, buf);
    CHECK(strlen(ls) == RM_PATH_SHOWN);
    CHECK(!strncmp(ls, "...", 3));
    CHECK(strlen(ls) >= 10 && !strcmp(ls + strlen(ls) - 10, "/abcd/leaf"));
    CHECK(rm_path_cut(&m, m.path_count - 1));
    CHECK(!strcmp(rm_path_str(&m, 2, buf), "abcd/abcd"));
    CHECK(!rm_path_cut(&m, 2));
    run_model_free(&m);
    free(nodes);
}

/* Per-rank totals: processes of one rank add up (also when a rank's processes are
 * read apart, and a path is first seen in a rank read later), a rank that never
 * entered a phase counts as 0, unranked processes are in no cross-rank figure. */
static void test_across_ranks(const char *tmp)
{
    char run[4096];
    snprintf(run, sizeof run, "%s/ranks-run", tmp);
    static const uint64_t step[] = {100, 100}, ckpt[] = {50}, extra[] = {30}, one[] = {100},
                          eval2[] = {40}, eval0[] = {70};
    builder b;
    for (int rank = 0; rank < 3; rank++) {
        b_init(&b, "main", "n1", 100 + rank);
        b.f.meta.rank = rank;
        b.f.meta.world_size = 4; /* rank 3 left no file */
        b.f.meta.launcher = "slurm";
        int32_t root = b_thread(&b, 100 + rank);
        int32_t s = b_node(&b, root, "step", step, 2);
        if (rank == 0)
            b_node(&b, s, "ckpt", ckpt, 1);
        if (rank == 2)
            b_node(&b, s, "eval", eval2, 1);
        char file[64];
        snprintf(file, sizeof file, "main-%d.lapse", rank);
        b_write(&b, run, rank == 2 ? "n2" : "n1", file);
    }
    /* a second process of rank 1 (its total adds to rank 1's) */
    b_init(&b, "main", "n1", 200);
    b.f.meta.rank = 1;
    b.f.meta.world_size = 4;
    int32_t root = b_thread(&b, 200);
    b_node(&b, root, "step", extra, 1);
    b_write(&b, run, "n1", "main-200.lapse");
    /* a process without a rank */
    b_init(&b, "main", "n1", 300);
    root = b_thread(&b, 300);
    b_node(&b, root, "step", step, 2);
    b_write(&b, run, "n1", "main-300.lapse");
    /* a second process of rank 0, read after rank 2's, with a path of rank 2's */
    b_init(&b, "main", "n2", 103);
    b.f.meta.rank = 0;
    b.f.meta.world_size = 4;
    root = b_thread(&b, 103);
    b_node(&b, b_node(&b, root, "step", one, 1), "eval", eval0, 1);
    b_write(&b, run, "n2", "main-9.lapse"); /* after main-2.lapse */

    run_model m;
    char err[256];
    CHECK(run_model_load(run, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.role_count, 1);
    CHECK_U64(m.roles[0].rank_count, 3);
    CHECK_U64(m.roles[0].unranked, 1);
    run_stats st;
    CHECK(run_stats_build(&m, 0, &st) == 0);
    const rs_phase *ps = NULL, *pc = NULL, *pe = NULL;
    rs_phase phs[3];
    char pb[RM_PATH_BUF];
    for (uint32_t i = 0; i < st.roles[0].phase_count; i++) {
        const char *path = rm_path_str(&m, st.roles[0].phases[i], pb);
        rs_phase *at = !strcmp(path, "step") ? &phs[0] : !strcmp(path, "step/ckpt") ? &phs[1]
                     : !strcmp(path, "step/eval") ? &phs[2] : NULL;
        if (at)
            run_stats_phase(&m, &st.roles[0], i, at);
        if (at == &phs[0])
            ps = at;
        if (at == &phs[1])
            pc = at;
        if (at == &phs[2])
            pe = at;
    }
    CHECK(ps && pc && pe);
    if (ps && pc && pe) {
        /* step: rank 0 200 + 100, rank 1 200 + 30, rank 2 200 */
        CHECK_U64(ps->across_ranks.ranks, 3);
        CHECK_U64(ps->across_ranks.entered, 3);
        CHECK_U64(ps->across_ranks.min_ns, 200);
        CHECK(ps->across_ranks.median_ns == 230.0);
        CHECK_U64(ps->across_ranks.max_ns, 300);
        CHECK(ps->across_ranks.slowest_rank == 0);
        /* eval: rank 2 40 (read first), rank 0 70, rank 1 none */
        CHECK_U64(pe->across_ranks.entered, 2);
        CHECK_U64(pe->across_ranks.min_ns, 0);
        CHECK(pe->across_ranks.median_ns == 40.0);
        CHECK_U64(pe->across_ranks.max_ns, 70);
        CHECK(pe->across_ranks.slowest_rank == 0);
        /* ckpt: only rank 0 */
        CHECK_U64(pc->across_ranks.entered, 1);
        CHECK_U64(pc->across_ranks.min_ns, 0);
        CHECK(pc->across_ranks.median_ns == 0.0);
        CHECK_U64(pc->across_ranks.max_ns, 50);
        CHECK(pc->across_ranks.slowest_rank == 0);
    }
    run_stats_free(&st);
    run_model_free(&m);
}

/* A pack: each member is a worker named FILE[i]; a member that does not decode is
 * unreadable on its own; a pack whose index is broken is one unreadable file. */
static void test_pack(const char *tmp)
{
    char run[4096], dir[4200], path[4300];
    snprintf(run, sizeof run, "%s/pack-run", tmp);
    snprintf(dir, sizeof dir, "%s/n1", run);
    CHECK(store_make_dirs(dir, 0) == 0);
    static const uint64_t step[] = {100};
    bytes_out img[3] = {{0}, {0}, {0}};
    builder b;
    for (int rank = 0; rank < 3; rank++) {
        b_init(&b, "main", "n1", 400 + rank);
        b.f.meta.rank = rank;
        b.f.meta.world_size = 3;
        int32_t root = b_thread(&b, 400 + rank);
        b_node(&b, root, "step", step, 1);
        CHECK(store_encode(&b.f, &img[rank]) == 0);
    }
    img[1].data[40] ^= 0xff; /* member 1: a broken section checksum */
    const uint8_t *images[3] = {img[0].data, img[1].data, img[2].data};
    size_t lens[3] = {img[0].len, img[1].len, img[2].len};
    bytes_out pack = {0};
    CHECK(store_pack_encode(images, lens, 3, &pack) == 0);
    snprintf(path, sizeof path, "%s/mpi-ranks-1.lapse", dir);
    char err[256];
    CHECK(store_write_atomic(path, pack.data, pack.len, 0, err, sizeof err) == 0);

    run_model m;
    CHECK(run_model_load(run, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.worker_count, 2);
    CHECK_U64(m.unreadable_count, 1);
    if (m.unreadable_count == 1)
        CHECK(strstr(m.unreadable[0].file, "mpi-ranks-1.lapse[1]") != NULL);
    if (m.worker_count == 2) {
        CHECK(m.workers[0].rank + m.workers[1].rank == 2); /* ranks 0 and 2 */
        CHECK(strstr(m.workers[0].file, ".lapse[") != NULL);
    }
    run_model_free(&m);

    /* the index checksum broken: the whole pack is one unreadable file */
    pack.data[STORE_PACK_HEADER_SIZE + 3] ^= 1;
    CHECK(store_write_atomic(path, pack.data, pack.len, 0, err, sizeof err) == 0);
    CHECK(run_model_load(run, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.worker_count, 0);
    CHECK_U64(m.unreadable_count, 1);
    if (m.unreadable_count == 1)
        CHECK(strstr(m.unreadable[0].reason, "pack index checksum") != NULL);
    run_model_free(&m);

    /* truncated */
    CHECK(store_write_atomic(path, pack.data, pack.len - 8, 0, err, sizeof err) == 0);
    CHECK(run_model_load(run, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.unreadable_count, 1);
    if (m.unreadable_count == 1)
        CHECK(strstr(m.unreadable[0].reason, "truncated") != NULL);
    run_model_free(&m);
    for (int i = 0; i < 3; i++)
        bytes_out_free(&img[i]);
    bytes_out_free(&pack);
}

/* A table of pids for rm_host_view: alive[i] says whether pids[i] runs; a pid not
 * in it cannot be told. */
typedef struct pid_table {
    const int64_t *pids;
    const int *alive;
    size_t count;
    unsigned asked; /* calls */
} pid_table;

static int table_alive(void *ctx, int64_t pid)
{
    pid_table *t = ctx;
    t->asked++;
    for (size_t i = 0; i < t->count; i++)
        if (t->pids[i] == pid)
            return t->alive[i];
    return -1;
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
}

/* Temporaries of writers that are gone are named (in the directory of the reader's
 * host, where the pid can be checked); a live writer's, one the view cannot tell,
 * a link, and those of another host's directory are not. The host and its pids are
 * the view's, not this machine's: the same run read as seen from the other host
 * names the other temporary. */
static void test_leftovers(const char *tmp)
{
    char run[4096], path[4600];
    snprintf(run, sizeof run, "%s/leftovers", tmp);
    builder b;
    b_init(&b, "worker", "node-a", 100);
    b_write(&b, run, "node-a", "worker-100-0000.lapse");
    b_init(&b, "worker", "node-b", 101);
    b_write(&b, run, "node-b", "worker-101-0000.lapse");
    snprintf(path, sizeof path, "%s/node-a/worker-100-0000.lapse.tmp.7001.abc", run);
    touch(path);
    char named[4600];
    snprintf(named, sizeof named, "%s", path);
    snprintf(path, sizeof path, "%s/node-a/worker-100-0000.lapse.tmp.7002", run);
    touch(path); /* a live writer's */
    snprintf(path, sizeof path, "%s/node-a/worker-100-0000.lapse.tmp.7003", run);
    touch(path); /* a writer the view cannot tell */
    snprintf(path, sizeof path, "%s/node-a/worker-100-0000.lapse.tmp.7001.lnk", run);
    CHECK(symlink("/nowhere", path) == 0);
    snprintf(path, sizeof path, "%s/node-b/worker-101-0000.lapse.tmp.7001", run);
    touch(path); /* another host's pid: cannot be checked from node-a */
    char named_b[4600];
    snprintf(named_b, sizeof named_b, "%s", path);
    snprintf(path, sizeof path, "%s/node-a/other.txt.tmp.7001", run);
    touch(path); /* not a .lapse file's */
    static const int64_t pids[] = {7001, 7002};
    static const int alive[] = {0, 1};
    pid_table table = {pids, alive, 2, 0};
    rm_host_view view = {.names = {"node-a", NULL}, .pid_alive = table_alive, .pid_ctx = &table};
    rm_options opt = {.host = &view};
    run_model m;
    char err[512];
    CHECK(run_model_load(run, &opt, &m, err, sizeof err) == 0);
    CHECK_U64(m.leftover_count, 1);
    if (m.leftover_count == 1) {
        CHECK_STR(m.leftovers[0].temp, named);
        CHECK(m.leftovers[0].pid == 7001);
        CHECK(m.leftovers[0].worker != RM_NONE &&
              m.workers[m.leftovers[0].worker].pid == 100);
        CHECK(strstr(m.leftovers[0].file, "/worker-100-0000.lapse") != NULL);
    }
    run_model_free(&m);

    view.names[1] = "node-b"; /* SLURMD_NODENAME's place: a second name of the host */
    view.names[0] = "login-7";
    CHECK(run_model_load(run, &opt, &m, err, sizeof err) == 0);
    CHECK_U64(m.leftover_count, 1);
    if (m.leftover_count == 1)
        CHECK_STR(m.leftovers[0].temp, named_b);
    run_model_free(&m);

    /* no view: nothing can be checked, nothing is named */
    table.asked = 0;
    CHECK(run_model_load(run, NULL, &m, err, sizeof err) == 0);
    CHECK_U64(m.leftover_count, 0);
    CHECK_U64(table.asked, 0);
    run_model_free(&m);
}

/* A worker that is not final is gone when, on the reader's host, its pid runs no
 * more: as the view given says, for its host only. */
static void test_gone_from_view(const char *tmp)
{
    char run[4096];
    snprintf(run, sizeof run, "%s/gone", tmp);
    builder b;
    b_init(&b, "worker", "node-a", 300);
    b.f.meta.final = 0;
    b_write(&b, run, "node-a", "worker-300-0000.lapse");
    b_init(&b, "worker", "node-b", 301);
    b.f.meta.final = 0;
    b_write(&b, run, "node-b", "worker-301-0000.lapse");
    static const int64_t pids[] = {300, 301};
    static const int dead[] = {0, 0};
    pid_table table = {pids, dead, 2, 0};
    rm_host_view view = {.names = {"node-a", NULL}, .pid_alive = table_alive, .pid_ctx = &table};
    /* read 0.5 s after the last write: both are running unless known gone */
    rm_options opt = {.host = &view, .now_real_ns = T0 + 10500000000ull};
    run_model m;
    char err[512];
    CHECK(run_model_load(run, &opt, &m, err, sizeof err) == 0);
    CHECK_U64(m.worker_count, 2);
    for (uint32_t i = 0; i < m.worker_count; i++)
        CHECK_U64(m.workers[i].state, m.workers[i].pid == 300 ? RM_GONE : RM_RUNNING);
    run_model_free(&m);

    view.names[0] = "node-b"; /* the same files as seen from the other host */
    CHECK(run_model_load(run, &opt, &m, err, sizeof err) == 0);
    for (uint32_t i = 0; i < m.worker_count; i++)
        CHECK_U64(m.workers[i].state, m.workers[i].pid == 301 ? RM_GONE : RM_RUNNING);
    run_model_free(&m);

    static const int alive[] = {1, 1};
    table.alive = alive;
    CHECK(run_model_load(run, &opt, &m, err, sizeof err) == 0);
    for (uint32_t i = 0; i < m.worker_count; i++)
        CHECK_U64(m.workers[i].state, RM_RUNNING);
    run_model_free(&m);
}

/* A run given as bytes in memory reads as the same files on disk: the same workers
 * and paths, the same copy left out, a file held in part (its start, then a hole to
 * its size) unreadable for the same reason; and nothing is opened. */
static void test_from_memory(const char *tmp)
{
    char run[4096], path[4600];
    snprintf(run, sizeof run, "%s/in-memory", tmp);
    static const uint64_t step[] = {100, 250, 400};
    builder b;
    b_init(&b, "worker", "n1", 500);
    b_node(&b, b_thread(&b, 500), "step", step, 3);
    b_write(&b, run, "n1", "worker-500-aaaa.lapse");
    b_write(&b, run, "n1", "worker-500-copy.lapse"); /* the same process again */
    b_init(&b, "learner", "n1", 501);
    b_node(&b, b_thread(&b, 501), "update", step, 3);
    b_write(&b, run, "n1", "worker-501-bbbb.lapse");
    const char *rels[] = {"n1/worker-500-aaaa.lapse", "n1/worker-500-copy.lapse",
                          "n1/worker-501-bbbb.lapse"};
    uint8_t *data[3];
    size_t len[3];
    char names[3][4600], err[512];
    store_buffer bufs[3];
    for (int i = 0; i < 3; i++) {
        snprintf(names[i], sizeof names[i], "%s/%s", run, rels[i]);
        CHECK(store_read_bytes(names[i], &data[i], &len[i], err, sizeof err) == 0);
        bufs[i] = (store_buffer){names[i], data[i], len[i], len[i]};
    }
    /* the last one held in part: its first 40 bytes of a file twice as long */
    uint64_t full = len[2];
    bufs[2].len = 40;
    bufs[2].size = 2 * full;
    snprintf(path, sizeof path, "%s/%s", run, rels[2]);
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        CHECK(ftruncate(fileno(f), 0) == 0 && fwrite(data[2], 1, 40, f) == 40);
        CHECK(ftruncate(fileno(f), (off_t)(2 * full)) == 0);
        fclose(f);
    }
    run_model disk, mem;
    CHECK(run_model_load(run, NULL, &disk, err, sizeof err) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(unlink(names[i]) == 0); /* nothing on disk now */
    CHECK(run_model_load_mem(disk.dir, 0, bufs, 3, NULL, &mem, err, sizeof err) == 0);
    CHECK_STR(mem.dir, disk.dir);
    CHECK_U64(mem.worker_count, 1);
    CHECK_U64(mem.worker_count, disk.worker_count);
    CHECK_U64(mem.path_count, disk.path_count);
    CHECK_U64(mem.duplicate_count, 1);
    CHECK_U64(mem.duplicate_count, disk.duplicate_count);
    CHECK_U64(mem.unreadable_count, 1);
    CHECK_U64(mem.unreadable_count, disk.unreadable_count);
    if (mem.unreadable_count == 1 && disk.unreadable_count == 1) {
        CHECK_STR(mem.unreadable[0].file, disk.unreadable[0].file);
        CHECK_STR(mem.unreadable[0].reason, disk.unreadable[0].reason);
    }
    for (uint32_t i = 0; i < mem.path_count && mem.path_count == disk.path_count; i++) {
        char a[RM_PATH_BUF], b[RM_PATH_BUF];
        CHECK_STR(rm_path_str(&mem, i, a), rm_path_str(&disk, i, b));
        CHECK_U64(mem.paths[i].total_ns, disk.paths[i].total_ns);
        CHECK_U64(mem.paths[i].calls, disk.paths[i].calls);
    }
    if (mem.worker_count == 1)
        CHECK_STR(mem.workers[0].file, names[0]);
    run_model_free(&disk);
    run_model_free(&mem);
    for (int i = 0; i < 3; i++)
        free(data[i]);
}

int main(void)
{
    char tmp[] = "/tmp/lapse-test-analyze-XXXXXX";
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    char run[4096];
    snprintf(run, sizeof run, "%s/run-1", tmp);
    write_run(run);
    write_bad_files(run);
    test_merge(run);
    test_all_unreadable(tmp);
    test_superseded(tmp);
    test_joined(tmp);
    test_deep_chain();
    test_across_ranks(tmp);
    test_pack(tmp);
    test_leftovers(tmp);
    test_gone_from_view(tmp);
    test_from_memory(tmp);
    if (!check_failed) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", tmp);
    } else {
        fprintf(stderr, "test files kept in %s\n", tmp);
    }
    return check_done("test_analyze_run_model");
}
