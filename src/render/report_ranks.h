/* The ranks of a run in its report: which ranks ran on which host (header), and per
 * role the spread of each phase's per-rank total time (ACROSS RANKS). */
#ifndef LAPSE_RENDER_REPORT_RANKS_H
#define LAPSE_RENDER_REPORT_RANKS_H

#include "analyze/report_model.h"

#include <stdio.h>

struct json_out;

/* "Ranks 4 of world size 4 (openmpi): vm 0-3"; nothing when no process has a rank. */
void report_ranks_header(FILE *out, const run_ranks *rk);
/* ACROSS RANKS of a role (when it has 2 ranks or more): the top phases by their
 * slowest rank's total. */
void report_ranks_block(FILE *out, const run_model *m, const report_role *rr);

/* JSON: "ranks" of the run (null when no process has a rank). */
void report_ranks_json_run(struct json_out *j, const run_ranks *rk);
/* JSON: "across_ranks" of a phase (null when its role has no ranks). */
void report_ranks_json_phase(struct json_out *j, const rs_phase *ph);

/* "0-3,5,7" from ascending distinct ranks; at most about n bytes, "..." when cut. */
char *report_fmt_ranks(char *buf, size_t n, const int64_t *ranks, uint32_t count);

#endif
