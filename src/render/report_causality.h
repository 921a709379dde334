/* The CAUSALITY block of `lapse report` and its "causality" JSON member: the pairs
 * of signals and waits, and the critical path with the phases on it
 * (analyze/causality.h). Nothing (text) or null (JSON) when no file has any. */
#ifndef LAPSE_RENDER_REPORT_CAUSALITY_H
#define LAPSE_RENDER_REPORT_CAUSALITY_H

#include "analyze/report_model.h"
#include "json_out.h"

#include <stdio.h>

void report_causality_text(FILE *out, const report_model *r);
void report_causality_json(json_out *j, const report_model *r);

#endif
