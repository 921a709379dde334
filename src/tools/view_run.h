/* `lapse view`'s work, shared by the command and the Python package (Profile.html):
 * the report model of a run (analyze) as JSON, its files' timelines and Python
 * samples (analyze/timeline.h, render/view_data.h), written as one HTML page
 * (render/html_page.h). Both come from one reading of the files: the bytes the
 * report was built from are held (rm_options.hold) and the timelines read from
 * them, so the two tabs cannot disagree about what a file held. */
#ifndef LAPSE_TOOLS_VIEW_RUN_H
#define LAPSE_TOOLS_VIEW_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct view_run_result {
    int rc;              /* 0, or a negative code; err says why (one line) */
    int writing;         /* the failure is about the output */
    size_t processes;    /* on the timeline */
    uint64_t spans, dropped, sample_stacks;
    size_t bytes;        /* of the page */
    int compressed;      /* its data are deflated (lapse built with zlib) */
    size_t diff_rows, diff_changed; /* a diff's page (view_diff.h): its rows, CHANGED */
    char err[1200];
} view_run_result;

/* Writes the page of the run at path to out_path ("-": standard output); flags:
 * STORE_SHARE. note(ctx, line), when given, gets a line per file left out of the
 * timeline. compress: deflate the data when lapse has zlib. */
void view_run_write(const char *path, const char *out_path, unsigned flags, int compress,
                    view_run_result *r, void (*note)(void *ctx, const char *line), void *ctx);

/* The same, of one attempt given as files in memory (nothing is read from disk):
 * dir, single_file and files as run_model_load_mem takes them, extra the files known
 * unreadable (rm_options.extra_unreadable). The page goes to out_path as above or,
 * with out_path NULL, to out (a stream the caller owns: open_memstream for a string). */
struct store_buffer;
struct rm_unreadable;
void view_mem_write(const char *dir, int single_file, const struct store_buffer *files,
                    size_t count, const struct rm_unreadable *extra, uint32_t extra_count,
                    const char *out_path, FILE *out, unsigned flags, int compress,
                    view_run_result *r);

#endif
