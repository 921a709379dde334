/* The data of `lapse view`'s page beside the report: the timelines of a run's files
 * (analyze/timeline.h) and their Python stack samples, as one compact JSON document
 * of columns (schema "lapse.view", docs/view.md), streamed one file at a time. */
#ifndef LAPSE_RENDER_VIEW_DATA_H
#define LAPSE_RENDER_VIEW_DATA_H

#include "analyze/timeline.h"
#include "json_out.h"
#include "store/model.h"

#include <stdint.h>
#include <stdio.h>

#define VIEW_DATA_SCHEMA "lapse.view"
#define VIEW_DATA_VERSION 1

typedef struct view_data_writer {
    json_out j;
} view_data_writer;

/* Starts the document on out; base_real_ns is the run's 0 (CLOCK_REALTIME). */
void view_data_begin(view_data_writer *w, FILE *out, uint64_t base_real_ns);
/* One process: its file's identity, its timeline, its samples (when f has some). */
void view_data_add(view_data_writer *w, const char *file, const store_file *f,
                   const timeline_file *t);
/* Ends the document. 0, or -EIO when a write failed. */
int view_data_finish(view_data_writer *w);

#endif
