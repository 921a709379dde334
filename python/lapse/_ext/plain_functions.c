/* CPython 3.12+: a decorated plain function stays the plain function.
 *
 * A C wrapper costs about 2 x a direct call even dormant (it turns the
 * interpreter's inlined call into a C call). On 3.12 and later, @span instead
 * registers the function and returns it unchanged. While a session is active, each
 * registered function's vectorcall is set (PyFunction_SetVectorcall) to one that
 * times the interpreter's own call; when the session stops it is set back, and
 * calls are the interpreter's own again. (sys.monitoring would do the same with
 * PY_START/PY_RETURN events, at about 160 ns a call here against 55.) 3.11's
 * interpreter inlines Python calls without looking at a function's vectorcall
 * (tried: swapping it there changes nothing), so 3.11 keeps the C wrapper. */
#include "ext.h"

#include "lapse.h"


#if PY_VERSION_HEX >= 0x030C0000

static Py_ssize_t extra_index = -1; /* co_extra slot holding a code object's name id */
static PyObject *functions;    /* weakref.WeakSet of the registered functions */
static vectorcallfunc original; /* the interpreter's own vectorcall of functions */
static int patched;            /* 1 while registered functions go through timed_call */

/* The vectorcall of a registered function while a session is active: the span
 * around the interpreter's own call. (The interpreter calls a function inline only
 * while its vectorcall is the original one; this costs what a C wrapper costs.) */
static PyObject *timed_call(PyObject *fn, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames)
{
    void *extra = NULL;
    if (!lapse_enabled_ ||
        PyUnstable_Code_GetExtra(PyFunction_GET_CODE(fn), extra_index, &extra) != 0 || !extra)
        return original(fn, args, nargsf, kwnames);
    const void *key = ext_context_key();
    int token = lapse_span_begin_keyed(key, (uint32_t)(uintptr_t)extra);
    PyObject *result = original(fn, args, nargsf, kwnames);
    lapse_span_end_keyed(key, token); /* on an exception too */
    return result;
}

static int set_all(vectorcallfunc call)
{
    PyObject *it = PyObject_GetIter(functions);
    if (!it)
        return -1;
    PyObject *fn;
    while ((fn = PyIter_Next(it)) != NULL) {
        if (PyFunction_Check(fn))
            PyFunction_SetVectorcall((PyFunctionObject *)fn, call);
        Py_DECREF(fn);
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

int ext_plain_functions_enable(void)
{
    if (patched)
        return 0;
    if (set_all(timed_call) < 0)
        return -1;
    patched = 1;
    return 0;
}

int ext_plain_functions_disable(void)
{
    if (!patched)
        return 0;
    patched = 0;
    return set_all(original);
}

/* Registers fn (a plain Python function) as a span named `name`; returns fn. */
PyObject *ext_plain_functions_register(PyObject *name, PyObject *fn, uint32_t id)
{
    if (PyUnstable_Code_SetExtra(PyFunction_GET_CODE(fn), extra_index, (void *)(uintptr_t)id) < 0)
        return NULL;
    if (!original)
        original = PyVectorcall_Function(fn);
    PyObject *added = PyObject_CallMethod(functions, "add", "O", fn);
    if (!added)
        return NULL;
    Py_DECREF(added);
    if (PyObject_SetAttrString(fn, "__lapse_span__", name) < 0)
        return NULL;
    if (patched)
        PyFunction_SetVectorcall((PyFunctionObject *)fn, timed_call);
    Py_INCREF(fn);
    return fn;
}

int ext_plain_functions_init(void)
{
    extra_index = PyUnstable_Eval_RequestCodeExtraIndex(NULL); /* the id is no pointer */
    if (extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "lapse: no code-object extra slot left");
        return -1;
    }
    PyObject *weakref = PyImport_ImportModule("weakref");
    if (!weakref)
        return -1;
    functions = PyObject_CallMethod(weakref, "WeakSet", NULL);
    Py_DECREF(weakref);
    return functions ? 0 : -1;
}

#else /* before 3.12: decorated functions are C wrappers (span.c) */

int ext_plain_functions_enable(void) { return 0; }
int ext_plain_functions_disable(void) { return 0; }
int ext_plain_functions_init(void) { return 0; }

#endif

static PyObject *py_enable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (ext_plain_functions_enable() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_disable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (ext_plain_functions_disable() < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyMethodDef ext_plain_functions_methods[] = {
    {"timing_enable", py_enable, METH_NOARGS,
     "Times the functions decorated with @span (3.12+: sets their vectorcall)."},
    {"timing_disable", py_disable, METH_NOARGS, "Gives them back their own vectorcall."},
    {NULL, NULL, 0, NULL},
};
