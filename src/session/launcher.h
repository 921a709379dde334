/* Where a process stands in a parallel job, read from what its launcher put in the
 * environment: Open MPI's mpirun, torchrun, SLURM's srun, PMIx or PMI launchers.
 * docs/format.md ("Run ids and ranks") says which variables, in which order. */
#ifndef LAPSE_SESSION_LAUNCHER_H
#define LAPSE_SESSION_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>

typedef struct launcher_info {
    const char *launcher; /* "openmpi", "torchrun", "pmi", "slurm", "pmix", "env", or "" */
    int64_t rank, world_size, local_rank; /* -1 when unknown */
    char run_id[64];   /* the launch's identity as a run id; "" when none is known */
    char host[256];    /* SLURMD_NODENAME, else the host name */
    char job_id[128];  /* the scheduler's job: SLURM_JOB_ID, PBS_JOBID, LSB_JOBID; "" */
} launcher_info;

/* Fills *out from the environment (getenv) and gethostname. */
void launcher_read(launcher_info *out);

/* Replaces every character not in [A-Za-z0-9._-] by '_'. */
void launcher_sanitize(char *s);

#endif
