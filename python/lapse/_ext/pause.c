/* Profiler.pause() / resume(): the calling thread's spans (within it, the current
 * task's) record nothing between the two.
 *
 * pause_here() begins an unmeasured sampled frame, named "(paused)", on the
 * current context's stack: the core records nothing inside it, and the spans
 * begun and ended there match as everywhere else (core_span_begin_sampled).
 * resume_here() ends it, on the same context only. */
#include "ext.h"

#include "lapse.h"

static uint32_t paused_id;

/* pause_here() -> (context, token): what resume_here takes; None without a session */
static PyObject *pause_here(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (!lapse_enabled_)
        Py_RETURN_NONE;
    if (!paused_id) {
        PyObject *name = PyUnicode_FromString("(paused)");
        int rc = name ? ext_name_id(name, &paused_id) : -1;
        Py_XDECREF(name);
        if (rc < 0)
            return NULL;
    }
    const void *key = ext_context_key();
    int token = lapse_span_begin_sampled(key, paused_id, 0, 1);
    return Py_BuildValue("(Ni)", PyLong_FromVoidPtr((void *)key), token);
}

static PyObject *resume_here(PyObject *self, PyObject *state)
{
    (void)self;
    void *key = NULL;
    int token = 0;
    PyObject *boxed;
    if (!PyTuple_Check(state) || !PyArg_ParseTuple(state, "Oi", &boxed, &token) ||
        !(key = PyLong_AsVoidPtr(boxed))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "resume_here(state): what pause_here returned");
        return NULL;
    }
    if (key != ext_context_key()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "lapse: resume() in another task than the one that paused");
        return NULL;
    }
    if (lapse_enabled_ && token > 0)
        lapse_span_end_keyed(key, token);
    Py_RETURN_NONE;
}

PyMethodDef ext_pause_methods[] = {
    {"pause_here", pause_here, METH_NOARGS,
     "pause_here() -> state: the spans of this thread (this task) record nothing until "
     "resume_here(state)"},
    {"resume_here", resume_here, METH_O, "resume_here(state): ends what pause_here began"},
    {NULL, NULL, 0, NULL},
};
