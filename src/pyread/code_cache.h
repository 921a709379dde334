/* Code objects read from the target, by address: names, first line and line table,
 * read once. A line lookup remembers the last (unit, line) of each code object. */
#ifndef LAPSE_PYREAD_CODE_CACHE_H
#define LAPSE_PYREAD_CODE_CACHE_H

#include "pyread.h"

#include <stddef.h>
#include <stdint.h>

typedef struct code_entry {
    uint64_t addr;
    pyread_code info;
    uint8_t *linetable;
    size_t linetable_len;
    long code_units; /* ob_size of the code object: its instructions, in code units */
    long last_unit;
    int last_line;
    /* The fields that identify it (first line, name, file and line table pointers),
     * compared again in each pass that uses it: a freed code object's address may
     * hold another one later. */
    unsigned char fingerprint[96];
    /* and, for a code object without a version (3.11), the first bytes of its
     * qualified name and line table: freed strings come back at the same addresses
     * too (code made by exec, over and over) */
    unsigned char content[48];
    int versioned; /* co_version is in the fingerprint: content is not kept */
    /* verified while the target's count of code objects made was verified_counter */
    int counter_verified;
    uint32_t verified_counter;
    uint64_t checked_pass;
    int stale;
} code_entry;

typedef struct code_cache {
    code_entry **slots; /* entries never move: pointers to them stay valid */
    size_t cap, used;
    uint32_t generations; /* each insertion gets the next generation */
} code_cache;

int code_cache_init(code_cache *c);
void code_cache_free(code_cache *c);
code_entry *code_cache_find(code_cache *c, uint64_t addr);
/* Takes ownership of e's strings and line table; an entry already at e's address is
 * rewritten in place. NULL when out of memory (e's memory is then the caller's). */
code_entry *code_cache_insert(code_cache *c, const code_entry *e);
int code_entry_line(code_entry *e, long unit);

#endif
