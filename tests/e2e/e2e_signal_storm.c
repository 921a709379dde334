/* End-to-end test program: a program with its own handlers for the signals lapse
 * handles, counting each delivery, so that a signal storm can be compared with and
 * without lapse.
 *
 * usage: e2e_signal_storm RUN_DIR|- [SIGNALS]
 * Installs a counting handler (without SA_RESTART) for each of SIGNALS (a comma list
 * of TERM, INT, USR1, HUP; default all four; the others keep their default action),
 * then (RUN_DIR given) starts a session there: lapse's handler chains to the
 * program's. Prints "ready <pid> <lapse file>", reads stdin until EOF, then prints
 * "TERM <n> INT <n> USR1 <n> HUP <n> EINTR <n>": how many times each of the
 * program's handlers ran, and how many times its read returned EINTR.
 */
#include "lapse.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int sigs[4] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP};
static const char *const names[4] = {"TERM", "INT", "USR1", "HUP"};
static volatile sig_atomic_t counts[4];

static void on_signal(int sig)
{
    for (int i = 0; i < 4; i++)
        if (sigs[i] == sig)
            counts[i]++;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s RUN_DIR|- [SIGNALS]\n", argv[0]);
        return 2;
    }
    const char *list = argc > 2 ? argv[2] : "TERM,INT,USR1,HUP";
    for (int i = 0; i < 4; i++) {
        char item[8];
        int listed = 0;
        for (const char *p = list; *p;) {
            size_t n = strcspn(p, ",");
            snprintf(item, sizeof item, "%.*s", (int)n, p);
            listed |= strcmp(item, names[i]) == 0;
            p += n + (p[n] == ',');
        }
        if (!listed)
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
    printf("TERM %d INT %d USR1 %d HUP %d EINTR %d\n", (int)counts[0], (int)counts[1],
           (int)counts[2], (int)counts[3], eintr);
    return 0;
}
