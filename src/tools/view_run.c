#include "view_run.h"

#include "analyze/report_model.h"
#include "analyze/run_join.h"
#include "analyze/run_model.h"
#include "analyze/timeline.h"
#include "host_view.h"
#include "render/html_page.h"
#include "render/report_render.h"
#include "render/view_data.h"
#include "store/codec.h"
#include "store/file_write.h"
#include "store/run_dir.h"
#include "store/run_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A document rendered into memory (open_memstream), then placed in the page. */
typedef struct mem_doc {
    char *data;
    size_t len;
    FILE *f;
} mem_doc;

static int doc_open(mem_doc *d)
{
    memset(d, 0, sizeof *d);
    d->f = open_memstream(&d->data, &d->len);
    return d->f ? 0 : -ENOMEM;
}

/* Closes the stream; 0, or -ENOMEM when a write to it failed (memory ran out). */
static int doc_close(mem_doc *d)
{
    int bad = ferror(d->f);
    if (fclose(d->f))
        bad = 1;
    d->f = NULL;
    return bad ? -ENOMEM : 0;
}

static void doc_free(mem_doc *d)
{
    if (d->f)
        fclose(d->f);
    free(d->data);
    memset(d, 0, sizeof *d);
}

typedef struct timeline_pass {
    view_data_writer w;
    uint64_t base;
    view_run_result *r;
    void (*note)(void *, const char *);
    void *ctx;
} timeline_pass;

static int add_image(void *ctx, const store_image *im)
{
    timeline_pass *tp = ctx;
    if (!im->f) {
        if (tp->note && !im->same_as) {
            char line[1400];
            snprintf(line, sizeof line, "%s: %s (left out)", im->name, im->why);
            tp->note(tp->ctx, line);
        }
        return 0;
    }
    timeline_file t;
    if (timeline_build(im->f, tp->base, &t))
        return -ENOMEM;
    view_data_add(&tp->w, im->name, im->f, &t);
    tp->r->processes++;
    tp->r->spans += t.span_count;
    tp->r->dropped += t.dropped;
    if (im->f->samples)
        tp->r->sample_stacks += im->f->samples->stack_count;
    timeline_free(&t);
    return 0;
}

/* The timelines and samples of the run's files, read once more (spans this time). */
static int write_timeline(const char *path, uint64_t base, mem_doc *d, view_run_result *r,
                          void (*note)(void *, const char *), void *ctx)
{
    store_run_listing run;
    int rc = store_list_run(path, &run, r->err, sizeof r->err);
    if (rc)
        return rc;
    run_join join;
    if (run_join_build(&run, path, &join)) {
        store_run_listing_free(&run);
        return -ENOMEM;
    }
    timeline_pass tp = {.base = base, .r = r, .note = note, .ctx = ctx};
    view_data_begin(&tp.w, d->f, base);
    rc = store_read_attempt(&join.run, STORE_READ_SKIP_HIST, add_image, &tp, NULL, NULL);
    if (!rc && view_data_finish(&tp.w))
        rc = -ENOMEM;
    run_join_free(&join);
    store_run_listing_free(&run);
    return rc;
}

static void fail(view_run_result *r, int rc, const char *fmt, const char *a, const char *b)
{
    r->rc = rc;
    snprintf(r->err, sizeof r->err, fmt, a, b);
}

void view_run_write(const char *path, const char *out_path, unsigned flags, int compress,
                    view_run_result *r, void (*note)(void *ctx, const char *line), void *ctx)
{
    memset(r, 0, sizeof *r);
    run_model m;
    host_view_here here;
    host_view_fill(&here);
    rm_options opt = {.host = &here.view};
    if ((r->rc = run_model_load(path, &opt, &m, r->err, sizeof r->err)) != 0)
        return;
    if (!m.worker_count) {
        if (m.unreadable_count)
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file (%u unreadable; %s: %s)",
                     path, m.unreadable_count, m.unreadable[0].file, m.unreadable[0].reason);
        else
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file", path);
        r->rc = -ENOENT;
        run_model_free(&m);
        return;
    }
    report_inputs in = {10};
    report_model rm;
    if (report_model_build(&m, &in, &rm)) {
        fail(r, -ENOMEM, "%s: out of memory building the report%s", path, "");
        run_model_free(&m);
        return;
    }
    mem_doc report = {0}, view = {0};
    report_options ro = {0};
    int rc = doc_open(&report);
    if (!rc && (rc = report_write_json(report.f, &rm, &ro)) == 0)
        rc = doc_close(&report);
    char title[512];
    snprintf(title, sizeof title, "lapse view: %s", *m.run_id ? m.run_id : path);
    uint64_t base = m.start_real_ns;
    report_model_free(&rm);
    run_model_free(&m);
    if (rc) {
        fail(r, -ENOMEM, "%s: out of memory writing the report%s", path, "");
        goto out;
    }
    if ((rc = doc_open(&view)) == 0)
        rc = write_timeline(path, base, &view, r, note, ctx);
    if (!rc)
        rc = doc_close(&view);
    if (rc) {
        if (rc == -ENOMEM || !*r->err)
            fail(r, rc, "%s: out of memory reading the timelines%s", path, "");
        r->rc = rc;
        goto out;
    }

    html_blob blobs[] = {
        {"lapse-report", report.data, report.len},
        {"lapse-view", view.data, view.len},
    };
    r->compressed = compress && html_page_can_compress();
    int to_stdout = !strcmp(out_path, "-");
    store_out o;
    FILE *out = stdout;
    if (!to_stdout) {
        if ((r->rc = store_out_open(&o, out_path, flags, r->err, sizeof r->err)) != 0)
            goto out;
        if (!(out = store_out_stream(&o))) {
            store_out_abort(&o);
            fail(r, -ENOMEM, "cannot write %s: out of memory%s", out_path, "");
            goto out;
        }
    }
    rc = html_page_write(out, title, blobs, 2, r->compressed);
    if (!to_stdout) {
        long at = ftell(out);
        r->bytes = at > 0 ? (size_t)at : 0;
    }
    if (rc) {
        fail(r, rc, "%s: %s", out_path, rc == -ENOMEM ? "out of memory" : "write failed (disk full?)");
        if (!to_stdout)
            store_out_abort(&o);
    } else if (!to_stdout) {
        r->rc = store_out_commit(&o, r->err, sizeof r->err);
    } else if (fflush(stdout)) {
        fail(r, -EIO, "%s: %s", "<stdout>", "write failed");
    }
out:
    doc_free(&report);
    doc_free(&view);
}
