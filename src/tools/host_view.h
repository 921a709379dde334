/* The view of the reader's own host that the CLI and the Python reader give the
 * analysis (rm_options.host): its names (gethostname, and SLURMD_NODENAME, what a
 * writer on a SLURM node names its host) and kill(pid, 0) for "is this pid alive". */
#ifndef LAPSE_TOOLS_HOST_VIEW_H
#define LAPSE_TOOLS_HOST_VIEW_H

#include "analyze/run_model.h"

typedef struct host_view_here {
    char host[256];
    char node[256];
    rm_host_view view;
} host_view_here;

/* Fills h with this host's view; h->view is what rm_options.host points to. */
void host_view_fill(host_view_here *h);

#endif
