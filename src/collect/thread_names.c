/* Thread names read from /proc: a thread may rename itself at any time
 * (pthread_setname_np, prctl), which no hook sees. */
#include "thread_names.h"

#include "../core/core.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void collect_thread_names_refresh(void)
{
    core_threads_lock(); /* the writer copies names under it */
    for (core_thread *t = core_threads_first(); t; t = t->next) {
        if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) || t->name_fixed)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%lld/comm", (long long)t->tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        char buf[32];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == 0))
            n--;
        buf[n] = 0;
        memcpy(t->name, buf, (size_t)n + 1);
    }
    core_threads_unlock();
}
