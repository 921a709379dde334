/* Live export for Python: the session's cumulative per-path state taken in memory
 * (no file) into a consumer's baseline, the interval since it (analyze/live_delta.h
 * computes it), and a wait for the flusher's periodic snapshots. lapse/live.py wraps
 * the intervals in its records. */
#include "ext.h"

#include "lapse.h"

#include "analyze/live_delta.h"
#include "session/session.h"

#include <errno.h>
#include <string.h>

#define BASELINE_CAPSULE "lapse.live_baseline"

/* A consumer's baseline: the cumulative state at the end of its previous interval. */

static void baseline_destroy(PyObject *capsule)
{
    live_state *s = PyCapsule_GetPointer(capsule, BASELINE_CAPSULE);
    if (s) {
        live_state_free(s);
        PyMem_Free(s);
    }
}

typedef struct take_ctx {
    live_state *s;
    int rc;
} take_ctx;

static void take_state(const store_file *f, void *arg)
{
    take_ctx *ctx = arg;
    ctx->rc = live_state_add(ctx->s, f);
}

/* The active session's state into s (initialised here): 0, 1 without a session, or
 * -1 with MemoryError set (s is then freed). */
static int take_now(live_state *s)
{
    if (live_state_init(s)) {
        PyErr_NoMemory();
        return -1;
    }
    take_ctx ctx = {s, 0};
    int rc = lapse_session_with_snapshot(take_state, &ctx);
    if (ctx.rc || rc == -ENOMEM) {
        live_state_free(s);
        PyErr_NoMemory();
        return -1;
    }
    return rc ? 1 : 0;
}

static PyObject *live_baseline(PyObject *self, PyObject *args)
{
    (void)self;
    int take = 0;
    if (!PyArg_ParseTuple(args, "|p:live_baseline", &take))
        return NULL;
    live_state *s = PyMem_Malloc(sizeof *s);
    if (!s)
        return PyErr_NoMemory();
    /* without a session, take_now leaves s empty: an empty baseline */
    int rc = take ? take_now(s) : live_state_init(s) ? -1 : 0;
    if (rc < 0) {
        PyMem_Free(s);
        return take ? NULL : PyErr_NoMemory();
    }
    PyObject *capsule = PyCapsule_New(s, BASELINE_CAPSULE, baseline_destroy);
    if (!capsule) {
        live_state_free(s);
        PyMem_Free(s);
    }
    return capsule;
}

static PyObject *u64_or_none(int has, uint64_t v)
{
    if (has)
        return PyLong_FromUnsignedLongLong(v);
    Py_RETURN_NONE;
}

static PyObject *decode(const char *name)
{
    return PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
}

/* {name: delta} of counters[first .. first + count) of iv. */
static PyObject *counter_dict(const live_state *now, const live_interval *iv, uint32_t first,
                              uint32_t count)
{
    PyObject *d = PyDict_New();
    for (uint32_t i = 0; d && i < count; i++) {
        const live_delta_counter *c = &iv->counters[first + i];
        PyObject *k = decode(now->counters[c->counter].name);
        PyObject *v = k ? PyLong_FromLongLong(c->delta) : NULL;
        if (!v || PyDict_SetItem(d, k, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return d;
}

/* The names of path p of s, top-level first (keys holds those made so far). */
static PyObject *names_of(const live_state *s, uint32_t p, PyObject **keys)
{
    if (keys[p])
        return keys[p];
    if (p == 0)
        return keys[0] = PyTuple_New(0);
    PyObject *up = names_of(s, s->paths[p].parent, keys);
    if (!up)
        return NULL;
    Py_ssize_t len = PyTuple_GET_SIZE(up);
    PyObject *t = PyTuple_New(len + 1);
    PyObject *name = t ? decode(s->paths[p].name) : NULL;
    if (!name) {
        Py_XDECREF(t);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < len; k++) {
        PyObject *item = PyTuple_GET_ITEM(up, k);
        Py_INCREF(item);
        PyTuple_SET_ITEM(t, k, item);
    }
    PyTuple_SET_ITEM(t, len, name);
    return keys[p] = t;
}

/* ([(names, calls, total_ns, mean_ns, p50_ns, p90_ns, p99_ns, {counter: delta})],
 *  {counter: delta} outside any span, restarted) */
static PyObject *interval_tuple(const live_state *now, const live_interval *iv)
{
    PyObject **keys = PyMem_Calloc(now->path_count, sizeof *keys);
    PyObject *rows = keys ? PyList_New(0) : PyErr_NoMemory();
    for (uint32_t i = 0; rows && i < iv->path_count; i++) {
        const live_delta_path *d = &iv->paths[i];
        PyObject *names = names_of(now, d->path, keys);
        PyObject *row = names ? Py_BuildValue(
            "(OKKNNNNN)", names, (unsigned long long)d->calls, (unsigned long long)d->total_ns,
            u64_or_none(d->calls != 0, d->mean_ns), u64_or_none(d->has_quantiles, d->quantile_ns[0]),
            u64_or_none(d->has_quantiles, d->quantile_ns[1]),
            u64_or_none(d->has_quantiles, d->quantile_ns[2]),
            counter_dict(now, iv, d->counters_first, d->counter_count)) : NULL;
        if (!row || PyList_Append(rows, row) < 0)
            Py_CLEAR(rows);
        Py_XDECREF(row);
    }
    for (uint32_t p = 0; keys && p < now->path_count; p++)
        Py_XDECREF(keys[p]);
    PyMem_Free(keys);
    if (!rows)
        return NULL;
    return Py_BuildValue("(NNO)", rows, counter_dict(now, iv, iv->outside_first, iv->outside_count),
                         iv->restarted ? Py_True : Py_False);
}

static PyObject *live_advance(PyObject *self, PyObject *capsule)
{
    (void)self;
    live_state *base = PyCapsule_GetPointer(capsule, BASELINE_CAPSULE);
    if (!base)
        return NULL;
    live_state now;
    int rc = take_now(&now);
    if (rc < 0)
        return NULL;
    if (rc == 1) {
        live_state_free(&now);
        Py_RETURN_NONE; /* no session: the baseline stays */
    }
    live_interval iv;
    if (live_interval_build(base, &now, &iv)) {
        live_state_free(&now);
        return PyErr_NoMemory();
    }
    PyObject *result = interval_tuple(&now, &iv);
    live_interval_free(&iv);
    if (!result) {
        live_state_free(&now);
        return NULL;
    }
    live_state_free(base);
    *base = now;
    return result;
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

PyMethodDef ext_live_methods[] = {
    {"live_baseline", live_baseline, METH_VARARGS,
     "live_baseline(take=False) -> baseline: a consumer's baseline for live_advance: empty,\n"
     "or with take the active session's state so far (empty without a session)"},
    {"live_advance", live_advance, METH_O,
     "live_advance(baseline) -> ([(names, calls, total_ns, mean_ns, p50_ns, p90_ns, p99_ns,\n"
     "{counter: delta})], {counter: delta} outside any span, restarted), or None without\n"
     "a session: what happened since the baseline (analyze/live_delta.h: the paths active\n"
     "in the interval, merged over threads), which then becomes the baseline"},
    {"wait_snapshot", live_wait_snapshot, METH_VARARGS,
     "wait_snapshot(after_seq, timeout_ms) -> (written, seq): waits for a periodic "
     "snapshot after after_seq (False on timeout, at the session's end, or when woken)"},
    {"wake_snapshot_waiters", live_wake, METH_NOARGS, "wakes every wait_snapshot"},
    {NULL, NULL, 0, NULL},
};
