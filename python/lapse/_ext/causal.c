/* lapse.signal(name) and lapse.wait_on(name) (lapse.h's lapse_signal,
 * lapse_wait_on_keyed): a producer marks what it made available, a consumer the wait
 * it ended. `with lapse.wait_on("batch"):` is the wait, a span "wait:batch" on the
 * current context's stack (as lapse.span's) whose end is when it was unblocked.
 * Dormant (no session) both do one check. */
#include "ext.h"

#include "lapse.h"

typedef struct {
    PyObject_HEAD
    PyObject *name;
    lapse_wait wait;
    const void *key; /* the context the wait began in: it ends there */
} WaitObject;

static PyTypeObject Wait_Type;

static const char *utf8_name(PyObject *name, const char *what)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "%s: name must be a str, not %.100s", what,
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    return PyUnicode_AsUTF8(name);
}

static PyObject *signal_entry(PyObject *module, PyObject *name)
{
    (void)module;
    const char *s = utf8_name(name, "signal");
    if (!s)
        return NULL;
    if (lapse_enabled_)
        lapse_signal(s);
    Py_RETURN_NONE;
}

static PyObject *wait_on_entry(PyObject *module, PyObject *name)
{
    (void)module;
    if (!utf8_name(name, "wait_on"))
        return NULL;
    WaitObject *w = PyObject_New(WaitObject, &Wait_Type);
    if (!w)
        return NULL;
    Py_INCREF(name);
    w->name = name;
    w->wait = (lapse_wait){0, 0, 0};
    w->key = NULL;
    return (PyObject *)w;
}

static void Wait_dealloc(WaitObject *w)
{
    Py_XDECREF(w->name);
    PyObject_Free(w);
}

static PyObject *Wait_enter(WaitObject *w, PyObject *unused)
{
    (void)unused;
    if (w->wait.span || w->wait.record) {
        PyErr_SetString(PyExc_RuntimeError, "wait_on: this wait is already open (a wait_on() "
                                            "object is entered once at a time)");
        return NULL;
    }
    if (lapse_enabled_) {
        const char *s = PyUnicode_AsUTF8(w->name);
        if (!s)
            return NULL;
        w->key = ext_context_key();
        w->wait = lapse_wait_on_keyed(w->key, s);
    }
    Py_INCREF(w);
    return (PyObject *)w;
}

static PyObject *Wait_exit(WaitObject *w, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    lapse_wait_done_keyed(w->key, &w->wait);
    Py_RETURN_FALSE; /* exceptions pass through */
}

static PyObject *Wait_repr(WaitObject *w)
{
    return PyUnicode_FromFormat("lapse.wait_on(%R)", w->name);
}

static PyMethodDef Wait_methods[] = {
    {"__enter__", (PyCFunction)Wait_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))Wait_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Wait_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lapse.Wait",
    .tp_basicsize = sizeof(WaitObject),
    .tp_dealloc = (destructor)Wait_dealloc,
    .tp_repr = (reprfunc)Wait_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A wait on a name: `with lapse.wait_on(name):` (lapse.wait_on).",
    .tp_methods = Wait_methods,
};

PyMethodDef ext_causal_methods[] = {
    {"signal", signal_entry, METH_O,
     "signal(name): this thread has just made `name` available (call it before the\n"
     "consumer is woken); the wait it ends is paired with it in the report."},
    {"wait_on", wait_on_entry, METH_O,
     "wait_on(name) -> a context manager: `with wait_on(name):` is a wait for `name`,\n"
     "a span \"wait:NAME\" that ends when it was unblocked."},
    {NULL, NULL, 0, NULL},
};

int ext_causal_init(void) { return PyType_Ready(&Wait_Type); }
