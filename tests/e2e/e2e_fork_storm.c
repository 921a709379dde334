/* End-to-end test program: fork right after a session starts, many times.
 *
 * Each round starts a session (lapse_start), forks at once, lets the child exit
 * (lapse writes its final file at exit, joining the child's flush thread), and
 * stops the session. A forked child must never hang, whatever the parent's
 * threads were doing at the fork: the program gives each child 5 s, then kills
 * it, reports the hang and stops.
 *
 * With "nested", each child forks a grandchild at once (before its own threads
 * have run) and waits for it the same way: a fork from a child whose threads are
 * still starting must not hang either.
 *
 * usage: e2e_fork_storm RUN_DIR [ROUNDS] [nested]
 * Prints "rounds <n> hung <h> failed <f>" and exits 0 only when no child hung or
 * failed.
 */
#include "lapse.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Waits up to limit_ms for pid; returns its status, or -1 after killing a hung child. */
static int wait_bounded(pid_t pid, long limit_ms)
{
    for (long waited = 0;; waited += 2) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            return -2;
        if (waited >= limit_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        sleep_ms(2);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s RUN_DIR [ROUNDS]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    int nested = argc > 3 && strcmp(argv[3], "nested") == 0;
    int hung = 0, failed = 0;
    for (int i = 0; i < rounds; i++) {
        lapse_options opts;
        lapse_options_init(&opts);
        opts.run_dir = argv[1];
        opts.role = "storm";
        if (lapse_start(&opts) != 0) {
            fprintf(stderr, "e2e_fork_storm: lapse_start: %s\n", lapse_last_error());
            return 1;
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("e2e_fork_storm: fork");
            return 1;
        }
        if (pid == 0) {
            if (nested) {
                pid_t grandchild = fork();
                if (grandchild == 0)
                    exit(0);
                int status = grandchild < 0 ? -2 : wait_bounded(grandchild, 5000);
                if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                    fprintf(stderr, "e2e_fork_storm: round %d: grandchild %ld %s\n", i,
                            (long)grandchild, status == -1 ? "hung at exit (killed)" : "failed");
                    exit(1);
                }
            }
            {
                LAPSE_SCOPE("child");
                lapse_count("rounds", 1);
            }
            exit(0);
        }
        int status = wait_bounded(pid, 5000);
        if (status == -1) {
            hung++;
            fprintf(stderr, "e2e_fork_storm: round %d: child %ld hung at exit (killed)\n", i,
                    (long)pid);
            lapse_stop();
            rounds = i + 1;
            break;
        } else if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed++;
            fprintf(stderr, "e2e_fork_storm: round %d: child %ld failed (status %d)\n", i,
                    (long)pid, status);
        }
        lapse_stop();
    }
    printf("rounds %d hung %d failed %d\n", rounds, hung, failed);
    return hung || failed ? 1 : 0;
}
