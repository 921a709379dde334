/* The line profiler's engine: per line of the chosen code objects, hits and time.
 *
 * A line is billed from the event that starts it to the next line event of the same
 * frame (or the frame's return, yield or unwind): inclusive of the functions it calls.
 * Each thread keeps its own stack of traced frames; a generator or coroutine is popped
 * when it yields and pushed again when it resumes, so a suspended frame is not billed.
 *
 * 3.12+: sys.monitoring, LINE / PY_START / PY_RESUME / PY_RETURN / PY_YIELD enabled
 * only on the chosen code objects (set_local_events), PY_UNWIND / PY_THROW globally
 * (they cannot be local) and filtered at once; the callbacks are C functions called
 * by vectorcall. 3.11: a C trace function on every thread (and, through
 * threading.settrace, on threads started later) that drops every frame whose code is
 * not chosen at its call event, and a line event of such a frame by one pointer
 * compare.
 *
 * Everything runs under the GIL (free-threaded builds are refused). */
#include "ext.h"

#include "core/clock.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LM_MAX_REGIONS 64
#define LM_MONITORING (PY_VERSION_HEX >= 0x030C0000)

typedef struct lm_cell {
    uint64_t hits;
    uint64_t ticks; /* of lapse's clock (core/clock.h), converted when read */
} lm_cell;

/* One chosen code object: its lines first_line .. first_line + nlines - 1, and one
 * row of cells per region it ran in (allocated when first needed). */
typedef struct lm_code {
    PyObject *code; /* strong */
    int first_line;
    int nlines;
    lm_cell *rows[LM_MAX_REGIONS];
} lm_code;

/* One traced frame of a thread: the line it is on (-1: none yet) since `t`, and the
 * region that was current when that line began. */
typedef struct lm_frame {
    const void *key; /* the code object (3.12+) or the frame (3.11) */
    lm_code *code;
    int line; /* index into the rows, -1 for none */
    unsigned region;
    uint64_t t;
} lm_frame;

typedef struct lm_thread {
    lm_frame *stack;
    size_t depth, cap;
    unsigned region; /* the current region of this thread */
    struct lm_thread *next;
} lm_thread;

static __thread lm_thread *my_thread __attribute__((tls_model("initial-exec")));
static lm_thread *all_threads;

/* code object -> lm_code, open addressing on the pointer */
static lm_code **table;
static size_t table_cap, table_used;

static PyObject *region_names; /* list of str; index 0 is "" (no region) */
static int active;
/* events not counted: a line outside its code's range, or no memory for a thread's
 * stack or a row */
static uint64_t lost_events;

static inline uint64_t ticks_now(void)
{
    return core_ticks();
}

static inline size_t slot_of(const void *p, size_t cap)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
}

static inline lm_code *lookup(const void *code)
{
    if (!table_cap)
        return NULL;
    for (size_t i = slot_of(code, table_cap);; i = (i + 1) & (table_cap - 1)) {
        lm_code *c = table[i];
        if (!c || c->code == code)
            return c;
    }
}

static int table_put(lm_code *c)
{
    if ((table_used + 1) * 2 > table_cap) {
        size_t cap = table_cap ? table_cap * 2 : 256;
        lm_code **grown = calloc(cap, sizeof *grown);
        if (!grown)
            return -1;
        for (size_t i = 0; i < table_cap; i++)
            if (table[i]) {
                size_t j = slot_of(table[i]->code, cap);
                while (grown[j])
                    j = (j + 1) & (cap - 1);
                grown[j] = table[i];
            }
        free(table);
        table = grown;
        table_cap = cap;
    }
    size_t j = slot_of(c->code, table_cap);
    while (table[j])
        j = (j + 1) & (table_cap - 1);
    table[j] = c;
    table_used++;
    return 0;
}

static lm_thread *thread_state(void)
{
    lm_thread *t = my_thread;
    if (__builtin_expect(t != NULL, 1))
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->next = all_threads;
    all_threads = t;
    my_thread = t;
    return t;
}

static lm_frame *push(lm_thread *t)
{
    if (t->depth == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        lm_frame *grown = realloc(t->stack, cap * sizeof *grown);
        if (!grown)
            return NULL;
        t->stack = grown;
        t->cap = cap;
    }
    return &t->stack[t->depth++];
}

static lm_cell *row_of(lm_code *c, unsigned region)
{
    lm_cell *row = c->rows[region];
    if (__builtin_expect(row != NULL, 1))
        return row;
    row = c->rows[region] = calloc((size_t)c->nlines, sizeof *row);
    return row;
}

/* Ends the line the frame is on at `now`. */
static inline void bill(lm_frame *f, uint64_t now)
{
    if (f->line < 0)
        return;
    lm_cell *row = row_of(f->code, f->region);
    if (row)
        row[f->line].ticks += now - f->t;
    else
        lost_events++;
}

/* The frame starts `line` (a line number) at `now`; hit counts it. */
static inline void begin_line(lm_thread *t, lm_frame *f, int line, uint64_t now, int hit)
{
    int index = line - f->code->first_line;
    if (__builtin_expect(index < 0 || index >= f->code->nlines, 0)) {
        lost_events++;
        f->line = -1;
        return;
    }
    f->line = index;
    f->region = t->region;
    f->t = now;
    if (hit) {
        lm_cell *row = row_of(f->code, t->region);
        if (row)
            row[index].hits++;
        else
            lost_events++;
    }
}

static void frame_enter(const void *key, lm_code *c, int line, int hit)
{
    lm_thread *t = thread_state();
    lm_frame *f = t ? push(t) : NULL;
    if (!f) {
        lost_events++;
        return;
    }
    f->key = key;
    f->code = c;
    f->line = -1;
    if (line >= 0)
        begin_line(t, f, line, ticks_now(), hit);
}

/* The frame of `key` leaves (returns, yields, unwinds): its line ends. */
static void frame_leave(const void *key)
{
    lm_thread *t = my_thread;
    if (!t || !t->depth || t->stack[t->depth - 1].key != key)
        return;
    bill(&t->stack[t->depth - 1], ticks_now());
    t->depth--;
}

static void frame_line(const void *key, lm_code *c, int line)
{
    uint64_t t_now = ticks_now();
    lm_thread *t = my_thread;
    lm_frame *f;
    if (t && t->depth && t->stack[t->depth - 1].key == key) {
        f = &t->stack[t->depth - 1];
        bill(f, t_now);
    } else { /* a frame that was running before it was chosen (another thread's) */
        if (!c)
            return;
        t = thread_state();
        f = t ? push(t) : NULL;
        if (!f) {
            lost_events++;
            return;
        }
        f->key = key;
        f->code = c;
    }
    begin_line(t, f, line, t_now, 1);
}

/* ---- choosing code objects ---- */

static int add_code(PyObject *code);

static int line_range(PyObject *code, int *first, int *count)
{
    PyCodeObject *co = (PyCodeObject *)code;
    int lo = co->co_firstlineno, hi = co->co_firstlineno;
    PyObject *lines = PyObject_CallMethod(code, "co_lines", NULL);
    PyObject *it = lines ? PyObject_GetIter(lines) : NULL;
    Py_XDECREF(lines);
    if (!it)
        return -1;
    PyObject *item;
    while ((item = PyIter_Next(it))) {
        PyObject *l = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 3 ? PyTuple_GET_ITEM(item, 2)
                                                                           : NULL;
        if (l && PyLong_Check(l)) {
            long v = PyLong_AsLong(l);
            if (v > 0 && v < lo)
                lo = (int)v;
            if (v > hi && v < (1L << 30))
                hi = (int)v;
        }
        Py_DECREF(item);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    *first = lo;
    *count = hi - lo + 1;
    return 0;
}

#if LM_MONITORING
/* PROFILER_ID (2) if free, else the unnamed 3 and 4; its callbacks (defined below) are
 * set by engine_start */
static ext_monitor_tool tool = {"lapse lines", "LineProfiler", 2, 4, -1, NULL, NULL, NULL, 0};
static long local_events, global_events;

static int set_local(PyObject *code, long events)
{
    return ext_monitor_set_local(&tool, code, events);
}
#endif

/* Chooses `code` and, recursively, the code objects among its constants (nested
 * functions, closures, class bodies, comprehensions). */
static int add_code(PyObject *code)
{
    if (lookup(code))
        return 0;
    lm_code *c = calloc(1, sizeof *c);
    if (!c) {
        PyErr_NoMemory();
        return -1;
    }
    if (line_range(code, &c->first_line, &c->nlines) < 0) {
        free(c);
        return -1;
    }
    Py_INCREF(code);
    c->code = code;
    if (table_put(c) < 0) {
        Py_DECREF(code);
        free(c);
        PyErr_NoMemory();
        return -1;
    }
#if LM_MONITORING
    if (active && set_local(code, local_events) < 0)
        return -1;
#endif
    PyObject *consts = PyObject_GetAttrString(code, "co_consts");
    if (!consts)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && PyTuple_Check(consts) && i < PyTuple_GET_SIZE(consts); i++)
        if (PyCode_Check(PyTuple_GET_ITEM(consts, i)))
            rc = add_code(PyTuple_GET_ITEM(consts, i));
    Py_DECREF(consts);
    return rc;
}

static PyObject *py_add_code(PyObject *self, PyObject *code)
{
    (void)self;
    if (!PyCode_Check(code)) {
        PyErr_Format(PyExc_TypeError, "lines_add_code: a code object, not %.100s",
                     Py_TYPE(code)->tp_name);
        return NULL;
    }
    if (add_code(code) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* The current thread's frames that were already running, outermost first, whose
 * code is chosen: each goes on on its current line from now (no hit: it began
 * before). */
static void push_running_frames(void)
{
    PyFrameObject *frames[256];
    int n = 0;
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f && n < 256) {
        frames[n++] = f;
        f = PyFrame_GetBack(f);
    }
    Py_XDECREF(f);
    for (int i = n - 1; i >= 0; i--) {
        PyCodeObject *code = PyFrame_GetCode(frames[i]);
        lm_code *c = lookup(code);
        if (c) {
#if LM_MONITORING
            const void *key = code;
#else
            const void *key = frames[i];
#endif
            frame_enter(key, c, PyFrame_GetLineNumber(frames[i]), 0);
        }
        Py_DECREF(code);
        Py_DECREF(frames[i]);
    }
}

/* ---- 3.12+: sys.monitoring callbacks ---- */
#if LM_MONITORING

static PyObject *on_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 1) {
        lm_code *c = lookup(args[0]);
        if (c)
            frame_enter(args[0], c, -1, 0);
    }
    Py_RETURN_NONE;
}

/* PY_RESUME (local) and PY_THROW (global: filtered by the table): a generator or
 * coroutine goes on from the line of its offset. */
static PyObject *on_resume(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 2) {
        lm_code *c = lookup(args[0]);
        if (c) {
            int offset = (int)PyLong_AsLong(args[1]);
            if (offset < 0 && PyErr_Occurred()) {
                PyErr_Clear();
                lost_events++;
            } else
                frame_enter(args[0], c, PyCode_Addr2Line((PyCodeObject *)args[0], offset), 0);
        }
    }
    Py_RETURN_NONE;
}

/* PY_RETURN, PY_YIELD (local) and PY_UNWIND (global: only the top frame matches) */
static PyObject *on_leave(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 1)
        frame_leave(args[0]);
    Py_RETURN_NONE;
}

static PyObject *on_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs >= 2) {
        lm_thread *t = my_thread;
        lm_code *c = t && t->depth && t->stack[t->depth - 1].key == args[0]
                         ? t->stack[t->depth - 1].code
                         : lookup(args[0]);
        int line = (int)PyLong_AsLong(args[1]);
        if (line < 0 && PyErr_Occurred()) { /* never raised into the program */
            PyErr_Clear();
            lost_events++;
        } else if (c) {
            frame_line(args[0], c, line);
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef callback_defs[] = {
    {"line", (PyCFunction)(void (*)(void))on_line, METH_FASTCALL, NULL},
    {"start", (PyCFunction)(void (*)(void))on_start, METH_FASTCALL, NULL},
    {"resume", (PyCFunction)(void (*)(void))on_resume, METH_FASTCALL, NULL},
    {"leave", (PyCFunction)(void (*)(void))on_leave, METH_FASTCALL, NULL},
};

static const char *const callback_events[] = {"LINE",      "PY_START", "PY_RESUME", "PY_THROW",
                                              "PY_RETURN", "PY_YIELD", "PY_UNWIND"};
static const int callback_index[] = {0, 1, 2, 2, 3, 3, 3};
#define LM_NCALLBACKS (sizeof callback_index / sizeof callback_index[0])

static int engine_start(void)
{
    tool.defs = callback_defs;
    tool.callback_events = callback_events;
    tool.callback_def = callback_index;
    tool.callback_count = LM_NCALLBACKS;
    if (ext_monitor_acquire(&tool) < 0)
        return -1;
    local_events = 0;
    const char *locals[] = {"LINE", "PY_START", "PY_RESUME", "PY_RETURN", "PY_YIELD"};
    for (size_t i = 0; i < sizeof locals / sizeof locals[0]; i++) {
        long bit = ext_monitor_event(locals[i]);
        if (bit < 0)
            return -1;
        local_events |= bit;
    }
    long unwind = ext_monitor_event("PY_UNWIND"), thrown = ext_monitor_event("PY_THROW");
    if (unwind < 0 || thrown < 0)
        return -1;
    global_events = unwind | thrown;
    for (size_t i = 0; i < table_cap; i++)
        if (table[i] && set_local(table[i]->code, local_events) < 0)
            return -1;
    return ext_monitor_set_events(&tool, global_events);
}

static int engine_stop(void)
{
    if (tool.id < 0)
        return 0;
    int rc = ext_monitor_set_events(&tool, 0);
    for (size_t i = 0; i < table_cap; i++)
        if (table[i] && set_local(table[i]->code, 0) < 0)
            rc = -1;
    rc |= ext_monitor_release(&tool);
    return rc;
}

#else /* 3.11: a C trace function */

static int trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
    if (__builtin_expect(!active, 0)) { /* a thread traced by a profiler since stopped */
        PyEval_SetTrace(NULL, NULL);
        return 0;
    }
    switch (what) {
    case PyTrace_LINE: {
        lm_thread *t = my_thread;
        if (t && t->depth && t->stack[t->depth - 1].key == frame)
            frame_line(frame, t->stack[t->depth - 1].code, PyFrame_GetLineNumber(frame));
        break;
    }
    case PyTrace_CALL: {
        PyCodeObject *code = PyFrame_GetCode(frame);
        lm_code *c = lookup(code);
        if (c) {
            /* a generator or coroutine resumed goes on from its line */
            int resumed = (code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) &&
                          PyFrame_GetLasti(frame) > 0;
            int line = resumed ? PyFrame_GetLineNumber(frame) : -1;
            /* the first resume of a generator leaves its prologue, on the def line */
            frame_enter(frame, c, line == code->co_firstlineno ? -1 : line, 0);
        }
        Py_DECREF(code);
        break;
    }
    case PyTrace_RETURN: /* also on unwind and yield */
        frame_leave(frame);
        break;
    default:
        break;
    }
    return 0;
}

/* threading.settrace's hook: a new thread's first call installs the C function */
static PyObject *thread_hook(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    (void)args;
    (void)nargs;
    if (active)
        PyEval_SetTrace(trace, NULL);
    Py_RETURN_NONE;
}

static PyMethodDef thread_hook_def = {"lines_thread_hook",
                                      (PyCFunction)(void (*)(void))thread_hook, METH_FASTCALL,
                                      NULL};

static int set_thread_hook(int on)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *hook = on ? PyCFunction_New(&thread_hook_def, NULL) : Py_NewRef(Py_None);
    PyObject *r = threading && hook ? PyObject_CallMethod(threading, "settrace", "O", hook) : NULL;
    Py_XDECREF(hook);
    Py_XDECREF(threading);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Every thread of the interpreter, as 3.12's PyEval_SetTraceAllThreads does: the
 * others wait for the GIL, which this one holds. */
static int set_trace_all(Py_tracefunc fn)
{
    PyInterpreterState *interp = PyThreadState_GetInterpreter(PyThreadState_Get());
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(interp); ts; ts = PyThreadState_Next(ts))
        if (_PyEval_SetTrace(ts, fn, NULL) < 0)
            return -1;
    return 0;
}

static int engine_start(void)
{
    if (set_thread_hook(1) < 0)
        return -1;
    return set_trace_all(trace);
}

static int engine_stop(void)
{
    int rc = set_trace_all(NULL);
    return set_thread_hook(0) < 0 ? -1 : rc;
}
#endif

/* ---- control ---- */

static void drop_stacks(void)
{
    for (lm_thread *t = all_threads; t; t = t->next)
        t->depth = 0;
}

static PyObject *py_enable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
#ifdef Py_GIL_DISABLED
    PyErr_SetString(PyExc_RuntimeError, "LineProfiler: free-threaded CPython is not supported");
    return NULL;
#endif
    if (active) {
        PyErr_SetString(PyExc_RuntimeError,
                        "LineProfiler: another LineProfiler is active in this process");
        return NULL;
    }
    static int calibrated;
    if (!calibrated) { /* once: the ticks counted so far keep their meaning */
        const char *clock = getenv("LAPSE_CLOCK");
        core_clock_calibrate(5, clock && strcmp(clock, "monotonic") == 0);
        calibrated = 1;
    }
    active = 1;
    if (engine_start() < 0) {
        active = 0;
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        engine_stop();
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    drop_stacks();
    push_running_frames();
    Py_RETURN_NONE;
}

static PyObject *py_disable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (!active)
        Py_RETURN_NONE;
    /* this thread's open lines end now; other threads' lines in flight are not billed */
    lm_thread *t = my_thread;
    uint64_t t_now = ticks_now();
    for (size_t i = 0; t && i < t->depth; i++)
        bill(&t->stack[i], t_now);
    active = 0;
    drop_stacks();
    if (engine_stop() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_clear(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    for (size_t i = 0; i < table_cap; i++)
        if (table[i])
            for (int r = 0; r < LM_MAX_REGIONS; r++)
                if (table[i]->rows[r])
                    memset(table[i]->rows[r], 0, (size_t)table[i]->nlines * sizeof(lm_cell));
    lost_events = 0;
    Py_RETURN_NONE;
}

/* lines_region(name) -> the previous region's index; lines_region(index) restores */
static PyObject *py_region(PyObject *self, PyObject *arg)
{
    (void)self;
    lm_thread *t = thread_state();
    if (!t)
        return PyErr_NoMemory();
    unsigned previous = t->region;
    if (PyLong_Check(arg)) {
        long index = PyLong_AsLong(arg);
        if (index < 0 || index >= PyList_GET_SIZE(region_names)) {
            PyErr_SetString(PyExc_ValueError, "lines_region: no such region");
            return NULL;
        }
        t->region = (unsigned)index;
        return PyLong_FromUnsignedLong(previous);
    }
    if (!PyUnicode_Check(arg) || PyUnicode_GET_LENGTH(arg) == 0) {
        PyErr_SetString(PyExc_TypeError, "region: the name must be a non-empty str");
        return NULL;
    }
    Py_ssize_t index = PySequence_Index(region_names, arg);
    if (index < 0) {
        PyErr_Clear();
        index = PyList_GET_SIZE(region_names);
        if (index >= LM_MAX_REGIONS) {
            PyErr_Format(PyExc_ValueError, "region: at most %d region names", LM_MAX_REGIONS - 1);
            return NULL;
        }
        if (PyList_Append(region_names, arg) < 0)
            return NULL;
    }
    t->region = (unsigned)index;
    return PyLong_FromUnsignedLong(previous);
}

/* The counts of a profiler that another one took the engine from (lines_take), kept
 * until it starts again (lines_give) or is dropped. The code objects are the table's,
 * never freed. */
typedef struct lm_kept_row {
    lm_code *code;
    unsigned region;
    lm_cell *row; /* owned */
} lm_kept_row;

typedef struct lm_kept {
    size_t n;
    lm_kept_row *rows;
    uint64_t lost;
} lm_kept;

#define LM_KEPT "lapse.lines_kept"

static void kept_free(PyObject *capsule)
{
    lm_kept *k = PyCapsule_GetPointer(capsule, LM_KEPT);
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++)
        free(k->rows[i].row);
    free(k->rows);
    free(k);
}

static lm_kept *kept_of(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, LM_KEPT); /* sets TypeError/ValueError */
}

/* Appends (region, code, first_line, [(line, hits, ns)], total_ns) for one row with a
 * line that ran. */
static int append_row(PyObject *out, lm_code *c, unsigned r, const lm_cell *row)
{
    PyObject *lines = PyList_New(0);
    uint64_t total = 0;
    for (int l = 0; lines && l < c->nlines; l++) {
        if (!row[l].hits && !row[l].ticks)
            continue;
        uint64_t ns = core_ticks_to_ns(row[l].ticks);
        total += ns;
        PyObject *item = Py_BuildValue("(iKK)", c->first_line + l, (unsigned long long)row[l].hits,
                                       (unsigned long long)ns);
        if (!item || PyList_Append(lines, item) < 0)
            Py_CLEAR(lines);
        Py_XDECREF(item);
    }
    if (!lines)
        return -1;
    int rc = 0;
    if (PyList_GET_SIZE(lines)) {
        PyObject *item = Py_BuildValue("(OOiOK)", PyList_GET_ITEM(region_names, r), c->code,
                                       c->first_line, lines, (unsigned long long)total);
        rc = item && PyList_Append(out, item) == 0 ? 0 : -1;
        Py_XDECREF(item);
    }
    Py_DECREF(lines);
    return rc;
}

/* lines_stats([kept]) -> [(region, code, first_line, [(line, hits, ns)], total_ns)]:
 * one per code object and region with a line that ran, of the engine or of `kept` */
static PyObject *py_stats(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    lm_kept *k = NULL;
    if (nargs > 1 || (nargs == 1 && !(k = kept_of(args[0]))))
        return nargs > 1 ? PyErr_Format(PyExc_TypeError, "lines_stats([kept])") : NULL;
    PyObject *out = PyList_New(0);
    if (k) {
        for (size_t i = 0; out && i < k->n; i++)
            if (k->rows[i].row &&
                append_row(out, k->rows[i].code, k->rows[i].region, k->rows[i].row) < 0)
                Py_CLEAR(out);
        return out;
    }
    for (size_t i = 0; out && i < table_cap; i++)
        for (unsigned r = 0; table[i] && r < LM_MAX_REGIONS && out; r++)
            if (table[i]->rows[r] && append_row(out, table[i], r, table[i]->rows[r]) < 0)
                Py_CLEAR(out);
    return out;
}

/* lines_take() -> kept: moves every count out of the engine (it starts empty) */
static PyObject *py_take(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    lm_kept *k = calloc(1, sizeof *k);
    size_t n = 0;
    for (size_t i = 0; i < table_cap; i++)
        for (unsigned r = 0; table[i] && r < LM_MAX_REGIONS; r++)
            n += table[i]->rows[r] != NULL;
    if (!k || (n && !(k->rows = calloc(n, sizeof *k->rows)))) {
        free(k);
        return PyErr_NoMemory();
    }
    PyObject *capsule = PyCapsule_New(k, LM_KEPT, kept_free);
    if (!capsule) {
        free(k->rows);
        free(k);
        return NULL;
    }
    for (size_t i = 0; i < table_cap; i++)
        for (unsigned r = 0; table[i] && r < LM_MAX_REGIONS; r++)
            if (table[i]->rows[r]) {
                k->rows[k->n++] = (lm_kept_row){table[i], r, table[i]->rows[r]};
                table[i]->rows[r] = NULL; /* a frame on a stack allocates a new one */
            }
    k->lost = lost_events;
    lost_events = 0;
    return capsule;
}

/* lines_give(kept): adds the kept counts back into the engine (kept is left empty) */
static PyObject *py_give(PyObject *self, PyObject *capsule)
{
    (void)self;
    lm_kept *k = kept_of(capsule);
    if (!k)
        return NULL;
    for (size_t i = 0; i < k->n; i++) {
        lm_kept_row *kr = &k->rows[i];
        if (!kr->row)
            continue;
        lm_cell *row = row_of(kr->code, kr->region);
        if (!row)
            return PyErr_NoMemory(); /* what is not given back stays kept */
        for (int l = 0; l < kr->code->nlines; l++) {
            row[l].hits += kr->row[l].hits;
            row[l].ticks += kr->row[l].ticks;
        }
        free(kr->row);
        kr->row = NULL;
    }
    k->n = 0;
    lost_events += k->lost;
    k->lost = 0;
    Py_RETURN_NONE;
}

/* lines_lost([kept]) -> events not counted, by the engine or in `kept` */
static PyObject *py_lost(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    lm_kept *k = NULL;
    if (nargs > 1 || (nargs == 1 && !(k = kept_of(args[0]))))
        return nargs > 1 ? PyErr_Format(PyExc_TypeError, "lines_lost([kept])") : NULL;
    return PyLong_FromUnsignedLongLong(k ? k->lost : lost_events);
}

PyMethodDef ext_line_monitor_methods[] = {
    {"lines_add_code", py_add_code, METH_O,
     "lines_add_code(code): trace this code object and those nested in it"},
    {"lines_enable", py_enable, METH_NOARGS, "lines_enable(): start the line engine"},
    {"lines_disable", py_disable, METH_NOARGS, "lines_disable(): stop the line engine"},
    {"lines_clear", py_clear, METH_NOARGS, "lines_clear(): forget every hit and time"},
    {"lines_region", py_region, METH_O,
     "lines_region(name or index) -> previous index: this thread's current region"},
    {"lines_stats", (PyCFunction)(void (*)(void))py_stats, METH_FASTCALL,
     "lines_stats([kept]) -> [(region, code, first_line, [(line, hits, ns)], total_ns)]"},
    {"lines_lost", (PyCFunction)(void (*)(void))py_lost, METH_FASTCALL,
     "lines_lost([kept]) -> events not counted (a line outside its code's lines, no memory)"},
    {"lines_take", py_take, METH_NOARGS,
     "lines_take() -> kept: every count moved out of the engine"},
    {"lines_give", py_give, METH_O, "lines_give(kept): the kept counts added back"},
    {NULL, NULL, 0, NULL},
};

int ext_line_monitor_init(void)
{
    region_names = PyList_New(0);
    PyObject *none = PyUnicode_FromString("");
    int rc = region_names && none ? PyList_Append(region_names, none) : -1;
    Py_XDECREF(none);
    return rc;
}
