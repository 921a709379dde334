/* The PYTHON SAMPLES block of `lapse report`: for each file with Python stack samples,
 * the recording (mode, rates, late samples, read errors), then per process and per
 * thread the functions by self and total share, and the functions that ran inside
 * each span. Every figure is an estimate from sampling and is labelled as one. */
#ifndef LAPSE_RENDER_REPORT_SAMPLES_H
#define LAPSE_RENDER_REPORT_SAMPLES_H

#include "analyze/report_model.h"
#include "json_out.h"

#include <stdio.h>

/* Writes nothing when no worker has samples; r->top rows per table. */
void report_samples_text(FILE *out, const report_model *r);
/* Writes the "python_samples" array (empty when no worker has samples). */
void report_samples_json(json_out *j, const report_model *r);

#endif
