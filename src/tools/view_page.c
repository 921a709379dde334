#include "view_page.h"

#include "store/file_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mem_doc_open(mem_doc *d)
{
    memset(d, 0, sizeof *d);
    d->f = open_memstream(&d->data, &d->len);
    return d->f ? 0 : -ENOMEM;
}

int mem_doc_close(mem_doc *d)
{
    int bad = ferror(d->f);
    if (fclose(d->f))
        bad = 1;
    d->f = NULL;
    return bad ? -ENOMEM : 0;
}

void mem_doc_free(mem_doc *d)
{
    if (d->f)
        fclose(d->f);
    free(d->data);
    memset(d, 0, sizeof *d);
}

static void fail(view_run_result *r, int rc, const char *what, const char *why)
{
    r->rc = rc;
    snprintf(r->err, sizeof r->err, "%s: %s", what, why);
}

void view_page_write(const char *title, const html_blob *blobs, size_t n,
                     const flame_top *flame, const char *out_path, FILE *out, unsigned flags,
                     int compress, view_run_result *r)
{
    r->compressed = compress && html_page_can_compress();
    r->writing = 1;
    int to_file = out_path && strcmp(out_path, "-");
    const char *name = to_file ? out_path : "<stdout>";
    store_out o;
    if (out_path)
        out = stdout;
    if (to_file) {
        if ((r->rc = store_out_open(&o, out_path, flags, r->err, sizeof r->err)) != 0)
            return;
        if (!(out = store_out_stream(&o))) {
            store_out_abort(&o);
            r->rc = -ENOMEM;
            snprintf(r->err, sizeof r->err, "cannot write %s: out of memory", out_path);
            return;
        }
    }
    long start = ftell(out);
    int rc = html_page_write(out, title, blobs, n, r->compressed, flame);
    long at = ftell(out);
    r->bytes = start >= 0 && at > start ? (size_t)(at - start) : 0;
    if (!rc && !to_file && fflush(out))
        rc = -EIO;
    if (rc) {
        fail(r, rc, out_path ? name : "the page",
             rc == -ENOMEM ? "out of memory" : "write failed (disk full?)");
        if (to_file)
            store_out_abort(&o);
    } else if (to_file) {
        r->rc = store_out_commit(&o, r->err, sizeof r->err);
    }
}
