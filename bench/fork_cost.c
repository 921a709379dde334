/* What a fork costs a program with live threads, with lapse and without, measured
 * in the same run.
 *
 *   fork_cost [FORKS] [THREADS]       (default 500 forks, 4 busy threads)
 *
 * THREADS threads spin in spans for the whole run. The main thread forks FORKS
 * times; each child exits at once (with lapse, its session writes the child's own
 * file at exit) and the parent waits for it. The forks alternate in ten chunks
 * between no session and a session (lapse_start/lapse_stop around each chunk), so
 * that both see the same load. The reference for what the child's own file needs:
 * the same forks with children that write their file (lapse_flush, timed in the
 * child) and leave with _exit. See bench/README.md. */
#include "lapse.h"

#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int stop_threads;
static int running; /* busy threads that have started */
static char run_dir[256];

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *busy(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
    volatile uint64_t sink = 0;
    while (!stop_threads) {
        LAPSE_SCOPE("busy");
        for (int i = 0; i < 1000; i++)
            sink += (uint64_t)i;
    }
    return NULL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void start(void)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.role = "bench";
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "fork_cost: lapse_start: %s\n", lapse_last_error());
        exit(1);
    }
}

/* Where a child that writes its file puts the time its write took. */
static uint64_t *child_write_ns;

/* n forks, and the time they took, in ns. Children leave with exit (atexit
 * handlers: lapse's final write) or, write_then_quit, time one write of their
 * file (added to *child_write_ns) and leave with _exit. */
static uint64_t forks(int n, int write_then_quit)
{
    uint64_t t0 = mono_ns();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork_cost: fork");
            exit(1);
        }
        if (pid == 0) {
            if (!write_then_quit)
                exit(0);
            uint64_t w0 = mono_ns();
            int rc = lapse_flush();
            __atomic_add_fetch(child_write_ns, mono_ns() - w0, __ATOMIC_RELAXED);
            _exit(rc == 0 ? 0 : 1);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
            fprintf(stderr, "fork_cost: child %ld failed (status %d)\n", (long)pid, status);
            exit(1);
        }
    }
    return mono_ns() - t0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500;
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    if (n < 10 || threads < 0 || threads > 64) {
        fprintf(stderr, "usage: %s [FORKS >= 10] [THREADS <= 64]\n", argv[0]);
        return 2;
    }
    snprintf(run_dir, sizeof run_dir, "/tmp/lapse-bench-XXXXXX");
    if (!mkdtemp(run_dir)) {
        perror("fork_cost: mkdtemp");
        return 1;
    }
    pthread_t tids[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&tids[i], NULL, busy, NULL);
    while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < threads) /* no fork while one starts */
        sched_yield();

    child_write_ns = mmap(NULL, sizeof *child_write_ns, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (child_write_ns == MAP_FAILED) {
        perror("fork_cost: mmap");
        return 1;
    }
    *child_write_ns = 0;
    int chunk = n / 10, writers = chunk / 5 ? chunk / 5 : 1;
    uint64_t without = 0, with = 0;
    for (int c = 0; c < 10; c++) {
        without += forks(chunk, 0);
        start();
        with += forks(chunk, 0);
        forks(writers, 1);
        lapse_stop();
    }
    stop_threads = 1;
    for (int i = 0; i < threads; i++)
        pthread_join(tids[i], NULL);
    nftw(run_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

    int done = 10 * chunk;
    double per_without = (double)without / done / 1e6, per_with = (double)with / done / 1e6;
    double per_write = (double)*child_write_ns / (10 * writers) / 1e6;
    double extra = per_with - per_without;
    printf("fork_cost: %d forks, %d busy threads, %d CPUs, alternating in chunks of %d\n", done,
           threads, (int)sysconf(_SC_NPROCESSORS_ONLN), chunk);
    printf("  %-40s %8.3f s  %7.3f ms/fork\n", "without lapse", without / 1e9, per_without);
    printf("  %-40s %8.3f s  %7.3f ms/fork\n", "with lapse (the child writes its file)",
           with / 1e9, per_with);
    printf("  %-40s %21.3f ms  (%d children)\n", "one write of a child's file", per_write,
           10 * writers);
    printf("  ratio with/without: %.2f; extra per fork %.3f ms = %.2f writes of the child's file\n",
           per_with / per_without, extra, extra / per_write);
    printf("  target: extra per fork <= 1.5 writes of the child's file: %s\n",
           extra <= 1.5 * per_write ? "ok" : "MISSED");
    return 0;
}
