/* The children a session's process forks, recorded by the children themselves in
 * memory they share with their parent, so that the parent's file names each child
 * that has run (as its parent's program) and the report can name one that left no
 * file of its own. */
#ifndef LAPSE_SESSION_FORK_CHILDREN_H
#define LAPSE_SESSION_FORK_CHILDREN_H

#include "../store/model.h"

#include <stdint.h>

/* A forked child looks every this long, from the fork on, for evidence that it runs
 * as its parent's program: a thread of its own that has used a span. One that execs
 * at once (the usual fork of a launcher) never shows any, and is not recorded. */
#define FORK_CHILDREN_LOOK_NS 100000000ull

/* In the parent, before a fork (fork_prepare): the shared list exists (mapped at the
 * first fork of the session). */
void fork_children_prepare(void);
/* In the child, after the fork: with record (the session continues in it), claims its
 * entry in the parent's list (pid, fork time); starts its own list empty either way. */
void fork_children_child(int record, uint64_t fork_mono_ns);
/* In the child: when it is to look next (CLOCK_MONOTONIC), 0 when it need not. */
uint64_t fork_children_look_due(void);
/* In the child, at or after that time: worked (a thread of its own has used a span
 * since the fork) confirms its entry; wrote (it has a file of its own now, which
 * names it) ends the looking; else it looks again FORK_CHILDREN_LOOK_NS later. */
void fork_children_look(uint64_t now, int worked, int wrote);
/* At session start: the list is empty. */
void fork_children_reset(void);
/* The confirmed children, in fork order, into f (malloc'd children, freed by the
 * caller), with the count past the bound. 0 or -ENOMEM. */
int fork_children_take(store_file *f);

#endif
