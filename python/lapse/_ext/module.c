/* lapse._lapse: the C core of the lapse Python package. */
#include "ext.h"

#include "lapse.h"

static PyObject *name_ids;    /* str -> int name id */
static PyObject *on_new_name; /* lapse._names.on_new_name: checks the shape of a new name */

int ext_name_id(PyObject *name, uint32_t *id)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "a span name must be a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    PyObject *cached = PyDict_GetItemWithError(name_ids, name);
    if (cached) {
        *id = (uint32_t)PyLong_AsUnsignedLong(cached);
        return 0;
    }
    if (PyErr_Occurred())
        return -1;
    const char *utf8 = PyUnicode_AsUTF8(name);
    if (!utf8)
        return -1;
    if (on_new_name) {
        PyObject *ok = PyObject_CallOneArg(on_new_name, name);
        if (!ok)
            return -1;
        Py_DECREF(ok);
    }
    if (!*utf8) {
        PyErr_SetString(PyExc_ValueError, "a span name must not be empty");
        return -1;
    }
    uint32_t value = lapse_intern(utf8);
    if (value == 0) {
        PyErr_SetString(PyExc_MemoryError, "lapse: the table of names is full");
        return -1;
    }
    PyObject *boxed = PyLong_FromUnsignedLong(value);
    if (!boxed || PyDict_SetItem(name_ids, name, boxed) < 0 || ext_annotate_name(value, name) < 0) {
        Py_XDECREF(boxed);
        return -1;
    }
    Py_DECREF(boxed);
    *id = value;
    return 0;
}

const void *ext_context_key_slow(void)
{
    PyObject *copy = PyContext_CopyCurrent(); /* creates the thread's context */
    if (!copy) {
        PyErr_Clear();
        return NULL;
    }
    Py_DECREF(copy);
    return PyThreadState_Get()->context;
}

__thread const void *ext_last_key __attribute__((tls_model("initial-exec")));
unsigned ext_session_serial = 1;
/* the session serial this thread was named in */
static __thread unsigned thread_named_in __attribute__((tls_model("initial-exec")));

/* The session's files name Python threads as Python does
 * (threading.current_thread().name), once per thread and session. */
static void name_this_thread(void)
{
    thread_named_in = ext_session_serial;
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *thread = threading ? PyObject_CallMethod(threading, "current_thread", NULL) : NULL;
    PyObject *name = thread ? PyObject_GetAttrString(thread, "name") : NULL;
    const char *utf8 = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (utf8)
        lapse_set_thread_name(utf8);
    Py_XDECREF(name);
    Py_XDECREF(thread);
    Py_XDECREF(threading);
    PyErr_Clear();
}
static PyObject *creator_var; /* ContextVar: the key of the context that set it */

void ext_context_changed(const void *key)
{
    if (!lapse_enabled_ || !key)
        return;
    ext_last_key = key;
    if (thread_named_in != ext_session_serial)
        name_this_thread();
    PyObject *marker = NULL;
    if (PyContextVar_Get(creator_var, NULL, &marker) < 0) {
        PyErr_Clear();
        return;
    }
    const void *creator = marker ? PyLong_AsVoidPtr(marker) : NULL;
    Py_XDECREF(marker);
    if (creator == key)
        return; /* seen before: it already is its own creator */
    if (creator) /* a copy of the creator's context: a task it made */
        lapse_stack_inherit(key, creator);
    PyObject *mine = PyLong_FromVoidPtr((void *)key);
    PyObject *token = mine ? PyContextVar_Set(creator_var, mine) : NULL;
    Py_XDECREF(token);
    Py_XDECREF(mine);
    if (!token)
        PyErr_Clear();
}

static int add_methods(PyObject *m, PyMethodDef *defs)
{
    return PyModule_AddFunctions(m, defs);
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "lapse._lapse",
    "The C core of lapse: spans, counters, session control and reading .lapse files.",
    -1,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__lapse(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    name_ids = PyDict_New();
    creator_var = PyContextVar_New("lapse.creator", NULL);
    if (!creator_var) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *names = PyImport_ImportModule("lapse._names");
    if (names) {
        on_new_name = PyObject_GetAttrString(names, "on_new_name");
        Py_DECREF(names);
    }
    if (!on_new_name) {
        Py_DECREF(m);
        return NULL;
    }
    if (!name_ids || ext_plain_functions_init() < 0 || ext_line_monitor_init() < 0 ||
        ext_auto_spans_init() < 0 || ext_tags_init() < 0 || ext_span_init(m) < 0 ||
        ext_causal_init() < 0 || add_methods(m, ext_causal_methods) < 0 ||
        add_methods(m, ext_span_methods) < 0 || add_methods(m, ext_plain_functions_methods) < 0 ||
        add_methods(m, ext_session_methods) < 0 || add_methods(m, ext_read_methods) < 0 ||
        add_methods(m, ext_live_methods) < 0 || add_methods(m, ext_annotate_methods) < 0 || add_methods(m, ext_window_methods) < 0 || add_methods(m, ext_line_monitor_methods) < 0 ||
        add_methods(m, ext_line_stats_methods) < 0 ||
        add_methods(m, ext_auto_spans_methods) < 0 ||
        add_methods(m, ext_tags_methods) < 0 ||
        add_methods(m, ext_pause_methods) < 0 ||
        add_methods(m, ext_gpu_memory_methods) < 0 ||
        add_methods(m, ext_activity_yield_methods) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    /* a session the environment started (LAPSE_PROFILE=1) times decorated functions */
    if (lapse_is_active() && ext_plain_functions_enable() < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
