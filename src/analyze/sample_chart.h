/* The merged flame chart of one sampled thread's Python stacks, as every timeline
 * lays it out (the Perfetto export's "Python samples, merged" track, lapse view's
 * samples under their thread). A file's samples are aggregated stacks (counts and the
 * time they stand for) with no instant of their own: the stacks are laid side by side
 * from the recording's start, ordered frame by frame root first (so that stacks with
 * a common prefix are neighbours), each as wide as the time it stands for, frames of a
 * common prefix merged. The x axis is time sampled, not when it ran. */
#ifndef LAPSE_ANALYZE_SAMPLE_CHART_H
#define LAPSE_ANALYZE_SAMPLE_CHART_H

#include "store/model.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sample_slice {
    int64_t ts;     /* ns, on the caller's clock (ts0 is the recording's start) */
    uint64_t dur;
    uint32_t depth; /* 0: the outermost frame */
    uint32_t frame; /* index in s->frames */
} sample_slice;

typedef struct sample_chart {
    sample_slice *items; /* by ts, then depth (a parent before what it holds) */
    size_t count, cap;
} sample_chart;

/* The time a stack stands for: its weight, or when the recording kept none its
 * count of sampling periods. */
uint64_t sample_stack_width_ns(const store_samples *s, const store_sample_stack *st);

/* Lays out the stacks idx[0..n) of s (indices into s->stacks, reordered here) from
 * ts0 into out (emptied first, kept allocated for the next thread). 0 or -ENOMEM. */
int sample_chart_layout(const store_samples *s, uint32_t *idx, uint32_t n, int64_t ts0,
                        sample_chart *out);
void sample_chart_free(sample_chart *c);

#endif
