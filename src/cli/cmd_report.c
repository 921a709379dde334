/* lapse report PATH [--json] [--top N] */
#include "commands.h"

#include "args.h"

#include "analyze/run_model.h"
#include "analyze/run_stats.h"
#include "render/report_render.h"
#include "tools/host_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_line[] = "usage: lapse report PATH [--json] [--top N] [--ascii]\n";

static void help(FILE *out)
{
    fputs(usage_line, out);
    fputs(
        "\n"
        "What a run spent its time on, per role, and what is missing from it.\n"
        "\n"
        "PATH is one .lapse file, a run directory (<run_dir>/<run_id>/, holding\n"
        "<host>/*.lapse, one file per process), or a directory of runs: then the newest\n"
        "attempt is reported, joined with the attempts that ran at the same time\n"
        "(processes started separately into one run directory), and those that ended\n"
        "before it began are named as superseded.\n"
        "\n"
        "options:\n"
        "  --json     the same content as one JSON document (schema \"lapse.report\",\n"
        "             version 1; docs/report.md documents every field)\n"
        "  --top N    rows of DOMINANT PHASES and top-level shares per role (default 10)\n"
        "  --ascii    the I/O sparkline in ASCII (also with LAPSE_ASCII=1, TERM=dumb, or a\n"
        "             locale that is not UTF-8)\n"
        "  -h, --help this text\n"
        "\n"
        "The report, block by block:\n"
        "  header            run id, runtime (latest write - earliest start), processes,\n"
        "                    roles with their process counts, hosts\n"
        "  ROLE (n processes, imbalance X)\n"
        "                    one block per role; processes of a role are merged by path\n"
        "                    (names joined with \"/\"). imbalance = max / mean of the\n"
        "                    processes' busy time (sum of their top-level spans)\n"
        "  share of ROLE busy time\n"
        "                    each top-level span's total as a share of the role's busy\n"
        "                    time, the denominator named on the line\n"
        "  DOMINANT PHASES   paths by self time (total minus child spans), with calls,\n"
        "                    the processes that ran them, and p50/p99 wall time per call;\n"
        "                    counters follow their path: + name, total, per second of the\n"
        "                    path's time, time per unit\n"
        "  MOST-CALLED LOOP  the shallowest path called more than once (most calls at that\n"
        "                    depth): mean, p50, p95, p99 per call\n"
        "  I/O BY PHASE      bytes of io=True phases, measured at their entry and exit\n"
        "  I/O               the process sampler (every 1 s by default): a sparkline of\n"
        "                    bytes moved over the run, read/written split disk vs page\n"
        "                    cache, and the share moved while no phase was open\n"
        "  MEMORY            peak RSS (getrusage; the process sampler) and RSS growth of\n"
        "                    io=True phases, measured at their entry and exit\n"
        "  PYTHON SAMPLES    files with Python stack samples (lapse record): mode, rate asked\n"
        "                    and achieved, late samples, read errors; functions by self and\n"
        "                    total share per process and thread, and inside each span\n"
        "                    (estimates: samples and the time they stand for)\n"
        "  CAVEATS           what is missing: unreadable files, workers that stopped\n"
        "                    writing early or never wrote a final file, superseded\n"
        "                    attempts, dropped timeline spans, folded spans, unmatched\n"
        "                    ends, dropped counter updates, unreadable I/O intervals.\n"
        "                    \"CAVEATS none\" when complete.\n"
        "\n"
        "Durations: ns, us, ms, s, \"27m 5s\", \"2h 31m\". Quantiles come from merged\n"
        "log-linear histograms (error below 1/8 of the value).\n"
        "\n"
        "Exit status: 0 report written; 1 nothing readable (one line says why, or the\n"
        "report shows only CAVEATS), or out of memory (one line, and no report: it is\n"
        "built whole before a line of it is written); 2 wrong usage.\n"
        "\n"
        "examples:\n"
        "  LAPSE_PROFILE=1 LAPSE_RUN_DIR=runs LAPSE_ROLE=worker ./train\n"
        "  lapse report runs/                 # newest run under runs/\n"
        "  lapse report runs/20260813T2241-471c94 --top 20\n"
        "  lapse report runs/ --json | jq '.roles[] | {role, imbalance}'\n",
        out);
}

static int bad_usage(const char *fmt, const char *arg)
{
    return cli_bad_usage("report", fmt, arg);
}

enum { OPT_JSON = 256, OPT_TOP, OPT_ASCII };

static const struct option options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"top", required_argument, NULL, OPT_TOP},
    {"ascii", no_argument, NULL, OPT_ASCII},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_report(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, ascii = 0;
    report_options ro = {0};
    report_inputs in = {10, 0};
    cli_parser p;
    cli_parser_init(&p, "report", options, 0, argc, argv);
    for (int c; (c = cli_next(&p)) != -1;) {
        switch (c) {
        case 'h':
            help(stdout);
            return 0;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_ASCII:
            ascii = 1;
            break;
        case OPT_TOP:
            if (cli_parse_count(p.arg, 1000000, &in.top))
                return cli_bad_value(&p, "a whole number from 1 to 1000000");
            break;
        default:
            return 2;
        }
    }
    for (int i = p.operands; i < argc; i++) {
        if (path)
            return bad_usage("one PATH only ('%s' is a second one)", argv[i]);
        path = argv[i];
    }
    if (!path)
        return bad_usage("missing PATH%s", "");

    run_model m;
    char err[1024];
    host_view_here here;
    host_view_fill(&here);
    rm_options opt = {.host = &here.view};
    if (run_model_load(path, &opt, &m, err, sizeof err)) {
        fprintf(stderr, "lapse report: %s\n", err);
        return 1;
    }
    report_model r;
    in.run_paths = json;
    if (report_model_build(&m, &in, &r)) {
        fprintf(stderr, "lapse report: out of memory building the report of %s\n", path);
        run_model_free(&m);
        return 1;
    }
    ro.ascii = ascii || report_wants_ascii();
    int rc = json ? report_write_json(stdout, &r, &ro) : report_write_text(stdout, &r, &ro);
    int status = 0;
    if (rc == -ENOMEM) {
        /* what was written stays cut short: no CAVEATS, no end of the JSON document */
        fprintf(stderr, "lapse report: out of memory writing the report\n");
        status = 1;
    } else if (rc) {
        fprintf(stderr, "lapse report: cannot write the report: %s\n", strerror(-rc));
        status = 1;
    } else if (m.worker_count == 0) {
        status = 1; /* every file unreadable: the CAVEATS say which and why */
    }
    report_model_free(&r);
    run_model_free(&m);
    return status;
}
