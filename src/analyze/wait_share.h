/* wait%: of the CPU sampler's ticks at which an entry of a path was open, the
 * share at which its thread was off CPU; shown only when enough ticks stand behind
 * it (docs/report.md, "wait%"). */
#ifndef LAPSE_ANALYZE_WAIT_SHARE_H
#define LAPSE_ANALYZE_WAIT_SHARE_H

#include <stdint.h>

/* A share is shown when its Wilson score interval at WAIT_Z standard deviations
 * (WAIT_CONFIDENCE of the time) lies within WAIT_MAX_ERROR of it on both sides:
 * from about 100 ticks for a share near 0 or 1 to about 350 near one half. The
 * ticks are treated as independent draws; the sampler's own bias, measured at a
 * few points (bench/wait_accuracy.py), comes on top. */
#define WAIT_Z 3.0
#define WAIT_CONFIDENCE 0.997
#define WAIT_MAX_ERROR 0.08

/* wait / ticks, or -1 when too few ticks stand behind it (or wait > ticks). */
double wait_share(uint64_t ticks, uint64_t wait);

#endif
