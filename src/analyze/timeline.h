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

/* Builds f's timeline with base_real_ns (CLOCK_REALTIME) as 0. 0, or -ENOMEM (t is
 * then empty). */
int timeline_build(const store_file *f, uint64_t base_real_ns, timeline_file *t);
void timeline_free(timeline_file *t);

#endif
