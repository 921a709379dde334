/* liblapse_mpi for Fortran programs: MPI's Fortran bindings (Open MPI's mpif.h and
 * `use mpi` ones, and `use mpi_f08`'s) start and end MPI through PMPI_* directly,
 * past the C wrappers of lapse_mpi.c. These entry points take their place (a
 * program links -llapse_mpi before the MPI libraries, as mpif90 orders them) and do
 * what the Fortran bindings do, through the C MPI_Init, MPI_Init_thread and
 * MPI_Finalize that liblapse_mpi wraps: a Fortran rank profiles itself from MPI_Init
 * and is packed at MPI_Finalize like a C rank. Names as gfortran mangles them. */
#include <mpi.h>
#include <stddef.h>

#define LAPSE_MPI_API __attribute__((visibility("default")))

static void set(MPI_Fint *ierr, int rc)
{
    if (ierr) /* mpi_f08's ierror is optional: absent, it is NULL */
        *ierr = (MPI_Fint)rc;
}

LAPSE_MPI_API void mpi_init_(MPI_Fint *ierr);
LAPSE_MPI_API void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
LAPSE_MPI_API void mpi_finalize_(MPI_Fint *ierr);
LAPSE_MPI_API void mpi_init_f08_(MPI_Fint *ierr);
LAPSE_MPI_API void mpi_init_thread_f08_(const MPI_Fint *required, MPI_Fint *provided,
                                        MPI_Fint *ierr);
LAPSE_MPI_API void mpi_finalize_f08_(MPI_Fint *ierr);

void mpi_init_(MPI_Fint *ierr)
{
    set(ierr, MPI_Init(NULL, NULL));
}

void mpi_init_thread_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int got = 0;
    set(ierr, MPI_Init_thread(NULL, NULL, (int)*required, &got));
    *provided = (MPI_Fint)got;
}

void mpi_finalize_(MPI_Fint *ierr)
{
    set(ierr, MPI_Finalize());
}

void mpi_init_f08_(MPI_Fint *ierr)
{
    mpi_init_(ierr);
}

void mpi_init_thread_f08_(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    mpi_init_thread_(required, provided, ierr);
}

void mpi_finalize_f08_(MPI_Fint *ierr)
{
    mpi_finalize_(ierr);
}
