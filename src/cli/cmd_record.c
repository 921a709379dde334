/* lapse record: sample a Python program's stacks from outside, launched or attached. */
#include "commands.h"

#include "args.h"
#include "sampler_args.h"

#include "pyread/pyread.h"
#include "pyread/sampler.h"
#include "store/sample_set.h"
#include "store/samples_file.h"
#include "render/samples_write.h"
#include "store/file_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *USAGE_LINE =
    "usage: lapse record [-r HZ] [-d SECONDS] [--mode wall|cpu|gil] [--idle] [--subprocesses]\n"
    "                    [-o OUT] [--format lapse|collapsed|speedscope|flamegraph] [--hide-root FILE]\n"
    "                    (--pid PID | -- PROGRAM [ARGS...])\n";

static void usage(FILE *out)
{
    fprintf(out, "%s", USAGE_LINE);
    fprintf(out,
            "\n"
            "Samples the Python stacks of every thread of a CPython 3.11-3.13 process from\n"
            "outside, without changing or stopping it: `-- python script.py args` launches\n"
            "the program and samples it until it exits; --pid attaches to a running one.\n"
            "Each pass reads the target's memory with process_vm_readv; passes follow an\n"
            "absolute schedule (start + k/HZ, with a little jitter) and each sample stands\n"
            "for the time since the previous pass, so shares are shares of time.\n"
            "\n"
            "options:\n"
            "  -r, --rate HZ        passes per second (default 100)\n"
            "  -d, --duration SEC   stop after SEC seconds (default: until the program exits\n"
            "                       or Ctrl-C); a launched program still running then is\n"
            "                       sent SIGTERM, and left running if it has not ended 5 s\n"
            "                       later\n"
            "  --mode wall          every thread, each sample standing for the wall time since\n"
            "                       the previous pass (default); threads that wait at the\n"
            "                       pass (not holding the GIL and not running: sleep, lock,\n"
            "                       I/O) are left out unless --idle\n"
            "  --mode cpu           only threads that used CPU since the previous pass, each\n"
            "                       sample standing for the CPU time it used (schedstat)\n"
            "  --mode gil           only the thread holding the GIL\n"
            "  --idle               keep waiting threads (wall mode)\n"
            "  --subprocesses       also sample the program's descendants that run Python\n"
            "  --hide-root FILE     leave out the frames of FILE (as code objects name it) at\n"
            "                       the root of each stack: what launched the program (lapse\n"
            "                       run passes its own files and runpy's); repeatable, 8 at\n"
            "                       most; a stack of nothing else is kept whole\n"
            "  -p, --pid PID        attach to the running process PID\n"
            "  -o, --output OUT     where to write (\"-\": standard output, not for lapse);\n"
            "                       default lapse-PID.<ext>; mode 0600 (0640 with\n"
            "                       LAPSE_SHARE=1), replaced atomically, never written\n"
            "                       through a link\n"
            "  --format F           lapse (a .lapse file: `lapse report OUT`), collapsed\n"
            "                       (flamegraph.pl input), speedscope (JSON for\n"
            "                       speedscope.app), flamegraph (interactive SVG); default:\n"
            "                       from OUT's extension (.lapse; .txt, .collapsed, .folded;\n"
            "                       .json; .svg: another one is an error), lapse without -o\n"
            "  -h, --help           this help\n"
            "\n"
            "Every output records the rate asked for and achieved, the late passes and the\n"
            "reads that failed or were torn. A pass is late when it starts more than one\n"
            "period after it was due (the machine did not run the sampler in time); the\n"
            "slots it missed are skipped, not made up, and the next sample stands for the\n"
            "longer interval. Progress (on a terminal, once a second) and the summary go\n"
            "to stderr.\n"
            "\n"
            "A target with a lapse session of its own (lapse run, the lapse package, or\n"
            "liblapse with LAPSE_PROFILE=1) publishes its open spans: each sample then\n"
            "carries the span path open on its thread, and when the target exits the\n"
            "samples are also added to its own final .lapse file (one target, one run, one\n"
            "file: `lapse report RUN` shows the functions inside each span), found under\n"
            "its LAPSE_RUN_DIR: only a regular file that, with its directory, belongs to\n"
            "the target's user (no link is followed); otherwise one line says the samples\n"
            "are in OUT only.\n"
            "Attaching needs the right to ptrace the target: the same user with\n"
            "kernel.yama.ptrace_scope=0 (a launched program is a child: scope 1 suffices),\n"
            "or root / CAP_SYS_PTRACE.\n"
            "Exit status: once the output is written, the launched program's, as a shell\n"
            "gives it (128 + N for a program killed by signal N; 0 when -d ended it, and\n"
            "for --pid); 1 when the target could not be read (one line says why) or the\n"
            "output could not be written; 2 for bad usage.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    return cli_bad_usage("record", fmt, arg);
}

static volatile sig_atomic_t stop_flag;

/* Waits for child, `ticks` times 10 ms at most: its pid when it ended (status set). */
static pid_t wait_child(pid_t child, int *status, struct rusage *ru, int ticks)
{
    pid_t w = 0;
    for (int i = 0; i < ticks && (w = wait4(child, status, WNOHANG, ru)) == 0; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return w;
}

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static const char *format_from_name(const char *out)
{
    const char *base = out ? strrchr(out, '/') : NULL;
    const char *dot = out ? strrchr(base ? base : out, '.') : NULL;
    if (!dot)
        return NULL;
    if (!strcmp(dot, ".lapse"))
        return "lapse";
    if (!strcmp(dot, ".txt") || !strcmp(dot, ".collapsed") || !strcmp(dot, ".folded"))
        return "collapsed";
    if (!strcmp(dot, ".json"))
        return "speedscope";
    if (!strcmp(dot, ".svg"))
        return "flamegraph";
    return NULL;
}

/* meta: the target's, for a .lapse file */
static int write_output(const sample_set *set, const char *format, const char *out,
                        const samples_file_meta *meta, char *err, size_t errlen)
{
    unsigned flags = store_share_from_env();
    if (!strcmp(format, "lapse"))
        return samples_save_lapse(set, meta, out, flags, err, errlen);
    int to_stdout = !strcmp(out, "-");
    store_out o;
    FILE *f = stdout;
    if (!to_stdout) {
        int rc = store_out_open(&o, out, flags, err, errlen);
        if (rc)
            return rc;
        if (!(f = store_out_stream(&o))) {
            snprintf(err, errlen, "cannot write %s: out of memory", out);
            store_out_abort(&o);
            return -ENOMEM;
        }
    }
    int rc;
    if (!strcmp(format, "collapsed"))
        rc = samples_write_collapsed(set, f, SAMPLES_COLLAPSED_SPANS);
    else if (!strcmp(format, "speedscope"))
        rc = samples_write_speedscope(set, f, out);
    else
        rc = samples_write_flamegraph(set, f, "lapse record");
    if (to_stdout) {
        if (fflush(stdout) != 0)
            rc = -EIO;
    } else if (rc != 0) {
        store_out_abort(&o);
    } else {
        return store_out_commit(&o, err, errlen);
    }
    if (rc != 0)
        snprintf(err, errlen, "cannot write %s: %s", out, strerror(rc < 0 ? -rc : EIO));
    return rc;
}

/* Where a target with a lapse session writes: LAPSE_RUN_DIR of its environment
 * (default lapse-runs), relative to its working directory. Read at the start: once
 * the target has exited, /proc no longer has it. */
static void target_run_dir(pid_t pid, int launched, char *out, size_t len)
{
    char cwd[PATH_MAX] = "", dir[PATH_MAX] = "", p[64];
    if (launched) {
        if (!getcwd(cwd, sizeof cwd))
            cwd[0] = 0;
        const char *d = getenv("LAPSE_RUN_DIR");
        snprintf(dir, sizeof dir, "%s", d && *d ? d : "lapse-runs");
    } else {
        snprintf(p, sizeof p, "/proc/%d/cwd", (int)pid);
        ssize_t n = readlink(p, cwd, sizeof cwd - 1);
        cwd[n > 0 ? n : 0] = 0;
        snprintf(p, sizeof p, "/proc/%d/environ", (int)pid);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        snprintf(dir, sizeof dir, "lapse-runs");
        if (fd >= 0) {
            static char env[65536];
            ssize_t got = read(fd, env, sizeof env - 1);
            close(fd);
            for (ssize_t i = 0; got > 0 && i < got;) {
                const char *e = env + i;
                size_t l = strnlen(e, (size_t)(got - i));
                if (!strncmp(e, "LAPSE_RUN_DIR=", 14) && e[14])
                    snprintf(dir, sizeof dir, "%s", e + 14);
                i += (ssize_t)l + 1;
            }
        }
    }
    if (dir[0] == '/' || !cwd[0])
        snprintf(out, len, "%s", dir);
    else
        snprintf(out, len, "%s/%s", cwd, dir);
}

/* The effective uid of the target, which its files belong to: ours for a program we
 * launched, else from /proc/PID/status (read at the start, as target_run_dir); -1
 * when unknown. */
static int64_t target_uid(pid_t pid, int launched)
{
    if (launched)
        return (int64_t)geteuid();
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "re");
    long long real, effective;
    int64_t uid = -1;
    while (f && uid < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "Uid: %lld %lld", &real, &effective) == 2)
            uid = effective;
    if (f)
        fclose(f);
    return uid;
}

/* The newest <role>-<pid>-xxxx.lapse under dir (run/host/ levels below it). Links
 * are not followed: the directory is the target's to fill. */
static void find_run_file(const char *dir, pid_t pid, int depth, char *best, size_t len, time_t *best_time)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char needle[32];
    snprintf(needle, sizeof needle, "-%d-", (int)pid);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(st.st_mode) && depth > 0)
            find_run_file(path, pid, depth - 1, best, len, best_time);
        else if (!S_ISDIR(st.st_mode) && n > 6 && !strcmp(e->d_name + n - 6, ".lapse") &&
                 strstr(e->d_name, needle) && st.st_mtime >= *best_time) {
            /* a link or another kind of file is named, and refused, when merging */
            *best_time = st.st_mtime;
            snprintf(best, len, "%s", path);
        }
    }
    closedir(d);
}

/* Progress on a terminal: one status line on stderr, rewritten every second. */
typedef struct progress {
    double started;
    int shown;
    const sampler_opts *opts;
} progress;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int show_progress(void *ctx, sample_set *set)
{
    progress *p = ctx;
    const store_samples *m = sample_set_view(set);
    double el = mono_s() - p->started;
    fprintf(stderr, "\rlapse record: %.0f s, %llu passes (%.1f Hz), %llu late, %llu read errors, %llu samples  ",
            el, (unsigned long long)m->samples, el > 0 ? (double)m->samples / el : 0.0,
            (unsigned long long)m->late_samples, (unsigned long long)m->read_errors,
            (unsigned long long)sample_set_total_count(set));
    p->shown = 1;
    return 0;
}

/* One line once sampling begins: what a caller (the Python package's sampler) can
 * wait for to know the target was read. */
static void say_started(void *ctx, const char *version)
{
    const sampler_opts *o = ((progress *)ctx)->opts;
    fprintf(stderr, "lapse record: sampling process %d%s%s%s at %.1f Hz, mode %s\n", (int)o->root,
            *version ? " (CPython " : "", version, *version ? ")" : "", o->rate_hz, sampler_mode_name(o->mode));
}

enum { OPT_SUBPROCESSES = 256, OPT_HIDE_ROOT, OPT_FORMAT };

static const struct option options[] = {
    CLI_SAMPLER_OPTIONS,
    {"subprocesses", no_argument, NULL, OPT_SUBPROCESSES},
    {"hide-root", required_argument, NULL, OPT_HIDE_ROOT},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"pid", required_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'},
    {0, 0, 0, 0},
};

int cmd_record(int argc, char **argv)
{
    sampler_opts o;
    memset(&o, 0, sizeof o);
    o.rate_hz = 100;
    o.start_timeout_s = 10;
    const char *out = NULL, *format = NULL;
    long pid = 0;
    cli_parser p;
    cli_parser_init(&p, "record", options, 1, argc, argv);
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
        case OPT_SUBPROCESSES:
            o.subprocesses = 1;
            break;
        case OPT_HIDE_ROOT:
            if (!*p.arg || o.hide_root_count == SAMPLER_HIDE_MAX)
                return cli_bad_value(&p, "a file name (at most 8 of them)");
            o.hide_root[o.hide_root_count++] = p.arg;
            break;
        case 'o':
            if (!*p.arg)
                return cli_bad_value(&p, "a file name");
            out = p.arg;
            break;
        case OPT_FORMAT:
            if (strcmp(p.arg, "lapse") && strcmp(p.arg, "collapsed") && strcmp(p.arg, "speedscope") &&
                strcmp(p.arg, "flamegraph"))
                return cli_bad_value(&p, "lapse, collapsed, speedscope or flamegraph");
            format = p.arg;
            break;
        case 'p':
            if (cli_parse_pid(p.arg, &pid))
                return cli_bad_value(&p, "a process id");
            break;
        default:
            return 2;
        }
    }
    int cmd_at = p.operands; /* the program, after "--" or without it */
    int have_cmd = cmd_at > 0 && cmd_at < argc;
    if (have_cmd == (pid > 0))
        return bad_usage("%s", pid > 0 ? "give --pid or a program, not both" : "nothing to record: give --pid PID or -- PROGRAM ARGS");
    if (!format && out && strcmp(out, "-") && !(format = format_from_name(out))) {
        fprintf(stderr, "lapse record: cannot tell the format of '%s' from its extension (.lapse, .txt, "
                        ".collapsed, .folded, .json, .svg): give --format\n", out);
        return 2;
    }
    if (!format)
        format = "lapse";
    if (out && !strcmp(out, "-") && !strcmp(format, "lapse"))
        return bad_usage("%s", "a .lapse file cannot go to standard output: give -o FILE, or another --format");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (have_cmd) {
        pid_t child = fork();
        if (child < 0) {
            fprintf(stderr, "lapse record: cannot start %s: %s\n", argv[cmd_at], strerror(errno));
            return 1;
        }
        if (child == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            execvp(argv[cmd_at], argv + cmd_at);
            fprintf(stderr, "lapse record: cannot run %s: %s\n", argv[cmd_at], strerror(errno));
            _exit(127);
        }
        o.root = o.child = child;
    } else {
        o.root = (pid_t)pid;
    }
    o.stop = &stop_flag;

    sample_set *set = sample_set_new();
    if (!set) {
        fprintf(stderr, "lapse record: out of memory\n");
        return 1;
    }
    char default_out[64];
    if (!out) {
        const char *ext = !strcmp(format, "lapse") ? "lapse" : !strcmp(format, "collapsed") ? "txt"
                          : !strcmp(format, "speedscope") ? "speedscope.json" : "svg";
        snprintf(default_out, sizeof default_out, "lapse-%d.%s", (int)o.root, ext);
        out = default_out;
    }
    char run_dir[PATH_MAX];
    target_run_dir(o.root, have_cmd, run_dir, sizeof run_dir);
    int64_t owner = target_uid(o.root, have_cmd);
    progress prog = {mono_s(), 0, &o};
    o.tick_ctx = &prog;
    o.started = say_started;
    if (isatty(STDERR_FILENO)) {
        o.tick = show_progress;
        o.tick_s = 1;
    }
    /* an attached target's CPU and switches so far: the file's are the recording's,
     * as its wall time is */
    samples_file_meta at_start;
    memset(&at_start, 0, sizeof at_start);
    if (o.child <= 0)
        sampler_usage_of_pid(o.root, &at_start);
    sampler_result r;
    char msg[600];
    int rc = sampler_run(&o, set, &r, msg, sizeof msg);
    if (prog.shown)
        fputc('\n', stderr);
    if (o.child > 0 && r.child_status == -1) {
        int status;
        pid_t w = 0;
        if (rc != 0 && !stop_flag) {
            /* a launched program we could not read: let it finish as it would have */
            if (wait4(o.child, &status, 0, &r.child_usage) == o.child)
                r.child_status = status;
        } else {
            /* Ctrl-C reached the program too: give it 5 s to end on its own; then, or
             * when -d ended first, SIGTERM and 5 s more: no wait is longer than that */
            if (stop_flag)
                w = wait_child(o.child, &status, &r.child_usage, 500);
            if (w != o.child) {
                kill(o.child, SIGTERM);
                w = wait_child(o.child, &status, &r.child_usage, 500);
            }
            if (w == o.child)
                r.child_status = status;
            else
                fprintf(stderr, "lapse record: %s (pid %d) did not end within 5 s of SIGTERM; "
                                "left running\n", argv[cmd_at], (int)o.child);
        }
    }
    if (rc != 0) {
        if (o.child > 0 && r.child_status != -1 && WIFEXITED(r.child_status) &&
            WEXITSTATUS(r.child_status) == 127 && rc == PYREAD_GONE)
            fprintf(stderr, "lapse record: %s could not be started\n", argv[cmd_at]);
        else if (o.child > 0 && r.child_status != -1 && rc != PYREAD_PERMISSION && rc != PYREAD_UNKNOWN_VERSION)
            fprintf(stderr, "lapse record: %s ended (%s %d) before a Python could be read in it\n", argv[cmd_at],
                    WIFEXITED(r.child_status) ? "exit status" : "signal",
                    WIFEXITED(r.child_status) ? WEXITSTATUS(r.child_status) : WTERMSIG(r.child_status));
        else
            fprintf(stderr, "lapse record: %s\n", msg);
        sample_set_free(set);
        return 1;
    }
    /* what the target used, for the header: a launched child's from wait4, a live
     * target's from /proc; unknown when it could not be read */
    samples_file_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.pid = o.root;
    meta.ppid = -1;
    if (o.child > 0 && r.child_status != -1)
        sampler_usage_from_rusage(&r.child_usage, &meta);
    else if (o.child <= 0)
        sampler_usage_since(o.root, &at_start, &meta);
    char err[600] = "";
    if (write_output(set, format, out, &meta, err, sizeof err) != 0) {
        fprintf(stderr, "lapse record: %s\n", err[0] ? err : "cannot write the output");
        sample_set_free(set);
        return 1;
    }
    /* One target, one run, one file: a target with a lapse session of its own wrote
     * its final .lapse file when it exited; the samples join it there too. */
    if (r.ended_by == 1 && r.saw_spans && run_dir[0]) {
        char run_file[PATH_MAX] = "";
        time_t newest = 0;
        find_run_file(run_dir, o.root, 3, run_file, sizeof run_file, &newest);
        if (run_file[0]) {
            char e2[600] = "the target's user is unknown";
            if (owner >= 0 && samples_add_to_lapse(set, run_file, owner, e2, sizeof e2) == 0)
                fprintf(stderr, "lapse record: added the samples to the target's own file %s\n", run_file);
            else
                fprintf(stderr, "lapse record: not adding the samples to %s (%s); they are in %s only\n",
                        run_file, e2, strcmp(out, "-") ? out : "the standard output");
        }
    }
    const store_samples *m = sample_set_view(set);
    double secs = (double)r.duration_ns / 1e9;
    fprintf(stderr,
            "lapse record: wrote %s (%s): %llu passes in %.2f s, %.1f Hz achieved of %.1f asked, "
            "%llu late, %llu read errors (%.2f%% of passes), %llu stacks sampled from %d process%s; sampler CPU "
            "%.1f us per pass\n",
            strcmp(out, "-") ? out : "<stdout>", format, (unsigned long long)r.passes, secs, m->rate_achieved_hz,
            o.rate_hz, (unsigned long long)r.late, (unsigned long long)r.read_errors,
            r.passes ? 100.0 * (double)r.read_errors / (double)r.passes : 0.0,
            (unsigned long long)sample_set_total_count(set), r.processes, r.processes == 1 ? "" : "es",
            r.passes ? (double)r.sampler_cpu_ns / 1e3 / (double)r.passes : 0.0);
    /* the program's status, as a shell gives it; not when lapse stopped it (-d) */
    int status = 0;
    if (o.child > 0 && r.child_status != -1) {
        if (WIFEXITED(r.child_status) && WEXITSTATUS(r.child_status)) {
            status = WEXITSTATUS(r.child_status);
            fprintf(stderr, "lapse record: the program exited with status %d\n", status);
        } else if (WIFSIGNALED(r.child_status) && !(r.ended_by != 1 && WTERMSIG(r.child_status) == SIGTERM)) {
            status = 128 + WTERMSIG(r.child_status);
            fprintf(stderr, "lapse record: the program was killed by signal %d (exit status %d)\n",
                    WTERMSIG(r.child_status), status);
        }
    }
    sample_set_free(set);
    return status;
}
