/* Which attempts of a directory of runs are the run a report shows. Processes
 * started separately into one run directory each make an attempt (a run id of their
 * own); those that ran at the same time are one run. The run is the attempt that
 * started last and every attempt that had not ended when it began; an attempt is
 * superseded only when it ended before that one began. */
#ifndef LAPSE_ANALYZE_RUN_JOIN_H
#define LAPSE_ANALYZE_RUN_JOIN_H

#include "store/run_dir.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rj_attempt {
    uint64_t start_real_ns; /* earliest session start of its processes (their meta); its
                               newest modification when no file of it could be read */
    uint64_t end_real_ns;   /* by when it had ended: the latest, over its processes, of a
                               final write, or of a last snapshot plus 2 x its interval
                               + 1 s (a process that still ran would have written again) */
    int joined;             /* part of the run; else superseded */
} rj_attempt;

typedef struct run_join {
    rj_attempt *attempts; /* in step with the listing's */
    size_t joined;        /* how many are joined (at least 1) */
    size_t last;          /* the attempt that started last */
    /* The joined attempts as one attempt: their files and skipped entries (the arrays
     * are run_join's, the strings the listing's), dir the one attempt's or, when
     * several are joined, the path listed. */
    store_attempt run;
} run_join;

/* Reads the meta of every file of every attempt of l (STORE_READ_META_ONLY) and
 * decides. path is what was listed. 0 or -ENOMEM. */
int run_join_build(const store_run_listing *l, const char *path, run_join *j);
void run_join_free(run_join *j);

#endif
