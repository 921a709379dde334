!> Test program for the Fortran module: a session started and stopped from Fortran,
!! spans nested as called, counters by name and by id.
!!
!! usage: fortran_spans STEPS   (run directory: $LAPSE_RUN_DIR)
!! Each step: step > solve (x3, each counting cells += 100, spinning 50 us),
!! step > io (counting bytes += 4096). A span opened before the session starts, and
!! after it stops, is not recorded. Prints "fortran_spans: STEPS steps" and exits
!! 0; 3 when the module's options record differs from C's, 4 when a call's stat is
!! wrong.
program fortran_spans
   use lapse
   use, intrinsic :: iso_c_binding, only: c_size_t
   use, intrinsic :: iso_fortran_env, only: int32, int64, error_unit
   implicit none
   interface
      function c_options_bytes() bind(c, name="lapse_test_c_options_bytes") result(n)
         import :: c_size_t
         integer(c_size_t) :: n
      end function c_options_bytes
   end interface
   integer :: i, k, rc, steps
   integer(int32) :: solve
   character(len=32) :: arg

   if (int(c_options_bytes()) /= lapse_options_bytes()) then
      write (error_unit, '(a,i0,a,i0)') "lapse_options: C ", c_options_bytes(), &
         " bytes, the module ", lapse_options_bytes()
      stop 3
   end if
   call get_command_argument(1, arg)
   read (arg, *) steps

   call lapse_begin("dormant")     ! no session yet: nothing recorded
   call lapse_end("dormant")
   if (lapse_is_active()) stop 4

   call lapse_start(role="fortran", stat=rc)
   if (rc /= 0) then
      write (error_unit, '(a)') "lapse_start: "//lapse_last_error()
      stop 4
   end if
   if (.not. lapse_is_active()) stop 4
   solve = lapse_region("solve")
   do i = 1, steps
      call lapse_begin("step")
      do k = 1, 3
         call lapse_begin_id(solve)
         call lapse_count("cells", 100_int64)
         call spin_us(50)
         call lapse_end_id(solve)
      end do
      call lapse_begin("io   ")     ! trailing blanks are not part of the name
      call lapse_count_id(lapse_region("bytes"), 4096_int64)
      call lapse_end("io")
      call lapse_end("step")
   end do
   call lapse_flush(stat=rc)
   if (rc /= 0) stop 4
   call lapse_stop(stat=rc)
   if (rc /= 0) stop 4
   call lapse_stop(stat=rc)        ! no session: refused, with a message
   if (rc == 0) stop 4
   if (len(lapse_last_error()) == 0) stop 4
   call lapse_begin("after")
   call lapse_end("after")
   print '(a,i0,a)', "fortran_spans: ", steps, " steps"

contains

   subroutine spin_us(us)
      integer, intent(in) :: us
      integer(int64) :: t0, t, rate
      call system_clock(t0, rate)
      do
         call system_clock(t)
         if ((t - t0) * 1000000_int64 >= int(us, int64) * rate) exit
      end do
   end subroutine spin_us

end program fortran_spans
