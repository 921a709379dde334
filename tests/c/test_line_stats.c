/* line_stats: the line profiler's figures (time per hit, share of the function,
 * heat, source order, the lines a table shows, the global top) and their text and
 * HTML renderings, exact, from known counts (docs/lines.md, "Output"). */
#include <stdlib.h>

#include "../../src/analyze/line_stats.h"
#include "../../src/render/line_stats_render.h"
#include "check.h"

static const char *const src[] = {"def f():", "    a = 1", "    b = '<2>'", "def g():",
                                  "    return 3"};

static void add(ls_model *m, const char *name, const char *region, int first, int n,
                const ls_line *lines)
{
    ls_line *copy = malloc((size_t)n * sizeof *copy);
    for (int i = 0; i < n; i++)
        copy[i] = lines[i];
    ls_function f = {.name = name, .filename = "/p/m.py", .display = "m.py", .region = region,
                     .first_line = first, .file_lines = src, .nfile_lines = 5, .lines = copy,
                     .nlines = (size_t)n};
    CHECK(ls_model_add(m, &f) == 0);
}

static char *render(const ls_model *m, int kind, long top, double min_us, ls_sort key)
{
    static char *buf; /* static: GCC takes a pointer into a local's buffer for dangling */
    static size_t len;
    FILE *out = open_memstream(&buf, &len);
    if (kind == 0)
        CHECK(ls_text_functions(out, m, min_us, top, key) == 0);
    else if (kind == 1)
        CHECK(ls_text_global(out, m, top, min_us, key) == 0);
    else
        ls_html(out, m);
    fclose(out);
    return buf;
}

int main(void)
{
    ls_model m = {0};
    /* added out of order: g, f in region "sel", f outside every region */
    add(&m, "g", NULL, 4, 1, (ls_line[]){{.lineno = 5, .hits = 2, .time_ns = 500}});
    add(&m, "f", "sel", 1, 1, (ls_line[]){{.lineno = 2, .hits = 1, .time_ns = 6000}});
    add(&m, "f", NULL, 1, 2,
        (ls_line[]){{.lineno = 2, .hits = 4, .time_ns = 3000}, {.lineno = 3, .hits = 0, .time_ns = 1000}});
    ls_model_finish(&m);

    /* source order: f, f [sel], g */
    CHECK_U64(m.n, 3);
    CHECK(m.funcs[0].region == NULL && !strcmp(m.funcs[0].name, "f"));
    CHECK(!strcmp(m.funcs[1].region, "sel"));
    CHECK(!strcmp(m.funcs[2].name, "g"));
    CHECK_U64(m.hottest_ns, 6000);
    const ls_function *f = &m.funcs[0];
    CHECK_U64(f->total_ns, 4000);
    CHECK(f->last_line == 3);
    CHECK(f->lines[0].time_us == 3.0 && f->lines[0].per_hit_us == 0.75);
    CHECK(f->lines[0].share == 75.0 && f->lines[1].share == 25.0);
    CHECK(f->lines[1].per_hit_us == -1.0); /* time without a hit */
    CHECK(f->lines[0].heat == 0.5);
    CHECK_STR(f->lines[1].source, "    b = '<2>'");
    CHECK(m.funcs[1].lines[0].share == 100.0 && m.funcs[1].lines[0].heat == 1.0);
    CHECK_STR(ls_source(f, 6), "");

    /* the lines of a table */
    size_t idx[2], shown;
    CHECK(ls_function_lines(f, 0.0, LS_SORT_HITS, -1, idx, &shown) == 2);
    CHECK(shown == 2 && idx[0] == 0 && idx[1] == 1);
    CHECK(ls_function_lines(f, 0.0, LS_SORT_TIME, 1, idx, &shown) == 2 && shown == 1 && idx[0] == 0);
    CHECK(ls_function_lines(f, 2.0, LS_SORT_LINE, -1, idx, &shown) == 1 && shown == 1);
    CHECK(ls_function_lines(f, 3.5, LS_SORT_LINE, -1, idx, &shown) == 0);
    CHECK(ls_function_lines(f, 0.0, LS_SORT_LINE, 0, idx, &shown) == 2 && shown == 0);

    /* the global top: by time, by hits, by line (ties in the functions' order) */
    ls_ref *r;
    CHECK(ls_global_top(&m, 0.0, LS_SORT_TIME, 3, &r) == 3);
    CHECK(r[0].func == 1 && r[1].func == 0 && r[1].line == 0 && r[2].func == 0 && r[2].line == 1);
    free(r);
    CHECK(ls_global_top(&m, 0.0, LS_SORT_HITS, -1, &r) == 4);
    CHECK(r[0].func == 0 && r[0].line == 0 && r[1].func == 2 && r[2].func == 1 && r[3].line == 1);
    free(r);
    CHECK(ls_global_top(&m, 0.0, LS_SORT_LINE, -1, &r) == 4);
    CHECK(r[0].func == 0 && r[0].line == 0 && r[1].func == 1 && r[2].func == 0 && r[2].line == 1 &&
          r[3].func == 2);
    free(r);
    CHECK(ls_global_top(&m, 1.0, LS_SORT_TIME, -1, &r) == 3); /* g's 0.5 us is below */
    free(r);

    ls_sort key;
    CHECK(ls_sort_parse("hits", &key) == 0 && key == LS_SORT_HITS);
    CHECK(ls_sort_parse("speed", &key) < 0);

    /* the text and the page */
    char *text = render(&m, 0, -1, 2.0, LS_SORT_LINE);
    CHECK_STR(text,
              "\nf at m.py:1   total 0.004 ms\n"
              "  Line       Hits    Time (ms)  Per hit (us)  % func  Source\n"
              "     2          4        0.003          0.75   75.0%      a = 1\n"
              "\nf at m.py:1 [region sel]   total 0.006 ms\n"
              "  Line       Hits    Time (ms)  Per hit (us)  % func  Source\n"
              "     2          1        0.006          6.00  100.0%      a = 1\n");
    free(text);
    text = render(&m, 1, 2, 0.0, LS_SORT_HITS);
    CHECK_STR(text,
              "      Hits    Time (ms)  Per hit (us)  Where / Source\n"
              "         4        0.003          0.75  m.py:2 f: a = 1\n"
              "         2        0.001          0.25  m.py:5 g: return 3\n");
    free(text);
    text = render(&m, 2, 0, 0.0, LS_SORT_LINE);
    CHECK(strstr(text, "<h2>f <small>m.py:1 [region sel], total 0.006 ms</small></h2>") != NULL);
    CHECK(strstr(text, "<tr style=\"background:rgba(220,40,20,0.475)\"><td>2</td><td>4</td>"
                       "<td>0.003</td><td>0.75</td><td><pre>    a = 1</pre></td></tr>") != NULL);
    CHECK(strstr(text, "<td>3</td><td>0</td><td>0.001</td><td>-</td>"
                       "<td><pre>    b = &#x27;&lt;2&gt;&#x27;</pre>") != NULL);
    /* f's table: its first line (which did not run) to its last line that ran */
    char *table = strstr(text, "<h2>f <small>m.py:1, total 0.004 ms</small></h2>");
    CHECK(table != NULL);
    if (table) {
        size_t len = (size_t)(strstr(table, "</table>") - table);
        const char *first = "<tr><td>1</td><td></td><td></td><td></td><td><pre>def f():</pre>";
        CHECK(memmem(table, len, first, strlen(first)) != NULL);
        CHECK(memmem(table, len, "<tr><td>4</td>", 14) == NULL);
    }
    CHECK(strstr(text, "<script") == NULL);
    free(text);

    ls_model_free(&m);
    return check_done("test_line_stats");
}
