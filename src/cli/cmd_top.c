/* lapse top PID: a live table of a Python process's functions by self and total
 * share, refreshed in place, from the external sampler. */
#include "commands.h"

#include "args.h"

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
    "usage: lapse top [-r HZ] [-i SECONDS] [-n ROWS] [-d SECONDS] [--mode wall|cpu|gil] [--idle] PID\n";

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
            "  -h, --help           this help\n"
            "\n"
            "Bold headers only on a terminal and never with NO_COLOR set.\n"
            "Exit status: 0, 1 when the process cannot be read (one line says why), 2 for\n"
            "bad usage.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    return cli_bad_usage("top", USAGE_LINE, fmt, arg);
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* One function: (name, file) string ids and its figures. */
typedef struct fn_row {
    uint32_t function, file;
    uint64_t self_ns, total_ns;           /* since start */
    uint64_t prev_self_ns, prev_total_ns; /* at the previous refresh */
    uint64_t self_delta, total_delta;     /* over the last interval */
} fn_row;

typedef struct top_state {
    fn_row *rows;
    size_t count, cap;
    int tty, bold;
    int rows_shown;
    double interval_s;
    pid_t pid;
    const char *version;
    int refreshes;
    uint64_t prev_kept_ns; /* all samples' weight at the previous refresh */
    uint32_t *seen;        /* per stack: row indexes already counted (recursion) */
} top_state;

static fn_row *row_for(top_state *st, uint32_t function, uint32_t file)
{
    for (size_t i = 0; i < st->count; i++)
        if (st->rows[i].function == function && st->rows[i].file == file)
            return &st->rows[i];
    if (st->count == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 256;
        fn_row *r = realloc(st->rows, cap * sizeof *r);
        if (!r)
            return NULL;
        st->rows = r;
        st->cap = cap;
    }
    fn_row *r = &st->rows[st->count++];
    memset(r, 0, sizeof *r);
    r->function = function;
    r->file = file;
    return r;
}

static int by_self_delta(const void *a, const void *b)
{
    const fn_row *x = a, *y = b;
    if (x->self_delta != y->self_delta)
        return x->self_delta < y->self_delta ? 1 : -1;
    if (x->total_delta != y->total_delta)
        return x->total_delta < y->total_delta ? 1 : -1;
    return x->self_ns < y->self_ns ? 1 : x->self_ns > y->self_ns ? -1 : 0;
}

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
    for (size_t i = 0; i < st->count; i++)
        st->rows[i].self_ns = st->rows[i].total_ns = 0;
    uint64_t kept = 0;
    for (uint32_t k = 0; k < s->stack_count; k++) {
        const store_sample_stack *sk = &s->stacks[k];
        kept += sk->weight_ns;
        if (sk->depth == 0)
            continue;
        size_t marks = 0;
        uint32_t local[512];
        for (uint32_t d = 0; d < sk->depth && d < 512; d++) {
            const store_sample_frame *f = &s->frames[s->frame_ids[sk->first + d]];
            fn_row *r = row_for(st, f->function, f->file);
            if (!r)
                return 0;
            uint32_t idx = (uint32_t)(r - st->rows);
            int again = 0;
            for (size_t m = 0; m < marks; m++)
                if (local[m] == idx)
                    again = 1;
            if (!again) {
                local[marks++] = idx;
                r->total_ns += sk->weight_ns;
            }
            if (d + 1 == sk->depth)
                r->self_ns += sk->weight_ns;
        }
    }
    uint64_t kept_delta = kept - st->prev_kept_ns;
    st->prev_kept_ns = kept;
    for (size_t i = 0; i < st->count; i++) {
        fn_row *r = &st->rows[i];
        r->self_delta = r->self_ns - r->prev_self_ns;
        r->total_delta = r->total_ns - r->prev_total_ns;
        r->prev_self_ns = r->self_ns;
        r->prev_total_ns = r->total_ns;
    }
    /* sorting moves rows: keep the copy sorted for display only */
    fn_row *view = malloc((st->count ? st->count : 1) * sizeof *view);
    if (!view)
        return 0;
    if (st->count) { /* no rows yet: rows is NULL, which memcpy may not take */
        memcpy(view, st->rows, st->count * sizeof *view);
        qsort(view, st->count, sizeof *view, by_self_delta);
    }

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
           st->interval_s, (double)kept_delta / 1e9);
    printf("%s %%SELF  %%TOTAL      SELF     TOTAL  FUNCTION (FILE)%s\n", b0, b1);
    int shown = 0;
    for (size_t i = 0; i < st->count && shown < st->rows_shown; i++) {
        const fn_row *r = &view[i];
        if (r->self_ns == 0 && r->total_delta == 0)
            continue;
        char t1[32], t2[32];
        fmt_time(t1, sizeof t1, r->self_ns);
        fmt_time(t2, sizeof t2, r->total_ns);
        double ps = kept_delta ? 100.0 * (double)r->self_delta / (double)kept_delta : 0;
        double pt = kept_delta ? 100.0 * (double)r->total_delta / (double)kept_delta : 0;
        printf("%6.1f%% %6.1f%% %9s %9s  %s (%s)\n", ps, pt, t1, t2, s->strings[r->function],
               s->strings[r->file]);
        shown++;
    }
    if (shown == 0)
        printf("  (no samples kept in this interval%s)\n",
               s->idle ? "" : ": every thread was idle; --idle keeps waiting threads");
    if (!st->tty)
        printf("\n");
    fflush(stdout);
    free(view);
    return 0;
}

int cmd_top(int argc, char **argv)
{
    sampler_opts o;
    memset(&o, 0, sizeof o);
    o.rate_hz = 100;
    o.start_timeout_s = 2;
    double interval = 1, rows = 20;
    long pid = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-r") || !strcmp(a, "--rate")) {
            if (!v || cli_parse_double(v, 0.1, 100000, &o.rate_hz) != 0)
                return bad_usage("%s needs a rate in Hz between 0.1 and 100000", a);
            i++;
        } else if (!strcmp(a, "-i") || !strcmp(a, "--interval")) {
            if (!v || cli_parse_double(v, 0.05, 3600, &interval) != 0)
                return bad_usage("%s needs seconds between 0.05 and 3600", a);
            i++;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--rows")) {
            if (!v || cli_parse_double(v, 1, 10000, &rows) != 0)
                return bad_usage("%s needs a number of rows", a);
            i++;
        } else if (!strcmp(a, "-d") || !strcmp(a, "--duration")) {
            if (!v || cli_parse_double(v, 0.001, 1e7, &o.duration_s) != 0)
                return bad_usage("%s needs a positive number of seconds", a);
            i++;
        } else if (!strcmp(a, "--mode")) {
            if ((o.mode = sampler_mode_parse(v)) < 0)
                return bad_usage("--mode needs wall, cpu or gil (got '%s')", v ? v : "");
            i++;
        } else if (!strcmp(a, "--idle")) {
            o.idle = 1;
        } else if (!strcmp(a, "--pid") || !strcmp(a, "-p")) {
            continue; /* the PID follows as the positional argument */
        } else if (a[0] == '-') {
            return bad_usage("unknown option '%s'", a);
        } else if (pid) {
            return bad_usage("one PID only (got also '%s')", a);
        } else {
            char *end;
            pid = strtol(a, &end, 10);
            if (*end || pid <= 0 || pid > 0x7fffffff)
                return bad_usage("PID must be a positive number (got '%s')", a);
        }
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
    free(st.rows);
    return rc ? 1 : 0;
}
