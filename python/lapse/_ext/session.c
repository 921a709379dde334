/* Session control for Python: start, stop, flush. */
#include "ext.h"

#include "lapse.h"

#include "session/session.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>

static PyObject *session_start(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"role", "run_dir", "max_spans", "snapshot_ms", "timeline",
                            "handle_signals", "cpu", "thread_names", "spans", "io",
                            "memory", "process_ms", "share", "device", "markers", "annotate",
                            "activity", "window", NULL};
    const char *role = NULL, *run_dir = NULL;
    unsigned long long max_spans = 0;
    unsigned int snapshot_ms = 0;
    int timeline = 1, handle_signals = 1, cpu = 0, thread_names = 0, spans = 1, io = 0,
        memory = 0, share = 0, device = 0, markers = 0, activity = 0;
    unsigned int process_ms = 0;
    PyObject *annotate = Py_None, *window = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzKIpppppppIpppOpO:start", names, &role,
                                     &run_dir, &max_spans, &snapshot_ms, &timeline,
                                     &handle_signals, &cpu, &thread_names, &spans, &io, &memory,
                                     &process_ms, &share, &device, &markers, &annotate, &activity, &window))
        return NULL;
    if (ext_annotate_set(annotate) < 0 || ext_window_set(window) < 0)
        return NULL;
    ext_span_hook_update(); /* the span hook of this session, or none */
    lapse_options o;
    lapse_options_init(&o);
    o.role = role;
    o.run_dir = run_dir;
    o.max_spans = max_spans;
    o.snapshot_interval_ms = snapshot_ms;
    o.features = (spans ? LAPSE_FEATURE_SPANS : 0) | (timeline ? LAPSE_FEATURE_TIMELINE : 0) |
                 (cpu ? LAPSE_FEATURE_CPU : 0) | (io ? LAPSE_FEATURE_IO : 0) |
                 (memory ? LAPSE_FEATURE_MEMORY : 0) | (device ? LAPSE_FEATURE_DEVICE : 0) |
                 (markers ? LAPSE_FEATURE_MARKERS : 0) | (activity ? LAPSE_FEATURE_ACTIVITY : 0);
    o.process_sample_ms = process_ms;
    o.handle_signals = handle_signals;
    o.thread_names = thread_names;
    o.share = share;
    int rc = lapse_start(&o);
    if (rc == 0) {
        ext_window_started();
        ext_session_serial++;
        ext_last_key = NULL; /* the next span notices its context, and names its thread */
    }
    if (rc == -EBUSY) {
        PyErr_SetString(PyExc_RuntimeError,
                        "lapse: a profiling session is already active in this process "
                        "(one Profiler at a time)");
        return NULL;
    }
    if (rc == -EINVAL || rc == -ENOTSUP) { /* features it cannot apply: the caller's error */
        PyErr_Format(PyExc_ValueError, "lapse: %s", lapse_last_error());
        return NULL;
    }
    if (rc) {
        PyErr_Format(PyExc_OSError, "lapse: %s", lapse_last_error());
        return NULL;
    }
    return PyUnicode_DecodeFSDefault(lapse_file_path());
}

static PyObject *session_stop(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    const char *path = lapse_file_path();
    if (!path)
        Py_RETURN_NONE;
    PyObject *result = PyUnicode_DecodeFSDefault(path);
    if (!result)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = lapse_stop();
    Py_END_ALLOW_THREADS
    if (rc) {
        /* the program must go on: the failure is reported, not raised */
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "lapse: %s", lapse_last_error());
    }
    return result;
}

static PyObject *session_flush(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = lapse_flush();
    Py_END_ALLOW_THREADS
    if (rc)
        PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "lapse: %s", lapse_last_error());
    return PyBool_FromLong(rc == 0);
}

static PyObject *session_is_active(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(lapse_is_active());
}

static PyObject *session_file_path(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    const char *path = lapse_file_path();
    if (!path)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(path);
}

static PyObject *session_set_role(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *role = PyUnicode_AsUTF8(arg);
    if (!role)
        return NULL;
    if (lapse_set_role(role) != 0) {
        PyErr_Format(PyExc_RuntimeError, "lapse: %s", lapse_last_error());
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *session_adopt(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(lapse_adopt_environment_session() == 0);
}

/* Lets process pid, and only it, read this one (process_vm_readv) where Yama's
 * ptrace_scope 1 allows only ancestors: the Python sampler is a child of the process
 * it samples. pid 0 withdraws the grant. */
static PyObject *session_allow_reader(PyObject *self, PyObject *arg)
{
    (void)self;
    long pid = PyLong_AsLong(arg);
    if (pid == -1 && PyErr_Occurred())
        return NULL;
    /* EINVAL: a kernel without Yama, where the ordinary ptrace rules apply anyway */
    return PyBool_FromLong(prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0) == 0);
}

/* {name: value or None} of the variables a session exports to its children, as the
 * C environment holds them now (os.environ is a copy taken at startup). */
static PyObject *session_exported_environment(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *d = PyDict_New();
    const char *name;
    for (unsigned i = 0; d && (name = lapse_session_exported_env_name(i)); i++) {
        const char *v = getenv(name);
        PyObject *value = v ? PyUnicode_DecodeFSDefault(v) : Py_NewRef(Py_None);
        if (!value || PyDict_SetItemString(d, name, value) < 0)
            Py_CLEAR(d);
        Py_XDECREF(value);
    }
    return d;
}

static PyObject *session_settings_dict(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    session_settings st;
    if (lapse_session_settings(&st) != 0)
        Py_RETURN_NONE;
    PyObject *run_dir = PyUnicode_DecodeFSDefault(st.run_dir);
    if (!run_dir)
        return NULL;
    return Py_BuildValue("{s:N,s:K,s:I,s:I,s:I,s:I,s:O,s:O,s:O}", "run_dir", run_dir, "max_spans",
                         (unsigned long long)st.max_spans, "snapshot_ms", st.snapshot_ms,
                         "cpu_sample_ms", st.cpu_sample_ms, "process_sample_ms",
                         st.process_sample_ms, "features", st.features,
                         "thread_names", st.thread_names ? Py_True : Py_False,
                         "share", st.share ? Py_True : Py_False, "inherited",
                         st.inherited ? Py_True : Py_False);
}

static PyObject *session_missing(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_DecodeFSDefault(lapse_missing());
}

static PyObject *session_check_features(PyObject *self, PyObject *arg)
{
    (void)self;
    unsigned long bits = PyLong_AsUnsignedLong(arg);
    if (bits == (unsigned long)-1 && PyErr_Occurred())
        return NULL;
    char why[512];
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = lapse_check_features((uint32_t)bits, why, sizeof why);
    Py_END_ALLOW_THREADS
    if (rc == 0 || rc == -EBUSY)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(why);
}

static PyObject *session_thread_names(PyObject *self, PyObject *arg)
{
    (void)self;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    lapse_session_set_thread_names(on);
    Py_RETURN_NONE;
}

PyMethodDef ext_session_methods[] = {
    {"session_settings", session_settings_dict, METH_NOARGS,
     "session_settings() -> dict of what the active session collects and keeps (run_dir, "
     "max_spans, snapshot_ms, cpu_sample_ms, process_sample_ms, features (LAPSE_FEATURE_* "
     "bits), thread_names, share, "
     "inherited), or None without one"},
    {"missing", session_missing, METH_NOARGS,
     "missing() -> the features the active session was asked for and does not collect, "
     "each with why ('device: ...', joined by '; '); '' when none"},
    {"check_features", session_check_features, METH_O,
     "check_features(bits) -> None when the collectors of the LAPSE_FEATURE_* bits can start "
     "here, else why the first cannot ('markers: ...', 'device: ...'); None while a session "
     "is active"},
    {"set_thread_names", session_thread_names, METH_O,
     "set_thread_names(on): readers nest each thread's spans under its name"},
    {"exported_environment", session_exported_environment, METH_NOARGS,
     "exported_environment() -> {name: value or None}: the variables a session exports "
     "to the processes it starts, as the C environment holds them now"},
    {"allow_reader", session_allow_reader, METH_O,
     "allow_reader(pid) -> True when process pid (and no other) may now read this one "
     "(Yama's PR_SET_PTRACER; 0: none); False where the kernel has no Yama"},
    {"adopt_environment_session", session_adopt, METH_NOARGS,
     "adopt_environment_session() -> True when a session started from the environment "
     "(LAPSE_PROFILE=1) was active and is now this caller's"},
    {"start", (PyCFunction)(void (*)(void))session_start, METH_VARARGS | METH_KEYWORDS,
     "start(role=None, run_dir=None, max_spans=0, snapshot_ms=0, timeline=True, "
     "handle_signals=True, cpu=False, thread_names=False, spans=True, io=False, memory=False, "
     "process_ms=0, "
     "share=False, device=False, markers=False, annotate=None, activity=False, window=None) -> "
     "path of this process's "
     ".lapse file; annotate: torch.profiler.record_function, opened by every span of "
     "the session; window: (backend, phase, start, stop, runner, why), a heavy backend's "
     "window (runner None, why a str: it cannot run, and the file says why)"},
    {"stop", session_stop, METH_NOARGS, "stop() -> path of the final file, or None"},
    {"flush", session_flush, METH_NOARGS, "flush() -> True when the snapshot was written"},
    {"is_active", session_is_active, METH_NOARGS, "is_active() -> bool"},
    {"file_path", session_file_path, METH_NOARGS, "file_path() -> str or None"},
    {"set_role", session_set_role, METH_O, "set_role(role): this process's role from now on"},
    {NULL, NULL, 0, NULL},
};
