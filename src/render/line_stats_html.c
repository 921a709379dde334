/* The line profiler's annotated source page: see line_stats_render.h. One
 * self-contained page: no scripts, no outside resources. */
#include "line_stats_render.h"

static const char head[] =
    "<!DOCTYPE html>\n"
    "<html><head><meta charset=\"utf-8\"><title>lapse lines</title>\n"
    "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;margin-bottom:2em}\n"
    "td,th{padding:0 .6em;text-align:right;font-size:13px}td:last-child{text-align:left}\n"
    "pre{margin:0;font-family:monospace}small{color:#555;font-weight:normal}</style></head><body>\n"
    "<h1>lapse lines</h1><p>Time per line is inclusive of the functions the line calls.</p>\n";

/* s escaped as Python's html.escape does: & < > " ' */
static void escaped(FILE *out, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#x27;", out); break;
        default: fputc(*s, out);
        }
}

void ls_html(FILE *out, const ls_model *m)
{
    fputs(head, out);
    for (size_t i = 0; i < m->n; i++) {
        const ls_function *f = &m->funcs[i];
        fputs("<h2>", out);
        escaped(out, f->name);
        fputs(" <small>", out);
        escaped(out, f->display);
        fprintf(out, ":%d", f->first_line);
        if (f->region) {
            fputs(" [region ", out);
            escaped(out, f->region);
            fputc(']', out);
        }
        fprintf(out, ", total %.3f ms</small></h2>\n"
                     "<table><tr><th>line</th><th>hits</th><th>time (ms)</th>"
                     "<th>per hit (us)</th><th>source</th></tr>\n",
                (double)f->total_ns / 1e6);
        size_t next = 0; /* f->lines are in source order */
        for (int n = f->first_line; n <= f->last_line; n++) {
            while (next < f->nlines && f->lines[next].lineno < n)
                next++;
            const ls_line *line = next < f->nlines && f->lines[next].lineno == n ? &f->lines[next] : NULL;
            if (!line)
                fprintf(out, "<tr><td>%d</td><td></td><td></td><td></td><td><pre>", n);
            else if (line->per_hit_us < 0)
                fprintf(out, "<tr style=\"background:rgba(220,40,20,%.3f)\"><td>%d</td><td>%llu</td>"
                             "<td>%.3f</td><td>-</td><td><pre>",
                        0.05 + 0.85 * line->heat, n, (unsigned long long)line->hits,
                        (double)line->time_ns / 1e6);
            else
                fprintf(out, "<tr style=\"background:rgba(220,40,20,%.3f)\"><td>%d</td><td>%llu</td>"
                             "<td>%.3f</td><td>%.2f</td><td><pre>",
                        0.05 + 0.85 * line->heat, n, (unsigned long long)line->hits,
                        (double)line->time_ns / 1e6, line->per_hit_us);
            escaped(out, ls_source(f, n));
            fputs("</pre></td></tr>\n", out);
        }
        fputs("</table>\n", out);
    }
    fputs("</body></html>\n", out);
}
