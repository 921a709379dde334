/* The pieces of the lapse._lapse extension module, one file each. */
#ifndef LAPSE_PY_EXT_H
#define LAPSE_PY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* span.c: the span annotation and counters */
int ext_span_init(PyObject *module);
extern PyMethodDef ext_span_methods[];
int ext_causal_init(void);
extern PyMethodDef ext_causal_methods[];

/* session.c: start, stop and flush of the process's session */
extern PyMethodDef ext_session_methods[];

/* live.c: live export (per-interval stats) */
extern PyMethodDef ext_live_methods[];

/* read.c: reports, diffs and exports of .lapse files, rendered by the C code */
extern PyMethodDef ext_read_methods[];

/* plain_functions.c: decorated plain functions stay plain; while a session is
 * active their timed code (3.11) or their vectorcall (3.12+) times them */
int ext_plain_functions_init(void);
int ext_plain_functions_enable(void);
int ext_plain_functions_disable(void);
PyObject *ext_plain_functions_register(PyObject *name, PyObject *fn, uint32_t id, uint32_t tag);

/* code_timed.c: a copy of a plain function's code that begins its span (-marks)
 * after its RESUME and ends it (marks ^ token) on every way out, loading the marks
 * with LOAD_GLOBAL marks_name; its last two constants are marks and code. Raises
 * ValueError when it cannot be made. */
PyObject *ext_code_timed(PyObject *code, PyObject *marks, PyObject *marks_name);
/* Reads, at import, what it needs of the `opcode` module (no Python runs later). */
int ext_code_timed_init(void);
extern PyMethodDef ext_plain_functions_methods[];

/* line_monitor.c: the line profiler's engine (lapse.LineProfiler) */
int ext_line_monitor_init(void);
extern PyMethodDef ext_line_monitor_methods[];
/* line_stats.c: the line profiler's figures and outputs, made by analyze and render */
extern PyMethodDef ext_line_stats_methods[];

/* tags.c: span tags; an opt-in tag's spans are dormant unless the run enables it */
#define EXT_TAGS_MAX 256
extern unsigned char ext_tag_dormant[EXT_TAGS_MAX];
static inline int ext_tag_on(uint32_t tag) { return !ext_tag_dormant[tag]; }
/* The id of a tag (None or NULL: 0, no tag), assigned on first use. */
int ext_tag_id(PyObject *tag, uint32_t *id);
PyObject *ext_tag_name(uint32_t id);
int ext_tags_init(void);
extern PyMethodDef ext_tags_methods[];
/* plain_functions.c: a registered function of a dormant tag is not timed; called
 * when the dormant tags change */
int ext_plain_functions_retag(void);

/* gpu_memory.c: VRAM peaks from torch, for the session's file */
extern PyMethodDef ext_gpu_memory_methods[];

/* pause.c: Profiler.pause() and resume() */
extern PyMethodDef ext_pause_methods[];

/* auto_spans.c: Profiler(auto=...) on 3.12+ (sys.monitoring on chosen code objects) */
int ext_auto_spans_init(void);
extern PyMethodDef ext_auto_spans_methods[];

/* The key of the span stack the calling code uses: the context it runs in (an
 * asyncio task's own, else the thread's). A thread's context is created on first
 * use, also by any ContextVar.set in user code; creating it here first keeps the
 * key of a thread the same for the whole life of its spans. */
const void *ext_context_key_slow(void);
/* The context a span last began or ended in on this thread; when the code now runs
 * in another one (another task), ext_context_changed lets a new task take the open
 * spans of the task that created it (found through a ContextVar, which copies of a
 * context inherit). */
/* initial-exec: read without a call to __tls_get_addr (the extension is dlopened, but
 * glibc keeps static TLS room for a few such variables) */
extern __thread const void *ext_last_key __attribute__((tls_model("initial-exec")));
/* Bumped by each session start: a thread names itself once per session. */
extern unsigned ext_session_serial;
void ext_context_changed(const void *key);
static inline const void *ext_context_key(void)
{
    PyThreadState *ts = PyThreadState_Get();
    const void *key = __builtin_expect(ts->context != NULL, 1) ? ts->context
                                                                : ext_context_key_slow();
    if (__builtin_expect(key != ext_last_key, 0))
        ext_context_changed(key);
    return key;
}

/* The name id of a str, interned once per distinct string (cached in a dict). */
int ext_name_id(PyObject *name, uint32_t *id);
/* annotate.c: a span name's id, for the record_function of annotate=True; the
 * record_function factory of the next session (None: none); its methods. */
int ext_annotate_name(uint32_t id, PyObject *name);
int ext_annotate_set(PyObject *record_function);
int ext_annotate_on(void);
uint64_t ext_annotate_begin(uint32_t id);
void ext_annotate_end(uint64_t value);
extern PyMethodDef ext_annotate_methods[];
/* window.c: a heavy backend's window (backend_window=) for the next session: the
 * start()'s window= argument (None: none; -1 with an exception when it is not
 * one); after the session started, its first record in the file; the entries it
 * counts (a span hook's begin); its methods. */
int ext_window_set(PyObject *window);
void ext_window_started(void);
int ext_window_on(void);
void ext_window_begin(uint32_t id);
extern PyMethodDef ext_window_methods[];
extern PyMethodDef ext_activity_yield_methods[];
/* span_hook.c: the session's one span hook of the extension, for annotate=True and
 * the window together: set for the next session when one of them is on. */
void ext_span_hook_update(void);

#if PY_VERSION_HEX >= 0x030C0000
/* A sys.monitoring tool of the extension's own (monitor_tool.c). */
typedef struct ext_monitor_tool {
    const char *name, *who; /* its name for use_tool_id; who says it in an error */
    int first_id, last_id;  /* the ids it may take, the first free one */
    int id;                 /* -1: none held */
    PyMethodDef *defs;      /* its callbacks (METH_FASTCALL C functions) */
    const char *const *callback_events; /* callback i is defs[callback_def[i]] for that event */
    const int *callback_def;
    size_t callback_count;
} ext_monitor_tool;
/* Takes the first free id of the tool and registers its callbacks; 0, or -1 with an
 * exception (RuntimeError when every id is in use). */
int ext_monitor_acquire(ext_monitor_tool *t);
/* sys.monitoring.events.NAME, or -1 with an exception. After an acquire. */
long ext_monitor_event(const char *name);
int ext_monitor_set_local(const ext_monitor_tool *t, PyObject *code, long events);
int ext_monitor_set_events(const ext_monitor_tool *t, long events);
/* Its global events off, its callbacks unregistered, its id freed; 0 or -1. */
int ext_monitor_release(ext_monitor_tool *t);
#endif

#endif
