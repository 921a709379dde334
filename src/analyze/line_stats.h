/* The line profiler's statistics (lapse.LineProfiler, docs/lines.md) as data: per
 * function and region, each line's hits, time, time per hit and share of the
 * function's time; the lines each table shows and the global top-N. The renderers
 * (render/line_stats_render.h) and Python only show these figures. */
#ifndef LAPSE_ANALYZE_LINE_STATS_H
#define LAPSE_ANALYZE_LINE_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { LS_SORT_LINE, LS_SORT_TIME, LS_SORT_HITS } ls_sort;

/* "line", "time" or "hits" -> 0 and *key; anything else -1. */
int ls_sort_parse(const char *name, ls_sort *key);

typedef struct ls_line {
    /* given */
    int lineno;
    uint64_t hits;
    uint64_t time_ns; /* inclusive of the functions the line calls */
    /* computed by ls_model_finish */
    double time_us;
    double per_hit_us; /* time_us / hits; -1 when the line has no hit */
    double share;      /* percent of the function's total_ns; 0 when that is 0 */
    double heat;       /* time_ns over the page's hottest line (0..1) */
    const char *source; /* the line's text ("" when the file has no such line) */
} ls_line;

/* One code object in one region. The strings are the caller's (they outlive the
 * model); lines is malloc'd and owned by the model once added. */
typedef struct ls_function {
    const char *name;
    const char *filename; /* the path, the sort key */
    const char *display;  /* the path as shown (relative to the project) */
    const char *region;   /* NULL: outside every region */
    int first_line;
    const char *const *file_lines; /* the file's source lines, without '\n' */
    size_t nfile_lines;
    ls_line *lines; /* in source order */
    size_t nlines;
    uint64_t total_ns; /* computed: the sum of its lines' times */
    int last_line;     /* computed: its last line that ran */
} ls_function;

typedef struct ls_model {
    ls_function *funcs;
    size_t n, cap;
    uint64_t hottest_ns; /* the page's hottest line */
} ls_model;

/* Adds a copy of *f (taking f->lines); -1 when out of memory (f->lines freed). */
int ls_model_add(ls_model *m, const ls_function *f);
/* Computes every figure and sorts the functions into source order: by file, first
 * line, region (outside every region first), name. */
void ls_model_finish(ls_model *m);
void ls_model_free(ls_model *m);

/* The source text of line n of f's file ("" outside it). */
const char *ls_source(const ls_function *f, int n);

/* print_stats's lines of f: those of time_us >= min_time_us, ordered by key (ties,
 * and LS_SORT_LINE, in source order), of which the table shows the first top_n
 * (top_n < 0: all) in *shown. Writes their indexes into out (f->nlines entries) and
 * returns how many passed min_time_us (a function with none has no table), or -1
 * when out of memory. */
ssize_t ls_function_lines(const ls_function *f, double min_time_us, ls_sort key, long top_n,
                          size_t *out, size_t *shown);

typedef struct ls_ref {
    size_t func, line;
} ls_ref;

/* The top_n lines (top_n < 0: all) of every function and region together with
 * time_us >= min_time_us, by key: time or hits (most first), or line (by file, then
 * line number); ties in the functions' order. *out is malloc'd (the caller frees it);
 * returns how many, or -1 when out of memory. */
ssize_t ls_global_top(const ls_model *m, double min_time_us, ls_sort key, long top_n,
                      ls_ref **out);

#endif
