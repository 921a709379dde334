/* A histogram (core/hist.h buckets) stored as the window of buckets between its
 * lowest and highest non-zero bucket, each count in as few bytes as its largest
 * count needs (1, 2, 4 or 8). A merged path keeps one of these instead of a dense
 * HIST_BUCKETS array: most paths occupy a few dozen buckets of a few thousand
 * calls, 2 bytes a bucket. */
#ifndef LAPSE_ANALYZE_HIST_WINDOW_H
#define LAPSE_ANALYZE_HIST_WINDOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct hist_window {
    uint16_t lo;    /* first bucket held */
    uint16_t n;     /* buckets held; 0: empty, c is NULL */
    uint8_t width;  /* bytes of each count: 1, 2, 4 or 8 */
    void *c;        /* n counts of width bytes: the i-th counts bucket lo + i */
} hist_window;

/* w += dense (HIST_BUCKETS counts; NULL adds nothing). 0 or -ENOMEM (w unchanged). */
int hist_window_add_dense(hist_window *w, const uint64_t *dense);
/* w += src. 0 or -ENOMEM (w unchanged). */
int hist_window_add(hist_window *w, const hist_window *src);
/* w += counts[0..n), the counts of buckets lo .. lo + n - 1 (a decoded file's window).
 * 0, -EINVAL (a window past the last bucket) or -ENOMEM (w unchanged). */
int hist_window_add_counts(hist_window *w, unsigned lo, unsigned n, const uint64_t *counts);
/* Number of values held. */
uint64_t hist_window_count(const hist_window *w);
/* Writes all HIST_BUCKETS counts into dense. */
void hist_window_to_dense(const hist_window *w, uint64_t *dense);
/* out[i] = the q[i]-quantile in ns, with exactly hist_quantile's estimate. */
void hist_window_quantiles(const hist_window *w, const double *q, size_t nq, double *out);
/* Clamps each of out[0..nq) into [lo, hi]: a quantile cannot lie outside the
 * smallest and largest value recorded (exact min and max tighten the estimate,
 * most visibly for paths with few calls). */
void hist_window_clamp(double *out, size_t nq, uint64_t lo, uint64_t hi);
void hist_window_free(hist_window *w);

#endif
