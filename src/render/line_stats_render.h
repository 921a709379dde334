/* The line profiler's outputs (docs/lines.md, "Output"), formatted from the model
 * (analyze/line_stats.h): the per-function tables, the global top and the annotated
 * HTML page. Each returns 0, or -1 when out of memory. */
#ifndef LAPSE_RENDER_LINE_STATS_RENDER_H
#define LAPSE_RENDER_LINE_STATS_RENDER_H

#include <stdio.h>

#include "../analyze/line_stats.h"

/* The line saying `lost` events were not counted; nothing when there are none. */
void ls_text_lost(FILE *out, uint64_t lost);
/* print_stats: one table per function with a line of time_us >= min_time_us. */
int ls_text_functions(FILE *out, const ls_model *m, double min_time_us, long top_n_lines,
                      ls_sort key);
/* print_global_top_stats: the top_n lines of all functions together. */
int ls_text_global(FILE *out, const ls_model *m, long top_n, double min_time_us, ls_sort key);
/* to_html: each function's whole source, the lines that ran shaded by their heat. */
void ls_html(FILE *out, const ls_model *m);

#endif
