/* Live export for Python: the session's cumulative per-path state taken in memory
 * (no file), a wait for the flusher's periodic snapshots, and quantiles of the
 * difference of two histograms. lapse/live.py turns these into per-interval stats. */
#include "ext.h"

#include "lapse.h"

#include "core/hist.h"
#include "session/session.h"

#include <string.h>

#define HIST_BYTES (HIST_BUCKETS * sizeof(uint64_t))

typedef struct state_ctx {
    PyObject *result; /* names tuple -> [calls, total_ns, bytearray hist, {counter: sum}] */
    int failed;
} state_ctx;

/* The entry of key in ctx->result, created empty. Borrowed. */
static PyObject *entry_for(state_ctx *ctx, PyObject *key)
{
    PyObject *e = PyDict_GetItemWithError(ctx->result, key);
    if (e || PyErr_Occurred())
        return e;
    PyObject *hist = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)HIST_BYTES);
    if (!hist)
        return NULL;
    memset(PyByteArray_AS_STRING(hist), 0, HIST_BYTES);
    e = Py_BuildValue("[iiN{}]", 0, 0, hist);
    if (!e)
        return NULL;
    int rc = PyDict_SetItem(ctx->result, key, e);
    Py_DECREF(e);
    return rc < 0 ? NULL : e;
}

static int add_u64(PyObject *list, Py_ssize_t i, uint64_t v)
{
    PyObject *old = PyList_GET_ITEM(list, i);
    PyObject *add = PyLong_FromUnsignedLongLong(v);
    if (!add)
        return -1;
    PyObject *sum = PyNumber_Add(old, add);
    Py_DECREF(add);
    if (!sum)
        return -1;
    PyList_SetItem(list, i, sum); /* steals sum, releases old */
    return 0;
}

static void take_state(const store_file *f, void *arg)
{
    state_ctx *ctx = arg;
    PyObject **keys = PyMem_Calloc(f->node_count ? f->node_count : 1, sizeof(PyObject *));
    if (!keys) {
        PyErr_NoMemory();
        ctx->failed = 1;
        return;
    }
    for (uint32_t i = 0; i < f->node_count && !ctx->failed; i++) {
        const store_node *n = &f->nodes[i];
        if (n->parent < 0) {
            keys[i] = PyTuple_New(0);
        } else {
            PyObject *parent = keys[n->parent];
            Py_ssize_t len = PyTuple_GET_SIZE(parent);
            keys[i] = PyTuple_New(len + 1);
            if (keys[i]) {
                for (Py_ssize_t k = 0; k < len; k++) {
                    PyObject *item = PyTuple_GET_ITEM(parent, k);
                    Py_INCREF(item);
                    PyTuple_SET_ITEM(keys[i], k, item);
                }
                PyObject *name = PyUnicode_DecodeUTF8(f->names[n->name], (Py_ssize_t)strlen(f->names[n->name]),
                                                      "replace");
                if (!name) {
                    Py_CLEAR(keys[i]);
                } else {
                    PyTuple_SET_ITEM(keys[i], len, name);
                }
            }
        }
        if (!keys[i]) {
            ctx->failed = 1;
            break;
        }
        if (n->parent < 0)
            continue;
        PyObject *e = entry_for(ctx, keys[i]);
        if (!e || add_u64(e, 0, n->calls) < 0 || add_u64(e, 1, n->total_ns) < 0) {
            ctx->failed = 1;
            break;
        }
        if (n->hist) {
            uint64_t *dst = (uint64_t *)PyByteArray_AS_STRING(PyList_GET_ITEM(e, 2));
            unsigned lo = n->hist_n ? n->hist_lo : 0, cnt = n->hist_n ? n->hist_n : HIST_BUCKETS;
            for (unsigned b = 0; b < cnt && lo + b < HIST_BUCKETS; b++)
                dst[lo + b] += n->hist[b];
        }
    }
    for (uint32_t i = 0; i < f->counter_count && !ctx->failed; i++) {
        const store_counter *c = &f->counters[i];
        PyObject *e = entry_for(ctx, keys[c->node]);
        PyObject *name = e ? PyUnicode_DecodeUTF8(f->names[c->name], (Py_ssize_t)strlen(f->names[c->name]),
                                                  "replace")
                           : NULL;
        if (!name) {
            ctx->failed = 1;
            break;
        }
        PyObject *counters = PyList_GET_ITEM(e, 3);
        PyObject *old = PyDict_GetItemWithError(counters, name);
        PyObject *add = PyLong_FromLongLong(c->sum);
        PyObject *sum = add && old ? PyNumber_Add(old, add) : (Py_XINCREF(add), add);
        Py_XDECREF(add);
        if (!sum || PyDict_SetItem(counters, name, sum) < 0)
            ctx->failed = 1;
        Py_XDECREF(sum);
        Py_DECREF(name);
    }
    for (uint32_t i = 0; i < f->node_count; i++)
        Py_XDECREF(keys[i]);
    PyMem_Free(keys);
}

static PyObject *live_state(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    state_ctx ctx = {PyDict_New(), 0};
    if (!ctx.result)
        return NULL;
    int rc = lapse_session_with_snapshot(take_state, &ctx);
    if (ctx.failed) {
        Py_DECREF(ctx.result);
        return NULL;
    }
    if (rc) {
        Py_DECREF(ctx.result);
        Py_RETURN_NONE; /* no session */
    }
    return ctx.result;
}

static PyObject *live_wait_snapshot(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long after;
    unsigned int timeout_ms;
    if (!PyArg_ParseTuple(args, "KI:wait_snapshot", &after, &timeout_ms))
        return NULL;
    uint64_t seq = 0;
    int got;
    Py_BEGIN_ALLOW_THREADS
    got = lapse_session_wait_snapshot(after, timeout_ms, &seq);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(OK)", got ? Py_True : Py_False, (unsigned long long)seq);
}

static PyObject *live_wake(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    lapse_session_wake_snapshot_waiters();
    Py_RETURN_NONE;
}

/* hist_delta(now, base, qs) -> (count, (quantile ns, ...)), or None when base is
 * not contained in now (the session restarted). base None: since the start. */
static PyObject *live_hist_delta(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer now, base = {0};
    PyObject *base_obj, *qs;
    if (!PyArg_ParseTuple(args, "y*OO:hist_delta", &now, &base_obj, &qs))
        return NULL;
    PyObject *result = NULL;
    uint64_t d[HIST_BUCKETS];
    if (now.len != (Py_ssize_t)HIST_BYTES) {
        PyErr_SetString(PyExc_ValueError, "hist_delta: a histogram is 496 u64 counts");
        goto out;
    }
    if (base_obj != Py_None) {
        if (PyObject_GetBuffer(base_obj, &base, PyBUF_SIMPLE) < 0)
            goto out;
        if (base.len != (Py_ssize_t)HIST_BYTES) {
            PyErr_SetString(PyExc_ValueError, "hist_delta: a histogram is 496 u64 counts");
            goto out;
        }
        uint64_t a[HIST_BUCKETS], b[HIST_BUCKETS];
        memcpy(a, now.buf, HIST_BYTES);
        memcpy(b, base.buf, HIST_BYTES);
        if (hist_subtract(d, a, b) != 0) {
            result = Py_None;
            Py_INCREF(result);
            goto out;
        }
    } else {
        memcpy(d, now.buf, HIST_BYTES);
    }
    PyObject *seq = PySequence_Fast(qs, "hist_delta: qs must be a sequence");
    if (!seq)
        goto out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out_q = PyTuple_New(n);
    uint64_t count = hist_count(d);
    for (Py_ssize_t i = 0; out_q && i < n; i++) {
        double q = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (q == -1.0 && PyErr_Occurred()) {
            Py_CLEAR(out_q);
            break;
        }
        PyObject *v = count ? PyLong_FromDouble(hist_quantile(d, q) + 0.5) : (Py_INCREF(Py_None), Py_None);
        if (!v) {
            Py_CLEAR(out_q);
            break;
        }
        PyTuple_SET_ITEM(out_q, i, v);
    }
    Py_DECREF(seq);
    if (out_q)
        result = Py_BuildValue("(KN)", (unsigned long long)count, out_q);
out:
    PyBuffer_Release(&now);
    if (base.obj)
        PyBuffer_Release(&base);
    return result;
}

PyMethodDef ext_live_methods[] = {
    {"live_state", live_state, METH_NOARGS,
     "live_state() -> {names: [calls, total_ns, hist bytearray, {counter: sum}]} of the "
     "active session so far, merged over threads (names () : outside any span); None "
     "without a session"},
    {"wait_snapshot", live_wait_snapshot, METH_VARARGS,
     "wait_snapshot(after_seq, timeout_ms) -> (written, seq): waits for a periodic "
     "snapshot after after_seq (False on timeout, at the session's end, or when woken)"},
    {"wake_snapshot_waiters", live_wake, METH_NOARGS, "wakes every wait_snapshot"},
    {"hist_delta", live_hist_delta, METH_VARARGS,
     "hist_delta(now, base, qs) -> (count, quantiles in ns) of now - base; None when "
     "base is not contained in now"},
    {NULL, NULL, 0, NULL},
};
