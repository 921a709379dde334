#include "export_hdf5.h"
#include "export_run.h"

#include "analyze/run_join.h"
#include "analyze/span_regions.h"
#include "render/hdf5_regions.h"
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

typedef void (*note_fn)(void *, const char *);

/* Pass 1: which images read, their ranks, the origin. */
typedef struct first_pass {
    note_fn note;
    void *ctx;
    uint64_t origin;
    int64_t *ranks; /* per readable image, in order: the rank its file recorded */
    size_t good, cap, bad;
    int64_t world_size;
    char *lapse_version, *run_id;
    char first_bad[1024];
} first_pass;

static int first_image(void *ctx, const store_image *im)
{
    first_pass *fp = ctx;
    if (im->same_as) {
        export_note(fp->note, fp->ctx, "%s: the same process as %s (left out: it is exported once)",
            im->name, im->same_as);
        return 0;
    }
    if (!im->f) {
        export_note(fp->note, fp->ctx, "%s: %s (left out)", im->name, im->why);
        if (!fp->bad++)
            snprintf(fp->first_bad, sizeof fp->first_bad, "%s: %s", im->name, im->why);
        return 0;
    }
    const store_meta *m = &im->f->meta;
    if (fp->good == fp->cap) {
        size_t cap = fp->cap ? 2 * fp->cap : 16;
        int64_t *r = realloc(fp->ranks, cap * sizeof *r);
        if (!r)
            return -ENOMEM;
        fp->ranks = r;
        fp->cap = cap;
    }
    fp->ranks[fp->good++] = m->rank;
    if (m->world_size > fp->world_size)
        fp->world_size = m->world_size;
    if (!fp->run_id && !(fp->run_id = strdup(m->run_id ? m->run_id : "")))
        return -ENOMEM;
    if (!fp->lapse_version && !(fp->lapse_version = strdup(m->lapse_version ? m->lapse_version : "")))
        return -ENOMEM;
    uint64_t origin;
    if (span_regions_origin(im->f, &origin) == 0 && origin < fp->origin)
        fp->origin = origin;
    return 0;
}

/* The group number of each readable image: its own rank when it has one that no
 * earlier image took, else the next number after the largest rank. Returns how
 * many got such a number; *first is the first of them. */
static size_t assign_groups(int64_t *ranks, size_t n, int64_t *first)
{
    int64_t top = -1;
    for (size_t i = 0; i < n; i++)
        if (ranks[i] > top)
            top = ranks[i];
    *first = top + 1;
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        int taken = ranks[i] < 0;
        for (size_t k = 0; !taken && k < i; k++)
            taken = ranks[k] == ranks[i];
        if (taken) {
            ranks[i] = ++top;
            moved++;
        }
    }
    return moved;
}

/* Pass 2: one rank group per image. */
typedef struct second_pass {
    note_fn note;
    void *ctx;
    hdf5_writer *w;
    const first_pass *fp;
    size_t next;
    export_hdf5_result *r;
} second_pass;

static int second_image(void *ctx, const store_image *im)
{
    second_pass *sp = ctx;
    const store_file *f = im->f;
    if (!f)
        return 0; /* named in pass 1 */
    if (sp->next >= sp->fp->good)
        return -EAGAIN; /* the run changed between the passes */
    int64_t group = sp->fp->ranks[sp->next++];
    span_regions regions;
    if (span_regions_build(f, sp->fp->origin, &regions)) {
        snprintf(sp->r->err, sizeof sp->r->err, "out of memory");
        return -ENOMEM;
    }
    const store_meta *m = &f->meta;
    hdf5_rank_info info = {im->name, m->role, m->host, m->pid, m->rank, f->thread_count,
                           m->timeline_dropped};
    uint32_t renamed = 0;
    int rc = hdf5_add_rank(sp->w, group, &info, &regions, &renamed, sp->r->err, sizeof sp->r->err);
    if (rc == 0) {
        sp->r->ranks++;
        sp->r->regions += regions.count;
        for (uint32_t i = 0; i < regions.count; i++)
            sp->r->calls += regions.regions[i].count;
        if (renamed)
            export_note(sp->note, sp->ctx,
                "%s: %u span name%s with '/' (or empty, or \".\") written percent-encoded "
                "(HDF5 names cannot hold them)", im->name, renamed, renamed == 1 ? "" : "s");
        if (m->timeline_dropped)
            export_note(sp->note, sp->ctx,
                "%s: timeline full, %llu spans not recorded (max_spans %llu); /rank%lld misses them",
                im->name, (unsigned long long)m->timeline_dropped,
                (unsigned long long)m->max_spans, (long long)group);
    }
    span_regions_free(&regions);
    return rc;
}

static void fail(export_hdf5_result *r, int rc, const char *fmt, const char *a, const char *b)
{
    r->rc = rc;
    snprintf(r->err, sizeof r->err, fmt, a, b);
}

void export_run_hdf5(const char *path, const char *out_path, unsigned flags,
                     export_hdf5_result *r, note_fn note, void *ctx)
{
    memset(r, 0, sizeof *r);
    if (!hdf5_available()) {
        r->no_hdf5 = 1;
        hdf5_open(r->err, sizeof r->err); /* its line: what is missing */
        r->rc = -ENOTSUP;
        return;
    }
    store_run_listing run;
    r->rc = store_list_run(path, &run, r->err, sizeof r->err);
    if (r->rc)
        return;
    run_join join;
    if (run_join_build(&run, path, &join)) {
        fail(r, -ENOMEM, "%s: out of memory%s", path, "");
        store_run_listing_free(&run);
        return;
    }
    first_pass fp = {note, ctx, UINT64_MAX, NULL, 0, 0, 0, -1, NULL, NULL, ""};
    hdf5_writer *w = NULL;
    void *image = NULL;
    size_t len = 0;
    if (store_read_attempt(&join.run, STORE_READ_SKIP_HIST, first_image, &fp, NULL, NULL)) {
        fail(r, -ENOMEM, "%s: out of memory%s", path, "");
        goto out;
    }
    if (!fp.good) {
        r->no_files = 1;
        if (fp.bad)
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file (%zu unreadable; %s)", path,
                     fp.bad, fp.first_bad);
        else
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file", path);
        r->rc = -ENOENT;
        goto out;
    }
    if (fp.origin == UINT64_MAX)
        fp.origin = 0;
    int64_t first_moved;
    size_t moved = assign_groups(fp.ranks, fp.good, &first_moved);
    if (moved == 1 && fp.good > 1)
        export_note(note, ctx, "1 process without a rank of its own written as /rank%lld (its "
                       "lapse_rank attribute is -1 or the rank it shares)", (long long)first_moved);
    else if (moved)
        export_note(note, ctx, "%zu processes without a rank of their own written as /rank%lld to "
                       "/rank%lld (their lapse_rank attribute is -1 or the rank they share)",
            moved, (long long)first_moved, (long long)(first_moved + (int64_t)moved - 1));

    if (!(w = hdf5_open(r->err, sizeof r->err))) {
        r->rc = -EIO;
        goto out;
    }
    second_pass sp = {note, ctx, w, &fp, 0, r};
    int rc = store_read_attempt(&join.run, STORE_READ_SKIP_HIST, second_image, &sp, NULL, NULL);
    if (rc == 0 && sp.next != fp.good)
        rc = -EAGAIN;
    if (rc) {
        r->rc = rc;
        if (rc == -EAGAIN)
            snprintf(r->err, sizeof r->err, "%s: the run changed while it was read; try again", path);
        else if (rc == -ENOMEM && !*r->err)
            snprintf(r->err, sizeof r->err, "%s: out of memory", path);
        goto out;
    }
    hdf5_run_info info = {(int64_t)fp.good > fp.world_size ? (int64_t)fp.good : fp.world_size,
                          fp.lapse_version, fp.run_id, fp.origin};
    rc = hdf5_finish(w, &info, &image, &len, r->err, sizeof r->err);
    w = NULL;
    if (rc) {
        r->rc = rc;
        goto out;
    }
    if (!strcmp(out_path, "-")) {
        if (fwrite(image, 1, len, stdout) != len || fflush(stdout)) {
            fail(r, -EIO, "%s%s: write failed", "<stdout>", "");
        }
    } else {
        r->rc = store_write_atomic(out_path, image, len, flags, r->err, sizeof r->err);
    }
out:
    hdf5_abort(w);
    free(image);
    free(fp.ranks);
    free(fp.run_id);
    free(fp.lapse_version);
    run_join_free(&join);
    store_run_listing_free(&run);
}
