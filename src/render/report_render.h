/* The report of a run, as text for people and as JSON ("lapse.report" schema 2)
 * for programs. Both format one report model (analyze/report_model.h); render never
 * reads files and computes no figure. */
#ifndef LAPSE_RENDER_REPORT_RENDER_H
#define LAPSE_RENDER_REPORT_RENDER_H

#include "analyze/report_model.h"

#include <stdio.h>

#define REPORT_SCHEMA "lapse.report"
#define REPORT_SCHEMA_VERSION 2

typedef struct report_options {
    int ascii; /* the sparkline in ASCII (report_wants_ascii) */
} report_options;

/* Whether text output should keep to ASCII: LAPSE_ASCII=1, TERM=dumb, or a locale
 * (LC_ALL, else LC_CTYPE, else LANG) that does not name UTF-8. */
int report_wants_ascii(void);

/* Returns 0, -EIO when writing failed, or -ENOMEM (JSON: an index of phases). */
int report_write_text(FILE *out, const report_model *r, const report_options *o);
int report_write_json(FILE *out, const report_model *r, const report_options *o);

#endif
