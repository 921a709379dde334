/* The ranks of a run: which ranks ran on which host, the world size the files agree
 * on, the launchers named, and the ranks of the world that left no readable file. */
#ifndef LAPSE_ANALYZE_RUN_RANKS_H
#define LAPSE_ANALYZE_RUN_RANKS_H

#include "run_model.h"

#include <stdint.h>

/* The missing ranks listed at most (missing_count says how many there are). */
#define RUN_RANKS_MISSING_LISTED 256

typedef struct run_ranks_host {
    const char *host;
    int64_t *ranks; /* distinct, ascending */
    uint32_t count;
} run_ranks_host;

typedef struct run_ranks {
    uint32_t count;          /* distinct ranks of the run's processes; 0: none has one */
    int64_t world_size;      /* the largest any ranked process gives; -1 unknown */
    int world_differ;        /* the ranked processes give different world sizes */
    char launchers[128];     /* the launchers ranked processes name, distinct, ", " */
    run_ranks_host *hosts;   /* hosts that ran ranked processes, in host order */
    uint32_t host_count;
    int64_t missing[RUN_RANKS_MISSING_LISTED]; /* the first missing ranks, ascending */
    uint32_t missing_count;  /* ranks below world_size with no readable file (0 when the
                                world size is unknown or differs; at most UINT32_MAX) */
} run_ranks;

/* 0, or -ENOMEM. */
int run_ranks_build(const run_model *m, run_ranks *r);
void run_ranks_free(run_ranks *r);

#endif
