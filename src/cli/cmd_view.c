/* lapse view PATH [-o OUT.html] [--no-compress]; lapse view A B [--by-path] ... (a diff) */
#include "commands.h"

#include "args.h"
#include "store/file_write.h"
#include "analyze/diff.h"
#include "tools/view_diff.h"
#include "tools/view_run.h"

#include <stdio.h>
#include <string.h>

static const char usage_line[] =
    "usage: lapse view PATH [-o OUT.html] [--no-compress]\n"
    "       lapse view A B [--by-path] [-o OUT.html] [--no-compress]\n";

static void help(FILE *out)
{
    fputs(usage_line, out);
    fputs(
        "\n"
        "Writes one HTML page that shows a run: open it in a browser, from the disk,\n"
        "offline. Nothing is fetched; the data, the script and the styles are in the file.\n"
        "\n"
        "PATH is one .lapse file, a run directory (<run_dir>/<run_id>/) or a directory of\n"
        "runs (its newest attempt, as `lapse report` takes it).\n"
        "\n"
        "The page has three tabs:\n"
        "  Summary   the report as `lapse report` has it, from the same model (the JSON of\n"
        "            `lapse report --json` is in the page): usage, roles, phases with\n"
        "            p50/p99 and wait%, counters, I/O, memory, ranks, CAVEATS. Estimates\n"
        "            are marked ~, what was not measured is -. Click a column to sort.\n"
        "  Timeline  one lane per host, process and thread on one clock (the files'\n"
        "            clock anchors), spans as nested bars; what is narrower than a pixel\n"
        "            is drawn merged. Wheel: zoom around the pointer; drag: pan; type in\n"
        "            the search box to highlight spans; click a span for its path's\n"
        "            figures. Where a process's timeline was full (max_spans) a red mark\n"
        "            says how many spans were dropped there. With signals and waits\n"
        "            (lapse_signal, lapse.wait_on) an arrow joins each signal to the end\n"
        "            of the wait it ended, and the critical path is drawn in red. Python\n"
        "            samples are a merged flame chart under their thread (x: time\n"
        "            sampled, not when it ran).\n"
        "  Flame     an icicle of the Python stack samples (lapse record, lapse run),\n"
        "            filterable by process and thread; click a frame to zoom into it.\n"
        "\n"
        "With two runs A and B the page is their diff, one tab:\n"
        "  Diff      per path the two sides side by side (calls, mean, p50, p99, total,\n"
        "            wait%) with their ratios B/A and the diff's stated test (the KS\n"
        "            statistic D against its threshold, CHANGED or not, few calls, tail\n"
        "            moved): exactly the figures of `lapse diff A B --json`, which the\n"
        "            page holds. Each side's CAVEATS follow.\n"
        "\n"
        "options:\n"
        "  -o, --output OUT  the page (default lapse-view.html; \"-\" for standard output);\n"
        "                    replaced atomically, mode 0600 (0640 with LAPSE_SHARE=1)\n"
        "  --by-path         (two runs) key rows by path alone, merging the roles of each\n"
        "                    side, as `lapse diff --by-path`\n"
        "  --no-compress     keep the data as plain JSON (larger); by default they are\n"
        "                    deflated when lapse was built with zlib, and the page inflates\n"
        "                    them with the browser's DecompressionStream\n"
        "  -h, --help        this text\n"
        "\n"
        "Exit status: 0 page written (files that cannot be read are named on stderr and in\n"
        "the page's CAVEATS); 1 no readable file, or the page cannot be written (one line\n"
        "says why, and no page is left); 2 wrong usage.\n"
        "\n"
        "examples:\n"
        "  lapse view runs/ -o run.html && xdg-open run.html\n"
        "  lapse view prof.lapse -o - > prof.html\n"
        "  lapse view runs/before runs/after -o diff.html\n",
        out);
}

static void note_to_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "lapse view: %s\n", line);
}

enum { OPT_NO_COMPRESS = 256, OPT_BY_PATH };

static const struct option options[] = {
    {"output", required_argument, NULL, 'o'},
    {"no-compress", no_argument, NULL, OPT_NO_COMPRESS},
    {"by-path", no_argument, NULL, OPT_BY_PATH},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_view(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL}, *out_path = "lapse-view.html";
    int compress = 1, npaths = 0;
    unsigned diff_flags = 0;
    cli_parser p;
    cli_parser_init(&p, "view", options, 0, argc, argv);
    for (int c; (c = cli_next(&p)) != -1;) {
        switch (c) {
        case 'h':
            help(stdout);
            return 0;
        case 'o':
            if (!*p.arg)
                return cli_bad_value(&p, "a file name (\"-\" for standard output)");
            out_path = p.arg;
            break;
        case OPT_NO_COMPRESS:
            compress = 0;
            break;
        case OPT_BY_PATH:
            diff_flags |= DIFF_BY_PATH;
            break;
        default:
            return 2;
        }
    }
    for (int i = p.operands; i < argc; i++) {
        if (npaths == 2)
            return cli_bad_usage("view", "one PATH, or two runs A B to compare ('%s' is a third)",
                                 argv[i]);
        paths[npaths++] = argv[i];
    }
    if (!npaths)
        return cli_bad_usage("view", "missing PATH%s", "");
    if (npaths == 1 && diff_flags)
        return cli_bad_usage("view", "--by-path keys a diff's rows: give two runs A B%s", "");

    view_run_result r;
    if (npaths == 2)
        view_diff_write(paths[0], paths[1], diff_flags, out_path, store_share_from_env(),
                        compress, &r);
    else
        view_run_write(paths[0], out_path, store_share_from_env(), compress, &r, note_to_stderr,
                       NULL);
    if (r.rc) {
        fprintf(stderr, "lapse view: %s\n", r.err);
        return 1;
    }
    if (npaths == 2) {
        if (strcmp(out_path, "-"))
            fprintf(stderr, "lapse view: wrote %s (%.1f MB%s): the diff of %s and %s, %zu rows,"
                            " %zu changed\n", out_path, (double)r.bytes / 1e6,
                    r.compressed ? ", data deflated" : "", paths[0], paths[1], r.diff_rows,
                    r.diff_changed);
        return 0;
    }
    if (strcmp(out_path, "-"))
        fprintf(stderr, "lapse view: wrote %s (%.1f MB%s): %zu process%s, %llu spans%s\n",
                out_path, (double)r.bytes / 1e6, r.compressed ? ", data deflated" : "",
                r.processes, r.processes == 1 ? "" : "es", (unsigned long long)r.spans,
                r.sample_stacks ? ", Python samples" : "");
    if (r.dropped)
        fprintf(stderr, "lapse view: note: %llu spans were dropped by full timelines (max_spans);"
                        " the page marks where\n", (unsigned long long)r.dropped);
    return 0;
}
