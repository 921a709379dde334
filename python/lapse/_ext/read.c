/* Reading runs from Python, from files or from bytes in memory: report, diff and
 * Perfetto export, composed exactly as the `lapse report`, `lapse diff` and `lapse
 * export` commands compose them (store -> analyze -> render), and the files the package writes (store's one
 * atomic write). The text is rendered into memory; the GIL is released while files
 * are read, rendered and written.
 *
 * Errors carry the C layer's one-line reason:
 *   FileNotFoundError  the path does not exist
 *   ValueError         it holds no .lapse file, or no file of the run is readable
 *   OSError            anything else (permissions, a write that failed)
 *   MemoryError        out of memory */
#include "ext.h"

#include "analyze/diff.h"
#include "analyze/run_model.h"
#include "analyze/run_stats.h"
#include "render/diff_render.h"
#include "render/perfetto.h"
#include "render/report_activity.h"
#include "render/report_render.h"
#include "store/samples_file.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/run_dir.h"
#include "tools/export_run.h"
#include "tools/held_files.h"
#include "tools/host_view.h"
#include "tools/view_run.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REASON_LEN 1024

/* ---- errors ---- */

/* Raises type(reason) with errno set to e (when e > 0); str() of it is reason. */
static void raise_reason(PyObject *type, int e, const char *reason)
{
    PyObject *msg = PyUnicode_DecodeFSDefault(reason);
    if (!msg)
        return;
    PyObject *exc = PyObject_CallOneArg(type, msg);
    Py_DECREF(msg);
    if (!exc)
        return;
    if (e > 0 && PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_OSError)) {
        PyObject *num = PyLong_FromLong(e);
        if (!num || PyObject_SetAttrString(exc, "errno", num) < 0) {
            Py_XDECREF(num);
            Py_DECREF(exc);
            return;
        }
        Py_DECREF(num);
    }
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
}

/* The OSError subclass Python itself would choose for errno e. */
static PyObject *os_error_type(int e)
{
    switch (e) {
    case ENOENT: return PyExc_FileNotFoundError;
    case EACCES:
    case EPERM: return PyExc_PermissionError;
    case ENOTDIR: return PyExc_NotADirectoryError;
    case EISDIR: return PyExc_IsADirectoryError;
    case EEXIST: return PyExc_FileExistsError;
    default: return PyExc_OSError;
    }
}

/* The exception for a failed load or listing: rc is the negative code,
 * exists whether the path was there when it failed. */
static void raise_load_error(int rc, int exists, const char *reason)
{
    int e = -rc;
    if (e == ENOMEM)
        PyErr_SetString(PyExc_MemoryError, reason);
    else if (e == ENOENT && exists)
        raise_reason(PyExc_ValueError, 0, reason); /* a path with no .lapse file */
    else
        raise_reason(os_error_type(e), e, reason);
}

/* The exception for a failed write of an output file. */
static void raise_write_error(int rc, const char *reason)
{
    if (rc == -ENOMEM)
        PyErr_SetString(PyExc_MemoryError, reason);
    else
        raise_reason(os_error_type(-rc), -rc, reason);
}

static int path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* For a model that loaded but holds no readable file: one line naming the first
 * unreadable file and why. */
static void no_readable_reason(const run_model *m, const char *path, char *buf, size_t len)
{
    if (m->unreadable_count)
        snprintf(buf, len, "%s: no readable .lapse file (%u unreadable; %s: %s)", path,
                 m->unreadable_count, m->unreadable[0].file, m->unreadable[0].reason);
    else
        snprintf(buf, len, "%s: no readable .lapse file", path);
}

/* ---- memory output ---- */

typedef struct mem_out {
    FILE *f;
    char *buf;
    size_t len;
} mem_out;

static int mem_open(mem_out *o)
{
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
    return o->f ? 0 : -ENOMEM;
}

/* Closes the stream; the text stays in o->buf (free it). */
static int mem_close(mem_out *o)
{
    int rc = fclose(o->f) == 0 ? 0 : -EIO;
    o->f = NULL;
    return rc;
}

static PyObject *mem_text(const mem_out *o)
{
    return PyUnicode_DecodeUTF8(o->buf ? o->buf : "", (Py_ssize_t)o->len, "replace");
}

static int parse_top(Py_ssize_t top, unsigned limit, unsigned *out)
{
    if (top < 1 || (size_t)top > limit) {
        PyErr_Format(PyExc_ValueError, "top must be a whole number from 1 to %u, not %zd",
                     limit, top);
        return -1;
    }
    *out = (unsigned)top;
    return 0;
}

/* The `unreadable` argument: a sequence of (file, reason) pairs, files a profile
 * knows of but holds no bytes of. Copied into *out (free with extras_free). */
typedef struct extras {
    rm_unreadable *items;
    uint32_t count;
} extras;

static void extras_free(extras *x)
{
    for (uint32_t i = 0; i < x->count; i++) {
        free(x->items[i].file);
        free(x->items[i].reason);
    }
    free(x->items);
    memset(x, 0, sizeof *x);
}

static int parse_extras(PyObject *seq, extras *out)
{
    memset(out, 0, sizeof *out);
    if (!seq || seq == Py_None)
        return 0;
    PyObject *fast = PySequence_Fast(seq, "unreadable must be a sequence of (file, reason)");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    out->items = calloc(n ? (size_t)n : 1u, sizeof *out->items);
    if (!out->items) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *file, *reason;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "ss:unreadable", &file, &reason)) {
            Py_DECREF(fast);
            extras_free(out);
            return -1;
        }
        rm_unreadable *u = &out->items[out->count];
        u->file = strdup(file);
        u->reason = strdup(reason);
        out->count++;
        if (!u->file || !u->reason) {
            Py_DECREF(fast);
            extras_free(out);
            PyErr_NoMemory();
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* The result of a report or diff: its text, or the exception its stage calls for
 * (1: loading, 2: nothing readable, 3: rendering). Frees the text buffer. */
static PyObject *finish(int stage, int rc, int exists, const char *err, mem_out *o)
{
    PyObject *result = NULL;
    if (stage == 1)
        raise_load_error(rc, exists, err);
    else if (stage == 2)
        raise_reason(PyExc_ValueError, 0, err);
    else if (stage == 3)
        raise_load_error(rc, 1, err);
    else
        result = mem_text(o);
    free(o->buf);
    return result;
}

/* ---- report ---- */

/* Each held file named as a profile keeps it: its path inside the run directory
 * ("<host>/<name>.lapse"), or for a run of one file, that file's name. */
static void held_names(held_files *l, const run_model *m)
{
    size_t dl = strlen(m->dir);
    while (dl > 1 && m->dir[dl - 1] == '/')
        dl--;
    for (size_t i = 0; i < l->count; i++) {
        const char *f = l->items[i].file, *rel = NULL;
        if (m->single_file) {
            const char *slash = strrchr(m->dir, '/');
            rel = slash && slash[1] ? slash + 1 : m->dir;
        } else if (!strncmp(f, m->dir, dl) && f[dl] == '/') {
            rel = f + dl + 1;
        }
        char *name = strdup(rel ? rel : f);
        if (!name) {
            l->failed = 1;
            continue;
        }
        free(l->items[i].file);
        l->items[i].file = name;
    }
}

/* What a report or a diff reads: a path, or a run given as bytes in memory, the
 * tuple (dir, single_file, [(name, bytes, size), ...]) (a Profile's held files; name
 * relative to dir, size the file's when it holds only the start of it). */
typedef struct run_input {
    PyObject *path_obj; /* the path's bytes, or NULL */
    const char *path;   /* the path, or the run's dir */
    int single_file;
    store_buffer *files;
    char **names;
    size_t count;
} run_input;

static void input_free(run_input *in)
{
    Py_CLEAR(in->path_obj);
    for (size_t i = 0; in->names && i < in->count; i++)
        free(in->names[i]);
    free(in->names);
    free(in->files);
    memset(in, 0, sizeof *in);
}

/* 0, or -1 with an exception set. */
static int parse_input(PyObject *o, run_input *in)
{
    memset(in, 0, sizeof *in);
    if (!PyTuple_Check(o)) {
        if (!PyUnicode_FSConverter(o, &in->path_obj))
            return -1;
        in->path = PyBytes_AS_STRING(in->path_obj);
        return 0;
    }
    PyObject *list;
    if (!PyArg_ParseTuple(o, "O&pO!:run in memory", PyUnicode_FSConverter, &in->path_obj,
                          &in->single_file, &PyList_Type, &list))
        return -1;
    in->path = PyBytes_AS_STRING(in->path_obj);
    size_t n = (size_t)PyList_GET_SIZE(list);
    in->files = calloc(n ? n : 1, sizeof *in->files);
    in->names = calloc(n ? n : 1, sizeof *in->names);
    if (!in->files || !in->names) {
        input_free(in);
        PyErr_NoMemory();
        return -1;
    }
    in->count = n;
    size_t dl = strlen(in->path);
    for (size_t i = 0; i < n; i++) {
        const char *rel, *data;
        Py_ssize_t len;
        unsigned long long size;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "sy#K:a file in memory", &rel, &data, &len,
                              &size)) {
            input_free(in);
            return -1;
        }
        size_t nl = in->single_file ? dl + 1 : dl + strlen(rel) + 2;
        if (!(in->names[i] = malloc(nl))) {
            input_free(in);
            PyErr_NoMemory();
            return -1;
        }
        if (in->single_file)
            memcpy(in->names[i], in->path, dl + 1);
        else
            snprintf(in->names[i], nl, "%s/%s", in->path, rel);
        in->files[i] = (store_buffer){in->names[i], (const uint8_t *)data, (size_t)len, size};
    }
    return 0;
}

/* run_model_load of the input (no file opened for one in memory). */
static int input_load(const run_input *in, const rm_options *opt, run_model *m, char *err,
                      size_t errlen)
{
    if (in->files)
        return run_model_load_mem(in->path, in->single_file, in->files, in->count, opt, m, err,
                                  errlen);
    return run_model_load(in->path, opt, m, err, errlen);
}

/* report(), and load() when held is given: the text of the report of the input, with
 * extra unreadable files; held receives the bytes read of each file. */
static PyObject *report_of(const run_input *input, int json, unsigned top, const extras *x,
                           held_files *held)
{
    const char *path = input->path;
    report_options ro = {0};
    report_inputs in = {.top = top, .run_paths = json};
    host_view_here here;
    host_view_fill(&here);
    rm_options opt = {.host = &here.view};
    opt.extra_unreadable = x ? x->items : NULL;
    opt.extra_unreadable_count = x ? x->count : 0;
    if (held) {
        opt.hold = held_files_add;
        opt.hold_ctx = held;
    }
    char err[REASON_LEN] = "";
    int rc = 0, stage = 0, exists = 1;
    mem_out o = {0};
    run_model m;
    report_model r;
    Py_BEGIN_ALLOW_THREADS
    rc = input_load(input, &opt, &m, err, sizeof err);
    if (rc) {
        exists = input->files || path_exists(path);
        stage = 1;
    } else {
        if (m.worker_count == 0) {
            no_readable_reason(&m, path, err, sizeof err);
            stage = 2;
        } else if ((rc = report_model_build(&m, &in, &r)) != 0) {
            snprintf(err, sizeof err, "%s: out of memory building the report", path);
            stage = 3;
        } else {
            if ((rc = mem_open(&o)) == 0) {
                /* json 2: the GPU ACTIVITY blocks alone (Profile.trace_report) */
                rc = json == 2 ? report_write_activity_text(o.f, &r)
                     : json    ? report_write_json(o.f, &r, &ro)
                               : report_write_text(o.f, &r, &ro);
                int crc = mem_close(&o);
                if (!rc)
                    rc = crc;
            }
            if (rc) {
                snprintf(err, sizeof err, "%s: cannot render the report: %s", path, strerror(-rc));
                stage = 3;
            }
            report_model_free(&r);
        }
        if (held && stage == 0)
            held_names(held, &m);
        run_model_free(&m);
    }
    Py_END_ALLOW_THREADS
    if (held && held->failed && stage == 0) {
        free(o.buf);
        return PyErr_NoMemory();
    }
    return finish(stage, rc, exists, err, &o);
}

static PyObject *read_report(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"path", "json", "top", "unreadable", "gpu", NULL};
    PyObject *path_obj = NULL, *unreadable = NULL;
    int json = 0, gpu = 0;
    Py_ssize_t top = 10;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|pnOp:report", names, &path_obj, &json, &top,
                                     &unreadable, &gpu))
        return NULL;
    if (gpu)
        json = 2;
    unsigned t;
    extras x;
    run_input input;
    PyObject *result = NULL;
    if (parse_input(path_obj, &input) < 0)
        return NULL;
    if (parse_top(top, 1000000, &t) == 0 && parse_extras(unreadable, &x) == 0) {
        result = report_of(&input, json, t, &x, NULL);
        extras_free(&x);
    }
    input_free(&input);
    return result;
}

static PyObject *read_load(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj = NULL;
    if (!PyArg_ParseTuple(args, "O&:load", PyUnicode_FSConverter, &path_obj))
        return NULL;
    held_files held = {0};
    run_input input = {.path_obj = path_obj, .path = PyBytes_AS_STRING(path_obj)};
    PyObject *text = report_of(&input, 1, 10, NULL, &held);
    input_free(&input);
    PyObject *files = text ? PyList_New(0) : NULL;
    for (size_t i = 0; files && i < held.count; i++) {
        const held_file *h = &held.items[i];
        PyObject *item = Py_BuildValue("(Ny#K)", PyUnicode_DecodeFSDefault(h->file),
                                       (const char *)h->held.data, (Py_ssize_t)h->held.len,
                                       (unsigned long long)h->held.size);
        if (!item || PyList_Append(files, item) < 0)
            Py_CLEAR(files);
        Py_XDECREF(item);
    }
    held_files_free(&held);
    if (!files) {
        Py_XDECREF(text);
        return NULL;
    }
    return Py_BuildValue("(NN)", text, files);
}

/* ---- diff ---- */

static PyObject *read_diff(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"a", "b", "json", "top", "by_path", "unreadable_a", "unreadable_b",
                            NULL};
    PyObject *path_obj[2] = {NULL, NULL}, *unreadable[2] = {NULL, NULL};
    int json = 0, by_path = 0;
    Py_ssize_t top = 30;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|pnpOO:diff", names, &path_obj[0], &path_obj[1],
                                     &json, &top, &by_path, &unreadable[0], &unreadable[1]))
        return NULL;
    diff_options dopt;
    extras x[2] = {{0}, {0}};
    run_input input[2] = {{0}, {0}};
    if (parse_input(path_obj[0], &input[0]) < 0 || parse_input(path_obj[1], &input[1]) < 0 ||
        parse_top(top, 100000000, &dopt.top) < 0 || parse_extras(unreadable[0], &x[0]) < 0 ||
        parse_extras(unreadable[1], &x[1]) < 0) {
        extras_free(&x[0]);
        input_free(&input[0]);
        input_free(&input[1]);
        return NULL;
    }
    const char *paths[2] = {input[0].path, input[1].path};
    unsigned flags = by_path ? DIFF_BY_PATH : 0;

    char err[REASON_LEN] = "";
    int rc = 0, stage = 0, exists = 1, loaded = 0;
    mem_out o = {0};
    run_model m[2];
    host_view_here here;
    host_view_fill(&here);
    Py_BEGIN_ALLOW_THREADS
    for (; loaded < 2; loaded++) {
        rm_options opt = {.host = &here.view};
        opt.extra_unreadable = x[loaded].items;
        opt.extra_unreadable_count = x[loaded].count;
        rc = input_load(&input[loaded], &opt, &m[loaded], err, sizeof err);
        if (rc) {
            exists = input[loaded].files || path_exists(paths[loaded]);
            stage = 1;
            break;
        }
        if (m[loaded].worker_count == 0) {
            no_readable_reason(&m[loaded], paths[loaded], err, sizeof err);
            stage = 2;
            loaded++;
            break;
        }
    }
    if (!stage) {
        diff_result d;
        if ((rc = diff_runs(&m[0], &m[1], flags, &d)) != 0) {
            snprintf(err, sizeof err, "diff: out of memory");
            stage = 3;
        } else {
            if ((rc = mem_open(&o)) == 0) {
                rc = json ? diff_write_json(o.f, &m[0], &m[1], &d, &dopt)
                          : diff_write_text(o.f, &m[0], &m[1], &d, &dopt);
                int crc = mem_close(&o);
                if (!rc)
                    rc = crc;
            }
            if (rc) {
                snprintf(err, sizeof err, "diff: cannot render the diff: %s", strerror(-rc));
                stage = 3;
            }
            diff_result_free(&d);
        }
    }
    for (int i = 0; i < loaded; i++)
        run_model_free(&m[i]);
    Py_END_ALLOW_THREADS
    input_free(&input[0]);
    input_free(&input[1]);
    extras_free(&x[0]);
    extras_free(&x[1]);

    return finish(stage, rc, exists, err, &o);
}

/* ---- export ---- */

static PyObject *read_export_perfetto(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"path", "out", NULL};
    PyObject *path_obj = NULL, *out_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO&:export_perfetto", names, &path_obj,
                                     PyUnicode_FSConverter, &out_obj))
        return NULL;
    run_input input;
    if (parse_input(path_obj, &input) < 0) {
        Py_DECREF(out_obj);
        return NULL;
    }
    export_run_result *r = calloc(1, sizeof *r);
    if (!r) {
        input_free(&input);
        Py_DECREF(out_obj);
        return PyErr_NoMemory();
    }
    const char *path = input.path;
    const char *out_path = PyBytes_AS_STRING(out_obj);
    PyObject *result = NULL;
    if (!*out_path || !strcmp(out_path, "-")) {
        PyErr_SetString(PyExc_ValueError, "export_perfetto: out must name a file");
    } else {
        int exists = 1;
        Py_BEGIN_ALLOW_THREADS
        unsigned flags = store_share_from_env();
        if (input.files)
            export_mem_perfetto(path, input.single_file, input.files, input.count, out_path,
                                flags, r, NULL, NULL);
        else
            export_run_perfetto(path, out_path, flags, r, NULL, NULL);
        if (r->rc && !r->writing && !r->no_files)
            exists = input.files || path_exists(path);
        Py_END_ALLOW_THREADS
        if (r->no_files)
            raise_reason(PyExc_ValueError, 0, r->err);
        else if (r->rc && r->writing)
            raise_write_error(r->rc, r->err);
        else if (r->rc)
            raise_load_error(r->rc, exists, r->err);
        else
            result = PyLong_FromUnsignedLongLong(r->slices);
    }
    free(r);
    input_free(&input);
    Py_DECREF(out_obj);
    return result;
}

/* ---- view ---- */

static PyObject *read_view(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"run", "out", "compress", "unreadable", NULL};
    PyObject *run_obj = NULL, *out_obj = Py_None, *unreadable = NULL;
    int compress = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|OpO:view", names, &PyTuple_Type, &run_obj,
                                     &out_obj, &compress, &unreadable))
        return NULL;
    PyObject *out_bytes = NULL;
    if (out_obj != Py_None && !PyUnicode_FSConverter(out_obj, &out_bytes))
        return NULL;
    const char *out_path = out_bytes ? PyBytes_AS_STRING(out_bytes) : NULL;
    if (out_path && (!*out_path || !strcmp(out_path, "-"))) {
        Py_DECREF(out_bytes);
        PyErr_SetString(PyExc_ValueError, "view: out must name a file");
        return NULL;
    }
    run_input input;
    extras x;
    if (parse_input(run_obj, &input) < 0) {
        Py_XDECREF(out_bytes);
        return NULL;
    }
    if (parse_extras(unreadable, &x) < 0) {
        input_free(&input);
        Py_XDECREF(out_bytes);
        return NULL;
    }
    view_run_result *r = calloc(1, sizeof *r);
    mem_out o = {0};
    PyObject *result = NULL;
    if (!r || (!out_path && mem_open(&o) != 0)) {
        PyErr_NoMemory();
    } else {
        Py_BEGIN_ALLOW_THREADS
        view_mem_write(input.path, input.single_file, input.files, input.count, x.items, x.count,
                       out_path, o.f, store_share_from_env(), compress, r);
        if (o.f && mem_close(&o) && !r->rc) {
            r->rc = -ENOMEM;
            snprintf(r->err, sizeof r->err, "%s: out of memory writing the page", input.path);
        }
        Py_END_ALLOW_THREADS
        if (r->rc && r->writing)
            raise_write_error(r->rc, r->err);
        else if (r->rc == -ENOENT)
            raise_reason(PyExc_ValueError, 0, r->err); /* no readable file */
        else if (r->rc)
            raise_write_error(r->rc, r->err); /* out of memory */
        else
            result = out_path ? PyLong_FromSize_t(r->bytes) : mem_text(&o);
    }
    free(o.buf);
    free(r);
    extras_free(&x);
    input_free(&input);
    Py_XDECREF(out_bytes);
    return result;
}

static PyObject *read_add_samples(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *samples_obj = NULL, *target_obj = NULL;
    if (!PyArg_ParseTuple(args, "O&O&:add_samples", PyUnicode_FSConverter, &samples_obj,
                          PyUnicode_FSConverter, &target_obj))
        return NULL;
    char err[600] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = samples_move_to_lapse(PyBytes_AS_STRING(samples_obj), PyBytes_AS_STRING(target_obj),
                               err, sizeof err);
    Py_END_ALLOW_THREADS
    Py_DECREF(samples_obj);
    Py_DECREF(target_obj);
    if (rc) {
        raise_reason(os_error_type(-rc), -rc, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *read_add_failed_sampling(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *target_obj = NULL;
    const char *mode = NULL;
    double rate = 0;
    if (!PyArg_ParseTuple(args, "O&sd:add_failed_sampling", PyUnicode_FSConverter, &target_obj, &mode, &rate))
        return NULL;
    sample_set *set = sample_set_new();
    if (!set) {
        Py_DECREF(target_obj);
        return PyErr_NoMemory();
    }
    sample_set_set_mode(set, mode);
    sample_set_data(set)->rate_asked_hz = rate;
    char err[600] = "";
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = samples_add_to_lapse(set, PyBytes_AS_STRING(target_obj), -1, err, sizeof err); /* our own file */
    Py_END_ALLOW_THREADS
    sample_set_free(set);
    Py_DECREF(target_obj);
    if (rc) {
        raise_reason(os_error_type(-rc), -rc, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *read_write_file(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj = NULL;
    Py_buffer data;
    unsigned long long size = 0;
    if (!PyArg_ParseTuple(args, "O&y*|K:write_file", PyUnicode_FSConverter, &path_obj, &data,
                          &size))
        return NULL;
    char err[REASON_LEN] = "";
    const char *path = PyBytes_AS_STRING(path_obj);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    unsigned flags = store_share_from_env();
    char dir[4096];
    const char *slash = strrchr(path, '/');
    rc = 0;
    if (slash && slash != path && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
        if ((rc = store_make_dirs(dir, flags)) != 0)
            snprintf(err, sizeof err, "cannot create %s: %s", dir, strerror(-rc));
    }
    if (rc == 0 && size <= (unsigned long long)data.len) {
        rc = store_write_atomic(path, data.buf, (size_t)data.len, flags, err, sizeof err);
    } else if (rc == 0) { /* the bytes held of a longer file: the rest a hole */
        store_out o;
        if ((rc = store_out_open(&o, path, flags, err, sizeof err)) == 0) {
            if ((rc = store_out_write(&o, data.buf, (size_t)data.len)) == 0 &&
                ftruncate(o.fd, (off_t)size) != 0)
                rc = -errno;
            if (rc) {
                snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(-rc));
                store_out_abort(&o);
            } else {
                rc = store_out_commit(&o, err, sizeof err);
            }
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    Py_DECREF(path_obj);
    if (rc) {
        raise_write_error(rc, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef ext_read_methods[] = {
    {"add_failed_sampling", read_add_failed_sampling, METH_VARARGS,
     "add_failed_sampling(target, mode, rate_hz)\n\n"
     "Records in the .lapse file target that Python stack sampling was asked for (mode,\n"
     "rate) and took no pass: the report's CAVEATS say so. OSError on failure."},
    {"write_file", read_write_file, METH_VARARGS,
     "write_file(path, data, size=0)\n\n"
     "Writes data to path atomically: a temporary of its own created next to it\n"
     "(O_EXCL|O_NOFOLLOW), fsync, rename over path. Missing directories above it are\n"
     "created. Files are 0600 and directories 0700 (0640 and 0750 with LAPSE_SHARE=1),\n"
     "the umask applying on top. With size beyond len(data), the file has that size,\n"
     "the rest a hole (a file held in part). OSError on failure."},
    {"view", (PyCFunction)(void (*)(void))read_view, METH_VARARGS | METH_KEYWORDS,
     "view(run, out=None, compress=True, unreadable=()) -> int | str\n\n"
     "The page `lapse view` writes (docs/view.md), of a run in memory as report() takes\n"
     "it (the tuple; nothing is read from disk). With out, written there atomically\n"
     "(store's one atomic write) and its size returned; else returned as a str.\n"
     "compress: deflate the data when lapse has zlib. ValueError when no file is\n"
     "readable, OSError when out cannot be written."},
    {"add_samples", read_add_samples, METH_VARARGS,
     "add_samples(samples_path, target)\n\n"
     "Adds the Python stack samples of samples_path (a file of `lapse record --format\n"
     "lapse`) to the .lapse file target, then removes samples_path. OSError on failure\n"
     "(samples_path is then kept)."},
    {"report", (PyCFunction)(void (*)(void))read_report, METH_VARARGS | METH_KEYWORDS,
     "report(path, json=False, top=10, unreadable=()) -> str\n\n"
     "What `lapse report PATH [--json] [--top N]` prints. path is a .lapse file, a run\n"
     "directory or a directory of runs (its newest attempt). unreadable: (file, reason)\n"
     "pairs of files not at path that the report names as unreadable. Raises\n"
     "FileNotFoundError when path does not exist, ValueError when it holds no .lapse\n"
     "file or none is readable, OSError otherwise."},
    {"load", read_load, METH_VARARGS,
     "load(path) -> (str, [(name, bytes, size)])\n\n"
     "The JSON report of path (report(path, json=True)) and, from the same reading, the\n"
     "bytes read of each file of the attempt: all of a file the reader took, and of\n"
     "one it refused only what it examined before refusing it (size is the file's\n"
     "size). name is the file's path inside the run directory, or its name for a run\n"
     "of one file. Files that could not be opened as regular files are not there.\n"
     "Errors as for report()."},
    {"diff", (PyCFunction)(void (*)(void))read_diff, METH_VARARGS | METH_KEYWORDS,
     "diff(a, b, json=False, top=30, by_path=False, unreadable_a=(), unreadable_b=()) -> str\n\n"
     "What `lapse diff A B [--json] [--top N] [--by-path]` prints: A is the before\n"
     "side, B the after side (ratios are B / A). Errors and unreadable as for report()."},
    {"export_perfetto", (PyCFunction)(void (*)(void))read_export_perfetto,
     METH_VARARGS | METH_KEYWORDS,
     "export_perfetto(path, out) -> int\n\n"
     "Writes what `lapse export PATH --perfetto OUT` writes (Chrome trace JSON,\n"
     "atomically) and returns the number of slices. path is a path or a run in memory,\n"
     "as report() takes it. Unreadable files are left out; ValueError when none is\n"
     "readable."},
    {NULL, NULL, 0, NULL},
};
