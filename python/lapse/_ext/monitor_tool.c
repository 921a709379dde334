/* A sys.monitoring tool of the extension's own (3.12+), for the engines that use one
 * (auto_spans.c, line_monitor.c): taking a free tool id, its callbacks, its events,
 * and giving them all back. */
#include "ext.h"

#if PY_VERSION_HEX >= 0x030C0000

static PyObject *monitoring; /* sys.monitoring */

long ext_monitor_event(const char *name)
{
    PyObject *events = PyObject_GetAttrString(monitoring, "events");
    PyObject *v = events ? PyObject_GetAttrString(events, name) : NULL;
    long bit = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    Py_XDECREF(events);
    return bit;
}

static int register_callbacks(const ext_monitor_tool *t, int on)
{
    int rc = 0;
    for (size_t i = 0; i < t->callback_count; i++) {
        PyMethodDef *def = on ? &t->defs[t->callback_def[i]] : NULL;
        PyObject *fn = def ? PyCFunction_New(def, NULL) : Py_NewRef(Py_None);
        long bit = fn ? ext_monitor_event(t->callback_events[i]) : -1;
        PyObject *r = bit < 0 ? NULL
                              : PyObject_CallMethod(monitoring, "register_callback", "ilO", t->id,
                                                    bit, fn);
        Py_XDECREF(fn);
        Py_XDECREF(r);
        if (!r) {
            if (on)
                return -1;
            rc = -1;
        }
    }
    return rc;
}

int ext_monitor_acquire(ext_monitor_tool *t)
{
    if (!monitoring) {
        PyObject *sys = PyImport_ImportModule("sys");
        monitoring = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
        Py_XDECREF(sys);
        if (!monitoring)
            return -1;
    }
    for (int id = t->first_id; id <= t->last_id && t->id < 0; id++) {
        PyObject *r = PyObject_CallMethod(monitoring, "use_tool_id", "is", id, t->name);
        if (r) {
            t->id = id;
            Py_DECREF(r);
        } else if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
        } else {
            return -1;
        }
    }
    if (t->id < 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s: sys.monitoring tools %d to %d are all in use by other tools (another "
                     "profiler or debugger)",
                     t->who, t->first_id, t->last_id);
        return -1;
    }
    return register_callbacks(t, 1);
}

int ext_monitor_set_local(const ext_monitor_tool *t, PyObject *code, long events)
{
    PyObject *r = PyObject_CallMethod(monitoring, "set_local_events", "iOl", t->id, code, events);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

int ext_monitor_set_events(const ext_monitor_tool *t, long events)
{
    PyObject *r = PyObject_CallMethod(monitoring, "set_events", "il", t->id, events);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

int ext_monitor_release(ext_monitor_tool *t)
{
    if (t->id < 0)
        return 0;
    int rc = ext_monitor_set_events(t, 0);
    rc |= register_callbacks(t, 0);
    PyObject *r = PyObject_CallMethod(monitoring, "free_tool_id", "i", t->id);
    rc |= r ? 0 : -1;
    Py_XDECREF(r);
    t->id = -1;
    return rc;
}

#endif
