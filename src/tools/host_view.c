#include "host_view.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pid_alive(void *ctx, int64_t pid)
{
    (void)ctx;
    if (pid <= 0 || pid != (int64_t)(pid_t)pid)
        return -1;
    if (kill((pid_t)pid, 0) == 0)
        return 1;
    return errno == ESRCH ? 0 : -1; /* EPERM: alive, another user's */
}

void host_view_fill(host_view_here *h)
{
    memset(h, 0, sizeof *h);
    if (gethostname(h->host, sizeof h->host) == 0) {
        h->host[sizeof h->host - 1] = 0;
        h->view.names[0] = h->host;
    }
    const char *node = getenv("SLURMD_NODENAME");
    if (node && *node) {
        snprintf(h->node, sizeof h->node, "%s", node);
        h->view.names[1] = h->node;
    }
    h->view.pid_alive = pid_alive;
}
