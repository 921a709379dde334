/* The timeline of one process as regions: its spans grouped by name (every thread
 * and every path of a name together), each region's calls in order of start, as
 * (start, end) nanoseconds from an origin on the run's common clock
 * (CLOCK_REALTIME of the files' anchors, as the Perfetto export places them). The
 * shape of scope_profiler's per-rank regions (`lapse export --hdf5`). */
#ifndef LAPSE_ANALYZE_SPAN_REGIONS_H
#define LAPSE_ANALYZE_SPAN_REGIONS_H

#include "store/model.h"

#include <stdint.h>

typedef struct span_region {
    const char *name;   /* the file's name string (borrowed from the store_file) */
    uint64_t count;     /* calls: timeline spans of that name */
    int64_t *start_ns;  /* count starts, ascending (ties: the longer call first) */
    int64_t *end_ns;    /* the matching ends */
} span_region;

typedef struct span_regions {
    span_region *regions; /* in order of their first call's start */
    uint32_t count;
    int64_t *times;       /* behind every region's start_ns and end_ns */
} span_regions;

/* The session start of f on the common clock (its earliest instant when the
 * session start is missing). Returns 0 and sets *origin_ns, or -1 when f has neither. */
int span_regions_origin(const store_file *f, uint64_t *origin_ns);

/* Groups f's timeline spans by name, times relative to origin_ns (common clock).
 * Returns 0 or -ENOMEM (out is then empty). span_regions_free releases it. */
int span_regions_build(const store_file *f, uint64_t origin_ns, span_regions *out);
void span_regions_free(span_regions *r);

#endif
