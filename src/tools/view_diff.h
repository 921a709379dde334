/* `lapse view A B`: the page of the diff of two runs. Its one document is exactly
 * what `lapse diff A B --json` prints (analyze/diff.h, render/diff_json.c): the page
 * shows the two sides per path with the diff's stated test, and computes nothing. */
#ifndef LAPSE_TOOLS_VIEW_DIFF_H
#define LAPSE_TOOLS_VIEW_DIFF_H

#include "view_run.h"

/* Writes the page of the diff of the runs at path_a and path_b to out_path ("-":
 * standard output). diff_flags: DIFF_BY_PATH; flags: STORE_SHARE; compress as for
 * view_run_write. A side with no readable file is an error (r->rc, r->err), as a run
 * with none is for one run's page. */
void view_diff_write(const char *path_a, const char *path_b, unsigned diff_flags,
                     const char *out_path, unsigned flags, int compress, view_run_result *r);

#endif
