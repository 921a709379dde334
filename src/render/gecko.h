/* The Firefox Profiler's processed profile format (preprocessedProfileVersion 47,
 * meta.version 27, which profiler.firefox.com upgrades on load) from the timelines
 * and Python stack samples of a run:
 *   - per thread with spans, a thread whose markers are its spans (interval markers,
 *     named by their path, category "Span", in order of start);
 *   - per (pid, tid) of a file's Python samples, a thread "python NAME" whose samples
 *     are the distinct stacks, weighted by how many samples saw each (weightType
 *     "samples"; a stack with no Python frame is a null stack). lapse keeps stacks aggregated, without the instant of each sample:
 *     every sample is placed at the recording's start. The call tree and flame graph
 *     are exact; the samples' track over time is not.
 * Times are milliseconds from meta.startTime, the run's earliest instant. Streams:
 * files are added one at a time (render computes nothing: the caller builds each
 * file's timeline, analyze/timeline.h). */
#ifndef LAPSE_RENDER_GECKO_H
#define LAPSE_RENDER_GECKO_H

#include "analyze/timeline.h"
#include "store/model.h"

#include <stdint.h>
#include <stdio.h>

#define GECKO_PROCESSED_VERSION 47
#define GECKO_META_VERSION 27

typedef struct gecko_writer gecko_writer;

typedef struct gecko_file_stats {
    uint32_t threads;  /* threads written */
    uint64_t markers;  /* of spans */
    uint64_t samples;  /* sample entries (distinct stacks) */
    uint64_t weight;   /* the samples they stand for */
} gecko_file_stats;

/* base_real_ns: the run's 0 (CLOCK_REALTIME). NULL when out of memory. */
gecko_writer *gecko_open(FILE *out, uint64_t base_real_ns);
/* One file: t its timeline on base_real_ns (timeline_build). 0, -ENOMEM or -EIO. */
int gecko_add_file(gecko_writer *w, const store_file *f, const timeline_file *t,
                   gecko_file_stats *stats);
/* Ends the document and frees w: 0, or -EIO when a write failed. */
int gecko_finish(gecko_writer *w);

#endif
