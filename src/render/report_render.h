/* The report of a run, as text for people and as JSON ("lapse.report" schema 2)
 * for programs. Both take an already loaded model; render never reads files. */
#ifndef LAPSE_RENDER_REPORT_RENDER_H
#define LAPSE_RENDER_REPORT_RENDER_H

#include "analyze/run_model.h"
#include "analyze/run_stats.h"

#include <stdio.h>

#define REPORT_SCHEMA "lapse.report"
#define REPORT_SCHEMA_VERSION 2

typedef struct report_options {
    unsigned top; /* rows of DOMINANT PHASES and top-level shares; 0: 10 */
    int ascii;    /* the sparkline in ASCII (report_wants_ascii) */
} report_options;

/* Whether text output should keep to ASCII: LAPSE_ASCII=1, TERM=dumb, or a locale
 * (LC_ALL, else LC_CTYPE, else LANG) that does not name UTF-8. */
int report_wants_ascii(void);

/* Returns 0, -EIO when writing failed, or -ENOMEM when out of memory (the report is
 * then cut short: text without its CAVEATS, JSON without its end). */
int report_write_text(FILE *out, const run_model *m, const run_stats *s, const report_options *o);
int report_write_json(FILE *out, const run_model *m, const run_stats *s, const report_options *o);

#endif
