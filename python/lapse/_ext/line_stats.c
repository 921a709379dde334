/* The line profiler's figures and outputs (lapse.LineProfiler's get_stats,
 * print_stats, print_global_top_stats, to_html): the engine's rows (lines_stats) and
 * the source of their files become the model of analyze/line_stats.h, rendered by
 * render/line_stats_*.c. Python only reads the files (linecache) and shows the result. */
#include "ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/line_stats.h"
#include "render/line_stats_render.h"

/* The model of one call: its strings are those of the arguments (alive while it is). */
typedef struct lsx {
    ls_model m;
    const char ***texts; /* per file of the files argument: its lines' UTF-8 */
    size_t ntexts;
} lsx;

static void lsx_free(lsx *x)
{
    for (size_t i = 0; i < x->ntexts; i++)
        free(x->texts[i]);
    free(x->texts);
    ls_model_free(&x->m);
}

static const char *utf8_of(PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "lines: expected a str, not %R", s);
        return NULL;
    }
    return PyUnicode_AsUTF8(s);
}

/* The file's entry of the files argument: (display, [line, ...]). */
static PyObject *file_entry(PyObject *files, PyObject *filename)
{
    PyObject *entry = PyDict_GetItemWithError(files, filename);
    if (!entry && !PyErr_Occurred())
        PyErr_Format(PyExc_KeyError, "lines: no source given for %R", filename);
    if (entry && (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2 ||
                  !PyList_Check(PyTuple_GET_ITEM(entry, 1)))) {
        PyErr_SetString(PyExc_TypeError, "lines: a file's entry is (display, [line, ...])");
        return NULL;
    }
    return entry;
}

/* One row of lines_stats: (region, code, first_line, [(line, hits, ns)], total_ns). */
static int add_row(lsx *x, PyObject *files, PyObject *texts_of, PyObject *row)
{
    PyObject *region, *code, *lines, *total;
    int first_line;
    if (!PyArg_ParseTuple(row, "UOiO!O", &region, &code, &first_line, &PyList_Type, &lines, &total))
        return -1;
    ls_function f = {.first_line = first_line};
    PyObject *filename = PyObject_GetAttrString(code, "co_filename"); /* held by code */
    PyObject *name = PyObject_GetAttrString(code, "co_qualname");
    Py_XDECREF(filename);
    Py_XDECREF(name);
    if (!filename || !name || !(f.filename = utf8_of(filename)) || !(f.name = utf8_of(name)))
        return -1;
    if (PyUnicode_GET_LENGTH(region) && !(f.region = utf8_of(region)))
        return -1;
    PyObject *entry = file_entry(files, filename);
    if (!entry || !(f.display = utf8_of(PyTuple_GET_ITEM(entry, 0))))
        return -1;
    /* the file's lines, made once per file */
    PyObject *index = PyDict_GetItemWithError(texts_of, filename);
    if (!index && PyErr_Occurred())
        return -1;
    if (!index) {
        PyObject *source = PyTuple_GET_ITEM(entry, 1);
        Py_ssize_t n = PyList_GET_SIZE(source);
        const char ***grown = realloc(x->texts, (x->ntexts + 1) * sizeof *grown);
        if (!grown)
            return PyErr_NoMemory(), -1;
        x->texts = grown;
        if (!(x->texts[x->ntexts] = malloc((n ? (size_t)n : 1) * sizeof **x->texts)))
            return PyErr_NoMemory(), -1;
        x->ntexts++;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!(x->texts[x->ntexts - 1][i] = utf8_of(PyList_GET_ITEM(source, i))))
                return -1;
        PyObject *k = PyLong_FromSize_t(x->ntexts - 1);
        int rc = k ? PyDict_SetItem(texts_of, filename, k) : -1;
        Py_XDECREF(k);
        if (rc < 0)
            return -1;
        f.nfile_lines = (size_t)n;
        f.file_lines = x->texts[x->ntexts - 1];
    } else {
        f.file_lines = x->texts[PyLong_AsSize_t(index)];
        f.nfile_lines = (size_t)PyList_GET_SIZE(PyTuple_GET_ITEM(entry, 1));
    }
    Py_ssize_t n = PyList_GET_SIZE(lines);
    if (!(f.lines = calloc(n ? (size_t)n : 1, sizeof *f.lines)))
        return PyErr_NoMemory(), -1;
    f.nlines = (size_t)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long hits, ns;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(lines, i), "iKK", &f.lines[i].lineno, &hits, &ns)) {
            free(f.lines);
            return -1;
        }
        f.lines[i].hits = hits;
        f.lines[i].time_ns = ns;
    }
    if (ls_model_add(&x->m, &f) < 0)
        return PyErr_NoMemory(), -1;
    return 0;
}

static int lsx_build(lsx *x, PyObject *rows, PyObject *files)
{
    *x = (lsx){0};
    if (!PyList_Check(rows) || !PyDict_Check(files)) {
        PyErr_SetString(PyExc_TypeError, "lines: (rows of lines_stats, {file: (display, lines)})");
        return -1;
    }
    PyObject *texts_of = PyDict_New();
    if (!texts_of)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rows); i++)
        if (add_row(x, files, texts_of, PyList_GET_ITEM(rows, i)) < 0) {
            Py_DECREF(texts_of);
            lsx_free(x);
            return -1;
        }
    Py_DECREF(texts_of);
    ls_model_finish(&x->m);
    return 0;
}

/* lines_figures(rows, files) -> [(name, filename, first_line, region or None, total_ns,
 * [(lineno, hits, time_ns, time_us, per_hit_us or None, share, source)])] in source
 * order: get_stats()'s figures */
static PyObject *py_figures(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *rows, *files;
    lsx x;
    if (!PyArg_ParseTuple(args, "OO", &rows, &files) || lsx_build(&x, rows, files) < 0)
        return NULL;
    PyObject *out = PyList_New((Py_ssize_t)x.m.n);
    for (size_t i = 0; out && i < x.m.n; i++) {
        const ls_function *f = &x.m.funcs[i];
        PyObject *source = PyTuple_GET_ITEM(PyDict_GetItemString(files, f->filename), 1);
        PyObject *lines = PyList_New((Py_ssize_t)f->nlines);
        for (size_t l = 0; lines && l < f->nlines; l++) {
            const ls_line *line = &f->lines[l];
            PyObject *text = line->lineno >= 1 && line->lineno <= PyList_GET_SIZE(source)
                                 ? PyList_GET_ITEM(source, line->lineno - 1)
                                 : NULL;
            PyObject *per_hit = line->per_hit_us < 0 ? Py_NewRef(Py_None)
                                                     : PyFloat_FromDouble(line->per_hit_us);
            text = text ? Py_NewRef(text) : PyUnicode_FromString("");
            PyObject *item = per_hit && text ? Py_BuildValue("(iKKdNdN)", line->lineno,
                                                             (unsigned long long)line->hits,
                                                             (unsigned long long)line->time_ns,
                                                             line->time_us, per_hit, line->share,
                                                             text)
                                             : NULL;
            if (!item && !(per_hit && text)) {
                Py_XDECREF(per_hit);
                Py_XDECREF(text);
            }
            if (!item)
                Py_CLEAR(lines);
            else
                PyList_SET_ITEM(lines, (Py_ssize_t)l, item);
        }
        PyObject *item = lines ? Py_BuildValue("(ssizKN)", f->name, f->filename, f->first_line,
                                               f->region, (unsigned long long)f->total_ns, lines)
                               : NULL;
        if (!item)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, item);
    }
    lsx_free(&x);
    return out;
}

/* lines_render(rows, files, what, min_time_us, top_n, sort_by, lost) -> str: what is
 * "stats" (print_stats, top_n per function), "top" (print_global_top_stats) or "html"
 * (to_html's page); top_n None: all */
static PyObject *py_render(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *rows, *files, *top = Py_None;
    const char *what, *sort_name = "line";
    double min_time_us = 0.0;
    unsigned long long lost = 0;
    if (!PyArg_ParseTuple(args, "OOs|dOsK", &rows, &files, &what, &min_time_us, &top, &sort_name,
                          &lost))
        return NULL;
    ls_sort key;
    if (ls_sort_parse(sort_name, &key) < 0)
        return PyErr_Format(PyExc_ValueError, "sort_by must be one of line, time, hits, not %R",
                            PyTuple_GET_ITEM(args, 5));
    long top_n = -1;
    if (top != Py_None) {
        top_n = PyLong_AsLong(top);
        if (top_n == -1 && PyErr_Occurred())
            return NULL;
        if (top_n < 0)
            return PyErr_Format(PyExc_ValueError, "top_n must be None or at least 0, not %ld", top_n);
    }
    int kind = !strcmp(what, "stats") ? 0 : !strcmp(what, "top") ? 1 : !strcmp(what, "html") ? 2 : -1;
    if (kind < 0)
        return PyErr_Format(PyExc_ValueError, "lines_render: no output %s", what);
    lsx x;
    if (lsx_build(&x, rows, files) < 0)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int rc = out ? 0 : -1;
    if (out) {
        if (kind == 2)
            ls_html(out, &x.m);
        else {
            ls_text_lost(out, lost);
            rc = kind == 0 ? ls_text_functions(out, &x.m, min_time_us, top_n, key)
                           : ls_text_global(out, &x.m, top_n, min_time_us, key);
        }
        rc = fclose(out) == 0 ? rc : -1;
    }
    lsx_free(&x);
    PyObject *text = rc == 0 ? PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "strict") : PyErr_NoMemory();
    free(buf);
    return text;
}

PyMethodDef ext_line_stats_methods[] = {
    {"lines_figures", py_figures, METH_VARARGS,
     "lines_figures(rows, files) -> get_stats()'s figures, per function in source order"},
    {"lines_render", py_render, METH_VARARGS,
     "lines_render(rows, files, what, min_time_us, top_n, sort_by, lost) -> str"},
    {NULL, NULL, 0, NULL},
};
