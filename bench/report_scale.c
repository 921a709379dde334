/* How `lapse report` scales: wall time and peak memory on a large synthetic run.
 *
 *   report_scale [LAPSE] [--files N] [--paths N] [--unique F] [--spans N] [--reps N]
 *                [--against LAPSE2] [--keep]
 *
 * Writes N (64) worker files of P (4096) paths each with store_write_file, under a
 * temporary directory laid out as a real run (<dir>/<run_id>/<host>/<role>-<pid>.lapse),
 * reads each back with store_read_file to check them, then runs `LAPSE report
 * <dir>/<run_id>` (fork/exec) REPS times and prints its wall time and peak RSS
 * (wait4's ru_maxrss) against the targets: <= 1 s and <= 256 MiB.
 *
 * Each file looks like a training worker's: two threads (main: most paths; a
 * loader), a tree up to depth 6 with up to 48 children per node, counts that grow
 * with depth, self and child time consistent along the tree, a histogram of ~30
 * non-zero buckets per path, a few counters, and (with --spans) a full timeline.
 * The workers run the same code, so their trees are the same; their times differ.
 * With --unique F (0..1) a share F of each file's paths is its own: subtrees whose
 * top span has a name of that file alone (the run then has about
 * P x (1 - F + N x F) distinct paths).
 *
 * With --against, LAPSE2 (another build: main's, say) reports the same files in turn with
 * LAPSE, rep by rep, and its figures, the ratios and whether the two reports are the
 * same bytes are printed too.
 *
 * LAPSE defaults to `lapse` next to this program, else build/lapse. */
#include "core/hist.h"
#include "store/codec.h"
#include "store/file_io.h"

#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTS 4
#define MAX_DEPTH 6
#define MAX_CHILDREN 48
#define NAME_POOL 400
#define THREADS 2

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unit(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the tree shared by all workers ---- */

typedef struct shape {
    store_node *nodes; /* structure only: parent, thread, name, depth */
    uint32_t count;
    uint32_t *own;    /* per node: 0, or 1 + the index of the file-own name it takes
                         (the top of a subtree of paths unique to each file) */
    uint32_t own_count, distinct; /* file-own names; paths that are the file's own */
    uint32_t *own_base; /* per file-own name: the pool name it is made from */
    uint64_t *calls;  /* calls of each path */
    double *self_ns;  /* self time per call, before per-worker noise */
} shape;

static char *names[NAME_POOL + 1];

static void make_names(void)
{
    static const char *const parts[] = {"forward", "backward", "optimizer", "attention",
                                        "mlp",     "allreduce", "loader",   "decode",
                                        "embed",   "norm",      "loss",     "checkpoint",
                                        "h2d",     "d2h",       "sample",   "tokenize"};
    names[0] = strdup("");
    for (int i = 1; i <= NAME_POOL; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s.%s_%d", parts[i % 16], parts[(i / 16) % 16], i);
        names[i] = strdup(buf);
    }
}

/* A tree of `paths` paths over THREADS threads (the main thread has most), its
 * calls, and self times scaled so that a thread's top-level spans take `busy` of
 * wall_ns (the main thread 85%, the loader 40%). */
static void make_shape(shape *s, uint32_t paths, uint64_t wall_ns)
{
    uint32_t total = paths + THREADS;
    s->nodes = calloc(total, sizeof *s->nodes);
    s->calls = calloc(total, sizeof *s->calls);
    s->self_ns = calloc(total, sizeof *s->self_ns);
    uint32_t *children = calloc(total, sizeof *children);
    uint32_t share[THREADS] = {paths - paths / 8, paths / 8};
    uint32_t n = 0;
    for (uint32_t t = 0; t < THREADS; t++) {
        uint32_t first = n;
        s->nodes[n++] = (store_node){.parent = -1, .thread = t};
        for (uint32_t k = 0; k < share[t]; k++) {
            /* a parent of this thread with room, favouring recent (deeper) nodes */
            uint32_t p;
            for (;;) {
                uint32_t span = n - first;
                uint32_t back = (uint32_t)(unit() * unit() * span);
                p = n - 1 - back;
                if (s->nodes[p].depth < MAX_DEPTH && children[p] < MAX_CHILDREN &&
                    (s->nodes[p].depth < 2 || children[p] < 12))
                    break;
            }
            store_node *c = &s->nodes[n];
            c->parent = (int32_t)p;
            c->thread = t;
            c->depth = s->nodes[p].depth + 1;
            /* distinct among siblings: a per-parent offset plus the child's rank */
            c->name = 1 + (uint32_t)((p * 37u + children[p]) % NAME_POOL);
            children[p]++;
            /* 1000 steps; a few calls of a child per call of its parent */
            s->calls[n] = c->depth == 1 ? 1000
                                        : s->calls[p] * (1 + below(c->depth < 4 ? 4 : 2));
            s->self_ns[n] = 200.0 * exp(unit() * 9.0); /* 200 ns .. 1.6 ms */
            n++;
        }
    }
    s->count = n;
    free(children);
    /* scale: sum over all paths of calls * self = the busy time of the thread */
    static const double busy[THREADS] = {0.85, 0.40};
    double sum[THREADS] = {0};
    for (uint32_t i = 0; i < n; i++)
        if (s->nodes[i].parent >= 0)
            sum[s->nodes[i].thread] += s->self_ns[i] * (double)s->calls[i];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t t = s->nodes[i].thread;
        if (s->nodes[i].parent >= 0 && sum[t] > 0)
            s->self_ns[i] *= busy[t] * (double)wall_ns / sum[t];
    }
}

/* Marks subtrees that hold about `unique` of the paths as each file's own: walking
 * the nodes in order (parents first), a node under an own one is own; any other
 * becomes the top of an own subtree when its subtree fits in what is left of the
 * share. */
static void mark_own(shape *s, double unique)
{
    s->own = calloc(s->count, sizeof *s->own);
    s->own_base = calloc(s->count, sizeof *s->own_base);
    uint32_t *size = calloc(s->count, sizeof *size);
    uint8_t *inside = calloc(s->count, 1);
    for (uint32_t i = s->count; i-- > 0;) { /* children come after their parent */
        size[i]++;
        if (s->nodes[i].parent >= 0)
            size[s->nodes[i].parent] += size[i];
    }
    double want = unique * (double)(s->count - THREADS);
    s->own_count = s->distinct = 0;
    uint32_t marked = 0; /* paths inside the subtrees marked so far */
    for (uint32_t i = 0; i < s->count; i++) {
        const store_node *n = &s->nodes[i];
        if (n->parent < 0)
            continue;
        inside[i] = inside[n->parent];
        if (!inside[i] && (double)(marked + size[i]) <= want + 0.5) {
            s->own_base[s->own_count++] = n->name;
            s->own[i] = s->own_count;
            s->nodes[i].name = NAME_POOL + s->own_count; /* the file's names go there */
            inside[i] = 1;
            marked += size[i];
        }
        s->distinct += inside[i];
    }
    free(size);
    free(inside);
}

/* ---- one worker's file ---- */

typedef struct worker_file {
    store_file f;
    char **names; /* the pool, then the file's own names */
    store_thread threads[THREADS];
    store_counter counters[16];
    uint64_t *hist; /* count * HIST_BUCKETS */
} worker_file;

/* Fills n's histogram with ~30 buckets around the mean duration, summing to calls;
 * sets min and max from its ends. */
static void fill_hist(store_node *n, uint64_t *h, double mean_ns)
{
    memset(h, 0, HIST_BUCKETS * sizeof *h);
    n->hist = h;
    uint64_t mean = mean_ns < 16 ? 16 : (uint64_t)mean_ns;
    int center = (int)hist_bucket(mean);
    int lo = center - 22, hi = center + 13; /* ~30 non-zero of 36, ~4.5 octaves */
    if (lo < 0)
        lo = 0;
    if (hi >= (int)HIST_BUCKETS)
        hi = HIST_BUCKETS - 1;
    uint64_t left = n->calls;
    double weight_sum = 0;
    double w[HIST_BUCKETS];
    for (int b = lo; b <= hi; b++) {
        double d = (double)(b - center) / (b < center ? 6.0 : 3.0);
        w[b] = exp(-d * d);
        weight_sum += w[b];
    }
    int first = -1, last = -1;
    for (int b = lo; b <= hi && left; b++) {
        uint64_t c = b == hi ? left : (uint64_t)((double)n->calls * w[b] / weight_sum + 0.5);
        if (c > left)
            c = left;
        if (!c && b != center)
            continue;
        if (!c)
            c = 1; /* left > 0 here */
        h[b] = c;
        left -= c;
        if (first < 0)
            first = b;
        last = b;
    }
    if (left) { /* rounding: the rest to the centre */
        h[center] += left;
        if (first < 0 || center < first)
            first = center;
        if (center > last)
            last = center;
    }
    n->min_ns = hist_bucket_low((unsigned)first);
    n->max_ns = hist_bucket_low((unsigned)last) + hist_bucket_width((unsigned)last) - 1;
}

static const uint64_t wall_ns = 3600ull * 1000000000ull; /* an hour */

static void make_worker(worker_file *w, const shape *s, int index, int files, const char *host,
                        const char *run_id, uint64_t spans)
{
    store_file *f = &w->f;
    memset(f, 0, sizeof *f);
    store_meta *m = &f->meta;
    uint64_t start_real = 1760000000000000000ull, start_mono = 5000000000000ull;
    uint64_t wall = wall_ns;
    m->format_version = STORE_FORMAT_VERSION;
    m->lapse_version = "0.1.0";
    m->host = (char *)host;
    m->role = "worker";
    m->run_id = (char *)run_id;
    m->job_id = "4242";
    m->end_reason = "exit";
    m->clock_source = "tsc";
    m->pid = 10000 + index;
    m->ppid = 9999;
    m->rank = index;
    m->world_size = files;
    m->start_real_ns = start_real;
    m->start_mono_ns = start_mono;
    m->write_real_ns = start_real + wall;
    m->write_mono_ns = start_mono + wall;
    m->anchor_real_ns = start_real + 1000;
    m->anchor_mono_ns = start_mono + 1000;
    m->wall_ns = wall;
    m->cpu_user_ns = wall / 10 * 9;
    m->cpu_sys_ns = wall / 20;
    m->max_rss_kb = 8u << 20;
    m->tsc_hz = 2.45e9;
    m->write_seq = 721;
    m->final = 1;
    m->snapshot_interval_ms = 5000;
    m->max_spans = spans ? spans : 100000;
    m->max_depth = 64;
    m->max_paths = 4096;
    m->max_counters = 4096;
    m->timeline_dropped = spans ? 123456789 : 0;

    /* the pool, then this file's own names: "<pool name>@<file>" */
    for (uint32_t k = 0; k < s->own_count; k++) {
        char buf[96];
        snprintf(buf, sizeof buf, "%s@%d", names[s->own_base[k]], index);
        free(w->names[NAME_POOL + 1 + k]);
        w->names[NAME_POOL + 1 + k] = strdup(buf);
    }
    f->names = w->names;
    f->name_count = NAME_POOL + 1 + s->own_count;
    w->threads[0] = (store_thread){m->pid, "python"};
    w->threads[1] = (store_thread){m->pid + 1, "pt_data_loader"};
    f->threads = w->threads;
    f->thread_count = THREADS;
    f->nodes = s->nodes; /* structure shared; the numbers are rewritten per worker */
    f->node_count = s->count;

    /* calls down the tree; times up the tree (children have larger indices) */
    for (uint32_t i = 0; i < s->count; i++) {
        store_node *n = &f->nodes[i];
        n->calls = s->calls[i];
        n->total_ns = n->child_ns = n->folded = 0;
        n->hist = NULL; /* written below as a dense array: hist_lo = hist_n = 0 */
        n->hist_lo = n->hist_n = 0;
        n->min_ns = n->max_ns = 0;
    }
    double slow = 1.0 + 0.05 * unit() + (index == files - 1 ? 0.1 : 0.0); /* one straggler */
    for (uint32_t i = s->count; i-- > 0;) {
        store_node *n = &f->nodes[i];
        if (n->parent < 0)
            continue;
        double self = s->self_ns[i] * slow * (0.95 + 0.1 * unit());
        n->total_ns = n->child_ns + (uint64_t)(self * (double)n->calls) + n->calls;
        f->nodes[n->parent].child_ns += n->total_ns;
        fill_hist(n, w->hist + (size_t)i * HIST_BUCKETS, (double)n->total_ns / (double)n->calls);
    }
    /* the roots keep no calls and no time of their own; their child_ns is the time
     * of the thread's top-level spans, as the span engine writes them */

    /* a few counters on deep-ish paths */
    f->counter_count = 0;
    for (uint32_t k = 0; k < 16 && f->counter_count < 12; k++) {
        uint32_t i = (uint32_t)((k * 977u + 13u) % s->count);
        if (f->nodes[i].parent < 0)
            continue;
        store_counter *c = &w->counters[f->counter_count++];
        c->node = i;
        c->name = 1 + (k * 5u) % NAME_POOL;
        c->updates = f->nodes[i].calls;
        c->sum = (int64_t)(c->updates * (64 + k));
    }
    f->counters = w->counters;

    /* an optional full timeline: top-level steps with nested work */
    f->span_count = spans;
    f->spans = NULL;
    if (spans) {
        f->spans = calloc(spans, sizeof *f->spans);
        uint64_t t = start_mono + 1000000;
        for (uint64_t k = 0; k < spans; k++) {
            store_span *sp = &f->spans[k];
            sp->thread = (uint32_t)(k % 7 == 0);
            sp->name = 1 + (uint32_t)(k % NAME_POOL);
            sp->depth = 1 + (uint32_t)(k % MAX_DEPTH);
            sp->begin_ns = t;
            sp->end_ns = t + 1000 + below(100000);
            t += 20000 + below(20000);
        }
    }
}

/* ---- running the report ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

typedef struct run_result {
    int status;
    double wall_s;
    long maxrss_kb;
} run_result;

static run_result run_report(const char *lapse, const char *dir, const char *out_path,
                             const char *err_path)
{
    run_result r = {-1, 0, 0};
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2(fd, 1);
        if (fe >= 0)
            dup2(fe, 2);
        execl(lapse, lapse, "report", dir, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", lapse, strerror(errno));
        _exit(127);
    }
    if (pid < 0)
        return r;
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        return r;
    r.wall_s = now_s() - t0;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.maxrss_kb = ru.ru_maxrss;
    return r;
}

static void print_head(const char *path, int lines)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    char line[512];
    for (int i = 0; i < lines && fgets(line, sizeof line, fp); i++)
        printf("    | %s", line);
    fclose(fp);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The reps of one lapse command: wall times (sorted once done), the largest RSS. */
typedef struct series {
    const char *lapse;
    char out_path[600], err_path[600];
    double *walls;
    long maxrss_kb;
    int status;
} series;

static int same_bytes(const char *a, const char *b)
{
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y;
    while (same) {
        int c = fgetc(x);
        same = c == fgetc(y);
        if (c == EOF)
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

int main(int argc, char **argv)
{
    const char *lapse = NULL, *against = NULL;
    int files = 64, reps = 3, keep = 0;
    uint32_t paths = 4096;
    double unique = 0;
    uint64_t spans = 0;
    static const char usage[] = "usage: report_scale [LAPSE] [--files N] [--paths N] [--unique F] "
                                "[--spans N] [--reps N] [--against LAPSE2] [--keep]\n";
    enum { FILES = 256, PATHS, UNIQUE, SPANS, REPS, AGAINST, KEEP };
    static const struct option options[] = {
        {"files", required_argument, NULL, FILES},     {"paths", required_argument, NULL, PATHS},
        {"unique", required_argument, NULL, UNIQUE},   {"spans", required_argument, NULL, SPANS},
        {"reps", required_argument, NULL, REPS},       {"against", required_argument, NULL, AGAINST},
        {"keep", no_argument, NULL, KEEP},             {0, 0, 0, 0},
    };
    opterr = 0;
    for (int c, at; (c = getopt_long(argc, argv, ":", options, &at)) != -1;) {
        char *end = NULL;
        double v = optarg ? strtod(optarg, &end) : 0;
        int bad = optarg && (end == optarg || *end);
        switch (c) {
        case FILES: files = (int)v; bad |= v < 1 || v > 1e6; break;
        case PATHS: paths = (uint32_t)v; bad |= v < 8 || v > 1e8; break;
        case UNIQUE: unique = v; bad |= !(v >= 0 && v <= 1); break;
        case SPANS: spans = (uint64_t)v; bad |= v < 0 || v > 1e12; break;
        case REPS: reps = (int)v; bad |= v < 1 || v > 1e6; break;
        case AGAINST: against = optarg; bad = 0; break;
        case KEEP: keep = 1; break;
        default:
            fprintf(stderr, "report_scale: %s '%s'\n%s", c == ':' ? "a value is missing after" : "unknown option",
                    argv[optind - 1], usage);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "report_scale: --%s: a bad value '%s'\n%s", options[at].name, optarg, usage);
            return 2;
        }
    }
    if (optind < argc)
        lapse = argv[optind];
    if (optind + 1 < argc) {
        fprintf(stderr, "report_scale: one LAPSE only (got also '%s')\n%s", argv[optind + 1], usage);
        return 2;
    }
    static char self_lapse[PATH_MAX];
    if (!lapse) {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = 0;
            *strrchr(self, '/') = 0;
            snprintf(self_lapse, sizeof self_lapse, "%.4000s/lapse", self);
        }
        lapse = self_lapse[0] && access(self_lapse, X_OK) == 0 ? self_lapse : "build/lapse";
    }

    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/lapse-scale-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("report_scale: mkdtemp");
        return 1;
    }
    const char *run_id = "20250101T000000-abcdef";
    char run_dir[512];
    snprintf(run_dir, sizeof run_dir, "%s/%s", dir, run_id);

    /* generate */
    double t0 = now_s();
    make_names();
    shape s;
    make_shape(&s, paths, wall_ns);
    mark_own(&s, unique);
    worker_file w;
    w.names = calloc(NAME_POOL + 1 + s.own_count, sizeof *w.names);
    memcpy(w.names, names, (NAME_POOL + 1) * sizeof *names);
    w.hist = malloc((size_t)s.count * HIST_BUCKETS * sizeof *w.hist);
    uint64_t bytes = 0;
    char err[512];
    for (int i = 0; i < files; i++) {
        char host[32], hdir[600], path[700];
        snprintf(host, sizeof host, "node%02d", i % HOSTS);
        snprintf(hdir, sizeof hdir, "%s/%s", run_dir, host);
        if (store_make_dirs(hdir, 0) != 0) {
            fprintf(stderr, "report_scale: cannot create %s\n", hdir);
            return 1;
        }
        make_worker(&w, &s, i, files, host, run_id, spans);
        snprintf(path, sizeof path, "%s/worker-%lld.lapse", hdir, (long long)w.f.meta.pid);
        if (store_write_file(path, &w.f, 0, err, sizeof err) != 0) {
            fprintf(stderr, "report_scale: %s\n", err);
            return 1;
        }
        free(w.f.spans);
        struct stat st;
        if (stat(path, &st) == 0)
            bytes += (uint64_t)st.st_size;
    }
    double gen_s = now_s() - t0;

    /* check: every file reads back with the shape it was given */
    t0 = now_s();
    unsigned max_depth = 0, hist_min = HIST_BUCKETS, hist_max = 0;
    for (int i = 0; i < files; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/node%02d/worker-%d.lapse", run_dir, i % HOSTS, 10000 + i);
        store_file f;
        if (store_read_file(path, 0, &f, err, sizeof err) != 0) {
            fprintf(stderr, "report_scale: generated file does not read back: %s: %s\n", path,
                    err);
            return 1;
        }
        int ok = f.node_count == s.count && f.thread_count == THREADS &&
                 f.span_count == spans && f.meta.rank == i && f.counter_count > 0;
        for (uint32_t k = 0; ok && k < f.node_count; k++) {
            const store_node *n = &f.nodes[k];
            if (n->depth > max_depth)
                max_depth = n->depth;
            if (n->parent < 0)
                continue;
            unsigned used = 0;
            uint64_t sum = 0;
            for (unsigned b = 0; b < n->hist_n; b++) { /* the reader gives a window */
                used += n->hist[b] != 0;
                sum += n->hist[b];
            }
            ok = sum == n->calls && n->total_ns >= n->child_ns && n->min_ns <= n->max_ns;
            if (used < hist_min)
                hist_min = used;
            if (used > hist_max)
                hist_max = used;
        }
        store_file_free(&f);
        if (!ok) {
            fprintf(stderr, "report_scale: %s reads back with the wrong shape\n", path);
            return 1;
        }
    }
    double check_s = now_s() - t0;
    printf("report_scale: %d files x %u paths (%u nodes with thread roots, depth <= %u, "
           "%u-%u histogram buckets used, %llu timeline spans each), %.1f MiB\n",
           files, paths, s.count, max_depth, hist_min, hist_max, (unsigned long long)spans,
           (double)bytes / (1 << 20));
    printf("  %u of each file's paths its own (--unique %.2f): %llu distinct paths in the run\n",
           s.distinct, unique,
           (unsigned long long)(paths - s.distinct) + (unsigned long long)files * s.distinct);
    printf("  generated in %.2f s; all read back with store_read_file in %.2f s "
           "(%.1f ms per file)\n",
           gen_s, check_s, check_s * 1000 / files);

    /* the report; the generator's memory goes back first: the child's peak RSS
     * (ru_maxrss) includes what it held as a fork of this process before exec */
    free(w.hist);
    for (uint32_t k = 0; k < s.own_count; k++)
        free(w.names[NAME_POOL + 1 + k]);
    free(w.names);
    free(s.nodes);
    free(s.calls);
    free(s.self_ns);
    free(s.own);
    free(s.own_base);
    series runs[2] = {{.lapse = lapse}, {.lapse = against}};
    int nruns = against ? 2 : 1;
    for (int k = 0; k < nruns; k++) {
        snprintf(runs[k].out_path, sizeof runs[k].out_path, "%s/report%d.out", dir, k);
        snprintf(runs[k].err_path, sizeof runs[k].err_path, "%s/report%d.err", dir, k);
        runs[k].walls = calloc((size_t)reps, sizeof *runs[k].walls);
        printf("  running: %s report %s  (x%d%s)\n", runs[k].lapse, run_dir, reps,
               k ? ", the reference, in turn with the above" : "");
    }
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < nruns; k++) {
            series *sr = &runs[k];
            if (sr->status)
                continue;
            run_result rr = run_report(sr->lapse, run_dir, sr->out_path, sr->err_path);
            sr->walls[r] = rr.wall_s;
            if (rr.maxrss_kb > sr->maxrss_kb)
                sr->maxrss_kb = rr.maxrss_kb;
            sr->status = rr.status;
        }
    for (int k = 0; k < nruns; k++)
        if (runs[k].status != 0) {
            printf("  %s report FAILED (exit %d); no figures. Its stderr:\n", runs[k].lapse,
                   runs[k].status);
            print_head(runs[k].err_path, 10);
            if (!keep)
                nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
            else
                printf("  files kept in %s\n", dir);
            return 1;
        }
    for (int k = 0; k < nruns; k++)
        qsort(runs[k].walls, (size_t)reps, sizeof *runs[k].walls, cmp_double);
    struct stat st;
    long out_size = stat(runs[0].out_path, &st) == 0 ? (long)st.st_size : 0;
    printf("  report output: %ld bytes; first lines:\n", out_size);
    print_head(runs[0].out_path, 8);
    const double *walls = runs[0].walls;
    double mib = (double)runs[0].maxrss_kb / 1024.0;
    printf("  wall time:  min %.3f s, median %.3f s, max %.3f s   target <= 1 s     %s\n",
           walls[0], walls[reps / 2], walls[reps - 1], walls[reps / 2] <= 1.0 ? "PASS" : "FAIL");
    printf("  peak RSS:   %.1f MiB                                    target <= 256 MiB %s\n",
           mib, mib <= 256.0 ? "PASS" : "FAIL");
    if (against) {
        const double *rw = runs[1].walls;
        double rmib = (double)runs[1].maxrss_kb / 1024.0;
        printf("  reference:  wall min %.3f s, median %.3f s, max %.3f s; peak RSS %.1f MiB\n",
               rw[0], rw[reps / 2], rw[reps - 1], rmib);
        printf("  against the reference: median wall x %.2f, min wall x %.2f, peak RSS x %.2f; "
               "reports %s\n",
               walls[reps / 2] / rw[reps / 2], walls[0] / rw[0], mib / rmib,
               same_bytes(runs[0].out_path, runs[1].out_path) ? "the same bytes" : "DIFFER");
    }
    for (int k = 0; k < nruns; k++)
        free(runs[k].walls);
    if (keep)
        printf("  files kept in %s\n", dir);
    else
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
