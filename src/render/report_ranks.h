/* The ranks of a run in its report: which ranks ran on which host (header), and per
 * role the spread of each phase's per-rank total time (ACROSS RANKS). */
#ifndef LAPSE_RENDER_REPORT_RANKS_H
#define LAPSE_RENDER_REPORT_RANKS_H

#include "analyze/run_model.h"
#include "analyze/run_stats.h"

#include <stdio.h>

struct json_out;

/* Each writer below returns 0, or -ENOMEM before it wrote anything. */

/* "Ranks 4 of world size 4 (openmpi): vm 0-3"; nothing when no process has a rank. */
int report_ranks_header(FILE *out, const run_model *m);
/* ACROSS RANKS of role r (when it has 2 ranks or more): the top phases by their
 * slowest rank's total. */
int report_ranks_block(FILE *out, const run_model *m, const rs_role *rs, uint32_t r, unsigned top);

/* JSON: "ranks" of the run (null when no process has a rank). */
int report_ranks_json_run(struct json_out *j, const run_model *m);
/* JSON: "across_ranks" of a phase (null when its role has no ranks). */
void report_ranks_json_phase(struct json_out *j, const rs_phase *ph);

/* JSON lists this many missing ranks at most (missing_count says how many). */
#define REPORT_MISSING_LISTED 256

/* The ranks below the world size all ranked processes agree on that left no
 * readable file: up to max of them into out (ascending); returns how many there are
 * (0 when the world size is unknown or the files disagree; at most UINT32_MAX), or
 * -ENOMEM; *world the world size. */
int64_t report_missing_ranks(const run_model *m, int64_t *out, uint32_t max, int64_t *world);

/* "0-3,5,7" from ascending distinct ranks; at most about n bytes, "..." when cut. */
char *report_fmt_ranks(char *buf, size_t n, const int64_t *ranks, uint32_t count);

#endif
