/* Rank, world size, local rank, host and run id from the launcher's environment. */
#include "launcher.h"

#include "../core/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int64_t env_int(const char *name)
{
    const char *v = env(name);
    if (!v)
        return -1;
    char *end;
    long long x = strtoll(v, &end, 10);
    return *end == 0 && x >= 0 ? (int64_t)x : -1;
}

void launcher_sanitize(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            *s = '_';
}

/* FNV-1a over the first len bytes of s. */
static uint64_t hash_of(const char *s, size_t len)
{
    return hash_bytes(HASH_SEED, s, len);
}

/* The launchers whose rank lapse reads, innermost first: a launcher started inside
 * another (mpirun or torchrun inside a SLURM allocation) sets its own variables
 * beside the outer one's, and its ranks are the ones of this process. */
typedef struct rank_source {
    const char *launcher;
    const char *needs; /* a variable that must be set too, or NULL */
    const char *rank, *size, *local;
} rank_source;

static const rank_source rank_sources[] = {
    {"openmpi", NULL, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"torchrun", "TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"pmi", NULL, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"slurm", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"pmix", NULL, "PMIX_RANK", NULL, NULL},
    {"env", NULL, "RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

/* out = prefix + "-" + value (sanitized); a value too long for a run id is replaced
 * by a hash of it. */
static void id_from(char *out, size_t n, const char *prefix, const char *value, size_t value_len)
{
    size_t room = n - strlen(prefix) - 2;
    if (value_len <= room - 10) {
        snprintf(out, n, "%s-%.*s", prefix, (int)value_len, value);
    } else {
        snprintf(out, n, "%s-%016llx", prefix, (unsigned long long)hash_of(value, value_len));
    }
    launcher_sanitize(out);
}

static void derive_run_id(launcher_info *o)
{
    char *out = o->run_id;
    size_t n = sizeof o->run_id;
    const char *v;
    out[0] = 0;
    if (!strcmp(o->launcher, "openmpi")) {
        /* Open MPI 4: the job id; its upper 16 bits hash mpirun's host and pid, so
         * two launches can share it: the URI of mpirun (its random port) tells
         * them apart, and is the same for every rank on every node */
        if ((v = env("OMPI_MCA_ess_base_jobid"))) {
            const char *uri = env("OMPI_MCA_orte_hnp_uri");
            char id[48];
            if (uri)
                snprintf(id, sizeof id, "%.20s-%08x", v, (unsigned)hash_of(uri, strlen(uri)));
            else
                snprintf(id, sizeof id, "%.20s", v);
            id_from(out, n, "openmpi", id, strlen(id));
            return;
        }
        if ((v = env("PMIX_NAMESPACE"))) { /* Open MPI 5: "prterun-HOST-PID@1" */
            id_from(out, n, "openmpi", v, strlen(v));
            return;
        }
    }
    if ((v = env("TORCHELASTIC_RUN_ID"))) {
        char id[64];
        size_t len = strlen(v);
        if (!strcmp(v, "none")) {
            /* the default rendezvous id: the agent's error-file directory
             * (".../torchelastic_XXXX/none_YYYY/attempt_N/LOCAL_RANK/error.json") is
             * the same for the workers of one agent and new for each launch */
            const char *ef = env("TORCHELASTIC_ERROR_FILE");
            const char *cut = ef ? strstr(ef, "/attempt_") : NULL;
            if (cut) {
                snprintf(id, sizeof id, "none-%08x", (unsigned)hash_of(ef, (size_t)(cut - ef)));
                v = id;
                len = strlen(id);
            }
        }
        id_from(out, n, "torchrun", v, len);
        int64_t restart = env_int("TORCHELASTIC_RESTART_COUNT");
        if (restart > 0) {
            /* a restarted worker group is a new attempt of the run */
            size_t used = strlen(out);
            if (used + 24 >= n)
                out[n - 24] = 0;
            snprintf(out + strlen(out), n - strlen(out), "-restart%lld", (long long)restart);
        }
        return;
    }
    if ((v = env("PMIX_NAMESPACE"))) {
        id_from(out, n, "pmix", v, strlen(v));
        return;
    }
    const char *job = env("SLURM_JOB_ID"), *step = env("SLURM_STEP_ID");
    if (job && step) {
        char id[64];
        snprintf(id, sizeof id, "%.30s.%.30s", job, step);
        id_from(out, n, "slurm", id, strlen(id));
    }
}

void launcher_read(launcher_info *o)
{
    memset(o, 0, sizeof *o);
    o->launcher = "";
    o->rank = o->world_size = o->local_rank = -1;
    for (size_t i = 0; i < sizeof rank_sources / sizeof rank_sources[0]; i++) {
        const rank_source *s = &rank_sources[i];
        if (s->needs && !env(s->needs))
            continue;
        int64_t rank = env_int(s->rank);
        if (rank < 0)
            continue;
        o->launcher = s->launcher;
        o->rank = rank;
        o->world_size = s->size ? env_int(s->size) : -1;
        if (o->world_size < 0 && !strcmp(s->launcher, "slurm"))
            o->world_size = env_int("SLURM_NPROCS");
        o->local_rank = s->local ? env_int(s->local) : -1;
        break;
    }
    derive_run_id(o);

    const char *node = env("SLURMD_NODENAME");
    if (node)
        snprintf(o->host, sizeof o->host, "%s", node);
    else if (gethostname(o->host, sizeof o->host) != 0)
        snprintf(o->host, sizeof o->host, "unknown-host");
    o->host[sizeof o->host - 1] = 0;
    const char *job = env("SLURM_JOB_ID");
    if (!job)
        job = env("PBS_JOBID");
    if (!job)
        job = env("LSB_JOBID");
    snprintf(o->job_id, sizeof o->job_id, "%s", job ? job : "");
}
