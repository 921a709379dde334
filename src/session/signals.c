/* SIGTERM, SIGINT, SIGUSR1 and SIGHUP write the file, then chain to whatever
 * handled the signal before: a handler function is called, SIG_IGN carries on,
 * SIG_DFL is restored and the signal raised again, so the process ends exactly
 * as it would have without lapse. A signal the process survives only asks lapse's
 * flusher for a write (session_write_from_signal) and chains at once: the program's
 * handler runs once per signal delivered, as without lapse. */
#include "session.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

static const int handled[] = {SIGTERM, SIGINT, SIGUSR1, SIGHUP};
#define HANDLED_COUNT (sizeof handled / sizeof handled[0])
static struct sigaction previous[HANDLED_COUNT];
static int installed[HANDLED_COUNT];

static int slot_of(int sig)
{
    for (unsigned i = 0; i < HANDLED_COUNT; i++)
        if (handled[i] == sig)
            return (int)i;
    return -1;
}

static const char *reason_of(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
    }
}

static void on_signal(int sig, siginfo_t *info, void *ucontext)
{
    int slot = slot_of(sig);
    if (slot < 0)
        return;
    struct sigaction *prev = &previous[slot];
    int terminates = !(prev->sa_flags & SA_SIGINFO) && prev->sa_handler == SIG_DFL;
    int saved_errno = errno; /* of the code the signal interrupted */
    session_write_from_signal(terminates, reason_of(sig));
    errno = saved_errno;
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction)
            prev->sa_sigaction(sig, info, ucontext);
    } else if (prev->sa_handler == SIG_DFL) {
        signal(sig, SIG_DFL);
        raise(sig); /* delivered when this handler returns */
    } else if (prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
    }
}

/* Whether the program had a handler function for the signal. */
static int is_handler(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ||
           (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

void signals_install(void)
{
    for (unsigned i = 0; i < HANDLED_COUNT; i++) {
        struct sigaction sa, prev;
        if (sigaction(handled[i], NULL, &prev) != 0) {
            installed[i] = 0;
            continue;
        }
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        if (is_handler(&prev)) {
            /* as the program's handler asked: whether an interrupted system call
             * restarts (Python's do not: its handlers run when the call returns
             * EINTR, a restarted read would hold them back until it returns), on
             * which stack, with which signals blocked */
            sa.sa_flags = SA_SIGINFO | (prev.sa_flags & (SA_RESTART | SA_ONSTACK));
            sa.sa_mask = prev.sa_mask;
        } else {
            /* default or ignored: the program knows of no handler, so nothing of
             * its may see EINTR */
            sa.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&sa.sa_mask);
        }
        installed[i] = sigaction(handled[i], &sa, &previous[i]) == 0;
    }
}

void signals_restore(void)
{
    for (unsigned i = 0; i < HANDLED_COUNT; i++) {
        if (!installed[i])
            continue;
        struct sigaction now;
        /* leave a handler installed on top of ours alone: ours chains to it */
        if (sigaction(handled[i], NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
            now.sa_sigaction == on_signal)
            sigaction(handled[i], &previous[i], NULL);
        installed[i] = 0;
    }
}
