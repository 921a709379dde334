/* A heavy backend's window (the Python binding's backend_window=): the binding counts
 * the entries and runs the backend; the session keeps what happened, for its file's
 * META window_* keys (docs/format.md). */
#include "backend_window.h"

#include "../collect/io.h"
#include "../core/clock.h"
#include "session.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

typedef struct window_record {
    char backend[16], phase[256], trace[4096], error[512];
    uint64_t start, stop, entries, opened_entry, closed_entry;
    uint64_t open_mono_ns, close_mono_ns; /* 0: not yet */
} window_record;
static window_record W;
static window_record written; /* W as the write in progress took it: writes are one at
                                 a time (the session's write lock), notes may come meanwhile */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* A write (which fills the META keys) may run on a thread a signal interrupted while
 * it held mu: the handled signals are blocked while it is held. */
static void lock(sigset_t *saved)
{
    collect_block_handled_signals(saved);
    pthread_mutex_lock(&mu);
}

static void unlock(const sigset_t *saved)
{
    pthread_mutex_unlock(&mu);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

void session_window_reset(void)
{
    sigset_t saved;
    lock(&saved);
    memset(&W, 0, sizeof W);
    unlock(&saved);
}

void session_window_fork_child(void)
{
    memset(&W, 0, sizeof W);
    pthread_mutex_init(&mu, NULL);
}

void lapse_session_window_note(const session_window *w, int event)
{
    sigset_t saved;
    lock(&saved);
    snprintf(W.backend, sizeof W.backend, "%s", w->backend ? w->backend : "");
    snprintf(W.phase, sizeof W.phase, "%s", w->phase ? w->phase : "");
    snprintf(W.trace, sizeof W.trace, "%s", w->trace ? w->trace : "");
    snprintf(W.error, sizeof W.error, "%s", w->error ? w->error : "");
    W.start = w->start;
    W.stop = w->stop;
    W.entries = w->entries;
    W.opened_entry = w->opened_entry;
    W.closed_entry = w->closed_entry;
    if (event == SESSION_WINDOW_OPENED)
        W.open_mono_ns = core_mono_ns();
    if (event == SESSION_WINDOW_CLOSED && W.open_mono_ns)
        W.close_mono_ns = core_mono_ns();
    unlock(&saved);
}

void session_window_fill(store_meta *m, uint64_t start)
{
    sigset_t saved;
    lock(&saved);
    written = W;
    unlock(&saved);
    const window_record *w = &written;
    m->window_backend = (char *)w->backend;
    m->window_phase = (char *)w->phase;
    m->window_trace = (char *)w->trace;
    m->window_error = (char *)w->error;
    m->window_start = w->start;
    m->window_stop = w->stop;
    m->window_entries = w->entries;
    m->window_opened_entry = w->opened_entry;
    m->window_closed_entry = w->closed_entry;
    m->window_open_ns = w->open_mono_ns > start ? w->open_mono_ns - start : 0;
    m->window_close_ns = w->close_mono_ns > start ? w->close_mono_ns - start : 0;
}
