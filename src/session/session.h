/* Session control shared by the C API, the signal handlers and fork handling. */
#ifndef LAPSE_SESSION_SESSION_H
#define LAPSE_SESSION_SESSION_H

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

/* Signal handlers (signals.c). */
void signals_install(void);
void signals_restore(void);
/* Writes for a signal handler: hands the write to the flusher thread when there
 * is one (and waits up to 3 s), else writes unless a write is in progress. */
int session_write_from_signal(int final, const char *reason);

#endif
