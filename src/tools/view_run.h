/* `lapse view`'s work, shared by the command and (later) the Python package: the
 * report model of a run (analyze) as JSON, its files' timelines and Python samples
 * (analyze/timeline.h, render/view_data.h), written as one HTML page
 * (render/html_page.h) that replaces out_path atomically. */
#ifndef LAPSE_TOOLS_VIEW_RUN_H
#define LAPSE_TOOLS_VIEW_RUN_H

#include <stddef.h>
#include <stdint.h>

typedef struct view_run_result {
    int rc;              /* 0, or a negative code; err says why (one line) */
    size_t processes;    /* on the timeline */
    uint64_t spans, dropped, sample_stacks;
    size_t bytes;        /* of the page */
    int compressed;      /* its data are deflated (lapse built with zlib) */
    char err[1200];
} view_run_result;

/* Writes the page of the run at path to out_path ("-": standard output); flags:
 * STORE_SHARE. note(ctx, line), when given, gets a line per file left out of the
 * timeline. compress: deflate the data when lapse has zlib. */
void view_run_write(const char *path, const char *out_path, unsigned flags, int compress,
                    view_run_result *r, void (*note)(void *ctx, const char *line), void *ctx);

#endif
