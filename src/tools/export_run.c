#include "export_run.h"

#include "analyze/run_join.h"
#include "analyze/timeline.h"
#include "render/gecko.h"
#include "render/perfetto.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/file_write.h"
#include "store/run_dir.h"
#include "store/run_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void export_note(void (*note)(void *, const char *), void *ctx, const char *fmt, ...)
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

/* Pass 1, per image: the earliest instant, how many read, and the first that did not. */
typedef struct first_pass {
    void (*note)(void *, const char *);
    void *ctx;
    uint64_t base;
    size_t good, bad;
    char first_bad[1024];
    /* images left out as the same process as `kept`: one line for a run of them */
    char kept[1024], first_dup[1024];
    uint64_t dups;
} first_pass;

static void say_duplicates(first_pass *fp)
{
    if (fp->dups == 1)
        export_note(fp->note, fp->ctx, "%s: the same process as %s (left out: it is exported once)",
            fp->first_dup, fp->kept);
    else if (fp->dups)
        export_note(fp->note, fp->ctx,
            "%s and %llu more: the same process as %s (left out: it is exported once)",
            fp->first_dup, (unsigned long long)fp->dups - 1, fp->kept);
    fp->dups = 0;
}

static int first_image(void *ctx, const store_image *im)
{
    first_pass *fp = ctx;
    if (fp->dups && (!im->same_as || strcmp(im->same_as, fp->kept)))
        say_duplicates(fp);
    if (im->same_as) {
        if (!fp->dups++) {
            snprintf(fp->kept, sizeof fp->kept, "%s", im->same_as);
            snprintf(fp->first_dup, sizeof fp->first_dup, "%s", im->name);
        }
        return 0;
    }
    if (!im->f) {
        export_note(fp->note, fp->ctx, "%s: %s (left out)", im->name, im->why);
        if (!fp->bad++)
            snprintf(fp->first_bad, sizeof fp->first_bad, "%s: %s", im->name, im->why);
        return 0;
    }
    uint64_t first;
    if (perfetto_first_ns(im->f, &first) == 0 && first < fp->base)
        fp->base = first;
    fp->good++;
    return 0;
}

/* Pass 2, per image: its tracks and slices. */
typedef struct second_pass {
    void (*note)(void *, const char *);
    void *ctx;
    perfetto_writer *w;
    gecko_writer *g; /* --gecko: this instead of w */
    uint64_t base;
    export_run_result *r;
} second_pass;

/* --gecko: the file's timeline, then its threads. */
static int gecko_image(second_pass *sp, const store_file *f, const char *name)
{
    timeline_file t;
    if (timeline_build(f, sp->base, &t))
        return -ENOMEM;
    gecko_file_stats st;
    int rc = gecko_add_file(sp->g, f, &t, &st);
    timeline_free(&t);
    if (rc)
        return rc;
    sp->r->processes++;
    sp->r->threads += st.threads;
    sp->r->slices += st.markers;
    sp->r->sample_slices += st.samples;
    if (f->meta.timeline_dropped)
        export_note(sp->note, sp->ctx,
            "%s: timeline full, %llu spans not recorded (max_spans %llu); the profile misses them",
            name, (unsigned long long)f->meta.timeline_dropped,
            (unsigned long long)f->meta.max_spans);
    return 0;
}

static int second_image(void *ctx, const store_image *im)
{
    second_pass *sp = ctx;
    const store_file *f = im->f;
    const char *name = im->name;
    if (!f)
        return 0; /* named in pass 1 */
    if (sp->g)
        return gecko_image(sp, f, name);
    perfetto_file_stats st;
    int rc = perfetto_add_file(sp->w, f, sp->base, &st);
    if (rc)
        return rc;
    sp->r->processes++;
    sp->r->threads += st.threads;
    sp->r->slices += st.slices;
    sp->r->sample_slices += st.sample_slices;
    sp->r->gpu_tracks += st.gpu_tracks;
    sp->r->gpu_slices += st.gpu_slices;
    sp->r->flows += st.flows;
    if (st.dropped)
        export_note(sp->note, sp->ctx,
            "%s: timeline full, %llu spans not recorded (max_spans %llu); the trace misses them",
            name, (unsigned long long)st.dropped, (unsigned long long)f->meta.max_spans);
    return 0;
}

int export_wants_gzip(const char *out_path)
{
    size_t n = strlen(out_path);
    return n > 3 && !strcmp(out_path + n - 3, ".gz");
}

/* The trace of attempt a (path names it in messages) into out_path; gecko: the
 * Firefox Profiler's format instead of Chrome trace JSON. */
static void export_attempt(const store_attempt *a, const char *path, const char *out_path,
                           unsigned flags, int gecko, export_run_result *r,
                           void (*note)(void *ctx, const char *line), void *ctx)
{
    /* pass 1: which images read (each process once), and the earliest instant */
    first_pass fp = {note, ctx, UINT64_MAX, 0, 0, "", "", "", 0};
    int frc = store_read_attempt(a, STORE_READ_SKIP_HIST, first_image, &fp, NULL, NULL);
    say_duplicates(&fp);
    if (frc != 0) {
        r->rc = -ENOMEM;
        snprintf(r->err, sizeof r->err, "%s: out of memory", path);
        return;
    }
    if (!fp.good) {
        r->rc = -ENOENT;
        r->no_files = 1;
        if (fp.bad)
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file (%zu unreadable; %s)", path,
                     fp.bad, fp.first_bad);
        else
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file", path);
        return;
    }
    uint64_t base = fp.base == UINT64_MAX ? 0 : fp.base;

    /* pass 2: stream the trace, one file at a time */
    int to_stdout = !strcmp(out_path, "-");
    int gzip = export_wants_gzip(out_path);
    if (gzip && gecko) {
        r->rc = -ENOTSUP;
        snprintf(r->err, sizeof r->err,
                 "%s: --gecko writes plain JSON (name the output .json; gzip it after, the "
                 "Firefox Profiler opens either)", out_path);
        return;
    }
    if (gzip && !perfetto_gzip_available()) {
        r->rc = -ENOTSUP;
        snprintf(r->err, sizeof r->err,
                 "%s: this lapse was built without zlib and cannot write gzip (name the "
                 "output .json, or rebuild with zlib1g-dev installed)", out_path);
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
            return;
        }
    }
    perfetto_writer *w = gecko ? NULL : gzip ? perfetto_open_gzip(out) : perfetto_open(out);
    gecko_writer *g = gecko ? gecko_open(out, base) : NULL;
    int rc = w || g ? 0 : -ENOMEM;
    second_pass sp = {note, ctx, w, g, base, r};
    if (rc == 0)
        rc = store_read_attempt(a, STORE_READ_SKIP_HIST, second_image, &sp, NULL, NULL);
    if (w || g) {
        int frc = w ? perfetto_finish(w) : gecko_finish(g);
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
}

static void export_run(const char *path, const char *out_path, unsigned flags, int gecko,
                       export_run_result *r, void (*note)(void *ctx, const char *line), void *ctx)
{
    memset(r, 0, sizeof *r);
    store_run_listing run;
    r->rc = store_list_run(path, &run, r->err, sizeof r->err);
    if (r->rc)
        return;
    run_join join;
    if (run_join_build(&run, path, &join)) {
        r->rc = -ENOMEM;
        snprintf(r->err, sizeof r->err, "%s: out of memory", path);
    } else {
        export_attempt(&join.run, path, out_path, flags, gecko, r, note, ctx);
        run_join_free(&join);
    }
    store_run_listing_free(&run);
}

void export_run_perfetto(const char *path, const char *out_path, unsigned flags,
                         export_run_result *r, void (*note)(void *ctx, const char *line), void *ctx)
{
    export_run(path, out_path, flags, 0, r, note, ctx);
}

void export_run_gecko(const char *path, const char *out_path, unsigned flags,
                      export_run_result *r, void (*note)(void *ctx, const char *line), void *ctx)
{
    export_run(path, out_path, flags, 1, r, note, ctx);
}

void export_mem_perfetto(const char *dir, int single_file, const store_buffer *files,
                         size_t count, const char *out_path, unsigned flags,
                         export_run_result *r, void (*note)(void *ctx, const char *line),
                         void *ctx)
{
    memset(r, 0, sizeof *r);
    char **names = calloc(count ? count : 1, sizeof *names);
    if (!names) {
        r->rc = -ENOMEM;
        snprintf(r->err, sizeof r->err, "%s: out of memory", dir);
        return;
    }
    for (size_t i = 0; i < count; i++)
        names[i] = (char *)files[i].name;
    store_attempt a = {.dir = (char *)dir, .single_file = single_file, .files = names,
                       .file_count = count, .buffers = files};
    export_attempt(&a, dir, out_path, flags, 0, r, note, ctx);
    free(names);
}
