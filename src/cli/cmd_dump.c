/* lapse dump PID: every thread's Python stack now, read from outside. */
#include "commands.h"

#include "args.h"
#include "pyread/pyread.h"
#include "render/json_out.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_line[] = "usage: lapse dump [--json] PID\n";

static void usage(FILE *out)
{
    fputs(usage_line, out);
    fprintf(out,
            "\n"
            "Prints the Python stack of every thread of process PID now, innermost frame\n"
            "first, with each thread's Python and OS thread ids, its name (Python's\n"
            "threading name where the target has one; the OS name beside it when that\n"
            "differs from the process's own), whether it holds the GIL and whether it is\n"
            "running on a CPU or waiting. The process is read from outside with\n"
            "process_vm_readv and never stopped, so a stack that was changing while it\n"
            "was read is read again (up to 3 times) and marked \"torn\" if it never read\n"
            "cleanly. CPython 3.11, 3.12 and 3.13 are read.\n"
            "\n"
            "options:\n"
            "  --json      one JSON document on standard output\n"
            "  -h, --help  this help\n"
            "\n"
            "Reading another process needs the right to ptrace it: the same user with\n"
            "kernel.yama.ptrace_scope=0, or root / CAP_SYS_PTRACE.\n"
            "Exit status: 0, 1 when the process is gone, not Python, of a version lapse\n"
            "does not read, or not readable (one line on stderr says which), 2 for bad usage.\n");
}

static const char *state_word(const pyread_thread *th)
{
    if (th->os_state == 'R')
        return "running";
    if (th->os_state == 0)
        return "unknown";
    return "waiting";
}

/* The OS name is worth showing beside the Python name when it is not just the
 * process's own name (which every thread of CPython 3.11-3.13 inherits). */
static int os_name_differs(const pyread_thread *th, const char *comm)
{
    return th->os_name[0] && strcmp(th->os_name, th->name) != 0 && strcmp(th->os_name, comm) != 0;
}

static void print_text(const pyread_target *t, const pyread_sample *s, const char *cmdline, const char *comm)
{
    printf("Process %d: %s\nPython %s\n", (int)pyread_pid(t), cmdline, pyread_version(t));
    for (int i = 0; i < s->thread_count; i++) {
        const pyread_thread *th = &s->threads[i];
        char os_name[48] = "";
        if (os_name_differs(th, comm))
            snprintf(os_name, sizeof os_name, " (OS name \"%s\")", th->os_name);
        printf("\nThread %lld (0x%llx) \"%s\"%s%s: %s%s%s\n", (long long)th->native_id,
               (unsigned long long)th->thread_id, th->name, os_name, th->interp_id ? " (subinterpreter)" : "",
               state_word(th), th->holds_gil ? ", holds the GIL" : "",
               th->torn ? " [torn read: stack cut]" : th->truncated ? " [truncated]" : "");
        if (th->depth == 0)
            printf("    (no Python frame)\n");
        for (int k = 0; k < th->depth; k++) {
            const pyread_frame *f = &th->frames[k];
            if (f->line >= 0)
                printf("    %s (%s:%d)\n", f->code->qualname, f->code->filename, f->line);
            else
                printf("    %s (%s)\n", f->code->qualname, f->code->filename);
        }
    }
}

static void print_json(const pyread_target *t, const pyread_sample *s, const char *cmdline)
{
    json_out j;
    json_init(&j, stdout);
    json_begin_object(&j, NULL);
    json_i64(&j, "pid", pyread_pid(t));
    json_str(&j, "command", cmdline);
    json_str(&j, "python_version", pyread_version(t));
    json_begin_array(&j, "threads");
    for (int i = 0; i < s->thread_count; i++) {
        const pyread_thread *th = &s->threads[i];
        char st[2] = {th->os_state, 0};
        json_begin_object(&j, NULL);
        json_u64(&j, "thread_id", th->thread_id);
        json_i64(&j, "native_id", th->native_id);
        json_str(&j, "name", th->name);
        json_str(&j, "os_name", th->os_name);
        json_i64(&j, "interpreter", th->interp_id);
        json_str(&j, "state", state_word(th));
        json_str(&j, "os_state", th->os_state ? st : NULL);
        json_bool(&j, "holds_gil", th->holds_gil);
        json_bool(&j, "truncated", th->truncated);
        json_bool(&j, "torn", th->torn);
        json_begin_array(&j, "frames");
        for (int k = 0; k < th->depth; k++) {
            json_begin_object(&j, NULL);
            json_str(&j, "function", th->frames[k].code->qualname);
            json_str(&j, "file", th->frames[k].code->filename);
            if (th->frames[k].line >= 0)
                json_i64(&j, "line", th->frames[k].line);
            else
                json_null(&j, "line");
            json_end_object(&j);
        }
        json_end_array(&j);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

enum { OPT_JSON = 256 };

static const struct option options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_dump(int argc, char **argv)
{
    int as_json = 0;
    cli_parser p;
    cli_parser_init(&p, "dump", options, 0, argc, argv);
    for (int c; (c = cli_next(&p)) != -1;) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_JSON:
            as_json = 1;
            break;
        default:
            return 2;
        }
    }
    long pid = 0;
    if (p.operands == argc)
        return cli_bad_usage("dump", "%s", "no PID given");
    if (argc - p.operands > 1)
        return cli_bad_usage("dump", "one PID only (got also '%s')", argv[p.operands + 1]);
    if (cli_parse_pid(argv[p.operands], &pid))
        return cli_bad_usage("dump", "PID must be a positive number (got '%s')", argv[p.operands]);
    char msg[512];
    pyread_target *t = NULL;
    if (pyread_open((pid_t)pid, &t, msg, sizeof msg) != PYREAD_OK) {
        fprintf(stderr, "lapse dump: %s\n", msg);
        return 1;
    }
    pyread_sample *s = malloc(sizeof *s);
    if (!s) {
        pyread_close(t);
        fprintf(stderr, "lapse dump: out of memory\n");
        return 1;
    }
    int rc = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        rc = pyread_sample_now(t, s, PYREAD_WANT_OS_STATE | PYREAD_WANT_NAMES);
        if (rc != 0 || s->read_errors == 0)
            break;
    }
    if (rc == PYREAD_GONE) {
        fprintf(stderr, "lapse dump: process %ld exited while it was read\n", pid);
    } else if (rc != 0) {
        fprintf(stderr, "lapse dump: process %ld: its Python threads could not be read\n", pid);
    } else {
        char cmdline[1024], comm[64];
        pyread_proc_text((pid_t)pid, "cmdline", cmdline, sizeof cmdline, 1);
        pyread_proc_text((pid_t)pid, "comm", comm, sizeof comm, 0);
        if (as_json)
            print_json(t, s, cmdline);
        else
            print_text(t, s, cmdline, comm);
    }
    free(s);
    pyread_close(t);
    return rc ? 1 : 0;
}
