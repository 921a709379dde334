/* GPU ACTIVITY BY SPAN of a role (report_activity of the report model), in text and JSON. */
#ifndef LAPSE_RENDER_REPORT_GPU_H
#define LAPSE_RENDER_REPORT_GPU_H

#include "analyze/report_model.h"

#include <stdio.h>

struct json_out;

/* Nothing unless the role's state is MEASURED. */
void report_activity_block(FILE *out, const run_model *m, const report_role *rr);
/* The GPU ACTIVITY block of every role that has one, under its role's name, then the
 * caveats about GPU activity (its collector that did not start, lost or dropped
 * records); "no GPU activity recorded" when no role has a block.
 * 0 or -EIO. */
int report_write_activity_text(FILE *out, const report_model *r);
/* "gpu_activity_state" and "gpu_activity" (null unless MEASURED) of a role. */
void report_activity_json(struct json_out *j, const run_model *m, const report_role *rr);

#endif
