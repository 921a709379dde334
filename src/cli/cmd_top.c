/* lapse top PID: a live table of a Python process's functions by self and total
 * share, refreshed in place, from the external sampler. */
#include "commands.h"

#include "args.h"
#include "sampler_args.h"

#include "analyze/sample_stats.h"
#include "pyread/pyread.h"
#include "pyread/sampler.h"
#include "store/sample_set.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *USAGE_LINE =
    "usage: lapse top [-r HZ] [-i SECONDS] [-n ROWS] [-d SECONDS] [--mode wall|cpu|gil] [--idle]\n"
    "                 (PID | -p PID)\n";

static void usage(FILE *out)
{
    fprintf(out, "%s", USAGE_LINE);
    fprintf(out,
            "\n"
            "Samples process PID from outside, as `lapse record` does, and shows its Python\n"
            "functions in a table like top's, refreshed every interval: on a terminal in\n"
            "place, otherwise one table after another.\n"
            "\n"
            "  %%SELF   share of the last interval's samples with the function innermost\n"
            "  %%TOTAL  share of the last interval's samples with the function anywhere\n"
            "          on the stack (a recursive function counts once per sample)\n"
            "  SELF, TOTAL  the time those samples stand for since top started\n"
            "The denominator is every sample kept in the interval (all threads; see --mode).\n"
            "\n"
            "options:\n"
            "  -r, --rate HZ        passes per second (default 100)\n"
            "  -i, --interval SEC   refresh every SEC seconds (default 1)\n"
            "  -n, --rows N         functions shown (default 20)\n"
            "  -d, --duration SEC   stop after SEC seconds (default: until Ctrl-C or the\n"
            "                       process exits)\n"
            "  --mode, --idle       as for `lapse record`\n"
            "  -p, --pid PID        the process (or PID alone)\n"
            "  -h, --help           this help\n"
            "\n"
            "Bold headers only on a terminal and never with NO_COLOR set.\n"
            "Exit status: 0, 1 when the process cannot be read (one line says why), 2 for\n"
            "bad usage.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    return cli_bad_usage("top", fmt, arg);
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct top_state {
    int tty, bold;
    int rows_shown;
    double interval_s;
    pid_t pid;
    const char *version;
    int refreshes;
    ss_interval iv; /* the functions, interval by interval (analyze) */
} top_state;

static void fmt_time(char *out, size_t len, uint64_t ns)
{
    double s = (double)ns / 1e9;
    if (s < 1)
        snprintf(out, len, "%.0fms", s * 1e3);
    else if (s < 600)
        snprintf(out, len, "%.2fs", s);
    else {
        uint64_t m = (uint64_t)(s / 60);
        snprintf(out, len, "%llum%02.0fs", (unsigned long long)m, s - 60 * (double)m);
    }
}

static int refresh(void *ctx, sample_set *set)
{
    top_state *st = ctx;
    const store_samples *s = sample_set_view(set);
    if (ss_interval_update(&st->iv, s))
        return 0; /* out of memory: the next refresh tries again */
    const char *b0 = st->bold ? "\033[1m" : "", *b1 = st->bold ? "\033[0m" : "";
    if (st->tty)
        fputs("\033[H\033[2J", stdout);
    st->refreshes++;
    printf("%slapse top%s  pid %d  Python %s  mode %s  %.1f Hz asked  samples %llu (%llu late passes, "
           "%llu read errors)\n",
           b0, b1, (int)st->pid, st->version, s->mode ? s->mode : "wall", s->rate_asked_hz,
           (unsigned long long)sample_set_total_count(set), (unsigned long long)s->late_samples,
           (unsigned long long)s->read_errors);
    printf("shares of the last %.1fs of samples (%.2fs sampled); SELF and TOTAL since the start\n\n",
           st->interval_s, (double)st->iv.kept_delta_ns / 1e9);
    printf("%s %%SELF  %%TOTAL      SELF     TOTAL  FUNCTION (FILE)%s\n", b0, b1);
    int shown = 0;
    for (uint32_t i = 0; i < st->iv.count && shown < st->rows_shown; i++) {
        const ss_interval_row *r = &st->iv.rows[i];
        if (!r->self_delta_ns && !r->total_delta_ns)
            break; /* the interval's functions come first */
        char t1[32], t2[32];
        fmt_time(t1, sizeof t1, r->self_ns);
        fmt_time(t2, sizeof t2, r->total_ns);
        printf("%6.1f%% %6.1f%% %9s %9s  %s (%s)\n", 100.0 * r->self_share, 100.0 * r->total_share,
               t1, t2, s->strings[r->function], s->strings[r->file]);
        shown++;
    }
    if (shown == 0)
        printf("  (no samples kept in this interval%s)\n",
               s->idle ? "" : ": every thread was idle; --idle keeps waiting threads");
    if (!st->tty)
        printf("\n");
    fflush(stdout);
    return 0;
}

static const struct option options[] = {
    CLI_SAMPLER_OPTIONS,
    {"interval", required_argument, NULL, 'i'},
    {"rows", required_argument, NULL, 'n'},
    {"pid", required_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_top(int argc, char **argv)
{
    sampler_opts o;
    memset(&o, 0, sizeof o);
    o.rate_hz = 100;
    o.start_timeout_s = 2;
    double interval = 1, rows = 20;
    long pid = 0;
    cli_parser p;
    cli_parser_init(&p, "top", options, 0, argc, argv);
    for (int c; (c = cli_next(&p)) != -1;) {
        int done = cli_sampler_option(&p, c, &o);
        if (done == 2)
            return 2;
        if (done)
            continue;
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case 'i':
            if (cli_parse_double(p.arg, 0.05, 3600, &interval))
                return cli_bad_value(&p, "seconds between 0.05 and 3600");
            break;
        case 'n':
            if (cli_parse_double(p.arg, 1, 10000, &rows))
                return cli_bad_value(&p, "a number of rows from 1 to 10000");
            break;
        case 'p':
            if (pid)
                return bad_usage("one PID only (got also '%s')", p.arg);
            if (cli_parse_pid(p.arg, &pid))
                return cli_bad_value(&p, "a process id");
            break;
        default:
            return 2;
        }
    }
    for (int i = p.operands; i < argc; i++) {
        if (pid)
            return bad_usage("one PID only (got also '%s')", argv[i]);
        if (cli_parse_pid(argv[i], &pid))
            return bad_usage("PID must be a positive number (got '%s')", argv[i]);
    }
    if (!pid)
        return bad_usage("%s", "no PID given");

    /* check now, to fail with one line before the screen is taken */
    char msg[600];
    pyread_target *probe = NULL;
    if (pyread_open((pid_t)pid, &probe, msg, sizeof msg) != PYREAD_OK) {
        fprintf(stderr, "lapse top: %s\n", msg);
        return 1;
    }
    char version[32];
    snprintf(version, sizeof version, "%s", pyread_version(probe));
    pyread_close(probe);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    top_state st;
    memset(&st, 0, sizeof st);
    st.tty = isatty(STDOUT_FILENO);
    const char *nc = getenv("NO_COLOR");
    st.bold = st.tty && !(nc && *nc);
    st.rows_shown = (int)rows;
    st.interval_s = interval;
    st.pid = (pid_t)pid;
    st.version = version;
    o.root = (pid_t)pid;
    o.stop = &stop_flag;
    o.tick = refresh;
    o.tick_ctx = &st;
    o.tick_s = interval;

    sample_set *set = sample_set_new();
    if (!set) {
        fprintf(stderr, "lapse top: out of memory\n");
        return 1;
    }
    sampler_result r;
    int rc = sampler_run(&o, set, &r, msg, sizeof msg);
    if (rc != 0)
        fprintf(stderr, "lapse top: %s\n", msg);
    else if (r.ended_by == 1)
        fprintf(stderr, "lapse top: process %ld exited\n", pid);
    sample_set_free(set);
    ss_interval_free(&st.iv);
    return rc ? 1 : 0;
}
