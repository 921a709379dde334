/* lapse: the command. Dispatches to one file per subcommand. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"run", cmd_run, "run a Python script or module once under lapse (needs the Python package)"},
    {"lines", cmd_run, "run a Python script once with the time of every line of its project"},
    {"report", cmd_report, "what a run spent its time on, per role (--json for machines)"},
    {"diff", cmd_diff, "compare two runs path by path, with a stated test for each change"},
    {"export", cmd_export, "convert a run for other tools (--perfetto, --flamegraph, --speedscope, --pstats)"},
    {"view", cmd_view, "one self-contained HTML page of a run: summary, timeline, flame"},
    {"record", cmd_record, "sample a Python program's stacks from outside (launch, or --pid)"},
    {"dump", cmd_dump, "print every thread's Python stack of a running process now"},
    {"top", cmd_top, "live table of a Python process's functions by self and total share"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: lapse <command> [options]\n"
            "\n"
            "lapse is a profiler for long, multi-process programs. A program linked with\n"
            "liblapse writes one .lapse file per process under <run_dir>/<run_id>/<host>/;\n"
            "report, diff and export read them. record, dump and top read a running\n"
            "CPython (3.11-3.13) from outside, without stopping it.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Run `lapse <command> --help` for its options. Every option takes its value as\n"
            "--rate=200 or --rate 200, a short one as -r200 or -r 200; a long option may be\n"
            "shortened while it stays unambiguous, and -- ends the options.\n"
            "Record a C, C++ or Fortran (use lapse) program linked with liblapse:\n"
            "                                LAPSE_PROFILE=1 LAPSE_RUN_DIR=runs ./program\n"
            "Record a Python program:        lapse run -o runs train.py\n"
            "Sample a Python program from outside (no code change):\n"
            "                                lapse record -o prof.lapse -- python train.py\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("lapse 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "lapse: unknown command '%s' (see `lapse --help`)\n", argv[1]);
    return 2;
}
