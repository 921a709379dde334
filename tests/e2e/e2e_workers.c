/* End-to-end test program: a driver that forks workers, each running a fixed
 * number of iterations of nested spans. Profiling comes from the environment
 * (LAPSE_PROFILE=1 ...); the test kills some workers with signals mid-run.
 *
 * usage: e2e_workers STATE_DIR ITERATIONS [SLEEP_US [WORKERS [RELEASE_FILE]]]
 *
 * Worker i writes, atomically (write a temporary file, rename it):
 *   STATE_DIR/w<i>.info      "<pid> <lapse file path or ->\n" once it has its role
 *   STATE_DIR/w<i>.progress  "<iterations completed>\n" after each iteration, written
 *                            only once all the spans of that iteration have ended
 * Each iteration is SPANS_PER_ITERATION spans:
 *   iteration > work > inner (x2, each counting items += 3)
 *   iteration > sync (a sleep of SLEEP_US), and iteration counts ticks += 1.
 * With RELEASE_FILE, a worker that has done all its iterations waits (outside any
 * span) until that file exists before it exits, so the test decides when the run
 * ends. The driver (spans "spawn" and "wait") reaps every worker and prints one line
 * per worker: "worker <i> pid <pid> exit <code>" or "... signal <sig>".
 */
#include "lapse.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPANS_PER_ITERATION 5
#define MAX_WORKERS 16

static const char *state_dir;

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Writes text to STATE_DIR/name atomically; exits the worker on failure. */
static void write_state(int worker, const char *what, const char *text)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/w%d.%s", state_dir, worker, what);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "e2e_workers: cannot write %s: %s\n", path, strerror(errno));
        _exit(3);
    }
}

static volatile uint64_t sink;

static void inner_work(int iteration)
{
    LAPSE_SCOPE("inner");
    uint64_t x = (uint64_t)iteration + 1;
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink ^= x;
    lapse_count("items", 3);
}

static void wait_for_release(const char *release_file)
{
    /* bounded: a test that died must not leave workers behind for long */
    for (int i = 0; i < 60 * 200 && access(release_file, F_OK) != 0; i++)
        sleep_us(5000);
}

static void run_worker(int index, int iterations, long sleep_us_per_iteration,
                       const char *release_file)
{
    lapse_set_role("worker");
    char text[4200];
    const char *file = lapse_file_path();
    snprintf(text, sizeof text, "%ld %s\n", (long)getpid(), file ? file : "-");
    write_state(index, "info", text);
    for (int it = 0; it < iterations; it++) {
        {
            LAPSE_SCOPE("iteration");
            {
                LAPSE_SCOPE("work");
                inner_work(it);
                inner_work(it);
            }
            {
                LAPSE_SCOPE("sync");
                sleep_us(sleep_us_per_iteration);
            }
            lapse_count("ticks", 1);
        }
        /* every span of iteration `it` has ended: only now report it */
        snprintf(text, sizeof text, "%d\n", it + 1);
        write_state(index, "progress", text);
    }
    if (release_file)
        wait_for_release(release_file);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s STATE_DIR ITERATIONS [SLEEP_US [WORKERS [RELEASE_FILE]]]\n",
                argv[0]);
        return 2;
    }
    state_dir = argv[1];
    int iterations = atoi(argv[2]);
    long sleep_per = argc > 3 ? atol(argv[3]) : 5000;
    int workers = argc > 4 ? atoi(argv[4]) : 4;
    const char *release_file = argc > 5 ? argv[5] : NULL;
    if (iterations < 0 || sleep_per < 0 || workers < 1 || workers > MAX_WORKERS) {
        fprintf(stderr, "e2e_workers: bad arguments\n");
        return 2;
    }

    pid_t pids[MAX_WORKERS];
    int started = 0;
    {
        LAPSE_SCOPE("spawn");
        fflush(NULL);
        for (int i = 0; i < workers; i++) {
            pid_t pid = fork();
            if (pid < 0) {
                perror("e2e_workers: fork");
                break;
            }
            if (pid == 0) {
                run_worker(i, iterations, sleep_per, release_file);
                exit(0); /* lapse writes the final file at exit */
            }
            pids[started++] = pid;
        }
    }

    int rc = started == workers ? 0 : 1;
    {
        LAPSE_SCOPE("wait");
        for (int i = 0; i < started; i++) {
            int status = 0;
            while (waitpid(pids[i], &status, 0) < 0) {
                if (errno != EINTR) {
                    perror("e2e_workers: waitpid");
                    return 1;
                }
            }
            if (WIFEXITED(status))
                printf("worker %d pid %ld exit %d\n", i, (long)pids[i], WEXITSTATUS(status));
            else if (WIFSIGNALED(status))
                printf("worker %d pid %ld signal %d\n", i, (long)pids[i], WTERMSIG(status));
            else
                printf("worker %d pid %ld status %d\n", i, (long)pids[i], status);
        }
    }
    fflush(stdout);
    return rc;
}
