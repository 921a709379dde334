#include "view_diff.h"

#include "analyze/diff.h"
#include "analyze/run_model.h"
#include "host_view.h"
#include "render/diff_render.h"
#include "view_page.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* 0, or -ENOENT with r->err saying which side has no readable file. */
static int readable(const run_model *m, const char *side, const char *path, view_run_result *r)
{
    if (m->worker_count)
        return 0;
    if (m->unreadable_count)
        snprintf(r->err, sizeof r->err, "%s %s: no readable .lapse file (%u unreadable; %s: %s)",
                 side, path, m->unreadable_count, m->unreadable[0].file,
                 m->unreadable[0].reason);
    else
        snprintf(r->err, sizeof r->err, "%s %s: no readable .lapse file", side, path);
    return r->rc = -ENOENT;
}

void view_diff_write(const char *path_a, const char *path_b, unsigned diff_flags,
                     const char *out_path, unsigned flags, int compress, view_run_result *r)
{
    memset(r, 0, sizeof *r);
    run_model m[2];
    host_view_here here;
    host_view_fill(&here);
    rm_options opt = {.host = &here.view};
    const char *paths[2] = {path_a, path_b};
    for (int s = 0; s < 2; s++)
        if ((r->rc = run_model_load(paths[s], &opt, &m[s], r->err, sizeof r->err)) != 0) {
            if (s)
                run_model_free(&m[0]);
            return;
        }
    diff_result d;
    mem_doc doc = {0};
    if (readable(&m[0], "A", path_a, r) || readable(&m[1], "B", path_b, r))
        goto out;
    if (diff_runs(&m[0], &m[1], diff_flags, &d)) {
        r->rc = -ENOMEM;
        snprintf(r->err, sizeof r->err, "out of memory comparing %s and %s", path_a, path_b);
        goto out;
    }
    diff_options o = {0};
    int rc = mem_doc_open(&doc);
    if (!rc && (rc = diff_write_json(doc.f, &m[0], &m[1], &d, &o)) == 0)
        rc = mem_doc_close(&doc);
    r->diff_rows = d.count;
    r->diff_changed = d.changed;
    r->processes = m[0].worker_count + m[1].worker_count;
    diff_result_free(&d);
    if (rc) {
        r->rc = -ENOMEM;
        snprintf(r->err, sizeof r->err, "out of memory writing the diff of %s and %s", path_a,
                 path_b);
        goto out;
    }
    char title[1024];
    snprintf(title, sizeof title, "lapse view: %s vs %s", *m[0].run_id ? m[0].run_id : path_a,
             *m[1].run_id ? m[1].run_id : path_b);
    html_blob blob = {"lapse-diff", doc.data, doc.len};
    view_page_write(title, &blob, 1, NULL, out_path, NULL, flags, compress, r);
out:
    mem_doc_free(&doc);
    run_model_free(&m[0]);
    run_model_free(&m[1]);
}
