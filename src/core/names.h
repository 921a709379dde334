/* Span and counter names, interned to small integer ids (0 is the empty name).
 * Interning takes a lock; reading a name by id does not. */
#ifndef LAPSE_CORE_NAMES_H
#define LAPSE_CORE_NAMES_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define NAMES_MAX (1u << 20)
#define NAMES_CHUNK_BITS 10u /* the table is chunks of 1 << NAMES_CHUNK_BITS names */

/* Returns the id of name (interning it on first sight), or 0 when the table is full
 * or memory ran out. */
uint32_t names_intern(const char *name);
/* Number of ids handed out so far, including 0. */
uint32_t names_count(void);
/* The name of an id below names_count(); "" for 0 or an unknown id. */
const char *names_get(uint32_t id);
/* Call in a forked child: the lock may have been held across fork. */
void names_after_fork_child(void);
void names_lock_for_fork(void);
void names_unlock_after_fork(void);

#pragma GCC visibility pop

#endif
