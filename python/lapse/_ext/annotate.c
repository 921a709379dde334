/* annotate=True: every span of Python code is also a torch.profiler.record_function
 * of its name, so a torch.profiler (Kineto) capture shows lapse's spans, nested.
 *
 * It is a span hook of the core (core.h), through the extension's one (span_hook.c):
 * set for the next session only when asked for, so that without it spans cost what they cost (no check on their path). The
 * hook runs on the thread of the span; it annotates the spans of threads that hold
 * the GIL (Python's own, and C spans called from Python), never calls Python
 * without it, and never raises into the program: a failing record_function is
 * counted (annotate_failures()) and its error cleared. */
#include "ext.h"

#include "lapse.h"

static PyObject *factory;   /* torch.profiler.record_function, while a session uses it */
static PyObject *id_names;  /* int name id -> str */
static uint64_t failures;   /* record_function calls that raised */
static __thread int inside; /* a hook runs on this thread: Python it calls is not annotated */

int ext_annotate_name(uint32_t id, PyObject *name)
{
    if (!id_names && !(id_names = PyDict_New()))
        return -1;
    PyObject *key = PyLong_FromUnsignedLong(id);
    int rc = key ? PyDict_SetItem(id_names, key, name) : -1;
    Py_XDECREF(key);
    return rc;
}

int ext_annotate_on(void) { return factory != NULL; }

uint64_t ext_annotate_begin(uint32_t id)
{
    if (inside || !factory || !PyGILState_Check())
        return 0;
    inside = 1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* a span may begin while an exception is set */
    PyObject *rf = NULL, *key = PyLong_FromUnsignedLong(id);
    PyObject *name = key ? PyDict_GetItemWithError(id_names, key) : NULL;
    Py_XDECREF(key);
    if (name && (rf = PyObject_CallOneArg(factory, name)) != NULL) {
        PyObject *entered = PyObject_CallMethod(rf, "__enter__", NULL);
        if (entered)
            Py_DECREF(entered);
        else
            Py_CLEAR(rf);
    }
    if (!rf && PyErr_Occurred()) {
        failures++;
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
    inside = 0;
    return (uint64_t)(uintptr_t)rf;
}

void ext_annotate_end(uint64_t value)
{
    PyObject *rf = (PyObject *)(uintptr_t)value;
    if (!rf || !PyGILState_Check()) /* the GIL is held where it began: a thread's own spans */
        return;
    inside = 1;
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb); /* the end of a span an exception leaves */
    PyObject *done = PyObject_CallMethod(rf, "__exit__", "OOO", Py_None, Py_None, Py_None);
    if (done)
        Py_DECREF(done);
    else {
        failures++;
        PyErr_Clear();
    }
    Py_DECREF(rf);
    PyErr_Restore(type, exc, tb);
    inside = 0;
}

int ext_annotate_set(PyObject *record_function)
{
    if (record_function == Py_None)
        record_function = NULL;
    if (record_function && !PyCallable_Check(record_function)) {
        PyErr_SetString(PyExc_TypeError, "annotate must be torch.profiler.record_function or None");
        return -1;
    }
    Py_XINCREF(record_function);
    Py_XSETREF(factory, record_function);
    return 0;
}

static PyObject *annotate_failures(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(failures);
}

PyMethodDef ext_annotate_methods[] = {
    {"annotate_failures", annotate_failures, METH_NOARGS,
     "annotate_failures() -> the record_function calls of annotate=True that raised (their\n"
     "errors were cleared: the program never sees them)"},
    {NULL, NULL, 0, NULL},
};
