/* GPU ACTIVITY BY SPAN of a role (report_gpu of the report model), in text and JSON. */
#ifndef LAPSE_RENDER_REPORT_GPU_H
#define LAPSE_RENDER_REPORT_GPU_H

#include "analyze/report_model.h"

#include <stdio.h>

struct json_out;

/* Nothing unless the role's state is MEASURED. */
void report_gpu_block(FILE *out, const run_model *m, const report_role *rr);
/* "gpu_activity_state" and "gpu_activity" (null unless MEASURED) of a role. */
void report_gpu_json(struct json_out *j, const run_model *m, const report_role *rr);

#endif
