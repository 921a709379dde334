!> lapse for Fortran: named regions (spans), counters and the session, over the C
!! library (include/lapse.h) through iso_c_binding. The same session, file and
!! report as C: spans nest as called, counters go to the innermost open span.
!!
!!     use lapse
!!     integer :: solve
!!     call lapse_start(role="solver")        ! or LAPSE_PROFILE=1 in the environment,
!!                                            ! or liblapse_mpi's session from MPI_Init
!!     solve = lapse_region("solve")          ! the name interned once (hot loops)
!!     do step = 1, n
!!        call lapse_begin("step")            ! by name: interned on every call
!!        call lapse_begin_id(solve)
!!        call lapse_count("cells", 1000_int64)
!!        call lapse_end_id(solve)
!!        call lapse_end("step")
!!     end do
!!     call lapse_stop()
!!
!! Link: gfortran prog.f90 -I<prefix>/include -llapse_fortran -llapse
!! (-llapse_mpi instead of -llapse under MPI). With no active session every call
!! returns at once. Nothing here stops or aborts the program: a failure is a
!! non-zero stat, or one warning line on standard error when stat is not given.
module lapse
   use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int32_t, c_int64_t, c_null_char, &
      c_ptr, c_loc, c_associated, c_f_pointer, c_size_t, c_sizeof
   use, intrinsic :: iso_fortran_env, only: int32, int64, error_unit
   implicit none
   private

   public :: lapse_start, lapse_stop, lapse_flush, lapse_is_active, lapse_set_role
   public :: lapse_region, lapse_begin, lapse_end, lapse_begin_id, lapse_end_id
   public :: lapse_count, lapse_count_id, lapse_last_error, lapse_options_bytes

   !> include/lapse.h's lapse_options, field for field.
   type, bind(c) :: c_options
      integer(c_int32_t) :: features
      type(c_ptr) :: role, run_dir
      integer(c_int64_t) :: max_spans
      integer(c_int32_t) :: snapshot_interval_ms, max_depth, max_paths
      integer(c_int) :: handle_signals, thread_names
      integer(c_int32_t) :: process_sample_ms
      integer(c_int) :: share
   end type c_options

   interface
      subroutine c_options_init(o) bind(c, name="lapse_options_init")
         import :: c_options
         type(c_options), intent(out) :: o
      end subroutine c_options_init
      function c_start(o) bind(c, name="lapse_start") result(rc)
         import :: c_options, c_int
         type(c_options), intent(in) :: o
         integer(c_int) :: rc
      end function c_start
      function c_stop() bind(c, name="lapse_stop") result(rc)
         import :: c_int
         integer(c_int) :: rc
      end function c_stop
      function c_flush() bind(c, name="lapse_flush") result(rc)
         import :: c_int
         integer(c_int) :: rc
      end function c_flush
      function c_is_active() bind(c, name="lapse_is_active") result(rc)
         import :: c_int
         integer(c_int) :: rc
      end function c_is_active
      function c_set_role(role) bind(c, name="lapse_set_role") result(rc)
         import :: c_char, c_int
         character(kind=c_char), dimension(*), intent(in) :: role
         integer(c_int) :: rc
      end function c_set_role
      function c_last_error() bind(c, name="lapse_last_error") result(p)
         import :: c_ptr
         type(c_ptr) :: p
      end function c_last_error
      function c_intern(name) bind(c, name="lapse_intern") result(id)
         import :: c_char, c_int32_t
         character(kind=c_char), dimension(*), intent(in) :: name
         integer(c_int32_t) :: id
      end function c_intern
      function c_span_begin_id(id) bind(c, name="lapse_span_begin_id") result(token)
         import :: c_int32_t, c_int
         integer(c_int32_t), value :: id
         integer(c_int) :: token
      end function c_span_begin_id
      subroutine c_span_end_id(id) bind(c, name="lapse_span_end_id")
         import :: c_int32_t
         integer(c_int32_t), value :: id
      end subroutine c_span_end_id
      subroutine c_count_id(id, n) bind(c, name="lapse_count_id")
         import :: c_int32_t, c_int64_t
         integer(c_int32_t), value :: id
         integer(c_int64_t), value :: n
      end subroutine c_count_id
      subroutine c_count_name(name, n) bind(c, name="lapse_count_name")
         import :: c_char, c_int64_t
         character(kind=c_char), dimension(*), intent(in) :: name
         integer(c_int64_t), value :: n
      end subroutine c_count_name
      function c_strlen(s) bind(c, name="strlen") result(n)
         import :: c_ptr, c_size_t
         type(c_ptr), value :: s
         integer(c_size_t) :: n
      end function c_strlen
   end interface

contains

   !> Bytes of the options record as this module lays it out (tests compare it with
   !! C's sizeof(lapse_options)).
   integer function lapse_options_bytes()
      type(c_options) :: o
      lapse_options_bytes = int(c_sizeof(o))
   end function lapse_options_bytes

   !> The message of the last failure of lapse_start, lapse_stop or lapse_flush.
   function lapse_last_error() result(msg)
      character(len=:), allocatable :: msg
      character(kind=c_char), pointer :: chars(:)
      type(c_ptr) :: p
      integer :: i, n
      p = c_last_error()
      if (.not. c_associated(p)) then
         msg = ""
         return
      end if
      n = int(c_strlen(p))
      call c_f_pointer(p, chars, [n])
      allocate (character(len=n) :: msg)
      do i = 1, n
         msg(i:i) = chars(i)
      end do
   end function lapse_last_error

   subroutine done(what, rc, stat)
      character(len=*), intent(in) :: what
      integer(c_int), intent(in) :: rc
      integer, intent(out), optional :: stat
      if (present(stat)) then
         stat = int(rc)
      else if (rc /= 0) then
         write (error_unit, '(a)') "lapse: warning: "//what//": "//lapse_last_error()
      end if
   end subroutine done

   !> Starts a session: role and run_dir as lapse_options' (absent: $LAPSE_ROLE,
   !! $LAPSE_RUN_DIR, as in C), max_spans the timeline bound (absent: the default).
   subroutine lapse_start(role, run_dir, max_spans, stat)
      character(len=*), intent(in), optional :: role, run_dir
      integer(int64), intent(in), optional :: max_spans
      integer, intent(out), optional :: stat
      type(c_options) :: o
      character(kind=c_char), allocatable, target :: c_role(:), c_run_dir(:)
      call c_options_init(o)
      if (present(role)) then
         call to_c(role, c_role)
         o%role = c_loc(c_role)
      end if
      if (present(run_dir)) then
         call to_c(run_dir, c_run_dir)
         o%run_dir = c_loc(c_run_dir)
      end if
      if (present(max_spans)) o%max_spans = max_spans
      call done("profiling is off", c_start(o), stat)
   end subroutine lapse_start

   !> Writes the final file and ends the session.
   subroutine lapse_stop(stat)
      integer, intent(out), optional :: stat
      call done("lapse_stop", c_stop(), stat)
   end subroutine lapse_stop

   !> Writes a snapshot of the session now.
   subroutine lapse_flush(stat)
      integer, intent(out), optional :: stat
      call done("lapse_flush", c_flush(), stat)
   end subroutine lapse_flush

   logical function lapse_is_active()
      lapse_is_active = c_is_active() /= 0
   end function lapse_is_active

   !> This process's role for the rest of the session.
   subroutine lapse_set_role(role, stat)
      character(len=*), intent(in) :: role
      integer, intent(out), optional :: stat
      call done("lapse_set_role", c_set_role(trim(role)//c_null_char), stat)
   end subroutine lapse_set_role

   !> The id of a region name, for lapse_begin_id / lapse_end_id / lapse_count_id.
   integer(int32) function lapse_region(name)
      character(len=*), intent(in) :: name
      lapse_region = c_intern(trim(name)//c_null_char)
   end function lapse_region

   !> Opens the span `name` (trailing blanks left out) on this thread.
   subroutine lapse_begin(name)
      character(len=*), intent(in) :: name
      integer(c_int) :: token
      if (c_is_active() == 0) return
      token = c_span_begin_id(c_intern(trim(name)//c_null_char))
   end subroutine lapse_begin

   !> Ends the innermost open span `name`; a name with none open is counted as a
   !! mismatched end and reported, as LAPSE_END's.
   subroutine lapse_end(name)
      character(len=*), intent(in) :: name
      if (c_is_active() == 0) return
      call c_span_end_id(c_intern(trim(name)//c_null_char))
   end subroutine lapse_end

   subroutine lapse_begin_id(id)
      integer(int32), intent(in) :: id
      integer(c_int) :: token
      token = c_span_begin_id(id)
   end subroutine lapse_begin_id

   subroutine lapse_end_id(id)
      integer(int32), intent(in) :: id
      call c_span_end_id(id)
   end subroutine lapse_end_id

   !> Adds n to the counter `name` of the innermost open span.
   subroutine lapse_count(name, n)
      character(len=*), intent(in) :: name
      integer(int64), intent(in) :: n
      if (c_is_active() == 0) return
      call c_count_name(trim(name)//c_null_char, n)
   end subroutine lapse_count

   subroutine lapse_count_id(id, n)
      integer(int32), intent(in) :: id
      integer(int64), intent(in) :: n
      call c_count_id(id, n)
   end subroutine lapse_count_id

   subroutine to_c(s, out)
      character(len=*), intent(in) :: s
      character(kind=c_char), allocatable, intent(out) :: out(:)
      integer :: i, n
      n = len_trim(s)
      allocate (out(n + 1))
      do i = 1, n
         out(i) = s(i:i)
      end do
      out(n + 1) = c_null_char
   end subroutine to_c

end module lapse
