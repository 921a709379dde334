/* The paths of a role in the order of their path strings (strcmp), without
 * comparing the strings themselves where the tree gives that order: a report of a
 * million paths sorts them in a fraction of the time. */
#ifndef LAPSE_ANALYZE_PATH_ORDER_H
#define LAPSE_ANALYZE_PATH_ORDER_H

#include "run_model.h"

/* Writes into out the n paths of role r other than its root (n must be their number),
 * ascending by path string; equal strings by index. After run_model_finish.
 * 0 or -ENOMEM. */
int path_order(const run_model *m, uint32_t r, uint32_t *out, uint32_t n);

#endif
