/* Test program for mpirun: each rank runs ITERATIONS steps of phases whose time
 * depends on its rank, some of them only in some ranks, and an MPI_Allreduce.
 * Linked twice (CMakeLists.txt): mpi_ranks with liblapse (a session from
 * LAPSE_PROFILE=1), mpi_ranks_packed with liblapse_mpi (a session from MPI_Init,
 * one pack at MPI_Finalize).
 *
 * usage: mpi_ranks [ITERATIONS [SLEEP_US]]
 * Each iteration: step > compute (sleep SLEEP_US x (1 + 3 rank): the ranks far apart
 * in time, even on a loaded machine), step > allreduce,
 * and step > checkpoint on rank 0 only, step > odd on odd ranks only.
 * Prints "rank R of N pid P sum S" (S: the allreduce's sum, size*(size-1)/2).
 * MPI_RANKS_INIT_THREAD=1 starts MPI with MPI_Init_thread (MPI_THREAD_MULTIPLE). */
#include "lapse.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 5;
    long sleep = argc > 2 ? atol(argv[2]) : 2000;
    const char *init_thread = getenv("MPI_RANKS_INIT_THREAD");
    if (init_thread && !strcmp(init_thread, "1")) {
        int provided;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return 2;
    } else if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        return 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sum = 0;
    for (int i = 0; i < iterations; i++) {
        LAPSE_SCOPE("step");
        {
            LAPSE_SCOPE("compute");
            sleep_us(sleep * (1 + 3 * rank));
        }
        if (rank == 0) {
            LAPSE_SCOPE("checkpoint");
            sleep_us(sleep);
        }
        if (rank % 2 == 1) {
            LAPSE_SCOPE("odd");
            sleep_us(sleep / 2);
        }
        {
            LAPSE_SCOPE("allreduce");
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    printf("rank %d of %d pid %ld sum %d\n", rank, size, (long)getpid(), sum);
    fflush(stdout);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 3;
}
