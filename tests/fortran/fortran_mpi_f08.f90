!> Test program for mpirun: as fortran_mpi_ranks, through `use mpi_f08` (whose
!! MPI_Init_thread and MPI_Finalize liblapse_mpi takes the place of too).
!!
!! usage: mpirun -np N fortran_mpi_f08 STEPS
!! Each step: step > compute (counting cells += rank + 1). Prints "rank R of N".
program fortran_mpi_f08
   use mpi_f08
   use lapse
   use, intrinsic :: iso_fortran_env, only: int64
   implicit none
   integer :: rank, size, i, steps, provided
   character(len=32) :: arg

   call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
   call MPI_Comm_rank(MPI_COMM_WORLD, rank)
   call MPI_Comm_size(MPI_COMM_WORLD, size)
   call get_command_argument(1, arg)
   read (arg, *) steps
   do i = 1, steps
      call lapse_begin("step")
      call lapse_begin("compute")
      call lapse_count("cells", int(rank + 1, int64))
      call lapse_end("compute")
      call lapse_end("step")
   end do
   print '(a,i0,a,i0)', "rank ", rank, " of ", size
   call MPI_Finalize()
end program fortran_mpi_f08
