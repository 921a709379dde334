/* lapse export: a run's timelines as Chrome trace JSON for Perfetto. */
#include "commands.h"

#include "tools/export_run.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lapse export PATH --perfetto OUT.json\n"
            "\n"
            "Writes the timelines of a run as Chrome trace JSON, which ui.perfetto.dev and\n"
            "chrome://tracing open. PATH is a .lapse file, a run directory\n"
            "(<run>/<host>/*.lapse) or a directory of runs (its newest attempt is used).\n"
            "\n"
            "The trace has one process per .lapse file, named \"role pid@host\" and ordered\n"
            "by rank when the rank is known, one thread per recorded thread, one slice per\n"
            "timeline span (args.depth: 1 for a top-level span), and the process sampler's\n"
            "counter tracks \"lapse: I/O bytes/s\" (read, written) and \"lapse: RSS bytes\n"
            "(max)\". Every file is placed on one clock through its CLOCK_REALTIME anchor,\n"
            "so processes and hosts line up; the trace starts at the earliest span or\n"
            "sampler record of the run.\n"
            "\n"
            "The timeline holds at most max_spans spans per process (LAPSE_MAX_SPANS,\n"
            "default 100000); a process that recorded more is marked with an instant event\n"
            "and a label saying how many spans are missing, and named on stderr. The\n"
            "aggregate numbers of `lapse report` count every span.\n"
            "\n"
            "options:\n"
            "  --perfetto OUT   write the trace to OUT (\"-\" for standard output)\n"
            "  -h, --help       this help\n"
            "\n"
            "Exit status: 0 when at least one file was exported (files that cannot be read\n"
            "are named on stderr and left out), 1 when none was, 2 for bad usage.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "lapse export: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    return 2;
}

static void note_to_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "lapse export: %s\n", line);
}

int cmd_export(int argc, char **argv)
{
    const char *path = NULL, *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--perfetto")) {
            if (i + 1 >= argc)
                return usage_error("%s needs a file name", a);
            out_path = argv[++i];
        } else if (!strncmp(a, "--perfetto=", 11)) {
            out_path = a + 11;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (path) {
            return usage_error("one PATH only (got also '%s')", a);
        } else {
            path = a;
        }
    }
    if (!path)
        return usage_error("%s", "no PATH given");
    if (!out_path || !*out_path)
        return usage_error("%s", "no output given (--perfetto OUT.json)");

    export_run_result r;
    export_run_perfetto(path, out_path, &r, note_to_stderr, NULL);
    if (r.rc) {
        fprintf(stderr, "lapse export: %s\n", r.err);
        return 1;
    }
    fprintf(stderr, "lapse export: %s: %zu process%s, %llu threads, %llu slices\n",
            strcmp(out_path, "-") ? out_path : "<stdout>", r.processes,
            r.processes == 1 ? "" : "es", (unsigned long long)r.threads,
            (unsigned long long)r.slices);
    return 0;
}
