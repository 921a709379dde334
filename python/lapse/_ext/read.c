/* Reading runs from Python: report, diff and Perfetto export, composed exactly as
 * the `lapse report`, `lapse diff` and `lapse export` commands compose them
 * (store -> analyze -> render). The text is rendered into memory; the GIL is
 * released while files are read and rendered.
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
#include "render/report_render.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/run_dir.h"

#include <errno.h>
#include <pthread.h>
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

/* ---- report ---- */

static PyObject *read_report(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"path", "json", "top", NULL};
    PyObject *path_obj = NULL;
    int json = 0;
    Py_ssize_t top = 10;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|pn:report", names, PyUnicode_FSConverter,
                                     &path_obj, &json, &top))
        return NULL;
    report_options ro;
    if (parse_top(top, 1000000, &ro.top) < 0) {
        Py_DECREF(path_obj);
        return NULL;
    }
    const char *path = PyBytes_AS_STRING(path_obj);

    char err[REASON_LEN] = "";
    int rc = 0, stage = 0, exists = 1;
    mem_out o = {0};
    run_model m;
    run_stats s;
    Py_BEGIN_ALLOW_THREADS
    rc = run_model_load(path, NULL, &m, err, sizeof err);
    if (rc) {
        exists = path_exists(path);
        stage = 1;
    } else {
        if (m.worker_count == 0) {
            no_readable_reason(&m, path, err, sizeof err);
            stage = 2;
        } else if ((rc = run_stats_build(&m, &s)) != 0) {
            snprintf(err, sizeof err, "%s: out of memory", path);
            stage = 3;
        } else {
            if ((rc = mem_open(&o)) == 0) {
                rc = json ? report_write_json(o.f, &m, &s, &ro)
                          : report_write_text(o.f, &m, &s, &ro);
                int crc = mem_close(&o);
                if (!rc)
                    rc = crc;
            }
            if (rc) {
                snprintf(err, sizeof err, "%s: cannot render the report: %s", path, strerror(-rc));
                stage = 3;
            }
            run_stats_free(&s);
        }
        run_model_free(&m);
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);

    PyObject *result = NULL;
    if (stage == 1)
        raise_load_error(rc, exists, err);
    else if (stage == 2)
        raise_reason(PyExc_ValueError, 0, err);
    else if (stage == 3)
        raise_load_error(rc, 1, err);
    else
        result = mem_text(&o);
    free(o.buf);
    return result;
}

/* ---- diff ---- */

static PyObject *read_diff(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"a", "b", "json", "top", "by_path", NULL};
    PyObject *path_obj[2] = {NULL, NULL};
    int json = 0, by_path = 0;
    Py_ssize_t top = 30;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|pnp:diff", names, PyUnicode_FSConverter,
                                     &path_obj[0], PyUnicode_FSConverter, &path_obj[1], &json,
                                     &top, &by_path))
        return NULL;
    diff_options dopt;
    if (parse_top(top, 100000000, &dopt.top) < 0) {
        Py_DECREF(path_obj[0]);
        Py_DECREF(path_obj[1]);
        return NULL;
    }
    const char *paths[2] = {PyBytes_AS_STRING(path_obj[0]), PyBytes_AS_STRING(path_obj[1])};
    unsigned flags = by_path ? DIFF_BY_PATH : 0;

    char err[REASON_LEN] = "";
    int rc = 0, stage = 0, exists = 1, loaded = 0;
    mem_out o = {0};
    run_model m[2];
    Py_BEGIN_ALLOW_THREADS
    for (; loaded < 2; loaded++) {
        rc = run_model_load(paths[loaded], NULL, &m[loaded], err, sizeof err);
        if (rc) {
            exists = path_exists(paths[loaded]);
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
    Py_DECREF(path_obj[0]);
    Py_DECREF(path_obj[1]);

    PyObject *result = NULL;
    if (stage == 1)
        raise_load_error(rc, exists, err);
    else if (stage == 2)
        raise_reason(PyExc_ValueError, 0, err);
    else if (stage == 3)
        raise_load_error(rc, 1, err);
    else
        result = mem_text(&o);
    free(o.buf);
    return result;
}

/* ---- export ---- */

/* What one export did; err holds the reason when rc != 0. */
typedef struct export_job {
    const char *path, *out_path;
    int rc;       /* 0, or a negative code */
    int no_files; /* nothing readable (ValueError) */
    int writing;  /* the failure is about the output file */
    int exists;
    uint64_t slices;
    char err[REASON_LEN];
} export_job;

/* The body of `lapse export PATH --perfetto OUT`, without stderr: two passes over
 * the newest attempt (the earliest instant, then one file at a time), written to
 * OUT.tmp.PID.N and renamed into place. */
static void export_run(export_job *j)
{
    char why[512] = "";
    store_run_listing run;
    j->rc = store_list_run(j->path, &run, j->err, sizeof j->err);
    if (j->rc) {
        j->exists = path_exists(j->path);
        return;
    }
    const store_attempt *a = &run.attempts[run.newest];
    char *readable = calloc(a->file_count ? a->file_count : 1, 1);
    if (!readable) {
        j->rc = -ENOMEM;
        snprintf(j->err, sizeof j->err, "%s: out of memory", j->path);
        store_run_listing_free(&run);
        return;
    }
    uint64_t base = UINT64_MAX;
    size_t good = 0;
    const char *first_bad = NULL;
    char first_why[512] = "";
    for (size_t i = 0; i < a->file_count; i++) {
        store_file f;
        if (store_read_file(a->files[i], STORE_READ_SKIP_HIST, &f, why, sizeof why) != 0) {
            if (!first_bad) {
                first_bad = a->files[i];
                snprintf(first_why, sizeof first_why, "%s", why);
            }
            continue;
        }
        uint64_t first;
        if (perfetto_first_ns(&f, &first) == 0 && first < base)
            base = first;
        readable[i] = 1;
        good++;
        store_file_free(&f);
    }
    if (!good) {
        j->rc = -ENOENT;
        j->no_files = 1;
        if (first_bad)
            snprintf(j->err, sizeof j->err, "%s: no readable .lapse file (%zu unreadable; %s: %s)",
                     j->path, a->file_count, first_bad, first_why);
        else
            snprintf(j->err, sizeof j->err, "%s: no readable .lapse file", j->path);
        free(readable);
        store_run_listing_free(&run);
        return;
    }
    if (base == UINT64_MAX)
        base = 0;

    j->writing = 1;
    char tmp_path[4096];
    static unsigned exports; /* a tmp name of its own for each export of this process */
    unsigned seq = __atomic_add_fetch(&exports, 1, __ATOMIC_RELAXED);
    if (snprintf(tmp_path, sizeof tmp_path, "%s.tmp.%ld.%u", j->out_path, (long)getpid(), seq) >=
        (int)sizeof tmp_path) {
        j->rc = -ENAMETOOLONG;
        snprintf(j->err, sizeof j->err, "%s: path too long", j->out_path);
        free(readable);
        store_run_listing_free(&run);
        return;
    }
    FILE *out = fopen(tmp_path, "w");
    if (!out) {
        j->rc = -errno;
        snprintf(j->err, sizeof j->err, "cannot create %s: %s", j->out_path, strerror(errno));
        free(readable);
        store_run_listing_free(&run);
        return;
    }
    perfetto_writer *w = perfetto_open(out);
    int rc = w ? 0 : -ENOMEM;
    size_t exported = 0;
    for (size_t i = 0; i < a->file_count && rc == 0; i++) {
        if (!readable[i])
            continue;
        store_file f;
        if (store_read_file(a->files[i], STORE_READ_SKIP_HIST, &f, why, sizeof why) != 0)
            continue; /* it changed since pass 1 (a live run rewrites its files) */
        perfetto_file_stats st;
        rc = perfetto_add_file(w, &f, base, &st);
        if (rc == 0) {
            exported++;
            j->slices += st.slices;
        }
        store_file_free(&f);
    }
    if (w) {
        int frc = perfetto_finish(w);
        if (rc == 0)
            rc = frc;
    }
    if (fclose(out) != 0 && rc == 0)
        rc = -EIO;
    if (rc) {
        j->rc = rc;
        snprintf(j->err, sizeof j->err, "%s: %s", j->out_path,
                 rc == -ENOMEM ? "out of memory" : "write failed (disk full?)");
    } else if (!exported) {
        j->rc = -ENOENT;
        j->no_files = 1;
        j->writing = 0;
        snprintf(j->err, sizeof j->err, "%s: no readable .lapse file, nothing written", j->path);
    } else if (rename(tmp_path, j->out_path) != 0) {
        j->rc = -errno;
        snprintf(j->err, sizeof j->err, "cannot write %s: %s", j->out_path, strerror(errno));
    }
    if (j->rc)
        unlink(tmp_path);
    free(readable);
    store_run_listing_free(&run);
}

static PyObject *read_export_perfetto(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"path", "out", NULL};
    PyObject *path_obj = NULL, *out_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&:export_perfetto", names,
                                     PyUnicode_FSConverter, &path_obj, PyUnicode_FSConverter,
                                     &out_obj))
        return NULL;
    export_job *j = calloc(1, sizeof *j);
    if (!j) {
        Py_DECREF(path_obj);
        Py_DECREF(out_obj);
        return PyErr_NoMemory();
    }
    j->path = PyBytes_AS_STRING(path_obj);
    j->out_path = PyBytes_AS_STRING(out_obj);
    j->exists = 1;
    PyObject *result = NULL;
    if (!*j->out_path) {
        PyErr_SetString(PyExc_ValueError, "export_perfetto: out must name a file");
    } else {
        Py_BEGIN_ALLOW_THREADS
        export_run(j);
        Py_END_ALLOW_THREADS
        if (j->no_files)
            raise_reason(PyExc_ValueError, 0, j->err);
        else if (j->rc && j->writing)
            raise_write_error(j->rc, j->err);
        else if (j->rc)
            raise_load_error(j->rc, j->exists, j->err);
        else
            result = PyLong_FromUnsignedLongLong(j->slices);
    }
    free(j);
    Py_DECREF(path_obj);
    Py_DECREF(out_obj);
    return result;
}

PyMethodDef ext_read_methods[] = {
    {"report", (PyCFunction)(void (*)(void))read_report, METH_VARARGS | METH_KEYWORDS,
     "report(path, json=False, top=10) -> str\n\n"
     "What `lapse report PATH [--json] [--top N]` prints. path is a .lapse file, a run\n"
     "directory or a directory of runs (its newest attempt). Raises FileNotFoundError\n"
     "when path does not exist, ValueError when it holds no .lapse file or none is\n"
     "readable, OSError otherwise."},
    {"diff", (PyCFunction)(void (*)(void))read_diff, METH_VARARGS | METH_KEYWORDS,
     "diff(a, b, json=False, top=30, by_path=False) -> str\n\n"
     "What `lapse diff A B [--json] [--top N] [--by-path]` prints: A is the before\n"
     "side, B the after side (ratios are B / A). Errors as for report()."},
    {"export_perfetto", (PyCFunction)(void (*)(void))read_export_perfetto,
     METH_VARARGS | METH_KEYWORDS,
     "export_perfetto(path, out) -> int\n\n"
     "Writes what `lapse export PATH --perfetto OUT` writes (Chrome trace JSON,\n"
     "atomically) and returns the number of slices. Unreadable files are left out;\n"
     "ValueError when none is readable."},
    {NULL, NULL, 0, NULL},
};
