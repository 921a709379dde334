/* The line profiler's text tables: see line_stats_render.h. */
#include "line_stats_render.h"

#include <stdlib.h>
#include <string.h>

void ls_text_lost(FILE *out, uint64_t lost)
{
    if (lost)
        fprintf(out, "lapse lines: %llu line events were not counted (a line outside its "
                     "function's lines, or no memory): the figures below miss them\n",
                (unsigned long long)lost);
}

static const char *ms(char *buf, size_t n, uint64_t ns)
{
    snprintf(buf, n, "%.3f", (double)ns / 1e6);
    return buf;
}

static const char *per_hit(char *buf, size_t n, const ls_line *line)
{
    if (line->per_hit_us < 0)
        return "-";
    snprintf(buf, n, "%.2f", line->per_hit_us);
    return buf;
}

int ls_text_functions(FILE *out, const ls_model *m, double min_time_us, long top_n_lines,
                      ls_sort key)
{
    size_t most = 1;
    for (size_t i = 0; i < m->n; i++)
        if (m->funcs[i].nlines > most)
            most = m->funcs[i].nlines;
    size_t *idx = malloc(most * sizeof *idx);
    if (!idx)
        return -1;
    char a[48], b[48];
    for (size_t i = 0; i < m->n; i++) {
        const ls_function *f = &m->funcs[i];
        size_t shown;
        ssize_t n = ls_function_lines(f, min_time_us, key, top_n_lines, idx, &shown);
        if (n < 0) {
            free(idx);
            return -1;
        }
        if (!n)
            continue;
        fprintf(out, "\n%s at %s:%d%s%s%s   total %s ms\n", f->name, f->display, f->first_line,
                f->region ? " [region " : "", f->region ? f->region : "", f->region ? "]" : "",
                ms(a, sizeof a, f->total_ns));
        fprintf(out, "%6s %10s %12s %13s %7s  Source\n", "Line", "Hits", "Time (ms)",
                "Per hit (us)", "% func");
        for (size_t k = 0; k < shown; k++) {
            const ls_line *line = &f->lines[idx[k]];
            fprintf(out, "%6d %10llu %12s %13s %6.1f%%  %s\n", line->lineno,
                    (unsigned long long)line->hits, ms(a, sizeof a, line->time_ns),
                    per_hit(b, sizeof b, line), line->share, line->source);
        }
    }
    free(idx);
    return 0;
}

/* Python's str.strip() of the ASCII whitespace */
static int blank(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

int ls_text_global(FILE *out, const ls_model *m, long top_n, double min_time_us, ls_sort key)
{
    ls_ref *refs;
    ssize_t n = ls_global_top(m, min_time_us, key, top_n, &refs);
    if (n < 0)
        return -1;
    char a[48], b[48];
    fprintf(out, "%10s %12s %13s  Where / Source\n", "Hits", "Time (ms)", "Per hit (us)");
    for (ssize_t i = 0; i < n; i++) {
        const ls_function *f = &m->funcs[refs[i].func];
        const ls_line *line = &f->lines[refs[i].line];
        const char *s = line->source;
        while (blank((unsigned char)*s))
            s++;
        size_t len = strlen(s);
        while (len && blank((unsigned char)s[len - 1]))
            len--;
        fprintf(out, "%10llu %12s %13s  %s:%d %s%s%s%s: %.*s\n", (unsigned long long)line->hits,
                ms(a, sizeof a, line->time_ns), per_hit(b, sizeof b, line), f->display,
                line->lineno, f->name, f->region ? " [" : "", f->region ? f->region : "",
                f->region ? "]" : "", (int)len, s);
    }
    free(refs);
    return 0;
}
