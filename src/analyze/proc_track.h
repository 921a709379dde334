/* The process sampler's records (section PROCESS_SAMPLES) as tracks over time, as
 * every timeline draws them (lapse view's line tracks under a process, the Perfetto
 * export's counter tracks): per record its interval on the caller's clock, the
 * largest RSS read at its ends, and the bytes read and written by the process's
 * calls (rchar, wchar) per second of the record. A record is one value over its
 * interval: what happened inside it is not seen. The file's counters (section
 * COUNTERS) are totals per path with no time of their own: they make no track. */
#ifndef LAPSE_ANALYZE_PROC_TRACK_H
#define LAPSE_ANALYZE_PROC_TRACK_H

#include "store/model.h"

#include <stdint.h>

typedef struct proc_point {
    int64_t begin_ns, end_ns; /* the record's first and last reading, on the caller's clock */
    uint64_t rss_bytes;       /* rss_max_bytes */
    uint64_t read_per_s, write_per_s; /* read_chars, write_chars per second, rounded down */
    int gap_after;            /* nothing is known after it (the next record starts later, or none) */
} proc_point;

/* The point of record i of f (i < f->proc.count), with offset added to its
 * CLOCK_MONOTONIC times (wrapping: the timelines' clock arithmetic). */
proc_point proc_track_point(const store_file *f, uint32_t i, uint64_t offset);

#endif
