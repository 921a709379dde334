/* Figures from Python stack samples for reports: per process, per thread and per
 * span path, the functions by self share (the innermost frame) and by total share
 * (anywhere on the stack, once per stack however deep the recursion). A function is
 * its qualified name and file. Shares are of the time the group's samples stand for
 * (of its sample counts when no sample carries a time). All figures are estimates. */
#ifndef LAPSE_ANALYZE_SAMPLE_STATS_H
#define LAPSE_ANALYZE_SAMPLE_STATS_H

#include "store/model.h"

#include <stdint.h>

#define SS_ANY INT64_MIN /* a filter that takes every pid or tid */
#define SS_ANY_SPAN UINT32_MAX

typedef struct ss_func {
    uint32_t function, file; /* string ids of the samples */
    uint64_t self_count, self_ns;
    uint64_t total_count, total_ns;
} ss_func;

typedef struct ss_group {
    uint64_t count, weight_ns; /* samples of the group and the time they stand for */
    int by_weight;             /* 1: shares by time; 0: by counts */
    ss_func *funcs;            /* functions seen in the group */
    uint32_t func_count;
    uint32_t *by_self, *by_total; /* indexes into funcs, best first */
} ss_group;

/* The group of the stacks of s that match pid, tid (SS_ANY: all) and span (a string
 * id; SS_ANY_SPAN: all). 0, or -ENOMEM. */
int ss_group_build(const store_samples *s, int64_t pid, int64_t tid, uint32_t span,
                   ss_group *g);
/* The group of the stacks sampled while span was open: its span path is span or
 * nested under it ("a/b" is under "a"). 0, or -ENOMEM. */
int ss_group_build_under(const store_samples *s, const char *span, ss_group *g);
void ss_group_free(ss_group *g);

/* Every span path that samples carry, and each of its ancestors, with the samples
 * taken while it was open (nested spans included) and the time they stand for (weight:
 * by sample counts when no sample carries a time), heaviest first. */
typedef struct ss_span_total {
    char *path;
    uint64_t weight, count;
} ss_span_total;
int ss_span_totals(const store_samples *s, ss_span_total **out, uint32_t *count);
void ss_span_totals_free(ss_span_total *t, uint32_t count);

/* Passes lost to read errors (reads that failed or were torn, left out) as a share of
 * the recording's passes (0 without passes), and whether that share is over
 * SS_LOST_BIAS_SHARE: the loss is not even, a short call being the likeliest to be torn
 * (it changes fastest), so the shares lean toward callers. */
#define SS_LOST_BIAS_SHARE 0.01
double ss_lost_share(const store_samples *s);
int ss_lost_biased(const store_samples *s);

/* A function's self or total share of its group, 0..1. */
double ss_self_share(const ss_group *g, const ss_func *f);
double ss_total_share(const ss_group *g, const ss_func *f);

/* Distinct values in s, sorted: pids; tids of one pid; span path ids (0 left out). */
uint32_t ss_pids(const store_samples *s, int64_t *out, uint32_t cap);
uint32_t ss_tids(const store_samples *s, int64_t pid, int64_t *out, uint32_t cap);
uint32_t ss_spans(const store_samples *s, uint32_t *out, uint32_t cap);
/* The thread name of (pid, tid) seen in the most samples (a string id, 0 unknown). */
uint32_t ss_thread_name(const store_samples *s, int64_t pid, int64_t tid);

#endif
