/* The children a session's process forks, recorded by the children themselves in
 * memory they share with their parent, so that the parent's file names each child
 * that has run (as its parent's program) and the report can name one that left no
 * file of its own. */
#ifndef LAPSE_SESSION_FORK_CHILDREN_H
#define LAPSE_SESSION_FORK_CHILDREN_H

#include "../store/model.h"

#include <stdint.h>

/* A forked child that is still its parent's program this long after the fork is
 * recorded (one that execs at once, the usual fork of a launcher, is not). */
#define FORK_CHILDREN_CONFIRM_NS 100000000ull

/* In the parent, before a fork (fork_prepare): the shared list exists (mapped at the
 * first fork of the session). */
void fork_children_prepare(void);
/* In the child, after the fork: with record (the session continues in it), claims its
 * entry in the parent's list (pid, fork time); starts its own list empty either way. */
void fork_children_child(int record, uint64_t fork_mono_ns);
/* In the child: when its entry is to be confirmed (CLOCK_MONOTONIC), 0 when it has
 * none pending; fork_children_confirm marks it as run. */
uint64_t fork_children_confirm_due(void);
void fork_children_confirm(void);
/* At session start: the list is empty. */
void fork_children_reset(void);
/* The confirmed children, in fork order, into f (malloc'd children, freed by the
 * caller), with the count past the bound. 0 or -ENOMEM. */
int fork_children_take(store_file *f);

#endif
