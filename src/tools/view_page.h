/* The pieces `lapse view`'s pages share (view_run.c: one run; view_diff.c: two):
 * a JSON document rendered into memory, and the page of such documents written to a
 * file (atomically), to standard output or to a caller's stream. */
#ifndef LAPSE_TOOLS_VIEW_PAGE_H
#define LAPSE_TOOLS_VIEW_PAGE_H

#include "render/html_page.h"
#include "view_run.h"

#include <stddef.h>
#include <stdio.h>

/* A document rendered into memory (open_memstream), then placed in the page. */
typedef struct mem_doc {
    char *data;
    size_t len;
    FILE *f;
} mem_doc;

/* 0 or -ENOMEM. */
int mem_doc_open(mem_doc *d);
/* Closes the stream; 0, or -ENOMEM when a write to it failed (memory ran out). */
int mem_doc_close(mem_doc *d);
void mem_doc_free(mem_doc *d);

/* The page of title and blobs (and flame's top, NULL: none) to out_path ("-": standard output) or, with out_path
 * NULL, to out; r->rc, r->err, r->bytes, r->compressed, r->writing set. flags:
 * STORE_SHARE. */
void view_page_write(const char *title, const html_blob *blobs, size_t n,
                     const flame_top *flame, const char *out_path, FILE *out, unsigned flags,
                     int compress, view_run_result *r);

#endif
