/* `lapse export`'s samples formats: the samples of a run read (store, analyze) and
 * written (render). */
#ifndef LAPSE_TOOLS_EXPORT_SAMPLES_H
#define LAPSE_TOOLS_EXPORT_SAMPLES_H

#include <stddef.h>
#include <stdio.h>

/* The samples of every file of PATH (a .lapse file, a run directory or a directory of
 * runs, as `lapse report` takes it) merged, written as format: "collapsed",
 * "speedscope", "flamegraph" (title for the flame graph and speedscope) or "pstats".
 * 0, or a negative code with one line in err (no such path, no file with samples,
 * pstats with no Python frame, unknown format, write error). */
int samples_export(const char *path, const char *format, const char *title, FILE *out,
                   char *err, size_t errlen);

#endif
