/* Writers of a sample set for other tools: collapsed stacks (flamegraph.pl input),
 * speedscope JSON, a self-contained interactive flame graph SVG and pstats. Each
 * returns 0, or -EIO when writing to out failed. */
#ifndef LAPSE_RENDER_SAMPLES_WRITE_H
#define LAPSE_RENDER_SAMPLES_WRITE_H

#include "store/sample_set.h"

#include <stdio.h>

enum samples_collapsed_flags {
    SAMPLES_COLLAPSED_NO_HEADER = 1u << 0, /* leave out the "# ..." comment lines */
    SAMPLES_COLLAPSED_WEIGHT_US = 1u << 1, /* values: the time stacks stand for, in us
                                              (default: sample counts) */
    SAMPLES_COLLAPSED_SPANS = 1u << 2,     /* put "[span a/b]" under the thread frame */
};
/* Collapsed stacks, one line per stack: "process;thread;frame;frame count", frames
 * root first as "function (file:line)". The "process" frame is there only when the
 * set holds more than one process. The header (lines starting with "#", which
 * flamegraph.pl counts as ignored) says what the values are. */
int samples_write_collapsed(const sample_set *set, FILE *out, unsigned flags);

/* speedscope's file format (https://www.speedscope.app/file-format-schema.json): one
 * "sampled" profile per thread, weights in microseconds of the time the samples stand
 * for. name names the file in speedscope. */
int samples_write_speedscope(const sample_set *set, FILE *out, const char *name);

/* A self-contained interactive flame graph: SVG with inline script (click a frame to
 * zoom, search to highlight, reset), one tower per process and thread, widths by the
 * time samples stand for. title goes at the top. */
int samples_write_flamegraph(const sample_set *set, FILE *out, const char *title);

/* Python's pstats file (what cProfile's dump_stats writes; pstats.Stats and snakeviz
 * read it): a marshal'd dict with one entry per function (file and qualified name;
 * its line is the lowest line the samples saw in it), threads and processes merged.
 * Counts are samples that saw the function on the stack (cc = nc), not calls; tt is
 * the time of the samples with it innermost, ct of those with it anywhere on the stack
 * (once per sample, so recursion counts once), in seconds; each caller's entry is the
 * same for the samples where that caller called it. Stacks without a Python frame are
 * left out. -ENODATA (nothing written) when no stack has one, -ENOMEM, or -EIO. */
int samples_write_pstats(const sample_set *set, FILE *out);

#endif
