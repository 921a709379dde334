#include "view_run.h"

#include "analyze/report_model.h"
#include "analyze/run_model.h"
#include "analyze/timeline.h"
#include "held_files.h"
#include "host_view.h"
#include "render/report_render.h"
#include "render/view_data.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/run_dir.h"
#include "store/run_read.h"
#include "view_page.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct timeline_pass {
    view_data_writer w;
    flame_top *flame;
    uint64_t base;
    const run_model *m;
    view_run_result *r;
} timeline_pass;

/* Whether the report calls file unreadable (its sums do not hold together: the
 * timeline leaves it out as the report does). */
static int unreadable_in(const run_model *m, const char *file)
{
    for (uint32_t i = 0; i < m->unreadable_count; i++)
        if (!strcmp(m->unreadable[i].file, file))
            return 1;
    return 0;
}

static int add_image(void *ctx, const store_image *im)
{
    timeline_pass *tp = ctx;
    if (!im->f || unreadable_in(tp->m, im->name))
        return 0;
    timeline_file t;
    if (timeline_build(im->f, tp->base, &t))
        return -ENOMEM;
    view_data_add(&tp->w, im->name, im->f, &t);
    tp->r->processes++;
    tp->r->spans += t.span_count;
    tp->r->dropped += t.dropped;
    if (im->f->samples) {
        tp->r->sample_stacks += im->f->samples->stack_count;
        if (flame_top_add(tp->flame, im->f->samples)) {
            timeline_free(&t);
            return -ENOMEM;
        }
    }
    timeline_free(&t);
    return 0;
}

/* The timelines and samples of the attempt's files, given in memory: the bytes the
 * report was built from, read once more (spans this time). */
static int write_timeline(const store_attempt *a, const run_model *m, mem_doc *d,
                          flame_top *flame, view_run_result *r)
{
    timeline_pass tp = {.base = m->start_real_ns, .m = m, .r = r, .flame = flame};
    view_data_begin(&tp.w, d->f, tp.base);
    int rc = store_read_attempt(a, STORE_READ_SKIP_HIST, add_image, &tp, NULL, NULL);
    if (!rc && view_data_finish(&tp.w))
        rc = -ENOMEM;
    if (!rc)
        flame_top_finish(flame);
    return rc;
}

static void fail(view_run_result *r, int rc, const char *fmt, const char *a, const char *b)
{
    r->rc = rc;
    snprintf(r->err, sizeof r->err, fmt, a, b);
}

/* The page's two documents (the report's JSON, the timelines), the top of its
 * samples' flame graph (for the page read without script) and its title. */
typedef struct view_docs {
    mem_doc report, view;
    flame_top flame;
    char title[512];
} view_docs;

static void docs_free(view_docs *d)
{
    mem_doc_free(&d->report);
    mem_doc_free(&d->view);
    flame_top_free(&d->flame);
}

/* The documents of the run m was loaded from, whose files a holds in memory. */
static int build_docs(const run_model *m, const store_attempt *a, const char *path,
                      view_docs *d, view_run_result *r)
{
    memset(d, 0, sizeof *d);
    if (!m->worker_count) {
        if (m->unreadable_count)
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file (%u unreadable; %s: %s)",
                     path, m->unreadable_count, m->unreadable[0].file, m->unreadable[0].reason);
        else
            snprintf(r->err, sizeof r->err, "%s: no readable .lapse file", path);
        return r->rc = -ENOENT;
    }
    report_inputs in = {10, 1};
    report_model rm;
    if (report_model_build(m, &in, &rm)) {
        fail(r, -ENOMEM, "%s: out of memory building the report%s", path, "");
        return r->rc;
    }
    report_options ro = {0};
    int rc = mem_doc_open(&d->report);
    if (!rc && (rc = report_write_json(d->report.f, &rm, &ro)) == 0)
        rc = mem_doc_close(&d->report);
    report_model_free(&rm);
    if (rc) {
        fail(r, -ENOMEM, "%s: out of memory writing the report%s", path, "");
        return r->rc;
    }
    snprintf(d->title, sizeof d->title, "lapse view: %s", *m->run_id ? m->run_id : path);
    if ((rc = flame_top_init(&d->flame)) == 0 && (rc = mem_doc_open(&d->view)) == 0)
        rc = write_timeline(a, m, &d->view, &d->flame, r);
    if (!rc)
        rc = mem_doc_close(&d->view);
    if (rc) {
        if (rc == -ENOMEM || !*r->err)
            fail(r, rc, "%s: out of memory reading the timelines%s", path, "");
        r->rc = rc;
    }
    return r->rc;
}

static void write_page(const view_docs *d, const char *out_path, FILE *out, unsigned flags,
                       int compress, view_run_result *r)
{
    html_blob blobs[] = {
        {"lapse-report", d->report.data, d->report.len},
        {"lapse-view", d->view.data, d->view.len},
    };
    view_page_write(d->title, blobs, 2, &d->flame, out_path, out, flags, compress, r);
}

void view_run_write(const char *path, const char *out_path, unsigned flags, int compress,
                    view_run_result *r, void (*note)(void *ctx, const char *line), void *ctx)
{
    memset(r, 0, sizeof *r);
    run_model m;
    host_view_here here;
    host_view_fill(&here);
    held_files held = {0};
    rm_options opt = {.host = &here.view, .hold = held_files_add, .hold_ctx = &held};
    if ((r->rc = run_model_load(path, &opt, &m, r->err, sizeof r->err)) != 0) {
        held_files_free(&held);
        return;
    }
    for (uint32_t i = 0; note && m.worker_count && i < m.unreadable_count; i++) {
        char line[1400];
        snprintf(line, sizeof line, "%s: %s (left out)", m.unreadable[i].file,
                 m.unreadable[i].reason);
        note(ctx, line);
    }
    /* the timelines from the bytes the report was built from: the files read once */
    store_buffer *files = held.failed ? NULL : held_files_buffers(&held);
    char **names = files ? calloc(held.count ? held.count : 1, sizeof *names) : NULL;
    view_docs d = {0};
    if (!names) {
        fail(r, -ENOMEM, "%s: out of memory loading the run%s", path, "");
    } else {
        for (size_t i = 0; i < held.count; i++)
            names[i] = held.items[i].file;
        store_attempt a = {.dir = m.dir, .single_file = m.single_file, .files = names,
                           .file_count = held.count, .buffers = files};
        if (build_docs(&m, &a, path, &d, r) == 0)
            write_page(&d, out_path, NULL, flags, compress, r);
    }
    docs_free(&d);
    free(names);
    free(files);
    run_model_free(&m);
    held_files_free(&held);
}

void view_mem_write(const char *dir, int single_file, const store_buffer *files, size_t count,
                    const rm_unreadable *extra, uint32_t extra_count, const char *out_path,
                    FILE *out, unsigned flags, int compress, view_run_result *r)
{
    memset(r, 0, sizeof *r);
    run_model m;
    host_view_here here;
    host_view_fill(&here);
    rm_options opt = {.host = &here.view, .extra_unreadable = extra,
                      .extra_unreadable_count = extra_count};
    if ((r->rc = run_model_load_mem(dir, single_file, files, count, &opt, &m, r->err,
                                    sizeof r->err)) != 0)
        return;
    char **names = calloc(count ? count : 1, sizeof *names);
    view_docs d = {0};
    if (!names) {
        fail(r, -ENOMEM, "%s: out of memory loading the run%s", dir, "");
    } else {
        for (size_t i = 0; i < count; i++)
            names[i] = (char *)files[i].name;
        store_attempt a = {.dir = m.dir, .single_file = single_file, .files = names,
                           .file_count = count, .buffers = files};
        if (build_docs(&m, &a, dir, &d, r) == 0)
            write_page(&d, out_path, out, flags, compress, r);
    }
    docs_free(&d);
    free(names);
    run_model_free(&m);
}
