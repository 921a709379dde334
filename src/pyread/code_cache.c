/* Open-addressing table of code objects by address; see code_cache.h. Entries are
 * allocated one by one and never move (frames of a pass and the per-pass checks
 * point at them while the table grows); a reloaded entry is rewritten in place. */
#include "code_cache.h"

#include "line_table.h"
#include "core/hash.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t addr, size_t cap)
{
    return (size_t)hash_mix(addr) & (cap - 1);
}

int code_cache_init(code_cache *c)
{
    c->cap = 1024;
    c->used = 0;
    c->generations = 0;
    c->slots = calloc(c->cap, sizeof *c->slots);
    return c->slots ? 0 : -1;
}

static void entry_free(code_entry *e)
{
    free((char *)e->info.qualname);
    free((char *)e->info.filename);
    free(e->linetable);
}

void code_cache_free(code_cache *c)
{
    for (size_t i = 0; c->slots && i < c->cap; i++)
        if (c->slots[i]) {
            entry_free(c->slots[i]);
            free(c->slots[i]);
        }
    free(c->slots);
    c->slots = NULL;
}

code_entry *code_cache_find(code_cache *c, uint64_t addr)
{
    for (size_t i = slot_of(addr, c->cap);; i = (i + 1) & (c->cap - 1)) {
        if (!c->slots[i])
            return NULL;
        if (c->slots[i]->addr == addr)
            return c->slots[i];
    }
}

static int grow(code_cache *c)
{
    size_t cap = c->cap * 2;
    code_entry **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->slots[i])
            continue;
        size_t j = slot_of(c->slots[i]->addr, cap);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->cap = cap;
    return 0;
}

code_entry *code_cache_insert(code_cache *c, const code_entry *e)
{
    code_entry *at = code_cache_find(c, e->addr);
    if (at) {
        entry_free(at); /* the same address now holds another code object */
    } else {
        if ((c->used + 1) * 10 > c->cap * 7 && grow(c) != 0)
            return NULL;
        at = malloc(sizeof *at);
        if (!at)
            return NULL;
        size_t i = slot_of(e->addr, c->cap);
        while (c->slots[i])
            i = (i + 1) & (c->cap - 1);
        c->slots[i] = at;
        c->used++;
    }
    *at = *e;
    at->info.generation = ++c->generations;
    at->last_unit = -2;
    at->stale = 0;
    return at;
}

int code_entry_line(code_entry *e, long unit)
{
    if (unit == e->last_unit)
        return e->last_line;
    int line = line_table_line(e->linetable, e->linetable_len, e->info.firstlineno, unit);
    e->last_unit = unit;
    e->last_line = line;
    return line;
}
