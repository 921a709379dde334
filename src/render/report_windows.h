/* The BACKEND WINDOW lines of `lapse report` and its "backend_windows" JSON member:
 * each process's heavy backend window (analyze/report_model.h, report_window).
 * Nothing (text) or an empty list (JSON) when no process asked for one. */
#ifndef LAPSE_RENDER_REPORT_WINDOWS_H
#define LAPSE_RENDER_REPORT_WINDOWS_H

#include "analyze/report_model.h"
#include "json_out.h"

#include <stdio.h>

void report_windows_text(FILE *out, const report_model *r);
void report_windows_json(json_out *j, const report_model *r);

#endif
