/* Chrome trace JSON (the format Perfetto and chrome://tracing open) from the
 * timelines of a run: one process track per .lapse file, one thread track per
 * thread, one complete ("X") slice per timeline span (in order of start, a parent
 * before the spans it holds), counter ("C") tracks of the process sampler's I/O rate
 * and RSS, and for a file with Python stack samples one track per sampled thread
 * with its stacks merged (see add_samples in perfetto.c), and for a file with GPU
 * activity one track per device and stream, its kernels, copies and sets as slices,
 * with a flow arrow from the launching thread (at the launch) to each (add_activity).
 *
 * The writer streams: files are added one at a time and nothing of a file is kept
 * after perfetto_add_file returns, so a run with millions of spans costs one
 * file's memory. Render never reads files: the caller decodes them (store) and
 * hands them over. All files must be placed on one time base: call
 * perfetto_first_ns on every file first, take the minimum, and pass it as base_ns.
 */
#ifndef LAPSE_RENDER_PERFETTO_H
#define LAPSE_RENDER_PERFETTO_H

#include "store/model.h"

#include <stdint.h>
#include <stdio.h>

typedef struct perfetto_writer perfetto_writer;

/* What perfetto_add_file wrote for one file. */
typedef struct perfetto_file_stats {
    int64_t pid;          /* the pid of its track (the file's pid unless it collided) */
    uint32_t threads;     /* thread tracks */
    uint64_t slices;      /* "X" events of spans */
    uint64_t sample_slices; /* "X" events of the merged Python samples' tracks */
    uint64_t dropped;     /* meta.timeline_dropped: spans the timeline had no room for */
    uint64_t counters;    /* "C" events: the process sampler's I/O rate and RSS */
    uint32_t gpu_tracks;  /* tracks of (device, stream) pairs (GPU_ACTIVITY) */
    uint64_t gpu_slices;  /* "X" events of kernels, copies and sets */
    uint64_t flows;       /* flow arrows from a launching thread to its GPU record */
} perfetto_file_stats;


/* Earliest instant of f on the common timeline: the first span begin or process
 * sampler record, or when f has neither the session start. Returns 0 and sets *first_ns, or -1 when f has
 * neither (all zero). */
int perfetto_first_ns(const store_file *f, uint64_t *first_ns);

/* Starts a trace on out (which the caller opens, and closes after
 * perfetto_finish). Returns NULL when out of memory. */
perfetto_writer *perfetto_open(FILE *out);
/* The same, gzip-compressed (a .json.gz that Perfetto opens as it is). NULL when out
 * of memory or when lapse was built without zlib (perfetto_gzip_available). */
perfetto_writer *perfetto_open_gzip(FILE *out);
int perfetto_gzip_available(void);

/* Writes the tracks and slices of one file; base_ns (common timeline) becomes 0.
 * Returns 0, -ENOMEM, or -EIO when a write failed. stats may be NULL. */
int perfetto_add_file(perfetto_writer *w, const store_file *f, uint64_t base_ns,
                      perfetto_file_stats *stats);

/* Ends the JSON document, flushes and frees w. Returns 0, or -EIO when any write
 * of the trace failed (the output is then incomplete). */
int perfetto_finish(perfetto_writer *w);

#endif
