/* SIGTERM, SIGINT, SIGUSR1 and SIGHUP write the file, then chain to whatever
 * handled the signal before: a handler function is called, SIG_IGN carries on,
 * SIG_DFL is restored and the signal raised again, so the process ends exactly
 * as it would have without lapse. */
#include "session.h"

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
    session_write_from_signal(terminates, reason_of(sig));
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

void signals_install(void)
{
    for (unsigned i = 0; i < HANDLED_COUNT; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
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
