!> Test program for mpirun: the Fortran module under liblapse_mpi, whose session
!! starts at MPI_Init (called from Fortran) and whose ranks are packed at MPI_Finalize.
!!
!! usage: mpirun -np N fortran_mpi_ranks STEPS
!! Each step: step > compute (counting cells += rank + 1), step > allreduce (an
!! MPI_Allreduce of the rank), and step > root on rank 0 only. Prints
!! "rank R of N sum S" (S = N (N - 1) / 2).
program fortran_mpi_ranks
   use mpi
   use lapse
   use, intrinsic :: iso_fortran_env, only: int64
   implicit none
   integer :: ierr, rank, size, i, steps, total
   character(len=32) :: arg

   call MPI_Init(ierr)
   call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
   call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
   call get_command_argument(1, arg)
   read (arg, *) steps
   do i = 1, steps
      call lapse_begin("step")
      call lapse_begin("compute")
      call lapse_count("cells", int(rank + 1, int64))
      call lapse_end("compute")
      call lapse_begin("allreduce")
      call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      call lapse_end("allreduce")
      if (rank == 0) then
         call lapse_begin("root")
         call lapse_end("root")
      end if
      call lapse_end("step")
   end do
   print '(a,i0,a,i0,a,i0)', "rank ", rank, " of ", size, " sum ", total
   call MPI_Finalize(ierr)
end program fortran_mpi_ranks
