/* lapse export: a run's timelines as Chrome trace JSON for Perfetto, or with its
 * Python samples in the Firefox Profiler's format; its Python stack samples as
 * collapsed stacks, speedscope JSON, a flame graph SVG or pstats. */
#include "commands.h"

#include "args.h"
#include "render/hdf5_regions.h"
#include "tools/export_hdf5.h"
#include "tools/export_samples.h"
#include "store/file_write.h"
#include "tools/export_run.h"

#include <errno.h>

#include <stdio.h>
#include <string.h>

static const char usage_line[] =
    "usage: lapse export PATH --perfetto OUT.json\n"
    "       lapse export PATH --gecko OUT.json\n"
    "       lapse export PATH --hdf5 OUT.h5\n"
    "       lapse export PATH (--flamegraph OUT.svg | --speedscope OUT.json |\n"
    "                          --collapsed OUT.txt | --pstats OUT.prof)\n";

static void usage(FILE *out)
{
    fputs(usage_line, out);
    fprintf(out,
            "\n"
            "Writes the timelines of a run as Chrome trace JSON, which ui.perfetto.dev and\n"
            "chrome://tracing open. PATH is a .lapse file, a run directory\n"
            "(<run>/<host>/*.lapse) or a directory of runs (its newest attempt is used).\n"
            "\n"
            "The trace has one process per .lapse file, named \"role pid@host\" and ordered\n"
            "by rank when the rank is known, one thread per recorded thread, one slice per\n"
            "timeline span (a parent before its children when they start together), and\n"
            "the process sampler's counter tracks \"lapse: I/O bytes/s\" (read, written)\n"
            "and \"lapse: RSS bytes (max)\". Every file is placed on one clock through its\n"
            "CLOCK_REALTIME anchor, so processes and hosts line up; the trace starts at the\n"
            "earliest span, sampler record or Python sample of the run. OUT ending in .gz\n"
            "is written gzip-compressed (Perfetto opens it as it is).\n"
            "\n"
            "Python stack samples (lapse record, lapse run) go on a track of their own per\n"
            "sampled thread, \"...: Python samples, merged\": the stacks are aggregated, so\n"
            "they are laid side by side from the recording's start, each as wide as the\n"
            "time it stands for, with common frames merged (a flame chart whose x axis is\n"
            "time sampled, not when it ran).\n"
            "\n"
            "The timeline holds at most max_spans spans per process (LAPSE_MAX_SPANS,\n"
            "default 100000); a process that recorded more is marked with an instant event\n"
            "and a label saying how many spans are missing, and named on stderr. The\n"
            "aggregate numbers of `lapse report` count every span.\n"
            "\n"
            "--gecko writes the run for the Firefox Profiler (profiler.firefox.com: \"Load a\n"
            "profile from file\"), in its processed format (version 47, which it upgrades):\n"
            "per thread with spans a thread of interval markers, one per timeline span,\n"
            "named by its path; per sampled Python thread a thread of samples, one per\n"
            "distinct stack weighted by the samples that saw it, for its call tree and\n"
            "flame graph (the stacks are aggregated: every sample sits at the recording's\n"
            "start, so the samples' track over time means nothing). Times are ms from the\n"
            "run's earliest instant (meta.startTime). Plain JSON only (no .gz).\n"
            "\n"
            "--hdf5 writes the timeline spans in scope_profiler's HDF5 layout (its reader,\n"
            "scope_profiler.read_h5, opens it): /rank<r>/regions/<name>/start_times and\n"
            "end_times, int64 ns from the run's first session start, one group per\n"
            "process (its rank, or the numbers after the largest rank for processes\n"
            "without one), and /metadata (docs/cli.md, \"lapse export --hdf5\").\n"
            "%s"
            "\n"
            "--flamegraph, --speedscope, --collapsed and --pstats write the Python stack\n"
            "samples the run's files hold (lapse record, or lapse run with the PYTHON\n"
            "feature), merged: an interactive flame graph (click to zoom, search),\n"
            "speedscope's JSON (one profile per thread; www.speedscope.app), flamegraph.pl's\n"
            "input, or a pstats file (python -m pstats, snakeviz) whose call counts are\n"
            "samples, not calls, and whose times are the time the samples stand for.\n"
            "\n"
            "OUT is replaced atomically (a temporary of its own, then a rename; never\n"
            "written through a link), with mode 0600 (0640 with LAPSE_SHARE=1).\n"
            "\n"
            "options:\n"
            "  --perfetto OUT   write the trace to OUT (\"-\" for standard output)\n"
            "  --gecko OUT      write the Firefox Profiler's profile to OUT (\"-\": stdout)\n"
            "  --hdf5 OUT       write the spans to OUT in scope_profiler's layout (\"-\": stdout)\n"
            "  --flamegraph OUT, --speedscope OUT, --collapsed OUT, --pstats OUT\n"
            "                   write the run's Python samples to OUT (\"-\": standard output)\n"
            "  -h, --help       this help\n"
            "\n"
            "Exit status: 0 when at least one file was exported (files that cannot be read\n"
            "are named on stderr and left out), 1 when none was, 2 for bad usage (and for\n"
            "--hdf5 in a lapse built without HDF5).\n",
            hdf5_available() ? "" : "This lapse was built without HDF5: --hdf5 is refused.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    return cli_bad_usage("export", fmt, arg);
}

static void note_to_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "lapse export: %s\n", line);
}

static int export_samples(const char *path, const char *format, const char *out_path)
{
    if (!*out_path)
        return usage_error("%s", "an empty output file name");
    int to_stdout = !strcmp(out_path, "-");
    char err[600] = "";
    store_out o;
    FILE *out = stdout;
    if (!to_stdout) {
        if (store_out_open(&o, out_path, store_share_from_env(), err, sizeof err) != 0) {
            fprintf(stderr, "lapse export: %s\n", err);
            return 1;
        }
        if (!(out = store_out_stream(&o))) {
            fprintf(stderr, "lapse export: cannot write %s: out of memory\n", out_path);
            store_out_abort(&o);
            return 1;
        }
    }
    int rc = samples_export(path, format, path, out, err, sizeof err);
    if (!to_stdout) {
        if (rc)
            store_out_abort(&o);
        else
            rc = store_out_commit(&o, err, sizeof err);
    }
    if (rc) {
        fprintf(stderr, "lapse export: %s\n", err);
        return 1;
    }
    if (!to_stdout)
        fprintf(stderr, "lapse export: wrote %s (%s)\n", out_path, format);
    return 0;
}

static int export_hdf5(const char *path, const char *out_path)
{
    if (!*out_path)
        return usage_error("%s", "an empty output file name");
    export_hdf5_result r;
    export_run_hdf5(path, out_path, store_share_from_env(), &r, note_to_stderr, NULL);
    if (r.no_hdf5) {
        fprintf(stderr, "lapse export: --hdf5: %s\n", r.err);
        return 2;
    }
    if (r.rc) {
        fprintf(stderr, "lapse export: %s\n", r.err);
        return 1;
    }
    fprintf(stderr, "lapse export: %s: %zu rank group%s, %llu regions, %llu calls (HDF5)\n",
            strcmp(out_path, "-") ? out_path : "<stdout>", r.ranks, r.ranks == 1 ? "" : "s",
            (unsigned long long)r.regions, (unsigned long long)r.calls);
    if (!r.calls)
        fprintf(stderr, "lapse export: note: %s holds no timeline span: the rank groups have no "
                        "regions\n", path);
    return 0;
}

enum { OPT_PERFETTO = 256, OPT_FLAMEGRAPH, OPT_SPEEDSCOPE, OPT_COLLAPSED, OPT_PSTATS, OPT_HDF5,
       OPT_GECKO };

static const struct option options[] = {
    {"perfetto", required_argument, NULL, OPT_PERFETTO},
    {"gecko", required_argument, NULL, OPT_GECKO},
    {"flamegraph", required_argument, NULL, OPT_FLAMEGRAPH},
    {"speedscope", required_argument, NULL, OPT_SPEEDSCOPE},
    {"collapsed", required_argument, NULL, OPT_COLLAPSED},
    {"pstats", required_argument, NULL, OPT_PSTATS},
    {"hdf5", required_argument, NULL, OPT_HDF5},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_export(int argc, char **argv)
{
    unsigned outputs = 0;
    const char *path = NULL, *out_path = NULL, *samples_format = NULL, *samples_out = NULL,
               *hdf5_out = NULL;
    int gecko = 0;
    cli_parser p;
    cli_parser_init(&p, "export", options, 0, argc, argv);
    for (int c; (c = cli_next(&p)) != -1;) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_PERFETTO:
        case OPT_GECKO:
            outputs++;
            out_path = p.arg;
            gecko = c == OPT_GECKO;
            break;
        case OPT_HDF5:
            outputs++;
            hdf5_out = p.arg;
            break;
        case OPT_FLAMEGRAPH:
        case OPT_SPEEDSCOPE:
        case OPT_COLLAPSED:
        case OPT_PSTATS:
            outputs++; /* a second one is refused below, never dropped */
            samples_format = p.option->name;
            samples_out = p.arg;
            break;
        default:
            return 2;
        }
    }
    for (int i = p.operands; i < argc; i++) {
        if (path)
            return usage_error("one PATH only (got also '%s')", argv[i]);
        path = argv[i];
    }
    if (!path)
        return usage_error("%s", "no PATH given");
    if (outputs > 1)
        return usage_error("%s", "one output at a time (--perfetto, --gecko, --hdf5 or a samples "
                                 "format)");
    if (hdf5_out)
        return export_hdf5(path, hdf5_out);
    if (samples_format)
        return export_samples(path, samples_format, samples_out);
    if (!out_path || !*out_path)
        return usage_error("%s", "no output given (--perfetto OUT.json, --flamegraph OUT.svg, ...)");

    export_run_result r;
    if (gecko)
        export_run_gecko(path, out_path, store_share_from_env(), &r, note_to_stderr, NULL);
    else
        export_run_perfetto(path, out_path, store_share_from_env(), &r, note_to_stderr, NULL);
    if (r.rc) {
        fprintf(stderr, "lapse export: %s\n", r.err);
        return 1;
    }
    if (gecko) {
        fprintf(stderr, "lapse export: %s: %zu process%s, %llu threads, %llu span markers, "
                        "%llu sample stacks (Firefox Profiler)\n",
                strcmp(out_path, "-") ? out_path : "<stdout>", r.processes,
                r.processes == 1 ? "" : "es", (unsigned long long)r.threads,
                (unsigned long long)r.slices, (unsigned long long)r.sample_slices);
        return 0;
    }
    fprintf(stderr, "lapse export: %s: %zu process%s, %llu threads, %llu slices",
            strcmp(out_path, "-") ? out_path : "<stdout>", r.processes,
            r.processes == 1 ? "" : "es", (unsigned long long)r.threads,
            (unsigned long long)r.slices);
    if (r.sample_slices)
        fprintf(stderr, ", %llu slices of merged Python samples",
                (unsigned long long)r.sample_slices);
    if (r.gpu_slices)
        fprintf(stderr, ", %llu GPU slices on %llu device/stream tracks with %llu launch arrows",
                (unsigned long long)r.gpu_slices, (unsigned long long)r.gpu_tracks,
                (unsigned long long)r.flows);
    fprintf(stderr, "%s\n", export_wants_gzip(out_path) ? " (gzip)" : "");
    if (!r.slices && !r.sample_slices && !r.gpu_slices)
        fprintf(stderr, "lapse export: note: %s holds no timeline span and no Python sample: the "
                        "trace has tracks only\n", path);
    return 0;
}
