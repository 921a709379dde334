/* The timeline of one file as `lapse view` draws it: its spans on the run's common
 * clock (CLOCK_REALTIME through the file's anchor, less the run's first instant),
 * per thread in order of start (a parent before what it holds), each with its nesting
 * level and its path ("a/b/c", under the thread's name when the file nests spans so,
 * as the report's paths are), and where the timeline stopped when it dropped spans;
 * per thread of its Python samples the merged flame chart of its stacks; and the
 * process sampler's RSS and I/O over time (proc_track.h).
 * Built from a decoded file (store), one file at a time; render formats it. */
#ifndef LAPSE_ANALYZE_TIMELINE_H
#define LAPSE_ANALYZE_TIMELINE_H

#include "proc_track.h"
#include "sample_chart.h"
#include "store/model.h"

#include <stdint.h>

typedef struct tl_span {
    int64_t begin_ns;  /* on the run's clock, from its first instant */
    uint64_t dur_ns;
    uint32_t level;    /* 0 for a top-level span: how many spans hold it */
    uint32_t path;     /* index in timeline_file.paths */
} tl_span;

typedef struct tl_thread {
    int64_t tid;
    const char *name;  /* the file's; "" when unknown */
    uint64_t first, count; /* its spans: spans[first .. first + count) */
} tl_thread;

/* The merged flame chart of one sampled thread (sample_chart.h), on the run's clock. */
typedef struct tl_chart {
    int64_t pid, tid;
    uint32_t thread_name; /* string id in the file's samples, 0 unknown */
    sample_slice *slices; /* by start, then depth */
    size_t count;
} tl_chart;

/* One kernel, copy or set of the file's GPU activity (section GPU_ACTIVITY) as the view
 * draws it (gpu_track.c), on the run's clock. */
typedef struct tl_gpu_op {
    int64_t begin_ns;  /* its start on the device */
    uint64_t dur_ns;
    uint32_t kind;     /* store_gpu_kind */
    uint32_t name;     /* index in timeline_file.gpu_names: the kernel's, "memcpy HtoD", "memset" */
    uint32_t row;      /* in its track: ops of one row do not overlap, unless the track
                          ran out of rows (TL_GPU_ROWS) */
    uint64_t bytes;    /* copies and sets; 0 for kernels */
    int64_t launch_ns; /* the launching call, on the run's clock; meaningful when thread is set */
    int64_t queue_ns;  /* begin_ns - launch_ns: launch to start on the device */
    uint32_t thread;   /* the launching thread (index in threads), UINT32_MAX: launch not seen */
    uint32_t path;     /* the span open there (index in paths), UINT32_MAX: none open */
    uint64_t span;     /* that span's index in its thread's spans (its bar), UINT64_MAX when
                          the timeline does not hold it (dropped, or none open) */
} tl_gpu_op;

#define TL_GPU_TRACKS 256u /* (device, stream) pairs past the 255th share the last track */
#define TL_GPU_ROWS 16u    /* rows a track lays overlapping ops in */

typedef struct tl_gpu_track {
    uint32_t device, stream; /* its first pair */
    uint32_t more;           /* pairs past TL_GPU_TRACKS that share it */
    uint32_t rows;
    uint32_t first, count;   /* its ops: gpu_ops[first .. first + count), by start */
} tl_gpu_track;

typedef struct timeline_file {
    tl_span *spans;    /* grouped by thread, in the threads' order */
    uint64_t span_count;
    tl_thread *threads;
    uint32_t thread_count;
    char **paths;      /* the distinct paths of its spans */
    uint32_t path_count, path_cap;
    uint64_t dropped;  /* spans the timeline had no room for (meta.timeline_dropped) */
    int64_t dropped_at_ns; /* where it stopped: the end of its last span, else the
                              file's write; meaningful when dropped > 0 */
    tl_chart *charts;  /* per (pid, tid) of its Python samples with a frame, by pid, tid */
    uint32_t chart_count;
    proc_point *proc;  /* the process sampler's records, in time order */
    uint32_t proc_count;
    int proc_rss, proc_io; /* whether the session read RSS, I/O (else those fields are 0) */
    uint64_t rss_peak, io_peak; /* the largest rss_bytes; of read_per_s and write_per_s */
    tl_gpu_op *gpu_ops; /* grouped by track, in the tracks' order */
    uint32_t gpu_op_count;
    tl_gpu_track *gpu_tracks; /* by device, then stream */
    uint32_t gpu_track_count;
    const char **gpu_names; /* the ops' names (borrowed: the section's, or constants) */
    uint32_t gpu_name_count;
    void *index;       /* building only */
} timeline_file;

/* The common clock's offset of f (every timeline: lapse view's, the Perfetto export):
 * its CLOCK_MONOTONIC ns + this = CLOCK_REALTIME of the anchor instant, mod 2^64. */
uint64_t timeline_clock_offset(const store_file *f);

/* The order every timeline lays out f's spans in (lapse view's, the Perfetto and
 * Firefox Profiler exports): by thread, then start, then depth (a parent before what
 * it holds), then the longer first (viewers nest slices of one thread by their order
 * when start times tie). order gets f->span_count indices into f->spans. */
void timeline_span_order(const store_file *f, uint64_t *order);

/* The path of f's node (a span's place in the path tree, store_node) as the timeline's
 * paths name it, interned: an index in t->paths; UINT32_MAX for a thread root of a file
 * that does not nest spans under thread names (no span open), or a node out of range.
 * While building only (t->index); UINT32_MAX - 1 when out of memory. */
uint32_t timeline_node_path(timeline_file *t, const store_file *f, uint32_t node);

/* Builds f's timeline with base_real_ns (CLOCK_REALTIME) as 0. 0, or -ENOMEM (t is
 * then empty). */
int timeline_build(const store_file *f, uint64_t base_real_ns, timeline_file *t);
void timeline_free(timeline_file *t);

#endif
