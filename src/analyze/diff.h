/* Comparing two runs path by path, with a stated test for each change.
 *
 * Rows are keyed by "role:path" (or by path alone with DIFF_BY_PATH, merging the
 * roles of each side). A row is a real change only when both hold:
 *   - a two-sample Kolmogorov-Smirnov test on the two binned histograms rejects
 *     "same distribution" at alpha = 0.01: D = max |CDF_A - CDF_B| over bucket
 *     edges, significant when D > 1.628 * sqrt((n + m) / (n * m));
 *   - the p50 moved by at least 5% (|p50_B / p50_A - 1| >= 0.05). */
#ifndef LAPSE_ANALYZE_DIFF_H
#define LAPSE_ANALYZE_DIFF_H

#include "run_model.h"

#define DIFF_KS_ALPHA 0.01
#define DIFF_KS_C 1.628       /* c(alpha) for alpha = 0.01 */
#define DIFF_MIN_P50_MOVE 0.05
#define DIFF_FEW_CALLS 30u    /* fewer calls than this on either side: "few calls" */
#define DIFF_TAIL_MOVE 0.25   /* |p99 ratio - p50 ratio| above this: "tail moved" */

enum diff_flags { DIFF_BY_PATH = 1u << 0 };

typedef struct diff_side {
    uint64_t calls, total_ns;
    uint32_t in_processes;
    double mean_ns, p50_ns, p99_ns;
    /* wait%: estimated share of the CPU sampler's ticks at which the thread was
     * off CPU (wait_share.h); -1 when too few ticks saw it */
    double wait_share;
    uint64_t ticks, wait_ticks; /* behind it */
} diff_side;

typedef enum diff_presence { DIFF_BOTH = 0, DIFF_ONLY_A = 1, DIFF_ONLY_B = 2 } diff_presence;

typedef struct diff_row {
    char *key;  /* "role:path", or the path with DIFF_BY_PATH */
    char *role; /* "" with DIFF_BY_PATH */
    char *path;
    diff_presence presence;
    diff_side a, b;
    double mean_ratio, p50_ratio, p99_ratio; /* B / A; negative when A is 0 */
    int64_t total_delta_ns;                  /* B - A */
    double ks_d, ks_threshold;               /* threshold 0 when a side has no calls */
    int ks_significant; /* D > threshold */
    int changed;        /* ks_significant and the p50 moved by >= 5% */
    int few_calls;      /* fewer than DIFF_FEW_CALLS calls on either side */
    int tail_moved;     /* |p99 ratio - p50 ratio| > DIFF_TAIL_MOVE */
} diff_row;

typedef struct diff_result {
    diff_row *rows; /* one side only first (larger total first), then by |total change| */
    size_t count;
    unsigned flags;
    size_t changed, only_a, only_b, unchanged;
    int roles_in_common; /* 0: no role is on both sides (keyed by role:path) */
} diff_result;

/* 0 or -ENOMEM. */
int diff_runs(const run_model *a, const run_model *b, unsigned flags, diff_result *out);
void diff_result_free(diff_result *d);

/* The KS statistic D between two histograms (HIST_BUCKETS counts each): the largest
 * distance between their empirical CDFs at the upper edges of the buckets. 0 when a
 * side is empty. */
double diff_ks_statistic(const uint64_t *ha, const uint64_t *hb);
/* c(alpha) * sqrt((n + m) / (n * m)); 0 when n or m is 0. */
double diff_ks_threshold(uint64_t n, uint64_t m);

#endif
