/* Automatic spans: Profiler(auto=("pkg.module", ...)) makes every function of the
 * chosen modules a span without editing them.
 *
 * 3.12+: sys.monitoring local events (PY_START, PY_RESUME, PY_RETURN, PY_YIELD) set
 * on the chosen code objects only, so a function outside them runs as it runs
 * without lapse; PY_UNWIND and PY_THROW (global events: no local form exists) are
 * filtered at once by the code object's extra slot. A generator or coroutine is a
 * span per run between its resumes (PY_START/PY_RESUME/PY_THROW to
 * PY_YIELD/PY_RETURN/PY_UNWIND): it counts its resumes and the time it ran, never
 * the time it was suspended.
 *
 * Each thread keeps the chosen frames it entered, innermost last. A leave event
 * ends the span of its code's innermost entry; a frame that was already running when
 * the spans started has no entry, and its end is ignored (the core would count it
 * unmatched). Entries above the one that ends (whose leave was missed) end with it.
 *
 * 3.11 has no sys.monitoring: the chosen functions run their timed code for the
 * session instead (plain_functions.c: ext_plain_functions_auto). */
#include "ext.h"

#include "lapse.h"

#include <stdlib.h>

#if PY_VERSION_HEX >= 0x030C0000

typedef struct {
    const void *code;
    const void *key;
    int token;
} auto_frame;

typedef struct auto_thread {
    auto_frame *frames;
    uint32_t depth, cap;
    struct auto_thread *next; /* every thread's, to reset at start (GIL held) */
} auto_thread;

/* Kept for the life of the process (a few bytes a thread): a thread's pointer is
 * never left dangling. */
static __thread auto_thread *my_thread __attribute__((tls_model("initial-exec")));
static auto_thread *threads;

static Py_ssize_t extra_index = -1; /* a chosen code object's span name id (0: not chosen) */
static PyObject *chosen;            /* list of the chosen code objects */
static long local_events;
static uint64_t lost; /* entries not kept (no memory) */

static inline uint32_t id_of(PyObject *code)
{
    void *extra = NULL;
    if (PyUnstable_Code_GetExtra(code, extra_index, &extra) != 0) {
        PyErr_Clear();
        return 0;
    }
    return (uint32_t)(uintptr_t)extra;
}

static auto_thread *thread_state(void)
{
    auto_thread *t = my_thread;
    if (t)
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->next = threads;
    threads = t;
    my_thread = t;
    return t;
}

static void enter(PyObject *code)
{
    uint32_t id = id_of(code);
    if (!id || !lapse_enabled_)
        return;
    auto_thread *t = thread_state();
    if (!t || (t->depth == t->cap && t->cap >= (1u << 24))) {
        lost++;
        return;
    }
    if (t->depth == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        auto_frame *grown = realloc(t->frames, cap * sizeof *grown);
        if (!grown) {
            lost++;
            return;
        }
        t->frames = grown;
        t->cap = cap;
    }
    const void *key = ext_context_key();
    auto_frame *f = &t->frames[t->depth++];
    f->code = code;
    f->key = key;
    f->token = lapse_span_begin_keyed(key, id);
}

static void leave(PyObject *code)
{
    auto_thread *t = my_thread;
    if (!t || !t->depth)
        return;
    uint32_t k = t->depth;
    while (k > 0 && t->frames[k - 1].code != code)
        k--;
    if (k == 0)
        return; /* began before the spans started, or is not chosen */
    while (t->depth >= k) {
        auto_frame *f = &t->frames[--t->depth];
        lapse_span_end_keyed(f->key, f->token);
    }
}

static PyObject *on_enter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 1)
        enter(args[0]);
    Py_RETURN_NONE;
}

static PyObject *on_leave(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 1)
        leave(args[0]);
    Py_RETURN_NONE;
}

/* PY_UNWIND and PY_THROW fire for every code object: those not chosen return at once */
static PyObject *on_unwind(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 1 && id_of(args[0]))
        leave(args[0]);
    Py_RETURN_NONE;
}

static PyMethodDef callback_defs[] = {
    {"auto_enter", (PyCFunction)(void (*)(void))on_enter, METH_FASTCALL, NULL},
    {"auto_leave", (PyCFunction)(void (*)(void))on_leave, METH_FASTCALL, NULL},
    {"auto_unwind", (PyCFunction)(void (*)(void))on_unwind, METH_FASTCALL, NULL},
    {"auto_throw", (PyCFunction)(void (*)(void))on_enter, METH_FASTCALL, NULL},
};
static const char *const callback_events[] = {"PY_START",  "PY_RESUME", "PY_RETURN",
                                              "PY_YIELD",  "PY_UNWIND", "PY_THROW"};
static const int callback_index[] = {0, 0, 1, 1, 2, 3};
#define AUTO_NCALLBACKS (sizeof callback_index / sizeof callback_index[0])

/* PROFILER_ID (2) if free, else 3 to 5 (the line profiler may hold one) */
static ext_monitor_tool tool = {"lapse auto", "lapse: auto spans", 2, 5, -1, callback_defs,
                                callback_events, callback_index, AUTO_NCALLBACKS};

static int set_local(PyObject *code, long events)
{
    return ext_monitor_set_local(&tool, code, events);
}

static int stop_events(void)
{
    return ext_monitor_release(&tool);
}

static int start_events(void)
{
    if (ext_monitor_acquire(&tool) < 0)
        goto fail;
    local_events = 0;
    const char *locals[] = {"PY_START", "PY_RESUME", "PY_RETURN", "PY_YIELD"};
    for (size_t i = 0; i < sizeof locals / sizeof locals[0]; i++) {
        long bit = ext_monitor_event(locals[i]);
        if (bit < 0)
            goto fail;
        local_events |= bit;
    }
    long unwind = ext_monitor_event("PY_UNWIND"), thrown = ext_monitor_event("PY_THROW");
    if (unwind >= 0 && thrown >= 0 && ext_monitor_set_events(&tool, unwind | thrown) == 0)
        return 0;
fail:
    {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        stop_events();
        PyErr_Restore(type, value, tb);
    }
    return -1;
}

/* The span name of a function's code: its qualified name after the last "<locals>."
 * (as @span names a function). */
static PyObject *span_name(PyObject *code)
{
    PyObject *q = ((PyCodeObject *)code)->co_qualname;
    static PyObject *locals;
    if (!locals && !(locals = PyUnicode_InternFromString("<locals>.")))
        return NULL;
    Py_ssize_t at = PyUnicode_Find(q, locals, 0, PyUnicode_GET_LENGTH(q), -1);
    if (at == -2)
        return NULL;
    if (at < 0)
        return Py_NewRef(q);
    return PyUnicode_Substring(q, at + PyUnicode_GET_LENGTH(locals), PyUnicode_GET_LENGTH(q));
}

/* A function's code, not a module or class body, a comprehension, a generator
 * expression or a lambda (their time is their caller's). */
static int is_function(PyCodeObject *co)
{
    if (!(co->co_flags & CO_OPTIMIZED) || !(co->co_flags & CO_NEWLOCALS))
        return 0;
    return PyUnicode_READ_CHAR(co->co_name, 0) != '<';
}

/* Chooses code's functions: itself and the code objects among its constants. */
static int add_code(PyObject *code)
{
    PyCodeObject *co = (PyCodeObject *)code;
    if (is_function(co) && !id_of(code)) {
        PyObject *name = span_name(code);
        uint32_t id;
        int rc = name ? ext_name_id(name, &id) : -1;
        Py_XDECREF(name);
        if (rc < 0 || PyUnstable_Code_SetExtra(code, extra_index, (void *)(uintptr_t)id) < 0 ||
            PyList_Append(chosen, code) < 0)
            return -1;
        if (tool.id >= 0 && set_local(code, local_events) < 0)
            return -1;
    }
    PyObject *consts = co->co_consts;
    for (Py_ssize_t i = 0; PyTuple_Check(consts) && i < PyTuple_GET_SIZE(consts); i++)
        if (PyCode_Check(PyTuple_GET_ITEM(consts, i)) && add_code(PyTuple_GET_ITEM(consts, i)) < 0)
            return -1;
    return 0;
}

static PyObject *py_add(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyCode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "auto_add: a code object, not %.100s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (!chosen && !(chosen = PyList_New(0)))
        return NULL;
    if (add_code(arg) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* auto_remove(code): code alone (not those nested in it) is no span any more */
static PyObject *py_remove(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyCode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "auto_remove: a code object, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (!id_of(arg))
        Py_RETURN_NONE;
    if ((tool.id >= 0 && set_local(arg, 0) < 0) ||
        PyUnstable_Code_SetExtra(arg, extra_index, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_enable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (tool.id >= 0) {
        PyErr_SetString(PyExc_RuntimeError, "lapse: auto spans are already on");
        return NULL;
    }
    if (!chosen && !(chosen = PyList_New(0)))
        return NULL;
    for (auto_thread *t = threads; t; t = t->next)
        t->depth = 0;
    if (start_events() < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(chosen); i++)
        if (set_local(PyList_GET_ITEM(chosen, i), local_events) < 0) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            stop_events();
            PyErr_Restore(type, value, tb);
            return NULL;
        }
    Py_RETURN_NONE;
}

/* Turns the events off and forgets the chosen code objects: nothing stays installed. */
static PyObject *py_disable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int rc = 0;
    for (Py_ssize_t i = 0; chosen && i < PyList_GET_SIZE(chosen); i++) {
        PyObject *code = PyList_GET_ITEM(chosen, i);
        if (tool.id >= 0 && set_local(code, 0) < 0)
            rc = -1;
        if (PyUnstable_Code_SetExtra(code, extra_index, NULL) < 0)
            rc = -1;
    }
    Py_CLEAR(chosen);
    if (stop_events() < 0)
        rc = -1;
    for (auto_thread *t = threads; t; t = t->next)
        t->depth = 0;
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_lost(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(lost);
}

PyMethodDef ext_auto_spans_methods[] = {
    {"auto_add", py_add, METH_O,
     "auto_add(code): makes the functions of code (itself and those nested in it) spans "
     "while auto spans are on"},
    {"auto_remove", py_remove, METH_O,
     "auto_remove(code): code is no span any more (a function decorated with @span)"},
    {"auto_enable", py_enable, METH_NOARGS, "auto_enable(): turns the events on"},
    {"auto_disable", py_disable, METH_NOARGS,
     "auto_disable(): turns the events off and forgets every chosen code object"},
    {"auto_lost", py_lost, METH_NOARGS, "auto_lost() -> calls not timed for want of memory"},
    {NULL, NULL, 0, NULL},
};

int ext_auto_spans_init(void)
{
    extra_index = PyUnstable_Eval_RequestCodeExtraIndex(NULL);
    if (extra_index < 0) {
        PyErr_SetString(PyExc_RuntimeError, "lapse: no code-object extra slot left");
        return -1;
    }
    return 0;
}

#else /* 3.11: plain_functions.c times the chosen functions (auto_time, auto_untime) */

PyMethodDef ext_auto_spans_methods[] = {
    {NULL, NULL, 0, NULL},
};

int ext_auto_spans_init(void) { return 0; }

#endif
