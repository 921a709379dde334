/* GPU ACTIVITY BY SPAN: a role's kernels, copies and sets (ACTIVITY), per span that
 * launched them, with their GPU time and its share of the role's, and the kernels that
 * took the most of it. Built from run_model.activity; part of the report model. */
#ifndef LAPSE_ANALYZE_GPU_ACTIVITY_H
#define LAPSE_ANALYZE_GPU_ACTIVITY_H

#include "run_model.h"

#include <stdint.h>

#define REPORT_ACTIVITY_SPAN_TOP 3u /* kernels named per span */

typedef struct report_activity_kernel {
    uint32_t name; /* string id */
    uint64_t count, ns;
} report_activity_kernel;

typedef struct report_activity_span {
    uint32_t path; /* index in run_model.paths: a phase, or the role root (launched with no
                      span open, or with unseen set, launches the collector did not see) */
    int unseen;
    uint64_t kernels, kernel_ns, copies, copy_bytes, copy_ns, sets, set_bytes, set_ns;
    double share; /* kernel_ns of the role's kernel_ns; -1 when the role ran no kernel */
    uint32_t top_first, top_count; /* report_activity.span_top[first .. first + count): its
                                      kernels, most GPU time first */
} report_activity_span;

typedef struct report_activity {
    int state; /* report_state: NOT_COLLECTED (no process of the role collected),
                  NONE_MEASURED (collected, no record: no block), MEASURED */
    uint32_t processes; /* of the role, whose collector ran */
    uint64_t kernels, kernel_ns, copies, copy_bytes, copy_ns, sets, set_bytes, set_ns;
    uint64_t dropped; /* records past the collectors' bound, all processes */
    report_activity_span *spans; /* most kernel time first, then most bytes, then path order */
    uint32_t span_count;
    report_activity_kernel *top; /* the role's kernels (merged by name), most GPU time first: at
                               most the report's top */
    uint32_t top_count;
    report_activity_kernel *span_top;
    uint32_t span_top_count;
} report_activity;

/* 0 or -ENOMEM (out is then empty). */
int report_activity_build(const run_model *m, uint32_t role, unsigned top, report_activity *out);
void report_activity_free(report_activity *g);

#endif
