/* A heavy backend's window (backend_window.c): what the session's file says of it. */
#ifndef LAPSE_SESSION_BACKEND_WINDOW_H
#define LAPSE_SESSION_BACKEND_WINDOW_H

#include "../store/model.h"

#pragma GCC visibility push(hidden)

/* Puts the window's record into m's window_* keys, for a write (called with the
 * session's write lock held: the strings stay valid until the next write). */
void session_window_fill(store_meta *m, uint64_t session_start_mono_ns);
/* Forgets it: a new session; a forked child (one thread: the lock as at the fork
 * is not taken, it is made anew). */
void session_window_reset(void);
void session_window_fork_child(void);

#pragma GCC visibility pop

#endif
