/* Reading a live CPython (3.11, 3.12, 3.13) from outside, for the external sampler.
 *
 * pyread_open finds the interpreter's _PyRuntime and version in the target's
 * executable or libpython, and its structure layout (tables for 3.11/3.12, the
 * _Py_DebugOffsets block for 3.13). pyread_sample then reads every interpreter's
 * threads and their Python frames with process_vm_readv only: the target keeps
 * running, so what it reads can be torn; each sample validates back-pointers, frame
 * owners, code object types and a depth cap, and counts what it had to drop.
 * Code objects and their strings are cached by address. */
#ifndef LAPSE_PYREAD_PYREAD_H
#define LAPSE_PYREAD_PYREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pyread_error {
    PYREAD_OK = 0,
    PYREAD_GONE = 1,            /* no such process (or it exited) */
    PYREAD_NOT_PYTHON = 2,      /* no CPython runtime found in the process */
    PYREAD_UNKNOWN_VERSION = 3, /* a CPython this lapse cannot read */
    PYREAD_PERMISSION = 4,      /* process_vm_readv not permitted */
    PYREAD_READ = 5,            /* the runtime could not be read consistently */
    PYREAD_NO_MEMORY = 6,
};

#define PYREAD_MAX_DEPTH 512   /* frames kept per thread; deeper stacks are cut (truncated) */
#define PYREAD_MAX_THREADS 256 /* threads read per sample, over all interpreters */

typedef struct pyread_target pyread_target;

/* What a code object is: strings owned by the target's cache (valid until close). */
typedef struct pyread_code {
    const char *qualname;
    const char *filename;
    int firstlineno;
    uint32_t generation; /* changes when the address was found to hold another code object */
} pyread_code;

typedef struct pyread_frame {
    const pyread_code *code;
    int line; /* -1 when the line table has no line for the instruction */
} pyread_frame;

typedef struct pyread_thread {
    uint64_t tstate;      /* address of its PyThreadState */
    uint64_t thread_id;   /* threading.get_ident() */
    int64_t native_id;    /* the OS thread id (threading.get_native_id()) */
    int64_t interp_id;
    int holds_gil;
    char os_state;        /* from /proc/PID/task/TID/stat: 'R' running, 'S' sleeping, ... ; 0 unknown
                             (or not read: PYREAD_WANT_WAITING and the thread holds the GIL) */
    int cpu_known;        /* cpu_delta_ns is known (PYREAD_WANT_CPU_TIME, not the first sight) */
    uint64_t cpu_delta_ns; /* CPU time the thread used since the previous sample (schedstat) */
    char name[64];        /* Python's name (threading.Thread.name) where known, else the OS name */
    char os_name[32];     /* the OS thread name (/proc/PID/task/TID/comm) */
    int depth;            /* frames, innermost first, at frames[0 .. depth) */
    int truncated;        /* the stack was deeper than PYREAD_MAX_DEPTH (or looped) */
    int torn;             /* a frame could not be read consistently (the stack is cut there),
                             or a code object changed under the read: record leaves it out */
    pyread_frame *frames;
} pyread_thread;

typedef struct pyread_sample {
    int thread_count;
    pyread_thread threads[PYREAD_MAX_THREADS];
    pyread_frame frame_pool[PYREAD_MAX_THREADS * 128];
    int frame_pool_used;
    uint64_t gil_holder;  /* tstate address holding the GIL, 0 when none or unknown */
    int read_errors;      /* reads that failed or were found torn in this sample */
} pyread_sample;

enum pyread_sample_flags {
    PYREAD_WANT_OS_STATE = 1u << 0, /* read each thread's /proc state */
    PYREAD_WANT_NAMES = 1u << 1,    /* fill thread names (OS names, and Python's where found) */
    PYREAD_WANT_CPU_TIME = 1u << 2, /* each thread's CPU time since the previous sample
                                       (/proc/PID/task/TID/schedstat: cheaper than stat) */
    PYREAD_WANT_WAITING = 1u << 3,  /* the /proc state of each thread that does not hold the
                                       GIL (one that holds it runs Python): whether it is
                                       running now or waits (sleep, lock, I/O) */
};

/* The text of /proc/PID/WHAT (e.g. "comm", "cmdline", "stat") in out, trailing spaces
 * and newlines cut, NUL bytes made spaces when nul_to_space; "" when unreadable. */
void pyread_proc_text(pid_t pid, const char *what, char *out, size_t len, int nul_to_space);

/* Attach: 0 and *out, or a PYREAD_* code with one line (what to do) in msg. */
int pyread_open(pid_t pid, pyread_target **out, char *msg, size_t msglen);
/* A target whose runtime, layout and type addresses are known already, nothing
 * looked up (the frame walker's fuzz driver builds such a process in its own
 * memory); code_counter: 3.12's count of code objects made, or 0. */
struct py_layout;
int pyread_open_layout(pid_t pid, const struct py_layout *layout, uint64_t runtime, uint64_t code_type,
                       uint64_t code_counter, pyread_target **out, char *msg, size_t msglen);
void pyread_close(pyread_target *t);

/* "3.12.1" */
const char *pyread_version(const pyread_target *t);
pid_t pyread_pid(const pyread_target *t);

/* Read every thread's stack now. Returns 0 (the sample may still count read
 * errors), PYREAD_GONE when the process has exited, or PYREAD_READ when the
 * runtime's thread list could not be read at all. */
int pyread_sample_now(pyread_target *t, pyread_sample *s, unsigned flags);

/* The CPU the target's thread tid last ran on (its /proc stat), -1 when unknown; its
 * state letter in *state ('R' running or runnable; 0 unknown) when state is not NULL. */
int pyread_thread_cpu(pyread_target *t, int64_t tid, char *state);

/* Counters since open: process_vm_readv calls and bytes read. */
void pyread_io_counters(const pyread_target *t, uint64_t *syscalls, uint64_t *bytes);

/* The message for errno values of process_vm_readv / opening /proc (EPERM...). */
const char *pyread_error_name(int code);

#endif
