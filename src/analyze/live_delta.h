/* Live export's figures: the cumulative state of a running session (a snapshot of it,
 * taken in memory, merged over its threads by name path) and what happened between
 * two such states, for Python's Profiler.deltas() and on_snapshot().
 *
 * An interval's calls, totals and counters are differences; its quantiles are those of
 * the difference of the two histograms (bucket by bucket), so they are the quantiles
 * of the calls completed in the interval, within one bucket (< 1/8 of the value). A
 * path that completed no call and changed no counter in the interval is not in it. */
#ifndef LAPSE_ANALYZE_LIVE_DELTA_H
#define LAPSE_ANALYZE_LIVE_DELTA_H

#include "store/model.h"

#include <stddef.h>
#include <stdint.h>

#define LIVE_NONE UINT32_MAX
#define LIVE_QUANTILES 3 /* p50, p90, p99 */

typedef struct live_counter {
    char *name;
    int64_t sum;   /* over the threads (at the int64 bounds when that overflowed) */
    uint32_t next; /* the next counter of the same path, LIVE_NONE at the end */
} live_counter;

typedef struct live_path {
    uint32_t parent; /* LIVE_NONE for paths[0], outside any span */
    char *name;      /* "" for paths[0] */
    uint64_t calls, total_ns;
    uint64_t *hist;  /* HIST_BUCKETS counts; NULL when none */
    uint32_t first_counter;
} live_path;

typedef struct live_state {
    live_path *paths; /* parents before children; paths[0] is outside any span */
    uint32_t path_count, path_cap;
    live_counter *counters;
    uint32_t counter_count, counter_cap;
    uint32_t *slots; /* index by (parent, name) */
    size_t slot_cap;
} live_state;

/* An empty state (only the outside). 0 or -ENOMEM. */
int live_state_init(live_state *s);
/* Merges the paths and counters of every thread of f into s. 0 or -ENOMEM. */
int live_state_add(live_state *s, const store_file *f);
void live_state_free(live_state *s);

typedef struct live_delta_counter {
    uint32_t counter; /* in the newer state */
    int64_t delta;    /* never 0 */
} live_delta_counter;

typedef struct live_delta_path {
    uint32_t path;   /* in the newer state */
    uint64_t calls, total_ns;
    uint64_t mean_ns;    /* total / calls, rounded as the report rounds a mean; 0 without calls */
    int has_quantiles;   /* some call completed in the interval with a histogram */
    uint64_t quantile_ns[LIVE_QUANTILES]; /* p50, p90, p99, rounded */
    uint32_t counters_first, counter_count; /* live_interval.counters[...] */
} live_delta_path;

typedef struct live_interval {
    int restarted; /* the newer state is not a continuation of the base (a new session):
                      figures of the paths concerned are since its start */
    live_delta_path *paths; /* the paths active in the interval, in path order */
    uint32_t path_count;
    live_delta_counter *counters;
    uint32_t counter_count;
    uint32_t outside_first, outside_count; /* counters counted with no span open */
} live_interval;

/* What happened from base to now. 0 or -ENOMEM. */
int live_interval_build(const live_state *base, const live_state *now, live_interval *out);
void live_interval_free(live_interval *iv);

#endif
