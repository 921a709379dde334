/* lapse diff A B [--json] [--by-path] [--top N] */
#include "commands.h"

#include "args.h"

#include "analyze/diff.h"
#include "analyze/run_model.h"
#include "render/diff_render.h"
#include "tools/host_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_line[] = "usage: lapse diff A B [--json] [--by-path] [--top N]\n";

static void help(FILE *out)
{
    fputs(usage_line, out);
    fputs(
        "\n"
        "Compares two runs path by path and says which differences are real.\n"
        "\n"
        "A and B are each a .lapse file, a run directory or a directory of runs (its\n"
        "newest attempt), as for `lapse report`. Every role of each side is loaded;\n"
        "rows are keyed by \"role:path\" (path = span names joined with \"/\").\n"
        "\n"
        "options:\n"
        "  --json      the same content as one JSON document (schema \"lapse.diff\",\n"
        "              version 1; docs/report.md documents every field)\n"
        "  --by-path   key rows by path alone, merging the roles of each side (for two\n"
        "              runs whose processes were given different roles)\n"
        "  --top N     rows shown in the text (default 30); --json has every row\n"
        "  -h, --help  this text\n"
        "\n"
        "Each row shows calls, mean and p50 per call on each side and their ratio B/A,\n"
        "and the change in total time. Paths on one side only come first, then the\n"
        "rest by the size of the change in total time.\n"
        "\n"
        "A row is CHANGED only when a two-sample Kolmogorov-Smirnov test on the two\n"
        "binned histograms rejects \"same distribution\" at alpha = 0.01\n"
        "(D = max |CDF_A - CDF_B| > 1.628 * sqrt((n+m)/(n*m)), n and m the calls) AND\n"
        "its p50 moved by at least 5%. Flags: \"few calls\" (< 30 calls on a side) and\n"
        "\"tail moved\" (|p99 ratio - p50 ratio| > 0.25).\n"
        "\n"
        "Exit status: 0 diff written; 1 a side could not be read (one line says why,\n"
        "or a side has no readable file: the CAVEATS say which); 2 wrong usage.\n"
        "\n"
        "examples:\n"
        "  lapse diff runs/before runs/after\n"
        "  lapse diff base.lapse new.lapse --json | jq '.rows[] | select(.changed)'\n",
        out);
}

static int bad_usage(const char *fmt, const char *arg)
{
    return cli_bad_usage("diff", fmt, arg);
}

enum { OPT_JSON = 256, OPT_BY_PATH, OPT_TOP };

static const struct option options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"by-path", no_argument, NULL, OPT_BY_PATH},
    {"top", required_argument, NULL, OPT_TOP},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int json = 0, npaths = 0;
    unsigned flags = 0;
    diff_options o = {30};
    cli_parser p;
    cli_parser_init(&p, "diff", options, 0, argc, argv);
    for (int c; (c = cli_next(&p)) != -1;) {
        switch (c) {
        case 'h':
            help(stdout);
            return 0;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_BY_PATH:
            flags |= DIFF_BY_PATH;
            break;
        case OPT_TOP:
            if (cli_parse_count(p.arg, 100000000, &o.top))
                return cli_bad_value(&p, "a whole number from 1 to 100000000");
            break;
        default:
            return 2;
        }
    }
    for (int i = p.operands; i < argc; i++) {
        if (npaths == 2)
            return bad_usage("two paths only ('%s' is a third one)", argv[i]);
        paths[npaths++] = argv[i];
    }
    if (npaths < 2)
        return bad_usage(npaths ? "missing B%s" : "missing A and B%s", "");

    run_model m[2];
    char err[1024];
    host_view_here here;
    host_view_fill(&here);
    rm_options opt = {.host = &here.view};
    for (int s = 0; s < 2; s++)
        if (run_model_load(paths[s], &opt, &m[s], err, sizeof err)) {
            fprintf(stderr, "lapse diff: %s\n", err);
            if (s)
                run_model_free(&m[0]);
            return 1;
        }
    diff_result d;
    int status = 0;
    if (diff_runs(&m[0], &m[1], flags, &d)) {
        fprintf(stderr, "lapse diff: out of memory\n");
        status = 1;
    } else {
        int rc = json ? diff_write_json(stdout, &m[0], &m[1], &d, &o)
                      : diff_write_text(stdout, &m[0], &m[1], &d, &o);
        if (rc == -ENOMEM) {
            fprintf(stderr, "lapse diff: out of memory writing the diff\n");
            status = 1;
        } else if (rc) {
            fprintf(stderr, "lapse diff: cannot write the diff: %s\n", strerror(-rc));
            status = 1;
        } else if (!m[0].worker_count || !m[1].worker_count) {
            status = 1;
        }
        diff_result_free(&d);
    }
    run_model_free(&m[0]);
    run_model_free(&m[1]);
    return status;
}
