/* A diff of two runs, as text and as JSON ("lapse.diff" schema 1). */
#ifndef LAPSE_RENDER_DIFF_RENDER_H
#define LAPSE_RENDER_DIFF_RENDER_H

#include "analyze/diff.h"

#include <stdio.h>

#define DIFF_SCHEMA "lapse.diff"
#define DIFF_SCHEMA_VERSION 1

typedef struct diff_options {
    unsigned top; /* text: rows shown; 0: 30. JSON always has every row. */
} diff_options;

/* The test rule, as printed in the footer and put in the JSON. */
extern const char diff_rule_text[];

int diff_write_text(FILE *out, const run_model *a, const run_model *b, const diff_result *d,
                    const diff_options *o);
int diff_write_json(FILE *out, const run_model *a, const run_model *b, const diff_result *d,
                    const diff_options *o);

#endif
