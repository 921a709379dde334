/* The line profiler's figures: see line_stats.h. */
#include "line_stats.h"

#include <stdlib.h>
#include <string.h>

int ls_sort_parse(const char *name, ls_sort *key)
{
    static const char *const names[] = {"line", "time", "hits"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i])) {
            *key = (ls_sort)i;
            return 0;
        }
    return -1;
}

int ls_model_add(ls_model *m, const ls_function *f)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        ls_function *grown = realloc(m->funcs, cap * sizeof *grown);
        if (!grown) {
            free(f->lines);
            return -1;
        }
        m->funcs = grown;
        m->cap = cap;
    }
    m->funcs[m->n++] = *f;
    return 0;
}

const char *ls_source(const ls_function *f, int n)
{
    return n >= 1 && (size_t)n <= f->nfile_lines ? f->file_lines[n - 1] : "";
}

static int cmp_function(const void *pa, const void *pb)
{
    const ls_function *a = pa, *b = pb;
    int c = strcmp(a->filename, b->filename);
    if (c)
        return c;
    if (a->first_line != b->first_line)
        return a->first_line < b->first_line ? -1 : 1;
    c = strcmp(a->region ? a->region : "", b->region ? b->region : "");
    return c ? c : strcmp(a->name, b->name);
}

void ls_model_finish(ls_model *m)
{
    m->hottest_ns = 0;
    for (size_t i = 0; i < m->n; i++) {
        ls_function *f = &m->funcs[i];
        f->total_ns = 0;
        f->last_line = f->first_line;
        for (size_t l = 0; l < f->nlines; l++) {
            f->total_ns += f->lines[l].time_ns;
            if (f->lines[l].lineno > f->last_line)
                f->last_line = f->lines[l].lineno;
            if (f->lines[l].time_ns > m->hottest_ns)
                m->hottest_ns = f->lines[l].time_ns;
        }
    }
    double hottest = m->hottest_ns ? (double)m->hottest_ns : 1.0;
    for (size_t i = 0; i < m->n; i++) {
        ls_function *f = &m->funcs[i];
        for (size_t l = 0; l < f->nlines; l++) {
            ls_line *line = &f->lines[l];
            line->time_us = (double)line->time_ns / 1e3;
            line->per_hit_us = line->hits ? line->time_us / (double)line->hits : -1.0;
            line->share = f->total_ns ? 100.0 * (double)line->time_ns / (double)f->total_ns : 0.0;
            line->heat = (double)line->time_ns / hottest;
            line->source = ls_source(f, line->lineno);
        }
    }
    if (m->n > 1)
        qsort(m->funcs, m->n, sizeof *m->funcs, cmp_function);
}

void ls_model_free(ls_model *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->funcs[i].lines);
    free(m->funcs);
    *m = (ls_model){0};
}

/* A line to order: its function, its position (ties keep the given order) and the
 * key (qsort has no context argument in C11). */
typedef struct ls_pick {
    const ls_function *f;
    const ls_line *line;
    size_t pos;
    ls_sort key;
} ls_pick;

static int cmp_pick(const void *pa, const void *pb)
{
    const ls_pick *a = pa, *b = pb;
    int c = 0;
    if (a->key == LS_SORT_TIME && a->line->time_ns != b->line->time_ns)
        c = a->line->time_ns > b->line->time_ns ? -1 : 1;
    else if (a->key == LS_SORT_HITS && a->line->hits != b->line->hits)
        c = a->line->hits > b->line->hits ? -1 : 1;
    else if (a->key == LS_SORT_LINE) {
        c = a->f == b->f ? 0 : strcmp(a->f->filename, b->f->filename);
        if (!c && a->line->lineno != b->line->lineno)
            c = a->line->lineno < b->line->lineno ? -1 : 1;
    }
    if (c)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void sort_picks(ls_pick *p, size_t n)
{
    if (n > 1)
        qsort(p, n, sizeof *p, cmp_pick);
}

static size_t first_n(size_t n, long top_n)
{
    return top_n >= 0 && (size_t)top_n < n ? (size_t)top_n : n;
}

ssize_t ls_function_lines(const ls_function *f, double min_time_us, ls_sort key, long top_n,
                          size_t *out, size_t *shown)
{
    size_t n = 0;
    for (size_t l = 0; l < f->nlines; l++)
        if (f->lines[l].time_us >= min_time_us)
            out[n++] = l;
    if (key != LS_SORT_LINE && n > 1) {
        ls_pick *p = malloc(n * sizeof *p);
        if (!p)
            return -1;
        for (size_t i = 0; i < n; i++)
            p[i] = (ls_pick){f, &f->lines[out[i]], out[i], key};
        sort_picks(p, n);
        for (size_t i = 0; i < n; i++)
            out[i] = p[i].pos;
        free(p);
    }
    *shown = first_n(n, top_n);
    return (ssize_t)n;
}

ssize_t ls_global_top(const ls_model *m, double min_time_us, ls_sort key, long top_n,
                      ls_ref **out)
{
    size_t total = 0;
    for (size_t i = 0; i < m->n; i++)
        total += m->funcs[i].nlines;
    ls_pick *p = malloc((total ? total : 1) * sizeof *p);
    if (!p)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        for (size_t l = 0; l < m->funcs[i].nlines; l++)
            if (m->funcs[i].lines[l].time_us >= min_time_us) {
                p[n] = (ls_pick){&m->funcs[i], &m->funcs[i].lines[l], n, key};
                n++;
            }
    sort_picks(p, n);
    n = first_n(n, top_n);
    *out = malloc((n ? n : 1) * sizeof **out);
    if (*out)
        for (size_t i = 0; i < n; i++)
            (*out)[i] = (ls_ref){(size_t)(p[i].f - m->funcs), (size_t)(p[i].line - p[i].f->lines)};
    free(p);
    return *out ? (ssize_t)n : -1;
}
