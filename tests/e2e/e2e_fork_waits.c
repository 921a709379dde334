/* End-to-end test program: does a forked child wait for anything before fork()
 * returns in it?
 *
 * usage: e2e_fork_waits RUN_DIR|- [FORKS]
 * Starts 4 threads that spin in spans, then (RUN_DIR given) a session there, and
 * forks FORKS times (default 50). Each child reads its own thread's voluntary context
 * switches (getrusage RUSAGE_THREAD: it blocked, waiting for something) as soon as
 * fork() returns in it, and exits. Prints "forks <n> blocked <k>": the children
 * whose fork blocked them. Without lapse none does; lapse's fork handler must not
 * wait for the child's own threads to run either (they get a CPU only when the
 * scheduler gives them one: milliseconds, with busy threads).
 */
#include "lapse.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int stop;
static int running; /* busy threads that have started */

static void *busy(void *arg)
{
    (void)arg;
    __atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
    volatile unsigned long sink = 0;
    while (!stop) {
        LAPSE_SCOPE("busy");
        for (int i = 0; i < 1000; i++)
            sink += (unsigned long)i;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s RUN_DIR|- [FORKS]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 50;
    long *switches = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                          -1, 0);
    if (switches == MAP_FAILED) {
        perror("e2e_fork_waits: mmap");
        return 1;
    }
    pthread_t tids[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&tids[i], NULL, busy, NULL);
    /* forked while a thread starts, a sanitizer build's child can inherit a lock
     * of its allocator held, and hang at exit in LeakSanitizer */
    while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < 4)
        sched_yield();
    if (strcmp(argv[1], "-") != 0) {
        lapse_options opts;
        lapse_options_init(&opts);
        opts.run_dir = argv[1];
        opts.role = "forker";
        if (lapse_start(&opts) != 0) {
            fprintf(stderr, "e2e_fork_waits: lapse_start: %s\n", lapse_last_error());
            return 1;
        }
    }
    int blocked = 0;
    for (int i = 0; i < n; i++) {
        *switches = -1;
        pid_t pid = fork();
        if (pid < 0) {
            perror("e2e_fork_waits: fork");
            return 1;
        }
        if (pid == 0) {
            struct rusage ru;
            *switches = getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : -2;
            exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "e2e_fork_waits: child %ld failed (status %d)\n", (long)pid, status);
            return 1;
        }
        if (*switches < 0) {
            fprintf(stderr, "e2e_fork_waits: child %ld could not read its rusage\n", (long)pid);
            return 1;
        }
        blocked += *switches > 0;
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(tids[i], NULL);
    printf("forks %d blocked %d\n", n, blocked);
    return 0;
}
