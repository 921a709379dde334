/* `lapse view`'s page: one self-contained HTML file (docs/view.md). Its styles and
 * script are src/render/html/view.css and view.js, embedded at build time
 * (cmake/embed.cmake); its data are JSON documents the caller rendered (the report,
 * the timeline), each in a <script> element of its own that the page decodes: as it
 * is (every "<" written \u003c, so that no text of the data ends the element), or
 * zlib-compressed and in base64, which the page inflates with the browser's own
 * DecompressionStream. Nothing is fetched: the file works from file://, offline. */
#ifndef LAPSE_RENDER_HTML_PAGE_H
#define LAPSE_RENDER_HTML_PAGE_H

#include "analyze/flame_top.h"

#include <stddef.h>
#include <stdio.h>

typedef struct html_blob {
    const char *id;   /* the element's id: "lapse-report", "lapse-view" */
    const char *data; /* a JSON document */
    size_t len;
} html_blob;

/* Whether html_page_write can compress (lapse was built with zlib). */
int html_page_can_compress(void);

/* Writes the page: title (escaped), then the blobs, compressed when compress is
 * set and html_page_can_compress(); with flame (NULL: none) the top of the samples'
 * flame graph as nested lists in the page's <noscript>, so that it reads without
 * script. 0, -ENOMEM, or -EIO when a write failed. */
int html_page_write(FILE *out, const char *title, const html_blob *blobs, size_t n,
                    int compress, const flame_top *flame);

#endif
