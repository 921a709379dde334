/* Session control shared by the C API, the signal handlers and fork handling. */
#ifndef LAPSE_SESSION_SESSION_H
#define LAPSE_SESSION_SESSION_H

#include "lapse.h"

#include <stdint.h>

/* Writes the file now. final: this is the last write of the session; reason:
 * "" for a periodic snapshot, else "stop", "exit", "SIGTERM", ... */
int session_write(int final, const char *reason);

/* Records that the active session was started from the environment. */
void session_mark_from_environment(void);

/* As session_write, but returns -EBUSY at once if a write is in progress. */
int session_write_nowait(int final, const char *reason);

/* For liblapse_mpi: the rank and world size MPI gives (they replace what the
 * environment said), and the active session's run id ("" when none). */
void session_set_rank(int64_t rank, int64_t world_size);
const char *session_run_id(void);
/* The names of the environment variables a session exports to the processes it
 * starts (and restores when it stops), i from 0; NULL past the last. */
LAPSE_API const char *lapse_session_exported_env_name(unsigned i);
/* What the active session collects and keeps, for a binding that joins it (these
 * three: exported from liblapse for the Python extension, as below). */
typedef struct session_settings {
    const char *run_dir;          /* absolute */
    uint64_t max_spans;           /* 0: no timeline */
    uint32_t snapshot_ms;
    uint32_t cpu_sample_ms;       /* 0: no CPU sampler (wait%) */
    uint32_t process_sample_ms;   /* 0: no process sampler (I/O, RSS) */
    uint32_t features;            /* LAPSE_FEATURE_* in force (TIMELINE, CPU: running) */
    int thread_names, share;
    int inherited; /* started by the environment or continued by a fork, not adopted */
} session_settings;
/* 0, or -EINVAL without an active session. */
LAPSE_API int lapse_session_settings(session_settings *out);
/* Sets whether readers nest each thread's spans under its name (from the next write
 * on; the flag is read when the run is read), and exports it to children. */
LAPSE_API void lapse_session_set_thread_names(int on);
/* What the session's files are created with: STORE_SHARE when the run is shared
 * with the user's group (lapse_options.share, LAPSE_SHARE=1), else 0. */
unsigned session_store_flags(void);

/* Signal handlers (signals.c). */
void signals_install(void);
void signals_restore(void);
/* Writes for a signal handler: hands the write to the flusher thread when there
 * is one (and waits up to 3 s), else writes unless a write is in progress. */
int session_write_from_signal(int final, const char *reason);

/* Live export, for the Python extension: exported from liblapse (LAPSE_API, the
 * lapse_ prefix, not in lapse.h), which the extension links so that one copy of
 * the session serves Python and the C libraries a Python program loads.
 * Waits up to timeout_ms for a periodic snapshot after after_seq
 * (the count of periodic snapshots written); *seq gets the count now. Returns 1
 * when one was written, 0 on timeout, at the end of the session, or when woken. */
LAPSE_API int lapse_session_wait_snapshot(uint64_t after_seq, uint32_t timeout_ms, uint64_t *seq);
LAPSE_API void lapse_session_wake_snapshot_waiters(void);
/* For the Python extension (annotate=True): one more span hook for the sessions
 * started from now on, after the collectors' (core.h, core_span_hook: begin returns
 * the value end is given; called on the span's thread). NULL, NULL: none. */
LAPSE_API void lapse_session_set_span_hook(uint64_t (*begin)(uint32_t name),
                                           void (*end)(uint64_t value));
/* For the Python extension (backend_window=): what a heavy backend's window did, for
 * the META window_* keys of the session's files from now on (docs/format.md). event:
 * SESSION_WINDOW_OPENED stamps its opening now, SESSION_WINDOW_CLOSED its closing
 * (after an opening), 0 neither. The strings are copied; NULL reads as "". */
typedef struct session_window {
    const char *backend, *phase, *trace, *error;
    uint64_t start, stop, entries, opened_entry, closed_entry;
} session_window;
enum { SESSION_WINDOW_OPENED = 1, SESSION_WINDOW_CLOSED = 2 };
LAPSE_API void lapse_session_window_note(const session_window *w, int event);
/* For torch.profiler recording CUDA (Kineto needs the process's one CUPTI subscription): the
 * ACTIVITY collector, when it collects, flushes its records, disables and
 * unsubscribes (1), else does nothing (0); resume subscribes again (0, or -1 when
 * CUPTI refused: the collector's note says why, what it had is kept). */
LAPSE_API int lapse_session_activity_yield(void);
LAPSE_API int lapse_session_activity_resume(void);
/* Takes a snapshot of the active session (as a write does, between writes) and
 * hands it to fn. 0, -EINVAL without a session, or -ENOMEM. */
#include "../store/model.h"
LAPSE_API int lapse_session_with_snapshot(void (*fn)(const store_file *f, void *arg), void *arg);

#endif
