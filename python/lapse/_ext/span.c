/* lapse.span: a span as a context manager or a decorator, and lapse.count.
 *
 * Dormant (no session), a decorated call is one check and a direct call of the
 * function; a `with span(...)` block reads no clock. Active, spans nest per thread
 * and, within a thread, per context (each asyncio task runs in its own context),
 * so tasks that interleave at awaits keep their nesting apart. */
#include "ext.h"

#include "lapse.h"

#include <string.h>
#include <structmember.h>

static inline const void *current_key(void)
{
    return ext_context_key();
}

/* ---- Span: `with span("name"):` and `@span("name")` ----
 *
 * A Span holds only its name: it ends the innermost open span of that name on the
 * current context's stack, so one object serves every thread and task at once and
 * span("name") can return a cached object instead of allocating one per block. */

typedef struct {
    PyObject_HEAD
    PyObject *name;
    uint32_t id;
    uint32_t tag; /* 0: none (tags.c) */
} SpanObject;

#define SPAN_CACHE_MAX 65536 /* distinct names kept; names built from data get fresh objects */

static PyTypeObject Span_Type;
static PyTypeObject SpanFunction_Type;
static PyObject *wrap_special;   /* lapse._wrappers.wrap_special */
static PyObject *update_wrapper; /* functools.update_wrapper */
static PyObject *span_cache;     /* str -> Span */
static PyObject *tagged_cache;   /* (str, tag) -> Span */

/* The Span of name and tag (None: no tag). */
static PyObject *span_new_tagged(PyObject *name, PyObject *tag)
{
    PyObject *cache = tag == Py_None ? span_cache : tagged_cache;
    PyObject *key = tag == Py_None ? Py_NewRef(name) : PyTuple_Pack(2, name, tag);
    if (!key)
        return NULL;
    PyObject *cached = PyDict_GetItemWithError(cache, key);
    if (cached || PyErr_Occurred()) {
        Py_DECREF(key);
        Py_XINCREF(cached);
        return cached;
    }
    uint32_t id, tag_id;
    if (ext_name_id(name, &id) < 0 || ext_tag_id(tag, &tag_id) < 0) {
        Py_DECREF(key);
        return NULL;
    }
    SpanObject *s = PyObject_New(SpanObject, &Span_Type);
    if (!s) {
        Py_DECREF(key);
        return NULL;
    }
    Py_INCREF(name);
    s->name = name;
    s->id = id;
    s->tag = tag_id;
    if (PyDict_GET_SIZE(cache) < SPAN_CACHE_MAX && PyDict_SetItem(cache, key, (PyObject *)s) < 0)
        Py_CLEAR(s);
    Py_DECREF(key);
    return (PyObject *)s;
}

static PyObject *span_new_named(PyObject *name)
{
    return span_new_tagged(name, Py_None);
}

static void Span_dealloc(SpanObject *s)
{
    Py_XDECREF(s->name);
    PyObject_Free(s);
}

static PyObject *Span_enter(SpanObject *s, PyObject *unused)
{
    (void)unused;
    if (lapse_enabled_ && ext_tag_on(s->tag))
        lapse_span_begin_keyed(current_key(), s->id);
    Py_INCREF(s);
    return (PyObject *)s;
}

static PyObject *Span_exit(SpanObject *s, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    if (lapse_enabled_ && ext_tag_on(s->tag))
        lapse_span_end_keyed_name(current_key(), s->id);
    Py_RETURN_FALSE; /* exceptions pass through */
}

static PyObject *wrap_callable(PyObject *name, PyObject *fn, PyObject *tag);

static PyObject *Span_call(SpanObject *s, PyObject *args, PyObject *kw)
{
    PyObject *fn;
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "span(name) decorates a function: span(name)(fn)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:span", &fn))
        return NULL;
    PyObject *tag = ext_tag_name(s->tag);
    PyObject *result = wrap_callable(s->name, fn, tag);
    Py_DECREF(tag);
    return result;
}

static PyObject *Span_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)type;
    PyObject *name;
    if ((kw && PyDict_GET_SIZE(kw)) || !PyArg_ParseTuple(args, "U:Span", &name)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "Span(name) takes the name only");
        return NULL;
    }
    return span_new_named(name);
}

static PyObject *Span_repr(SpanObject *s)
{
    if (!s->tag)
        return PyUnicode_FromFormat("lapse.span(%R)", s->name);
    PyObject *tag = ext_tag_name(s->tag);
    PyObject *r = PyUnicode_FromFormat("lapse.span(%R, tag=%R)", s->name, tag);
    Py_DECREF(tag);
    return r;
}

static PyObject *Span_get_tag(SpanObject *s, void *closure)
{
    (void)closure;
    return ext_tag_name(s->tag);
}

static PyGetSetDef Span_getset[] = {
    {"tag", (getter)Span_get_tag, NULL, "the library the span belongs to, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Span_methods[] = {
    {"__enter__", (PyCFunction)Span_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))Span_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Span_members[] = {
    {"name", T_OBJECT, offsetof(SpanObject, name), READONLY, "the span's name"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject Span_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lapse.Span",
    .tp_doc = "A named span: `with span(\"io\"):` or `@span(\"io\")`.",
    .tp_basicsize = sizeof(SpanObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)Span_dealloc,
    .tp_new = Span_new,
    .tp_call = (ternaryfunc)Span_call,
    .tp_repr = (reprfunc)Span_repr,
    .tp_methods = Span_methods,
    .tp_members = Span_members,
    .tp_getset = Span_getset,
};

/* ---- SpanFunction: a decorated callable that is not a plain Python function (a
 * callable object, a builtin, a partial); plain functions stay themselves
 * (plain_functions.c) ---- */

typedef struct {
    PyObject_HEAD
    PyObject *fn;
    PyObject *name;
    PyObject *dict;
    PyObject *weakrefs;
    vectorcallfunc vectorcall;
    uint32_t id;
    uint32_t tag;
} SpanFunctionObject;

static PyObject *SpanFunction_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                         PyObject *kwnames)
{
    SpanFunctionObject *f = (SpanFunctionObject *)self;
    if (!lapse_enabled_ || !ext_tag_on(f->tag))
        return PyObject_Vectorcall(f->fn, args, nargsf, kwnames);
    const void *key = current_key();
    int token = lapse_span_begin_keyed(key, f->id);
    PyObject *result = PyObject_Vectorcall(f->fn, args, nargsf, kwnames);
    lapse_span_end_keyed(key, token); /* on an exception too */
    return result;
}

static int SpanFunction_traverse(SpanFunctionObject *f, visitproc visit, void *arg)
{
    Py_VISIT(f->fn);
    Py_VISIT(f->dict);
    return 0;
}

static int SpanFunction_clear(SpanFunctionObject *f)
{
    Py_CLEAR(f->fn);
    Py_CLEAR(f->dict);
    return 0;
}

static void SpanFunction_dealloc(SpanFunctionObject *f)
{
    PyObject_GC_UnTrack(f);
    if (f->weakrefs)
        PyObject_ClearWeakRefs((PyObject *)f);
    SpanFunction_clear(f);
    Py_XDECREF(f->name);
    PyObject_GC_Del(f);
}

static PyObject *SpanFunction_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *SpanFunction_repr(SpanFunctionObject *f)
{
    return PyUnicode_FromFormat("<lapse.span %R of %R>", f->name, f->fn);
}

static PyMemberDef SpanFunction_members[] = {
    {"__lapse_span__", T_OBJECT, offsetof(SpanFunctionObject, name), READONLY, "span name"},
    {"__dictoffset__", T_PYSSIZET, offsetof(SpanFunctionObject, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(SpanFunctionObject, weakrefs), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(SpanFunctionObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef SpanFunction_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject SpanFunction_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lapse.SpanFunction",
    .tp_doc = "A function decorated with lapse.span.",
    .tp_basicsize = sizeof(SpanFunctionObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_dealloc = (destructor)SpanFunction_dealloc,
    .tp_traverse = (traverseproc)SpanFunction_traverse,
    .tp_clear = (inquiry)SpanFunction_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(SpanFunctionObject, vectorcall),
    .tp_descr_get = SpanFunction_get,
    .tp_repr = (reprfunc)SpanFunction_repr,
    .tp_members = SpanFunction_members,
    .tp_getset = SpanFunction_getset,
    .tp_dictoffset = offsetof(SpanFunctionObject, dict),
    .tp_weaklistoffset = offsetof(SpanFunctionObject, weakrefs),
};

/* A flag set in a function's code: coroutine, generator, async generator. */
static int needs_special_wrapper(PyObject *fn)
{
    if (!PyFunction_Check(fn))
        return 0;
    PyCodeObject *code = (PyCodeObject *)PyFunction_GET_CODE(fn);
    return (code->co_flags & (CO_COROUTINE | CO_GENERATOR | CO_ASYNC_GENERATOR |
                              CO_ITERABLE_COROUTINE)) != 0;
}

static PyObject *wrap_callable(PyObject *name, PyObject *fn, PyObject *tag)
{
    if (PyObject_TypeCheck(fn, &PyClassMethod_Type) || PyObject_TypeCheck(fn, &PyStaticMethod_Type)) {
        PyObject *inner = PyObject_GetAttrString(fn, "__func__");
        if (!inner)
            return NULL;
        PyObject *wrapped = wrap_callable(name, inner, tag);
        Py_DECREF(inner);
        if (!wrapped)
            return NULL;
        PyObject *result = PyObject_CallOneArg((PyObject *)Py_TYPE(fn), wrapped);
        Py_DECREF(wrapped);
        return result;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "span decorates a callable, not %.100s",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    if (needs_special_wrapper(fn)) {
        PyObject *s = span_new_tagged(name, tag);
        PyObject *result = s ? PyObject_CallFunctionObjArgs(wrap_special, name, fn, s, NULL) : NULL;
        Py_XDECREF(s);
        return result;
    }
    uint32_t id, tag_id;
    if (ext_name_id(name, &id) < 0 || ext_tag_id(tag, &tag_id) < 0)
        return NULL;
    if (PyFunction_Check(fn)) /* stays the plain function (plain_functions.c) */
        return ext_plain_functions_register(name, fn, id, tag_id);
    SpanFunctionObject *f = PyObject_GC_New(SpanFunctionObject, &SpanFunction_Type);
    if (!f)
        return NULL;
    Py_INCREF(fn);
    Py_INCREF(name);
    f->fn = fn;
    f->name = name;
    f->dict = NULL;
    f->weakrefs = NULL;
    f->vectorcall = SpanFunction_vectorcall;
    f->id = id;
    f->tag = tag_id;
    PyObject_GC_Track(f);
    PyObject *done = PyObject_CallFunctionObjArgs(update_wrapper, (PyObject *)f, fn, NULL);
    if (!done) {
        Py_DECREF(f);
        return NULL;
    }
    Py_DECREF(done);
    return (PyObject *)f;
}

/* The span name of a decorated function: its qualified name after the last
 * "<locals>." ("Model.forward"; a function defined inside another: its own name). */
static PyObject *name_of(PyObject *fn)
{
    PyObject *q = PyObject_GetAttrString(fn, "__qualname__");
    if (!q) {
        PyErr_Clear();
        q = PyObject_GetAttrString(fn, "__name__");
    }
    if (!q || !PyUnicode_Check(q)) {
        Py_XDECREF(q);
        PyErr_Clear();
        return PyObject_Repr(fn);
    }
    static PyObject *locals;
    if (!locals && !(locals = PyUnicode_InternFromString("<locals>.")))
        return NULL;
    Py_ssize_t at = PyUnicode_Find(q, locals, 0, PyUnicode_GET_LENGTH(q), -1);
    if (at < 0) {
        if (at == -2) {
            Py_DECREF(q);
            return NULL;
        }
        return q;
    }
    PyObject *tail = PyUnicode_Substring(q, at + PyUnicode_GET_LENGTH(locals), PyUnicode_GET_LENGTH(q));
    Py_DECREF(q);
    return tail;
}

static PyObject *span_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    (void)module;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *tag = Py_None;
    if (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "tag") == 0)
        tag = args[nargs];
    else if (nkw)
        nargs = -1;
    if (nargs == 2 && !nkw)
        tag = args[1];
    else if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "span(name_or_fn, tag=None)");
        return NULL;
    }
    PyObject *arg = args[0];
    if (PyUnicode_Check(arg))
        return span_new_tagged(arg, tag);
    if (!PyCallable_Check(arg) && !PyObject_TypeCheck(arg, &PyClassMethod_Type) &&
        !PyObject_TypeCheck(arg, &PyStaticMethod_Type)) {
        PyErr_Format(PyExc_TypeError,
                     "span takes a name (str) or a function to decorate, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    PyObject *target = arg;
    if (!PyCallable_Check(arg)) /* classmethod/staticmethod: name from the function */
        target = PyObject_GetAttrString(arg, "__func__");
    else
        Py_INCREF(target);
    if (!target)
        return NULL;
    PyObject *name = name_of(target);
    Py_DECREF(target);
    if (!name)
        return NULL;
    PyObject *result = wrap_callable(name, arg, tag);
    Py_DECREF(name);
    return result;
}

/* ---- SampledSpan: phase(name, sample=rate) ----
 *
 * One entry in `stride` is measured, by a deterministic count (a random draw would
 * cost about what it saves); that entry and everything inside it are recorded
 * scaled by stride and marked as estimates. The other entries record nothing, for
 * the span or anything inside it. */

typedef struct {
    PyObject_HEAD
    PyObject *name;
    uint32_t id;
    uint32_t stride;
    uint64_t entries;
} SampledSpanObject;

static void SampledSpan_dealloc(SampledSpanObject *s)
{
    Py_XDECREF(s->name);
    PyObject_Free(s);
}

static PyObject *SampledSpan_enter(SampledSpanObject *s, PyObject *unused)
{
    (void)unused;
    if (lapse_enabled_)
        lapse_span_begin_sampled(current_key(), s->id, s->entries++ % s->stride == 0, s->stride);
    Py_INCREF(s);
    return (PyObject *)s;
}

static PyObject *SampledSpan_exit(SampledSpanObject *s, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    if (lapse_enabled_)
        lapse_span_end_keyed_name(current_key(), s->id);
    Py_RETURN_FALSE;
}

static PyObject *SampledSpan_repr(SampledSpanObject *s)
{
    return PyUnicode_FromFormat("lapse.phase(%R, sample=1/%u)", s->name, s->stride);
}

static PyMethodDef SampledSpan_methods[] = {
    {"__enter__", (PyCFunction)SampledSpan_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))SampledSpan_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef SampledSpan_members[] = {
    {"name", T_OBJECT, offsetof(SampledSpanObject, name), READONLY, "the phase's name"},
    {"stride", T_UINT, offsetof(SampledSpanObject, stride), READONLY, "1 entry in stride is measured"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject SampledSpan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lapse.SampledSpan",
    .tp_doc = "A sampled phase: one entry in `stride` is measured and scaled.",
    .tp_basicsize = sizeof(SampledSpanObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)SampledSpan_dealloc,
    .tp_repr = (reprfunc)SampledSpan_repr,
    .tp_methods = SampledSpan_methods,
    .tp_members = SampledSpan_members,
};

static PyObject *sampled_span_entry(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *name;
    unsigned int stride;
    if (!PyArg_ParseTuple(args, "UI:sampled_span", &name, &stride))
        return NULL;
    if (stride < 1) {
        PyErr_SetString(PyExc_ValueError, "sampled_span: stride must be >= 1");
        return NULL;
    }
    uint32_t id;
    if (ext_name_id(name, &id) < 0)
        return NULL;
    SampledSpanObject *s = PyObject_New(SampledSpanObject, &SampledSpan_Type);
    if (!s)
        return NULL;
    Py_INCREF(name);
    s->name = name;
    s->id = id;
    s->stride = stride;
    s->entries = 0;
    return (PyObject *)s;
}

/* ---- IoSpan: phase(name, io=True) ----
 *
 * The process's I/O counters read at the phase's own entry and exit (less what
 * lapse's own writes moved): the bytes are the phase's exactly, added as counters
 * io.read_chars, io.write_chars (syscalls, page cache included), io.read_bytes and
 * io.write_bytes (the block device) on the phase, and its RSS growth (mem.*): each
 * only when the session collects it (Feature.IO, Feature.MEMORY). Two /proc reads a
 * phase: for phases that move data, not for inner loops. A new object per phase: it
 * holds the entry reading. */

typedef struct {
    PyObject_HEAD
    uint32_t id;
    int open; /* a session recorded its entry */
    lapse_io_scope scope; /* the readings at entry (lapse_io_measure_begin_) */
} IoSpanObject;

static PyObject *IoSpan_enter(IoSpanObject *s, PyObject *unused)
{
    (void)unused;
    s->open = 0;
    if (lapse_enabled_) {
        lapse_io_measure_begin_(&s->scope);
        lapse_span_begin_keyed(current_key(), s->id);
        s->open = 1;
    }
    Py_INCREF(s);
    return (PyObject *)s;
}

static PyObject *IoSpan_exit(IoSpanObject *s, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    if (!lapse_enabled_ || !s->open)
        Py_RETURN_FALSE;
    s->open = 0;
    lapse_io_measure_end_(&s->scope);
    lapse_span_end_keyed_name(current_key(), s->id);
    Py_RETURN_FALSE;
}

static PyMethodDef IoSpan_methods[] = {
    {"__enter__", (PyCFunction)IoSpan_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))IoSpan_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject IoSpan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lapse.IoSpan",
    .tp_doc = "A phase whose bytes read and written are measured at its entry and exit.",
    .tp_basicsize = sizeof(IoSpanObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)PyObject_Free,
    .tp_methods = IoSpan_methods,
};

static PyObject *io_span_for(PyObject *name)
{
    uint32_t id;
    if (ext_name_id(name, &id) < 0)
        return NULL;
    IoSpanObject *s = PyObject_New(IoSpanObject, &IoSpan_Type);
    if (!s)
        return NULL;
    s->id = id;
    s->open = 0;
    return (PyObject *)s;
}

/* ---- phase(name, io=False, sync=False, sample=None) ---- */

static PyObject *sampled_cache; /* (name, stride) -> SampledSpan */
static PyObject *sync_phase;    /* lapse.accounting._SyncPhase */
static PyObject *gpu_phase;     /* lapse.accounting._GpuPhase */

/* *cache = lapse.accounting.NAME, looked up on first use (lapse.accounting imports
 * this module); NULL with an exception. */
static PyObject *accounting_attr(PyObject **cache, const char *name)
{
    if (!*cache) {
        PyObject *accounting = PyImport_ImportModule("lapse.accounting");
        if (!accounting)
            return NULL;
        *cache = PyObject_GetAttrString(accounting, name);
        Py_DECREF(accounting);
    }
    return *cache;
}

static PyObject *sampled_for(PyObject *name, double sample)
{
    if (!(sample > 0.0 && sample <= 1.0)) {
        PyErr_Format(PyExc_ValueError, "lapse: sample must be in (0, 1], not %R",
                     PyFloat_FromDouble(sample));
        return NULL;
    }
    double inverse = 1.0 / sample + 0.5;
    unsigned long stride = inverse >= 4294967295.0 ? 4294967295ul : (unsigned long)inverse;
    if (stride < 1)
        stride = 1;
    PyObject *key = Py_BuildValue("(Ok)", name, stride);
    if (!key)
        return NULL;
    PyObject *found = PyDict_GetItemWithError(sampled_cache, key);
    if (found || PyErr_Occurred()) {
        Py_DECREF(key);
        Py_XINCREF(found);
        return found;
    }
    PyObject *args = Py_BuildValue("(Ok)", name, stride);
    PyObject *made = args ? sampled_span_entry(NULL, args) : NULL;
    Py_XDECREF(args);
    if (made && PyDict_GET_SIZE(sampled_cache) < SPAN_CACHE_MAX &&
        PyDict_SetItem(sampled_cache, key, made) < 0)
        Py_CLEAR(made);
    Py_DECREF(key);
    return made;
}

static PyObject *phase_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    (void)module;
    if (nargs == 1 && !kwnames && PyUnicode_CheckExact(args[0]))
        return span_new_named(args[0]); /* the common case: a phase is a span */
    static const char *const kw[] = {"name", "io", "sync", "sample", "gpu_time", NULL};
    PyObject *all[5] = {NULL, Py_False, Py_False, Py_None, Py_False};
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > 5) {
        PyErr_SetString(PyExc_TypeError,
                        "phase(name, io=False, sync=False, sample=None, gpu_time=False)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        all[i] = args[i];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        int k = 0;
        while (kw[k] && PyUnicode_CompareWithASCIIString(key, kw[k]) != 0)
            k++;
        if (!kw[k]) {
            PyErr_Format(PyExc_TypeError, "phase() got an unexpected keyword argument %R", key);
            return NULL;
        }
        all[k] = args[nargs + i];
    }
    if (!all[0] || !PyUnicode_Check(all[0])) {
        PyErr_Format(PyExc_TypeError, "a phase name must be a str, not %.100s",
                     all[0] ? Py_TYPE(all[0])->tp_name : "nothing");
        return NULL;
    }
    int io = PyObject_IsTrue(all[1]), sync = PyObject_IsTrue(all[2]), gpu = PyObject_IsTrue(all[4]);
    if (io < 0 || sync < 0 || gpu < 0)
        return NULL;
    if (io) {
        if (sync || gpu || all[3] != Py_None) {
            PyErr_SetString(PyExc_ValueError, "lapse: an io=True phase is neither sampled, "
                                              "synchronized nor timed on the GPU");
            return NULL;
        }
        return io_span_for(all[0]);
    }
    if (all[3] != Py_None) {
        if (sync || gpu) {
            PyErr_SetString(PyExc_ValueError, "lapse: a sampled phase is neither synchronized "
                                              "nor timed on the GPU");
            return NULL;
        }
        double sample = PyFloat_AsDouble(all[3]);
        if (sample == -1.0 && PyErr_Occurred())
            return NULL;
        return sampled_for(all[0], sample);
    }
    if (gpu) {
        PyObject *type = accounting_attr(&gpu_phase, "_GpuPhase");
        return type ? PyObject_CallFunctionObjArgs(type, all[0], sync ? Py_True : Py_False, NULL) : NULL;
    }
    if (sync) {
        PyObject *type = accounting_attr(&sync_phase, "_SyncPhase");
        return type ? PyObject_CallOneArg(type, all[0]) : NULL;
    }
    return span_new_named(all[0]);
}

/* ---- count ---- */

static PyObject *count_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "count(name, n) takes exactly two arguments");
        return NULL;
    }
    if (!PyLong_Check(args[1])) {
        PyErr_Format(PyExc_TypeError, "count: n must be an int, not %.100s (a float would be "
                     "truncated)", Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    if (!lapse_enabled_)
        Py_RETURN_NONE;
    uint32_t id;
    if (ext_name_id(args[0], &id) < 0)
        return NULL;
    long long n = PyLong_AsLongLong(args[1]);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    lapse_count_id(id, (int64_t)n);
    Py_RETURN_NONE;
}

static PyObject *gpu_time_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyLong_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "gpu_time(ns: int, why: str)");
        return NULL;
    }
    long long ns = PyLong_AsLongLong(args[0]);
    const char *why = PyUnicode_AsUTF8(args[1]);
    if ((ns == -1 && PyErr_Occurred()) || !why)
        return NULL;
    lapse_gpu_time_keyed(current_key(), (int64_t)ns, why);
    Py_RETURN_NONE;
}

static PyObject *current_entry(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    char buf[4096];
    lapse_current_path(current_key(), '.', buf, sizeof buf);
    return PyUnicode_DecodeUTF8(buf, (Py_ssize_t)strlen(buf), "replace");
}

PyMethodDef ext_span_methods[] = {
    {"phase", (PyCFunction)(void (*)(void))phase_entry, METH_FASTCALL | METH_KEYWORDS,
     "phase(name, io=False, sync=False, sample=None, gpu_time=False) -> a phase of the\n"
     "active session: a span; io=True measures its bytes read and written exactly;\n"
     "sync=True synchronizes CUDA at both ends; sample=r measures 1 entry in round(1/r)\n"
     "and scales it (an estimate); gpu_time=True records its GPU time (CUDA events)\n"
     "beside its wall time."},
    {"gpu_time", (PyCFunction)(void (*)(void))gpu_time_entry, METH_FASTCALL,
     "gpu_time(ns, why) -> None: ns of GPU time for the innermost open span here;\n"
     "ns < 0: its GPU time is missing, why says why."},
    {"sampled_span", sampled_span_entry, METH_VARARGS,
     "sampled_span(name, stride) -> a context manager measuring one entry in stride"},
    {"current", current_entry, METH_NOARGS,
     "current() -> the dotted path of the spans open here (this thread, this task), or \"\"."},
    {"span", (PyCFunction)(void (*)(void))span_entry, METH_FASTCALL | METH_KEYWORDS,
     "span(name, tag=None) -> a span usable as `with span(name):` or `@span(name)`;\n"
     "span(fn, tag=None) -> fn decorated, named after its qualified name. tag: the\n"
     "library the span belongs to (lapse.register_opt_in_tag)."},
    {"count", (PyCFunction)(void (*)(void))count_entry, METH_FASTCALL,
     "count(name, n): add n to the counter `name` of the innermost open span."},
    {NULL, NULL, 0, NULL},
};

int ext_span_init(PyObject *module)
{
    span_cache = PyDict_New();
    tagged_cache = PyDict_New();
    sampled_cache = PyDict_New();
    if (!span_cache || !tagged_cache || !sampled_cache)
        return -1;
    if (PyType_Ready(&Span_Type) < 0 || PyType_Ready(&SpanFunction_Type) < 0 ||
        PyType_Ready(&SampledSpan_Type) < 0 || PyType_Ready(&IoSpan_Type) < 0)
        return -1;
    PyObject *functools = PyImport_ImportModule("functools");
    if (!functools)
        return -1;
    update_wrapper = PyObject_GetAttrString(functools, "update_wrapper");
    Py_DECREF(functools);
    PyObject *wrappers = PyImport_ImportModule("lapse._wrappers");
    if (!wrappers)
        return -1;
    wrap_special = PyObject_GetAttrString(wrappers, "wrap_special");
    Py_DECREF(wrappers);
    if (!update_wrapper || !wrap_special)
        return -1;

    Py_INCREF(&Span_Type);
    Py_INCREF(&SpanFunction_Type);
    if (PyModule_AddObject(module, "Span", (PyObject *)&Span_Type) < 0 ||
        PyModule_AddObject(module, "SpanFunction", (PyObject *)&SpanFunction_Type) < 0)
        return -1;
    return 0;
}
