/* The PYTHON SAMPLES block of `lapse report`: for each file with Python stack samples,
 * the recording (mode, rates, late samples, read errors), then per process and per
 * thread the functions by self and total share, and the functions that ran inside
 * each span. Every figure is an estimate from sampling and is labelled as one. */
#ifndef LAPSE_RENDER_REPORT_SAMPLES_H
#define LAPSE_RENDER_REPORT_SAMPLES_H

#include "analyze/run_model.h"
#include "json_out.h"

#include <stdio.h>

/* Writes nothing when no worker has samples. top: rows per table. 0, or -ENOMEM (the
 * block is cut short there). */
int report_samples_text(FILE *out, const run_model *m, unsigned top);
/* Writes the "python_samples" array (empty when no worker has samples). 0, or -ENOMEM
 * (the array is cut short there). */
int report_samples_json(json_out *j, const run_model *m, unsigned top);

#endif
