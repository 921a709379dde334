/* lapse export: a run's timelines as Chrome trace JSON for Perfetto. */
#include "commands.h"

#include "render/perfetto.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/run_dir.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
            "by rank when the rank is known, one thread per recorded thread, and one slice\n"
            "per timeline span (args.depth: 1 for a top-level span). Every file is placed\n"
            "on one clock through its CLOCK_REALTIME anchor, so processes and hosts line\n"
            "up; the trace starts at the earliest span of the run.\n"
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

    char err[512] = "";
    store_run_listing run;
    if (store_list_run(path, &run, err, sizeof err) != 0) {
        fprintf(stderr, "lapse export: %s\n", err);
        return 1;
    }
    const store_attempt *a = &run.attempts[run.newest];
    char *readable = calloc(a->file_count ? a->file_count : 1, 1);
    if (!readable) {
        fprintf(stderr, "lapse export: out of memory\n");
        store_run_listing_free(&run);
        return 1;
    }

    /* pass 1: which files read, and the earliest instant of the run */
    uint64_t base = UINT64_MAX;
    size_t good = 0;
    for (size_t i = 0; i < a->file_count; i++) {
        store_file f;
        if (store_read_file(a->files[i], STORE_READ_SKIP_HIST, &f, err, sizeof err) != 0) {
            fprintf(stderr, "lapse export: %s: %s (left out)\n", a->files[i], err);
            continue;
        }
        uint64_t first;
        if (perfetto_first_ns(&f, &first) == 0 && first < base)
            base = first;
        readable[i] = 1;
        good++;
        store_file_free(&f);
    }
    if (!good) {
        fprintf(stderr, "lapse export: %s: no readable .lapse file, nothing written\n", path);
        free(readable);
        store_run_listing_free(&run);
        return 1;
    }
    if (base == UINT64_MAX)
        base = 0;

    /* pass 2: stream the trace, one file at a time */
    int to_stdout = !strcmp(out_path, "-");
    char tmp_path[4096] = "";
    FILE *out = stdout;
    if (!to_stdout) {
        if (snprintf(tmp_path, sizeof tmp_path, "%s.tmp.%ld", out_path, (long)getpid()) >=
            (int)sizeof tmp_path) {
            fprintf(stderr, "lapse export: %s: path too long\n", out_path);
            free(readable);
            store_run_listing_free(&run);
            return 1;
        }
        out = fopen(tmp_path, "w");
        if (!out) {
            fprintf(stderr, "lapse export: cannot create %s: %s\n", out_path, strerror(errno));
            free(readable);
            store_run_listing_free(&run);
            return 1;
        }
    }
    perfetto_writer *w = perfetto_open(out);
    int rc = w ? 0 : -ENOMEM;
    size_t exported = 0;
    uint64_t threads = 0, slices = 0;
    for (size_t i = 0; i < a->file_count && rc == 0; i++) {
        if (!readable[i])
            continue;
        store_file f;
        if (store_read_file(a->files[i], STORE_READ_SKIP_HIST, &f, err, sizeof err) != 0) {
            /* it changed since pass 1 (a live run rewrites its files) */
            fprintf(stderr, "lapse export: %s: %s (left out)\n", a->files[i], err);
            continue;
        }
        perfetto_file_stats st;
        rc = perfetto_add_file(w, &f, base, &st);
        if (rc == 0) {
            exported++;
            threads += st.threads;
            slices += st.slices;
            if (st.dropped)
                fprintf(stderr,
                        "lapse export: %s: timeline full, %llu spans not recorded "
                        "(max_spans %llu); the trace misses them\n",
                        a->files[i], (unsigned long long)st.dropped,
                        (unsigned long long)f.meta.max_spans);
        }
        store_file_free(&f);
    }
    if (w) {
        int frc = perfetto_finish(w);
        if (rc == 0)
            rc = frc;
    }
    if (!to_stdout && fclose(out) != 0 && rc == 0)
        rc = -EIO;

    int status = 0;
    if (rc) {
        fprintf(stderr, "lapse export: %s: %s\n", out_path,
                rc == -ENOMEM ? "out of memory" : "write failed (disk full?)");
        status = 1;
    } else if (!exported) {
        fprintf(stderr, "lapse export: %s: no readable .lapse file, nothing written\n", path);
        status = 1;
    }
    if (!to_stdout) {
        if (status == 0 && rename(tmp_path, out_path) != 0) {
            fprintf(stderr, "lapse export: cannot write %s: %s\n", out_path, strerror(errno));
            status = 1;
        }
        if (status)
            unlink(tmp_path);
    }
    if (status == 0)
        fprintf(stderr, "lapse export: %s: %zu process%s, %llu threads, %llu slices\n",
                to_stdout ? "<stdout>" : out_path, exported, exported == 1 ? "" : "es",
                (unsigned long long)threads, (unsigned long long)slices);
    free(readable);
    store_run_listing_free(&run);
    return status;
}
