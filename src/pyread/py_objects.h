/* Python's thread names (threading.Thread.name) read from a live CPython: dicts,
 * ints and instance attributes reached from the interpreter's sys.modules. */
#ifndef LAPSE_PYREAD_PY_OBJECTS_H
#define LAPSE_PYREAD_PY_OBJECTS_H

#include "pyread_internal.h"

/* Give each thread of s its Python name where it is known (th->name; th->os_name
 * keeps the OS name). Names are kept per thread ident in t: threading._active of
 * the interpreters (interps[0 .. interp_count)) is read only when a thread without
 * a name is seen: at once (at most every 20 ms) for a new one, then at most once a
 * second while some remain unnamed. */
void py_thread_names_apply(pyread_target *t, pyread_sample *s, const uint64_t *interps, int interp_count);

#endif
