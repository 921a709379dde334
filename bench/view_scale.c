/* How `lapse view` scales: a real run of P processes (16) x S timeline spans (100000)
 * each, plus N Python samples (100000) spread over their files, then `LAPSE view` of
 * it, timed, and the page's size against the target (<= 30 MB).
 *
 *   view_scale [LAPSE] [--procs P] [--spans S] [--samples N] [--max-spans M] [--roles 1|2] [--keep DIR]
 *
 * The processes are this program run again with LAPSE_PROFILE=1 (liblapse's own
 * writer, real clocks): each does S/6 steps of step{load, compute{kernel, kernel},
 * write}, a few us of work in each leaf. The samples are synthetic (no Python runs):
 * 400 distinct stacks per file, 4 to 14 frames deep from 300 functions, each with the
 * span path open (none, step/load, step/compute, step/compute/kernel by turns), added
 * to each file as `lapse record` adds its samples to a target's file
 * (samples_add_to_lapse). The processes' role is "worker"; with --roles 2 every other
 * one is a "loader".
 * --max-spans (default S) is each timeline's bound: below S the timelines drop
 * spans, as a full one does. With --keep the run and the page stay in DIR (the browser test of the page's load
 * and frame times reads them: tests/e2e/test_view.py, LAPSE_VIEW_SCALE=DIR).
 *
 * LAPSE defaults to `lapse` next to this program, else build/lapse. */
#include "lapse.h"
#include "store/sample_set.h"
#include "store/samples_file.h"

#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static void work(unsigned units)
{
    uint64_t x = sink;
    for (unsigned i = 0; i < units * 400u; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static int child(uint64_t spans, unsigned index)
{
    for (uint64_t k = 0; k < spans / 6; k++) {
        LAPSE_BEGIN("step");
        LAPSE_BEGIN("load");
        work(1 + (unsigned)((k + index) % 3));
        LAPSE_END("load");
        LAPSE_BEGIN("compute");
        LAPSE_BEGIN("kernel");
        work(2 + (unsigned)(k % 5));
        LAPSE_END("kernel");
        LAPSE_BEGIN("kernel");
        work(2);
        LAPSE_END("kernel");
        LAPSE_END("compute");
        LAPSE_BEGIN("write");
        work(1);
        LAPSE_END("write");
        LAPSE_END("step");
    }
    return 0;
}

static char files[64][PATH_MAX];
static int file_count;

static int find_file(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    size_t n = strlen(path);
    if (flag == FTW_F && n > 6 && !strcmp(path + n - 6, ".lapse") && file_count < 64)
        snprintf(files[file_count++], PATH_MAX, "%s", path);
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The synthetic samples of file i: `count` samples over 400 stacks. */
static sample_set *make_samples(int64_t pid, uint64_t count, unsigned seed)
{
    sample_set *set = sample_set_new();
    if (!set || sample_set_set_mode(set, "wall"))
        return NULL;
    uint32_t fn[300];
    uint32_t file = sample_set_string(set, "train.py", 8);
    for (unsigned k = 0; k < 300; k++) {
        char name[32];
        int n = snprintf(name, sizeof name, "module.function_%u", k);
        fn[k] = sample_set_frame(set, sample_set_string(set, name, (size_t)n), file, 10 + k);
    }
    uint32_t tname = sample_set_string(set, "MainThread", 10);
    /* the span path open at each sample, as the sampler reads it: none, or one of the
     * child's spans (a quarter each) */
    const char *open_span[] = {"step/load", "step/compute", "step/compute/kernel"};
    uint32_t span_path[4] = {0};
    for (unsigned k = 0; k < 3; k++)
        span_path[k + 1] = sample_set_string(set, open_span[k], strlen(open_span[k]));
    sample_key key = {pid, pid, tname, 0, SAMPLE_RUNNING};
    uint64_t x = seed * 2654435761u + 1;
    for (uint64_t s = 0; s < count; s++) {
        unsigned stack = (unsigned)(s % 400);
        uint32_t ids[14];
        unsigned depth = 4 + stack % 11;
        for (unsigned d = 0; d < depth; d++)
            ids[d] = fn[(stack * 7u + d * d * 13u) % (d < 2 ? 5u : 300u)];
        x = x * 6364136223846793005ull + 1;
        key.span_path = span_path[stack % 4];
        if (sample_set_add(set, &key, ids, depth, 1000000))
            return NULL;
    }
    store_samples *d = sample_set_data(set);
    d->rate_asked_hz = d->rate_achieved_hz = 1000;
    d->samples = count;
    struct timespec now; /* a recording of count ms, from now, as lapse record's has */
    clock_gettime(CLOCK_REALTIME, &now);
    d->start_real_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    d->duration_ns = count * 1000000ull;
    d->end_real_ns = d->start_real_ns + d->duration_ns;
    return set;
}

int main(int argc, char **argv)
{
    unsigned procs = 16, roles = 1;
    uint64_t spans = 100000, samples = 100000, max_spans = 0;
    const char *keep = NULL;
    if (argc == 4 && !strcmp(argv[1], "--child"))
        return child(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]));
    enum { PROCS = 256, SPANS, SAMPLES, MAX_SPANS, ROLES, KEEP };
    static const struct option opts[] = {{"procs", required_argument, NULL, PROCS},
                                         {"spans", required_argument, NULL, SPANS},
                                         {"samples", required_argument, NULL, SAMPLES},
                                         {"max-spans", required_argument, NULL, MAX_SPANS},
                                         {"roles", required_argument, NULL, ROLES},
                                         {"keep", required_argument, NULL, KEEP},
                                         {0, 0, 0, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case PROCS: procs = (unsigned)atoi(optarg); break;
        case SPANS: spans = strtoull(optarg, NULL, 10); break;
        case SAMPLES: samples = strtoull(optarg, NULL, 10); break;
        case MAX_SPANS: max_spans = strtoull(optarg, NULL, 10); break;
        case ROLES: roles = (unsigned)atoi(optarg); break;
        case KEEP: keep = optarg; break;
        default:
            fprintf(stderr, "usage: view_scale [LAPSE] [--procs P] [--spans S] [--samples N] [--max-spans M] [--roles 1|2] [--keep DIR]\n");
            return 2;
        }
    }
    if (roles < 1 || roles > 2) {
        fprintf(stderr, "view_scale: --roles 1 or 2\n");
        return 2;
    }
    if (procs < 1 || procs > 64) {
        fprintf(stderr, "view_scale: --procs from 1 to 64\n");
        return 2;
    }
    char lapse[PATH_MAX];
    if (optind < argc) {
        snprintf(lapse, sizeof lapse, "%s", argv[optind]);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = 0;
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = 0;
        snprintf(lapse, sizeof lapse, "%s/lapse", self);
        if (access(lapse, X_OK))
            snprintf(lapse, sizeof lapse, "build/lapse");
    }
    char dir[PATH_MAX];
    if (keep) {
        snprintf(dir, sizeof dir, "%s", keep);
        mkdir(dir, 0700);
    } else {
        snprintf(dir, sizeof dir, "/tmp/view_scale.XXXXXX");
        if (!mkdtemp(dir)) {
            perror("view_scale: mkdtemp");
            return 1;
        }
    }
    char rundir[PATH_MAX + 8], spans_env[64], spans_arg[32];
    snprintf(rundir, sizeof rundir, "%s/run", dir);
    snprintf(spans_env, sizeof spans_env, "%llu", (unsigned long long)(max_spans ? max_spans : spans));
    snprintf(spans_arg, sizeof spans_arg, "%llu", (unsigned long long)spans);
    setenv("LAPSE_PROFILE", "1", 1);
    setenv("LAPSE_RUN_DIR", rundir, 1);
    setenv("LAPSE_ROLE", "worker", 1);
    char run_id[64];
    snprintf(run_id, sizeof run_id, "view-scale-%ld", (long)getpid());
    setenv("LAPSE_RUN_ID", run_id, 1); /* one run, however quickly the workers end */
    setenv("LAPSE_MAX_SPANS", spans_env, 1);
    double t = now_s();
    pid_t pids[64];
    for (unsigned i = 0; i < procs; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%u", i);
        if ((pids[i] = fork()) == 0) {
            if (roles == 2 && i % 2) /* --roles 2: every other process a "loader" */
                setenv("LAPSE_ROLE", "loader", 1);
            execl("/proc/self/exe", argv[0], "--child", spans_arg, idx, (char *)NULL);
            _exit(127);
        }
    }
    unsetenv("LAPSE_PROFILE");
    for (unsigned i = 0; i < procs; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "view_scale: worker %u failed\n", i);
            return 1;
        }
    }
    double t_run = now_s() - t;
    nftw(rundir, find_file, 16, FTW_PHYS);
    if (file_count != (int)procs) {
        fprintf(stderr, "view_scale: %d files for %u processes\n", file_count, procs);
        return 1;
    }
    for (int i = 0; i < file_count; i++) {
        uint64_t n = samples / procs + ((uint64_t)i < samples % procs);
        sample_set *set = make_samples(100000 + i, n, (unsigned)i);
        char err[600];
        if (!set || samples_add_to_lapse(set, files[i], -1, err, sizeof err)) {
            fprintf(stderr, "view_scale: %s\n", set ? err : "out of memory");
            return 1;
        }
        sample_set_free(set);
    }
    char page[PATH_MAX + 16], cmd[3 * PATH_MAX];
    snprintf(page, sizeof page, "%s/view.html", dir);
    snprintf(cmd, sizeof cmd, "'%s' view '%s' -o '%s'", lapse, rundir, page);
    t = now_s();
    int rc = system(cmd);
    double t_view = now_s() - t;
    struct stat st;
    if (rc || stat(page, &st)) {
        fprintf(stderr, "view_scale: `%s` failed\n", cmd);
        return 1;
    }
    printf("view_scale: %u processes x %llu spans, %llu samples (run written in %.1f s)\n", procs,
           (unsigned long long)spans, (unsigned long long)samples, t_run);
    printf("  lapse view: %.2f s, page %.1f MB (target <= 30 MB: %s)\n", t_view,
           (double)st.st_size / 1e6, st.st_size <= 30000000 ? "met" : "MISSED");
    if (keep)
        printf("  kept: %s (the page: %s)\n", dir, page);
    else
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
