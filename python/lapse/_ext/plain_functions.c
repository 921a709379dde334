/* Decorated plain functions stay the function itself.
 *
 * A C wrapper costs about 2 x a direct call even dormant (it turns the
 * interpreter's inlined call into a C call), and while it times a call it holds a
 * C frame: a recursion through it grows the C stack by one interpreter loop per
 * level (3.11 crashed at 20,000 levels; 3.12 and 3.13 charge each level to their C
 * recursion limit and stopped at 748 and 4,998). So @span registers a plain Python
 * function and returns it unchanged: dormant, a call costs what it cost before.
 * While a session is active, registered functions are timed:
 *
 * - 3.11: the interpreter inlines Python calls without looking at a function's
 *   vectorcall, so for the session each function runs its timed code: a copy of
 *   its code that begins its span after RESUME and ends it before each return and
 *   on the way out of an exception (code_timed.c). No C frame at all.
 * - 3.12+: its vectorcall (PyFunction_SetVectorcall) is timed_call, which times
 *   the interpreter's own call (a C frame per call; sys.monitoring PY_START and
 *   PY_RETURN events cost about 160 ns a call here against 42). Past
 *   TIMED_DEPTH_MAX nested timed calls on a thread, a function called deeper is
 *   switched for the rest of the session to its timed code and the interpreter's
 *   own vectorcall: the calls below are inlined again, and a recursion goes as
 *   deep as it goes without lapse (timed code costs within 5 ns of timed_call).
 *
 * When the session stops each function gets its own code and vectorcall back;
 * frames already running keep the code they started with (a timed frame's end
 * mark then finds no session and does nothing, as timed_call's end does). */
#include "ext.h"

#include "lapse.h"

/* ---- span marks: what a timed code object begins and ends its span with ----
 *
 * A SpanMarks object holds a span's name id. Timed code reaches it through two
 * operators, not calls: -marks begins the span and gives its token, marks ^ token
 * ends it. The interpreter checks for pending signals after a call, not after a
 * unary or binary operator, so no exception from a signal handler can come between
 * a mark and the instruction after it (one there would leave the span open, or end
 * it twice); an operator's slot is also not a call that profilers see (c_call),
 * that 3.11 charges to the recursion limit, or that needs a NULL pushed.
 *
 * Timed code loads the marks by their key, "__lapse_marks__:" and the span name,
 * which each SpanMarks has in the builtins module from when it is made (so also in
 * a process that unpickles a timed code: its marks are remade there first). They
 * are callable only so that torch.compile's Dynamo, which takes a builtin that is
 * not callable for one of Python's constants (and raises on anything else), treats
 * them as an object it does not know: it graph-breaks at their operators. Calling
 * them raises TypeError. */

typedef struct {
    PyObject_HEAD
    PyObject *name;
    PyObject *key; /* its name in the builtins module */
    uint32_t id;
} SpanMarksObject;

static PyTypeObject SpanMarks_Type;
static PyObject *marks;    /* span name -> its SpanMarks */
static PyObject *builtins; /* the builtins module's dict */

/* -marks: begins the span; the token (0: nothing begun) */
static PyObject *mark_begin(PyObject *self)
{
    int token = 0;
    if (lapse_enabled_)
        token = lapse_span_begin_keyed(ext_context_key(), ((SpanMarksObject *)self)->id);
    PyObject *boxed = PyLong_FromLong(token); /* a cached small int up to depth 256 */
    if (!boxed) {
        PyErr_Clear(); /* the span stays open until its parent ends */
        boxed = PyLong_FromLong(0);
    }
    return boxed;
}

/* marks ^ token: ends the span begun with token */
static PyObject *mark_end(PyObject *self, PyObject *token_obj)
{
    if (!PyObject_TypeCheck(self, &SpanMarks_Type))
        Py_RETURN_NOTIMPLEMENTED;
    long token = PyLong_AsLong(token_obj);
    if (token > 0)
        lapse_span_end_keyed(ext_context_key(), (int)token);
    else if (token == -1)
        PyErr_Clear();
    Py_RETURN_NONE;
}

static PyNumberMethods SpanMarks_number = {
    .nb_negative = mark_begin,
    .nb_xor = mark_end,
};

static void SpanMarks_dealloc(SpanMarksObject *m)
{
    Py_XDECREF(m->name);
    Py_XDECREF(m->key);
    PyObject_Free(m);
}

static PyObject *SpanMarks_repr(SpanMarksObject *m)
{
    return PyUnicode_FromFormat("<lapse span marks %R>", m->name);
}

/* A timed code object pickles (cloudpickle copies code by value): its marks by
 * name. */
static PyObject *SpanMarks_reduce(SpanMarksObject *m, PyObject *unused)
{
    (void)unused;
    static PyObject *remake;
    if (!remake) {
        PyObject *module = PyImport_ImportModule("lapse._lapse");
        remake = module ? PyObject_GetAttrString(module, "_span_marks") : NULL;
        Py_XDECREF(module);
        if (!remake)
            return NULL;
    }
    return Py_BuildValue("(O(O))", remake, m->name);
}

/* marks(): a TypeError (see above why the type has tp_call) */
static PyObject *SpanMarks_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)args;
    (void)kwargs;
    PyErr_Format(PyExc_TypeError, "%R is not called", self);
    return NULL;
}

static PyMethodDef SpanMarks_methods[] = {
    {"__reduce__", (PyCFunction)SpanMarks_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SpanMarks_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lapse.SpanMarks",
    .tp_doc = "What a timed function's code begins (-marks) and ends (marks ^ token) its "
              "span with.",
    .tp_basicsize = sizeof(SpanMarksObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)SpanMarks_dealloc,
    .tp_repr = (reprfunc)SpanMarks_repr,
    .tp_call = SpanMarks_call,
    .tp_as_number = &SpanMarks_number,
    .tp_methods = SpanMarks_methods,
};

/* The SpanMarks of a span name (one per name): a new reference. */
static PyObject *span_marks_for(PyObject *name)
{
    PyObject *found = PyDict_GetItemWithError(marks, name);
    if (found || PyErr_Occurred()) {
        Py_XINCREF(found);
        return found;
    }
    uint32_t id;
    if (ext_name_id(name, &id) < 0)
        return NULL;
    SpanMarksObject *m = PyObject_New(SpanMarksObject, &SpanMarks_Type);
    if (!m)
        return NULL;
    Py_INCREF(name);
    m->name = name;
    m->id = id;
    m->key = PyUnicode_FromFormat("__lapse_marks__:%U", name);
    if (!m->key || PyDict_SetItem(builtins, m->key, (PyObject *)m) < 0 ||
        PyDict_SetItem(marks, name, (PyObject *)m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return (PyObject *)m;
}

static PyObject *span_marks_entry(PyObject *module, PyObject *name)
{
    (void)module;
    if (!PyUnicode_Check(name)) {
        PyErr_SetString(PyExc_TypeError, "_span_marks(name): a str");
        return NULL;
    }
    return span_marks_for(name);
}

/* ---- timed code ----
 *
 * A timed code keeps the code it was made from (its last constant): what a session
 * gives back, and what holds that code's id while the timed code lives. Timed
 * codes are shared between the functions of one code (closures) through `made`,
 * id(code) -> a weak reference to its timed code whose callback removes the entry:
 * none outlives the functions that run it. Nothing here runs Python code, so no
 * signal handler's exception can be raised inside a switch (deep_call) and lost. */

static PyObject *functions; /* weakref.WeakSet of the registered functions */
static PyObject *made;      /* id(code) -> weakref to its timed code */
static PyObject *unmade;    /* id(code) -> code, for codes that have none (warned) */
static int patched;         /* 1 while a session times the registered functions */

/* The code a timed code was made from (borrowed); NULL if code is none of ours
 * (or no code at all). */
static PyObject *origin_of(PyObject *code)
{
    if (!PyCode_Check(code))
        return NULL;
    PyObject *consts = ((PyCodeObject *)code)->co_consts;
    Py_ssize_t n = PyTuple_GET_SIZE(consts);
    if (n < 2 || !PyObject_TypeCheck(PyTuple_GET_ITEM(consts, n - 2), &SpanMarks_Type) ||
        !PyCode_Check(PyTuple_GET_ITEM(consts, n - 1)))
        return NULL;
    return PyTuple_GET_ITEM(consts, n - 1);
}

/* The weak reference's callback: its timed code is gone; self is the entry's key. */
static PyObject *forget_timed(PyObject *key, PyObject *ref)
{
    if (PyDict_GetItemWithError(made, key) == ref && PyDict_DelItem(made, key) < 0)
        return NULL;
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef forget_timed_def = {"forget_timed", forget_timed, METH_O, NULL};

/* Why fn's timed code would not find its marks, or NULL: timed code loads them
 * with LOAD_GLOBAL, which looks in fn's globals, then in fn's builtins (a function
 * made with builtins of its own, as exec with a "__builtins__" of its own makes
 * one, would raise NameError there). */
static const char *marks_unreachable(PyObject *fn, PyObject *m)
{
    PyFunctionObject *f = (PyFunctionObject *)fn;
    if (f->func_builtins != builtins)
        return "its builtins are not the builtins module's";
    if (!PyDict_CheckExact(f->func_globals)) /* a lookup there could run Python code */
        return "its globals are not a plain dict";
    if (PyDict_GetItemWithError(f->func_globals, ((SpanMarksObject *)m)->key))
        return "its globals hold the name of its span marks";
    return PyErr_Occurred() ? "" : NULL;
}

/* Warns that fn has no timed code (the error set says why) and remembers its code
 * as having none; an error is left set only when the warning became one. */
static void no_timed_code(PyObject *fn, PyObject *code, PyObject *key)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
#if PY_VERSION_HEX >= 0x030C0000
    const char *how = "is timed with a C frame per call";
#else
    const char *how = "is not timed";
#endif
    PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "lapse: %R %s (%S)", fn, how,
                     value ? value : Py_None);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Fetch(&type, &value, &tb);
    PyDict_SetItem(unmade, key, code);
    PyErr_Restore(type, value, tb);
}

/* The span marks of fn (a new reference) where its timed code would find them;
 * NULL where its code is known to have no timed code, or (a warning says why, see
 * no_timed_code) where its timed code would not find them. key: id(fn's code). */
static PyObject *reachable_marks(PyObject *fn, PyObject *code, PyObject *key)
{
    if (PyDict_GetItemWithError(unmade, key) || PyErr_Occurred())
        return NULL;
    PyObject *name = PyObject_GetAttrString(fn, "__lapse_span__");
    PyObject *m = name && PyUnicode_Check(name) ? span_marks_for(name) : NULL;
    Py_XDECREF(name);
    const char *unreachable = m ? marks_unreachable(fn, m) : "";
    if (!unreachable)
        return m;
    if (*unreachable)
        PyErr_Format(PyExc_ValueError, "lapse: %s", unreachable);
    Py_XDECREF(m);
    no_timed_code(fn, code, key);
    return NULL;
}

/* The timed code of fn (a new reference; fn's own code if it runs timed code
 * already); NULL without an error when it has none (a warning said why, once per
 * code object), NULL with an error when a warning became one. */
static PyObject *timed_code_of(PyObject *fn)
{
    PyObject *code = PyFunction_GET_CODE(fn);
    if (origin_of(code)) {
        Py_INCREF(code);
        return code;
    }
    PyObject *key = PyLong_FromVoidPtr(code);
    PyObject *m = key ? reachable_marks(fn, code, key) : NULL;
    if (!m) {
        Py_XDECREF(key);
        return NULL;
    }
    PyObject *timed = NULL;
    PyObject *ref = PyDict_GetItemWithError(made, key);
#if PY_VERSION_HEX >= 0x030D0000
    if (ref && PyWeakref_GetRef(ref, &timed) < 0)
        timed = NULL;
#else
    if (ref && (timed = PyWeakref_GetObject(ref)) != NULL)
        Py_INCREF(timed); /* None when it is gone */
#endif
    if (timed && origin_of(timed) == code) {
        Py_DECREF(m);
        Py_DECREF(key);
        return timed;
    }
    Py_CLEAR(timed);
    timed = PyErr_Occurred() ? NULL : ext_code_timed(code, m, ((SpanMarksObject *)m)->key);
    Py_DECREF(m);
    if (!timed) {
        no_timed_code(fn, code, key);
        Py_DECREF(key);
        return NULL;
    }
    PyObject *forget = PyCFunction_New(&forget_timed_def, key);
    ref = forget ? PyWeakref_NewRef(timed, forget) : NULL;
    if (!ref || PyDict_SetItem(made, key, ref) < 0)
        Py_CLEAR(timed);
    Py_XDECREF(ref);
    Py_XDECREF(forget);
    Py_DECREF(key);
    return timed;
}

/* fn runs `code` from now on (frames already running keep theirs). */
static int set_code(PyObject *fn, PyObject *code)
{
    return PyObject_SetAttrString(fn, "__code__", code);
}

/* Gives fn its own code back if it runs timed code. */
static int restore_code(PyObject *fn)
{
    PyObject *own = origin_of(PyFunction_GET_CODE(fn));
    return own ? set_code(fn, own) : 0;
}

#if PY_VERSION_HEX >= 0x030C0000

#define TIMED_DEPTH_MAX 32 /* nested timed calls a thread makes with a C frame each */

static Py_ssize_t extra_index = -1; /* co_extra slot holding a code object's name id */
static vectorcallfunc original;     /* the interpreter's own vectorcall of functions */
static __thread unsigned timed_depth __attribute__((tls_model("initial-exec")));

static PyObject *timed_call(PyObject *fn, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames);

/* A call past TIMED_DEPTH_MAX: fn switches to its timed code and the interpreter's
 * own vectorcall, and this call runs that code (its marks time it). */
__attribute__((noinline)) static PyObject *deep_call(PyObject *fn, PyObject *const *args,
                                                     size_t nargsf, PyObject *kwnames,
                                                     uint32_t id)
{
    PyObject *timed = timed_code_of(fn);
    int switched = timed && set_code(fn, timed) == 0;
    Py_XDECREF(timed);
    if (switched) {
        PyFunction_SetVectorcall((PyFunctionObject *)fn, original);
        return original(fn, args, nargsf, kwnames);
    }
    if (PyErr_Occurred()) /* the call goes on: the profiler raises nothing into it */
        PyErr_WriteUnraisable(fn);
    const void *key = ext_context_key(); /* none: timed here, a C frame as before */
    int token = lapse_span_begin_keyed(key, id);
    PyObject *result = original(fn, args, nargsf, kwnames);
    lapse_span_end_keyed(key, token);
    return result;
}

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
    uint32_t id = (uint32_t)(uintptr_t)extra;
    if (__builtin_expect(timed_depth >= TIMED_DEPTH_MAX, 0))
        return deep_call(fn, args, nargsf, kwnames, id);
    const void *key = ext_context_key();
    int token = lapse_span_begin_keyed(key, id);
    timed_depth++;
    PyObject *result = original(fn, args, nargsf, kwnames);
    timed_depth--;
    lapse_span_end_keyed(key, token); /* on an exception too */
    return result;
}

/* Starts timing fn (a registered function) for the session. A function whose
 * timed code would not find its marks is named now, from the frame that starts the
 * session or registers it, rather than from its own deep calls (whose builtins may
 * be what warnings cannot run with: a frame whose builtins lack __import__ makes a
 * warning raise KeyError). */
static int time_function(PyObject *fn)
{
    PyFunction_SetVectorcall((PyFunctionObject *)fn, timed_call);
    PyObject *code = PyFunction_GET_CODE(fn);
    if (origin_of(code))
        return 0;
    PyObject *key = PyLong_FromVoidPtr(code);
    PyObject *m = key ? reachable_marks(fn, code, key) : NULL;
    Py_XDECREF(m);
    Py_XDECREF(key);
    return PyErr_Occurred() ? -1 : 0;
}

/* Stops timing fn: its own vectorcall and code. (Setting a vectorcall makes the
 * interpreter stop specializing calls of the function: one not timed keeps its own.) */
static int untime_function(PyObject *fn)
{
    if (PyVectorcall_Function(fn) != original)
        PyFunction_SetVectorcall((PyFunctionObject *)fn, original);
    return restore_code(fn);
}

static int remember_id(PyObject *fn, uint32_t id)
{
    if (!original)
        original = PyVectorcall_Function(fn);
    return PyUnstable_Code_SetExtra(PyFunction_GET_CODE(fn), extra_index, (void *)(uintptr_t)id);
}

static int extra_init(void)
{
    extra_index = PyUnstable_Eval_RequestCodeExtraIndex(NULL); /* the id is no pointer */
    if (extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "lapse: no code-object extra slot left");
        return -1;
    }
    return 0;
}

#else /* 3.11: the timed code for the whole session */

static int time_function(PyObject *fn)
{
    PyObject *timed = timed_code_of(fn);
    int rc = timed ? set_code(fn, timed) : PyErr_Occurred() ? -1 : 0;
    Py_XDECREF(timed);
    return rc;
}

static int untime_function(PyObject *fn) { return restore_code(fn); }

static int remember_id(PyObject *fn, uint32_t id)
{
    (void)fn;
    (void)id;
    return 0;
}

static int extra_init(void) { return 0; }

#endif

static int for_all(int (*apply)(PyObject *fn))
{
    PyObject *it = PyObject_GetIter(functions);
    if (!it)
        return -1;
    PyObject *fn;
    int rc = 0;
    while ((fn = PyIter_Next(it)) != NULL) {
        if (PyFunction_Check(fn) && apply(fn) < 0)
            rc = -1;
        Py_DECREF(fn);
        if (rc < 0)
            break;
    }
    Py_DECREF(it);
    return rc < 0 || PyErr_Occurred() ? -1 : 0;
}

/* 1 when fn carries a tag that is dormant now (tags.c) */
static int dormant(PyObject *fn)
{
    PyObject *tag = PyObject_GetAttrString(fn, "__lapse_tag__");
    if (!tag) {
        PyErr_Clear();
        return 0;
    }
    uint32_t id;
    int rc = ext_tag_id(tag, &id);
    Py_DECREF(tag);
    if (rc < 0) {
        PyErr_Clear();
        return 0;
    }
    return !ext_tag_on(id);
}

/* Times fn for the session unless its tag is dormant (then it is not timed). */
static int time_if_on(PyObject *fn)
{
    return dormant(fn) ? untime_function(fn) : time_function(fn);
}

int ext_plain_functions_enable(void)
{
    if (patched)
        return 0;
    patched = 1;
    return for_all(time_if_on);
}

int ext_plain_functions_retag(void)
{
    return patched ? for_all(time_if_on) : 0;
}

int ext_plain_functions_disable(void)
{
    if (!patched)
        return 0;
    patched = 0;
    return for_all(untime_function);
}

/* Registers fn (a plain Python function) as a span named `name` of tag `tag` (0:
 * none); returns fn. */
PyObject *ext_plain_functions_register(PyObject *name, PyObject *fn, uint32_t id, uint32_t tag)
{
    if (tag) {
        PyObject *tag_name = ext_tag_name(tag);
        int rc = PyObject_SetAttrString(fn, "__lapse_tag__", tag_name);
        Py_DECREF(tag_name);
        if (rc < 0)
            return NULL;
    }
    if (remember_id(fn, id) < 0)
        return NULL;
    PyObject *added = PyObject_CallMethod(functions, "add", "O", fn);
    if (!added)
        return NULL;
    Py_DECREF(added);
    if (PyObject_SetAttrString(fn, "__lapse_span__", name) < 0)
        return NULL;
    if (patched && time_if_on(fn) < 0)
        return NULL;
    Py_INCREF(fn);
    return fn;
}

int ext_plain_functions_init(void)
{
    if (extra_init() < 0 || PyType_Ready(&SpanMarks_Type) < 0)
        return -1;
    PyObject *module = PyImport_ImportModule("builtins");
    builtins = module ? PyModule_GetDict(module) : NULL;
    Py_XINCREF(builtins);
    Py_XDECREF(module);
    marks = PyDict_New();
    made = PyDict_New();
    unmade = PyDict_New();
    if (!builtins || !marks || !made || !unmade || ext_code_timed_init() < 0)
        return -1;
    PyObject *weakref = PyImport_ImportModule("weakref");
    if (!weakref)
        return -1;
    functions = PyObject_CallMethod(weakref, "WeakSet", NULL);
    Py_DECREF(weakref);
    return functions ? 0 : -1;
}

#if PY_VERSION_HEX < 0x030C0000
/* ---- automatic spans on 3.11 (Profiler(auto=...); 3.12+: auto_spans.c) ----
 *
 * A chosen function runs its timed code while the automatic spans are on, named
 * `name`, without being registered: when they stop it gets its own code back and is
 * no span in a later session. */

static PyObject *auto_functions; /* list of the functions running timed code for them */

/* auto_time(fn, name) -> True when fn now runs its timed code; False when fn is a
 * span already (@span) or has no timed code (a RuntimeWarning said why) */
static PyObject *auto_time_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyFunction_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "auto_time(fn, name): a function and a str");
        return NULL;
    }
    PyObject *fn = args[0];
    if (!auto_functions && !(auto_functions = PyList_New(0)))
        return NULL;
    int has = PyObject_HasAttrString(fn, "__lapse_span__");
    if (has || origin_of(PyFunction_GET_CODE(fn)))
        Py_RETURN_FALSE;
    if (PyObject_SetAttrString(fn, "__lapse_span__", args[1]) < 0)
        return NULL;
    PyObject *timed = timed_code_of(fn);
    int rc = timed ? set_code(fn, timed) : -1;
    Py_XDECREF(timed);
    if (rc == 0 && PyList_Append(auto_functions, fn) == 0)
        Py_RETURN_TRUE;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    restore_code(fn);
    PyObject_DelAttrString(fn, "__lapse_span__");
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_FALSE;
}

/* auto_untime(): every function auto_time timed gets its own code back */
static PyObject *auto_untime_entry(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int rc = 0;
    for (Py_ssize_t i = 0; auto_functions && i < PyList_GET_SIZE(auto_functions); i++) {
        PyObject *fn = PyList_GET_ITEM(auto_functions, i);
        if (restore_code(fn) < 0 || PyObject_DelAttrString(fn, "__lapse_span__") < 0)
            rc = -1;
    }
    Py_CLEAR(auto_functions);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}
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

static PyObject *timed_code_entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyObject_TypeCheck(args[1], &SpanMarks_Type)) {
        PyErr_SetString(PyExc_TypeError, "_timed_code(code, marks): marks from _span_marks");
        return NULL;
    }
    return ext_code_timed(args[0], args[1], ((SpanMarksObject *)args[1])->key);
}

PyMethodDef ext_plain_functions_methods[] = {
    {"timing_enable", py_enable, METH_NOARGS,
     "Times the functions decorated with @span (3.11: their timed code; 3.12+: their "
     "vectorcall)."},
    {"timing_disable", py_disable, METH_NOARGS, "Gives them back their own code and vectorcall."},
    {"_timed_code", (PyCFunction)(void (*)(void))timed_code_entry, METH_FASTCALL,
     "_timed_code(code, marks) -> the timed copy of a plain function's code "
     "(code_timed.c); ValueError where it cannot be made."},
#if PY_VERSION_HEX < 0x030C0000
    {"auto_time", (PyCFunction)(void (*)(void))auto_time_entry, METH_FASTCALL,
     "auto_time(fn, name) -> True when fn runs its timed code until auto_untime()"},
    {"auto_untime", auto_untime_entry, METH_NOARGS,
     "auto_untime(): the functions auto_time timed get their own code back"},
#endif
    {"_span_marks", span_marks_entry, METH_O,
     "_span_marks(name) -> the SpanMarks of a span name (unpickling timed code)."},
    {NULL, NULL, 0, NULL},
};
