/* Session control shared by the C API, the signal handlers and fork handling. */
#ifndef LAPSE_SESSION_SESSION_H
#define LAPSE_SESSION_SESSION_H

/* Writes the file now. final: this is the last write of the session; reason:
 * "" for a periodic snapshot, else "stop", "exit", "SIGTERM", ... */
int session_write(int final, const char *reason);

/* Signal handlers (signals.c). */
void signals_install(void);
void signals_restore(void);
/* The flusher thread, if running and not the caller, writes for a signal handler;
 * returns 0 when it did within the timeout, -1 when the caller must write itself. */
int session_write_from_signal(int final, const char *reason);

#endif
