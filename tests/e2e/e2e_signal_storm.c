/* End-to-end test program: a program with its own handlers for the signals lapse
 * handles, counting each delivery, so that a signal storm can be compared with and
 * without lapse.
 *
 * usage: e2e_signal_storm RUN_DIR|- [SIGNALS [echo]]
 * Installs a counting handler (without SA_RESTART) for each of SIGNALS (a comma list
 * of TERM, INT, USR1, HUP; default all four; the others keep their default action),
 * then (RUN_DIR given) starts a session there: lapse's handler chains to the
 * program's. Then, over whatever handles each of SIGNALS now (lapse's handler, or
 * without lapse the program's), it installs an outer handler with the same flags and
 * mask that counts the deliveries and times the handler under it: with lapse, the
 * deliveries lapse's handler got and the time it took, chaining to the program's
 * handler included. With "echo", the program's handler writes one byte to stdout
 * (the test times kill() to that byte). Prints "ready <pid> <lapse file>", reads
 * stdin until EOF, then prints "TERM <n> INT <n> USR1 <n> HUP <n> EINTR <n>
 * DELIVERED <n> HANDLER_NS <n>": how many times each of the program's handlers ran,
 * how many times its read returned EINTR, how many signals the outer handler got,
 * and the time spent in the handler under it.
 */
#include "lapse.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int sigs[4] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP};
static const char *const names[4] = {"TERM", "INT", "USR1", "HUP"};
static volatile sig_atomic_t counts[4];
static volatile sig_atomic_t delivered;
static volatile long long handler_ns;
static struct sigaction under[4]; /* what the outer handler calls */
static int echo;

static void on_signal(int sig)
{
    for (int i = 0; i < 4; i++)
        if (sigs[i] == sig)
            counts[i]++;
    if (echo) {
        int saved = errno;
        ssize_t n = write(1, "!", 1);
        (void)n;
        errno = saved;
    }
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void outer(int sig, siginfo_t *info, void *ucontext)
{
    delivered++;
    for (int i = 0; i < 4; i++) {
        if (sigs[i] != sig)
            continue;
        long long t0 = mono_ns();
        if (under[i].sa_flags & SA_SIGINFO)
            under[i].sa_sigaction(sig, info, ucontext);
        else
            under[i].sa_handler(sig);
        handler_ns += mono_ns() - t0;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s RUN_DIR|- [SIGNALS [echo]]\n", argv[0]);
        return 2;
    }
    const char *list = argc > 2 ? argv[2] : "TERM,INT,USR1,HUP";
    echo = argc > 3 && strcmp(argv[3], "echo") == 0;
    int listed[4] = {0};
    for (int i = 0; i < 4; i++) {
        char item[8];
        for (const char *p = list; *p;) {
            size_t n = strcspn(p, ",");
            snprintf(item, sizeof item, "%.*s", (int)n, p);
            listed[i] |= strcmp(item, names[i]) == 0;
            p += n + (p[n] == ',');
        }
        if (!listed[i])
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    if (strcmp(argv[1], "-") != 0) {
        lapse_options opts;
        lapse_options_init(&opts);
        opts.run_dir = argv[1];
        opts.role = "storm";
        if (lapse_start(&opts) != 0) {
            fprintf(stderr, "e2e_signal_storm: lapse_start: %s\n", lapse_last_error());
            return 1;
        }
    }
    for (int i = 0; i < 4; i++) {
        if (!listed[i])
            continue;
        struct sigaction sa;
        sigaction(sigs[i], NULL, &under[i]);
        sa = under[i]; /* its flags (SA_RESTART or not) and mask */
        sa.sa_flags |= SA_SIGINFO;
        sa.sa_sigaction = outer;
        sigaction(sigs[i], &sa, NULL);
    }
    printf("ready %ld %s\n", (long)getpid(), lapse_file_path() ? lapse_file_path() : "-");
    fflush(stdout);
    char buf[64];
    int eintr = 0;
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            eintr++;
            continue;
        }
        if (n <= 0)
            break;
    }
    printf("TERM %d INT %d USR1 %d HUP %d EINTR %d DELIVERED %d HANDLER_NS %lld\n",
           (int)counts[0], (int)counts[1], (int)counts[2], (int)counts[3], eintr,
           (int)delivered, (long long)handler_ns);
    return 0;
}
