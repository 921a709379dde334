/* liblapse_mpi: liblapse plus PMPI wrappers of MPI_Init, MPI_Init_thread and
 * MPI_Finalize. Link a program with it instead of liblapse (-llapse_mpi, before the
 * MPI library; or LD_PRELOAD it into an MPI program that does not link liblapse).
 *
 * At MPI_Init: unless a session is active already (LAPSE_PROFILE=1), every rank
 * starts one, in one run: rank 0 starts first and broadcasts its run id. The rank
 * and world size are MPI's (MPI_COMM_WORLD).
 * At MPI_Finalize (collective, like MPI_Finalize itself): every rank ends its
 * session, which writes its final file as always; rank 0 gathers every rank's file
 * (MPI_Gather of the sizes, MPI_Gatherv of the bytes) and writes them as one pack,
 * <run_dir>/<run_id>/<host of rank 0>/mpi-ranks-<pid>.lapse (docs/format.md,
 * "Packs"). Once the pack is in place, each rank removes its own file, whose bytes
 * the pack holds. If the gather cannot be done (a file too large for MPI's int
 * counts, no memory, a write that fails), every rank keeps its own file and rank 0
 * says why on stderr: the run is complete either way.
 *
 * LAPSE_MPI=0 starts no session at MPI_Init; LAPSE_MPI_GATHER=0 keeps the files of
 * the ranks apart (no pack). */
#include "lapse.h"

#include "session/session.h"
#include "store/bytes.h"
#include "store/file_io.h"
#include "store/pack.h"

#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAPSE_MPI_API __attribute__((visibility("default")))

static int gather_at_finalize;

static int env_is_zero(const char *name)
{
    const char *v = getenv(name);
    return v && !strcmp(v, "0");
}

/* Starts the session of every rank in one run (collective). */
static void start_sessions(int rank)
{
    const char *given = getenv("LAPSE_RUN_ID");
    if (given && *given) {
        lapse_start(NULL);
        return;
    }
    char id[64] = "";
    if (rank == 0 && lapse_start(NULL) == 0)
        snprintf(id, sizeof id, "%s", session_run_id());
    PMPI_Bcast(id, (int)sizeof id, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0)
        return;
    if (id[0]) {
        setenv("LAPSE_RUN_ID", id, 1); /* as a parent session exports it */
        lapse_start(NULL);
    } else {
        lapse_start(NULL); /* rank 0 could not start: each rank on its own */
    }
}

static void after_init(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!lapse_is_active() && !env_is_zero("LAPSE_MPI"))
        start_sessions(rank);
    if (lapse_is_active()) {
        session_set_rank(rank, size);
        gather_at_finalize = !env_is_zero("LAPSE_MPI_GATHER");
    }
}

LAPSE_MPI_API int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

LAPSE_MPI_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

/* Rank 0: the pack of the gathered images next to its own file. 0 or -errno. */
static int write_pack(const char *own, const uint8_t *all, const int *lens, const int *displs,
                      int size, char *err, size_t errlen)
{
    const uint8_t **images = malloc((size_t)size * sizeof *images);
    size_t *sizes = malloc((size_t)size * sizeof *sizes);
    bytes_out out = {0};
    int rc = -ENOMEM;
    snprintf(err, errlen, "out of memory");
    if (images && sizes) {
        uint32_t n = 0;
        for (int i = 0; i < size; i++)
            if (lens[i] > 0) {
                images[n] = all + displs[i];
                sizes[n++] = (size_t)lens[i];
            }
        rc = store_pack_encode(images, sizes, n, &out);
    }
    if (rc == 0) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", own);
        char *slash = strrchr(path, '/');
        size_t dir_len = slash ? (size_t)(slash - path) : 0;
        if (snprintf(path + dir_len, sizeof path - dir_len, "%smpi-ranks-%ld.lapse", slash ? "/" : "",
                     (long)getpid()) >= (int)(sizeof path - dir_len)) {
            snprintf(err, errlen, "path too long");
            rc = -ENAMETOOLONG;
        } else {
            rc = store_write_atomic(path, out.data, out.len, session_store_flags(), err, errlen);
        }
    }
    bytes_out_free(&out);
    free(images);
    free(sizes);
    return rc;
}

/* Collective: every rank's final file into one pack at rank 0. */
static void gather_files(void)
{
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    char own[PATH_MAX];
    snprintf(own, sizeof own, "%s", lapse_file_path());
    lapse_stop(); /* the final file, written as always */

    uint8_t *image = NULL;
    size_t len = 0;
    char err[512] = "";
    if (store_read_bytes(own, &image, &len, err, sizeof err) != 0 || len > INT_MAX)
        len = 0; /* this rank's file stays where it is */
    int mine = (int)len;
    int *lens = NULL, *displs = NULL;
    uint8_t *all = NULL;
    int ok = 1;
    if (rank == 0) {
        lens = calloc((size_t)size, sizeof *lens);
        displs = calloc((size_t)size, sizeof *displs);
        ok = lens && displs;
    }
    PMPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0 && ok) {
        long long total = 0;
        for (int i = 0; i < size; i++) {
            displs[i] = (int)total;
            total += lens[i];
            if (total > INT_MAX)
                ok = 0;
        }
        if (!ok)
            snprintf(err, sizeof err, "the ranks' files hold more than %d bytes", INT_MAX);
        else if (!(all = malloc(total ? (size_t)total : 1u)))
            ok = 0;
        if (!ok && !err[0])
            snprintf(err, sizeof err, "out of memory");
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int written = 0;
    if (ok) {
        PMPI_Gatherv(image, mine, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0)
            written = write_pack(own, all, lens, displs, size, err, sizeof err) == 0;
    }
    PMPI_Bcast(&written, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (written && mine > 0)
        unlink(own); /* the pack holds it */
    if (rank == 0 && !written)
        fprintf(stderr, "lapse: warning: could not gather the ranks' files into one (%s); each "
                        "rank's own file is kept\n", err);
    free(image);
    free(lens);
    free(displs);
    free(all);
}

LAPSE_MPI_API int MPI_Finalize(void)
{
    if (gather_at_finalize && lapse_is_active())
        gather_files();
    gather_at_finalize = 0;
    return PMPI_Finalize();
}
