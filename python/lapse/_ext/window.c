/* A heavy backend's window (Profiler(backend=, backend_window=(start, stop),
 * window_phase=)): the entries into the span window_phase are counted, on every
 * thread, by the extension's span hook (span_hook.c); on the start-th the backend is
 * opened and on the stop-th closed (entries start .. stop - 1 inside it), each on a
 * thread that holds the GIL (an entry on another thread counts, and the next one
 * under the GIL opens or closes it). The backend is a Python object of the facade
 * (lapse/_backend.py): open() starts it, close() stops it and returns the trace's
 * path; what either raises is the reason the file records (never the program's).
 * What happened goes to the session (session.h, lapse_session_window_note), for the
 * file's META window_* keys. (A torch window recording CUDA in a session collecting
 * ACTIVITY gets CUPTI as every torch.profiler does: lapse/_torch_profiler.py.) Once closed, a span of the phase costs the hook's call and one load. */
#include "ext.h"

#include "lapse.h"

#include "session/session.h"

#include <stdio.h>
#include <string.h>

enum { W_OFF, W_WAITING, W_BUSY, W_OPEN, W_DONE };

static PyObject *runner;          /* the backend, while the window may still open */
static char backend[16], phase[256], trace[4096], error[512];
static uint32_t phase_id;
static uint64_t start, stop, entries, opened_entry, closed_entry;
static int state;                 /* W_*, atomic */
static __thread int inside;       /* the backend's own calls: their spans do not count */

static void note(int event)
{
    session_window w = {backend, phase, trace, error, start, stop,
                        __atomic_load_n(&entries, __ATOMIC_RELAXED), opened_entry, closed_entry};
    lapse_session_window_note(&w, event);
}

/* Calls runner.method() with the GIL held, keeping the program's exception as it
 * was; the result, or NULL with why (what it raised) in error. */
static PyObject *call(const char *method, const char *what)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallMethod(runner, method, NULL);
    if (!r) {
        PyObject *et, *ev, *etb;
        PyErr_Fetch(&et, &ev, &etb);
        PyObject *text = ev ? PyObject_Str(ev) : NULL;
        const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
        snprintf(error, sizeof error, "%s %s: %s: %s", backend, what,
                 et ? ((PyTypeObject *)et)->tp_name : "error", msg ? msg : "?");
        Py_XDECREF(text);
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(etb);
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
    return r;
}

/* With the GIL held and the state W_BUSY: stops the backend (entry: the entry it
 * closes on, 0 at the session's stop) and records its trace or why not. */
static void close_backend(uint64_t entry)
{
    inside = 1;
    PyObject *path = call("close", "could not write its trace");
    if (path) {
        const char *p = PyUnicode_Check(path) ? PyUnicode_AsUTF8(path) : NULL;
        if (p)
            snprintf(trace, sizeof trace, "%s", p);
        else
            PyErr_Clear();
        Py_DECREF(path);
    }
    closed_entry = entry;
    Py_CLEAR(runner);
    inside = 0;
    __atomic_store_n(&state, W_DONE, __ATOMIC_RELEASE);
    note(SESSION_WINDOW_CLOSED);
}

static void try_open(uint64_t n)
{
    int expected = W_WAITING;
    if (!PyGILState_Check() ||
        !__atomic_compare_exchange_n(&state, &expected, W_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return;
    inside = 1;
    PyObject *r = call("open", "could not start");
    inside = 0;
    if (!r) {
        Py_CLEAR(runner);
        __atomic_store_n(&state, W_DONE, __ATOMIC_RELEASE);
        note(0);
        return;
    }
    Py_DECREF(r);
    opened_entry = n;
    __atomic_store_n(&state, W_OPEN, __ATOMIC_RELEASE);
    note(SESSION_WINDOW_OPENED);
}

void ext_window_begin(uint32_t id)
{
    if (id != phase_id || inside)
        return;
    int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (st != W_WAITING && st != W_OPEN)
        return; /* closed (or never asked for): one load */
    uint64_t n = __atomic_add_fetch(&entries, 1, __ATOMIC_RELAXED);
    if (st == W_WAITING && n >= start)
        try_open(n);
    else if (st == W_OPEN && n >= stop && PyGILState_Check()) {
        int expected = W_OPEN;
        if (__atomic_compare_exchange_n(&state, &expected, W_BUSY, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            close_backend(n);
    }
}

int ext_window_on(void) { return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == W_WAITING; }

int ext_window_set(PyObject *window)
{
    Py_CLEAR(runner);
    backend[0] = phase[0] = trace[0] = error[0] = 0;
    entries = opened_entry = closed_entry = 0;
    __atomic_store_n(&state, W_OFF, __ATOMIC_RELEASE);
    if (window == Py_None)
        return 0;
    const char *b, *p, *why;
    unsigned long long first, last;
    PyObject *r;
    if (!PyArg_ParseTuple(window, "ssKKOz:window", &b, &p, &first, &last, &r, &why))
        return -1;
    if (first < 1 || first >= last) {
        PyErr_SetString(PyExc_ValueError, "window: entries 1 <= start < stop");
        return -1;
    }
    snprintf(backend, sizeof backend, "%s", b);
    snprintf(phase, sizeof phase, "%s", p);
    snprintf(error, sizeof error, "%s", why ? why : "");
    start = first;
    stop = last;
    phase_id = lapse_intern(phase);
    if (r != Py_None && !why) {
        Py_INCREF(r);
        runner = r;
        __atomic_store_n(&state, W_WAITING, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&state, W_DONE, __ATOMIC_RELEASE); /* it cannot run: said, never opened */
    }
    return 0;
}

void ext_window_started(void)
{
    if (backend[0])
        note(0);
}

static PyObject *window_finish(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (!backend[0])
        Py_RETURN_NONE;
    int expected = W_OPEN, waiting = 0;
    if (__atomic_compare_exchange_n(&state, &expected, W_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        close_backend(0); /* the session ends inside the window */
    } else {
        /* the session ends before it opened: it will not (a C span after the
         * interpreter's end must not try to) */
        expected = W_WAITING;
        waiting = __atomic_compare_exchange_n(&state, &expected, W_DONE, 0, __ATOMIC_ACQ_REL,
                                              __ATOMIC_RELAXED);
        Py_CLEAR(runner);
        note(0); /* the entries counted */
    }
    return Py_BuildValue("{s:s,s:K,s:K,s:K,s:s,s:z}", "state", waiting ? "waiting" : "done",
                         "entries", (unsigned long long)__atomic_load_n(&entries, __ATOMIC_RELAXED),
                         "opened_entry", (unsigned long long)opened_entry, "closed_entry",
                         (unsigned long long)closed_entry, "trace", trace,
                         "error", error[0] ? error : NULL);
}

static PyObject *window_forget(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    __atomic_store_n(&state, W_DONE, __ATOMIC_RELEASE);
    backend[0] = 0;
    Py_CLEAR(runner);
    Py_RETURN_NONE;
}

PyMethodDef ext_window_methods[] = {
    {"window_forget", window_forget, METH_NOARGS,
     "window_forget() -> None: in a forked child, the parent's window is forgotten (it\n"
     "neither opens nor closes there, and the child's file has none)"},
    {"window_finish", window_finish, METH_NOARGS,
     "window_finish() -> None without a window; else closes it if it is open (the trace\n"
     "written) or ends its wait, updates the file's record, and returns {state ('waiting':\n"
     "it never opened; 'done'), entries, opened_entry, closed_entry, trace, error}"},
    {NULL, NULL, 0, NULL},
};
