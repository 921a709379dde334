#include "export_run.h"

#include "render/perfetto.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/file_write.h"
#include "store/run_dir.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(void (*note)(void *, const char *), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(void (*note)(void *, const char *), void *ctx, const char *fmt, ...)
{
    if (!note)
        return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    note(ctx, line);
}

/* Pass 1, per image: the earliest instant, and whether any image of the file reads. */
typedef struct first_pass {
    void (*note)(void *, const char *);
    void *ctx;
    uint64_t base;
    size_t good;
} first_pass;

static int first_image(void *ctx, const char *name, const store_file *f, const char *why)
{
    first_pass *fp = ctx;
    if (!f) {
        say(fp->note, fp->ctx, "%s: %s (left out)", name, why);
        return 0;
    }
    uint64_t first;
    if (perfetto_first_ns(f, &first) == 0 && first < fp->base)
        fp->base = first;
    fp->good++;
    return 0;
}

/* Pass 2, per image: its tracks and slices. */
typedef struct second_pass {
    void (*note)(void *, const char *);
    void *ctx;
    perfetto_writer *w;
    uint64_t base;
    export_run_result *r;
} second_pass;

static int second_image(void *ctx, const char *name, const store_file *f, const char *why)
{
    second_pass *sp = ctx;
    (void)why;
    if (!f)
        return 0; /* named in pass 1 */
    perfetto_file_stats st;
    int rc = perfetto_add_file(sp->w, f, sp->base, &st);
    if (rc)
        return rc;
    sp->r->processes++;
    sp->r->threads += st.threads;
    sp->r->slices += st.slices;
    sp->r->sample_slices += st.sample_slices;
    if (st.dropped)
        say(sp->note, sp->ctx,
            "%s: timeline full, %llu spans not recorded (max_spans %llu); the trace misses them",
            name, (unsigned long long)st.dropped, (unsigned long long)f->meta.max_spans);
    return 0;
}

int export_wants_gzip(const char *out_path)
{
    size_t n = strlen(out_path);
    return n > 3 && !strcmp(out_path + n - 3, ".gz");
}

void export_run_perfetto(const char *path, const char *out_path, unsigned flags,
                         export_run_result *r, void (*note)(void *ctx, const char *line), void *ctx)
{
    memset(r, 0, sizeof *r);
    char why[512] = "";
    store_run_listing run;
    r->rc = store_list_run(path, &run, r->err, sizeof r->err);
    if (r->rc)
        return;
    const store_attempt *a = &run.attempts[run.newest];
    char *readable = calloc(a->file_count ? a->file_count : 1, 1);
    if (!readable) {
        r->rc = -ENOMEM;
        snprintf(r->err, sizeof r->err, "%s: out of memory", path);
        store_run_listing_free(&run);
        return;
    }

    /* pass 1: which files read, and the earliest instant of the run */
    uint64_t base = UINT64_MAX;
    size_t good = 0;
    const char *first_bad = NULL;
    char first_why[512] = "";
    for (size_t i = 0; i < a->file_count; i++) {
        first_pass fp = {note, ctx, base, 0};
        why[0] = 0;
        if (store_read_each(a->files[i], STORE_READ_SKIP_HIST, first_image, &fp, why, sizeof why) != 0 ||
            !fp.good) {
            if (!fp.good && !why[0])
                snprintf(why, sizeof why, "no readable process image");
            say(note, ctx, "%s: %s (left out)", a->files[i], why);
            if (!first_bad) {
                first_bad = a->files[i];
                snprintf(first_why, sizeof first_why, "%s", why);
            }
            if (!fp.good)
                continue;
        }
        base = fp.base;
        readable[i] = 1;
        good++;
    }
    if (!good) {
        r->rc = -ENOENT;
        r->no_files = 1;
        if (first_bad)
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file (%zu unreadable; %s: %s)",
                     path, a->file_count, first_bad, first_why);
        else
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file", path);
        free(readable);
        store_run_listing_free(&run);
        return;
    }
    if (base == UINT64_MAX)
        base = 0;

    /* pass 2: stream the trace, one file at a time */
    int to_stdout = !strcmp(out_path, "-");
    int gzip = export_wants_gzip(out_path);
    if (gzip && !perfetto_gzip_available()) {
        r->rc = -ENOTSUP;
        snprintf(r->err, sizeof r->err,
                 "%s: this lapse was built without zlib and cannot write gzip (name the "
                 "output .json, or rebuild with zlib1g-dev installed)", out_path);
        free(readable);
        store_run_listing_free(&run);
        return;
    }
    r->writing = 1;
    store_out o;
    FILE *out = stdout;
    if (!to_stdout) {
        r->rc = store_out_open(&o, out_path, flags, r->err, sizeof r->err);
        if (r->rc == 0 && !(out = store_out_stream(&o))) {
            store_out_abort(&o);
            r->rc = -ENOMEM;
            snprintf(r->err, sizeof r->err, "cannot write %s: out of memory", out_path);
        }
        if (r->rc) {
            free(readable);
            store_run_listing_free(&run);
            return;
        }
    }
    perfetto_writer *w = gzip ? perfetto_open_gzip(out) : perfetto_open(out);
    int rc = w ? 0 : -ENOMEM;
    for (size_t i = 0; i < a->file_count && rc == 0; i++) {
        if (!readable[i])
            continue;
        second_pass sp = {note, ctx, w, base, r};
        rc = store_read_each(a->files[i], STORE_READ_SKIP_HIST, second_image, &sp, why, sizeof why);
        if (rc && rc != -ENOMEM && rc != -EIO) {
            /* it changed since pass 1 (a live run rewrites its files) */
            say(note, ctx, "%s: %s (left out)", a->files[i], why);
            rc = 0;
        }
    }
    if (w) {
        int frc = perfetto_finish(w);
        if (rc == 0)
            rc = frc;
    }
    if (rc) {
        r->rc = rc;
        snprintf(r->err, sizeof r->err, "%s: %s", out_path,
                 rc == -ENOMEM ? "out of memory" : "write failed (disk full?)");
    } else if (!r->processes) {
        r->rc = -ENOENT;
        r->no_files = 1;
        r->writing = 0;
        snprintf(r->err, sizeof r->err, "%s: no readable .lapse file, nothing written", path);
    }
    if (!to_stdout) {
        if (r->rc)
            store_out_abort(&o);
        else
            r->rc = store_out_commit(&o, r->err, sizeof r->err);
    }
    free(readable);
    store_run_listing_free(&run);
}
