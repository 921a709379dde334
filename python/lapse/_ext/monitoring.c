/* CPython 3.12+: a decorated plain function stays the plain function.
 *
 * A C wrapper costs about 2 x a direct call even dormant (it turns the
 * interpreter's inlined call into a C call). On 3.12 and later, @span instead
 * registers the function's code object and returns the function unchanged; while
 * a session is active, sys.monitoring delivers PY_START and PY_RETURN for just
 * those code objects (local events) and PY_UNWIND (a global event: it fires only
 * when an exception leaves a function) to the callbacks below. Dormant, nothing
 * is instrumented and the call is the interpreter's own. */
#include "ext.h"

#include "lapse.h"

#include <stdarg.h>

#if PY_VERSION_HEX >= 0x030C0000

#define EVENT_PY_START 1
#define EVENT_PY_RETURN 4
#define EVENT_PY_UNWIND 4096

static PyObject *code_names;  /* code object -> int name id */
static PyObject *monitoring;  /* the sys.monitoring module */
static int tool_id = -1;      /* the tool id we hold while enabled, else -1 */
static int warned_no_tool;

static inline const void *current_key(void)
{
    return PyThreadState_Get()->context;
}

static int name_id_of(PyObject *code, uint32_t *id)
{
    PyObject *value = PyDict_GetItemWithError(code_names, code);
    if (!value)
        return -1;
    *id = (uint32_t)PyLong_AsUnsignedLong(value);
    return 0;
}

static PyObject *on_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    uint32_t id;
    if (nargs >= 1 && lapse_enabled_ && name_id_of(args[0], &id) == 0)
        lapse_span_begin_keyed(current_key(), id);
    Py_RETURN_NONE;
}

static PyObject *on_end(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    uint32_t id;
    if (nargs >= 1 && lapse_enabled_ && name_id_of(args[0], &id) == 0)
        lapse_span_end_keyed_name(current_key(), id);
    if (PyErr_Occurred())
        PyErr_Clear();
    Py_RETURN_NONE;
}

static PyMethodDef callbacks[] = {
    {"_lapse_py_start", (PyCFunction)(void (*)(void))on_start, METH_FASTCALL, NULL},
    {"_lapse_py_end", (PyCFunction)(void (*)(void))on_end, METH_FASTCALL, NULL},
};

static int call_monitoring(const char *method, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    PyObject *fn = PyObject_GetAttrString(monitoring, method);
    PyObject *args = fn ? Py_VaBuildValue(format, ap) : NULL;
    va_end(ap);
    PyObject *result = args ? PyObject_CallObject(fn, args) : NULL;
    Py_XDECREF(fn);
    Py_XDECREF(args);
    if (!result)
        return -1;
    Py_DECREF(result);
    return 0;
}

static int set_local(PyObject *code, int events)
{
    return call_monitoring("set_local_events", "(iOi)", tool_id, code, events);
}

int ext_monitoring_enable(void)
{
    if (tool_id >= 0)
        return 0;
    static const int candidates[] = {2, 3, 4}; /* PROFILER_ID, then the free ones */
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (call_monitoring("use_tool_id", "(is)", candidates[i], "lapse") == 0) {
            tool_id = candidates[i];
            break;
        }
        PyErr_Clear();
    }
    if (tool_id < 0) {
        if (!warned_no_tool) {
            warned_no_tool = 1;
            if (PyErr_WarnEx(PyExc_RuntimeWarning,
                             "lapse: every sys.monitoring tool id lapse can use is taken; "
                             "functions decorated with @span are not timed in this process",
                             1) < 0)
                return -1;
        }
        return 0;
    }
    PyObject *start = PyCFunction_New(&callbacks[0], NULL);
    PyObject *end = PyCFunction_New(&callbacks[1], NULL);
    int rc = -1;
    if (start && end &&
        call_monitoring("register_callback", "(iiO)", tool_id, EVENT_PY_START, start) == 0 &&
        call_monitoring("register_callback", "(iiO)", tool_id, EVENT_PY_RETURN, end) == 0 &&
        call_monitoring("register_callback", "(iiO)", tool_id, EVENT_PY_UNWIND, end) == 0 &&
        call_monitoring("set_events", "(ii)", tool_id, EVENT_PY_UNWIND) == 0) {
        rc = 0;
        PyObject *code;
        Py_ssize_t pos = 0;
        PyObject *value;
        while (rc == 0 && PyDict_Next(code_names, &pos, &code, &value))
            rc = set_local(code, EVENT_PY_START | EVENT_PY_RETURN);
    }
    Py_XDECREF(start);
    Py_XDECREF(end);
    return rc;
}

int ext_monitoring_disable(void)
{
    if (tool_id < 0)
        return 0;
    int rc = call_monitoring("free_tool_id", "(i)", tool_id); /* drops events and callbacks */
    tool_id = -1;
    return rc;
}

/* Registers fn (a plain Python function) as a span named `name`; returns fn. */
PyObject *ext_monitoring_register(PyObject *name, PyObject *fn, uint32_t id)
{
    PyObject *code = PyFunction_GET_CODE(fn);
    PyObject *boxed = PyLong_FromUnsignedLong(id);
    if (!boxed || PyDict_SetItem(code_names, code, boxed) < 0) {
        Py_XDECREF(boxed);
        return NULL;
    }
    Py_DECREF(boxed);
    if (PyObject_SetAttrString(fn, "__lapse_span__", name) < 0)
        return NULL;
    if (tool_id >= 0 && set_local(code, EVENT_PY_START | EVENT_PY_RETURN) < 0)
        return NULL;
    Py_INCREF(fn);
    return fn;
}

int ext_monitoring_init(void)
{
    code_names = PyDict_New();
    PyObject *sys = PyImport_ImportModule("sys");
    if (!sys || !code_names)
        return -1;
    monitoring = PyObject_GetAttrString(sys, "monitoring");
    Py_DECREF(sys);
    return monitoring ? 0 : -1;
}

#else /* before 3.12: decorated functions are C wrappers (span.c) */

int ext_monitoring_enable(void) { return 0; }
int ext_monitoring_disable(void) { return 0; }
int ext_monitoring_init(void) { return 0; }

#endif

static PyObject *py_enable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (ext_monitoring_enable() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_disable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (ext_monitoring_disable() < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyMethodDef ext_monitoring_methods[] = {
    {"monitoring_enable", py_enable, METH_NOARGS,
     "Instruments the functions decorated with @span (3.12+: sys.monitoring)."},
    {"monitoring_disable", py_disable, METH_NOARGS, "Removes that instrumentation."},
    {NULL, NULL, 0, NULL},
};
