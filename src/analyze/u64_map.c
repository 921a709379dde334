#include "u64_map.h"

#include "core/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t slot_of(uint64_t k, uint32_t mask)
{
    return (uint32_t)hash_mix(k) & mask;
}

int u64_map_grow(u64_map *m)
{
    uint32_t cap = m->mask ? (m->mask + 1u) * 2u : 1024u;
    uint64_t *keys = malloc((size_t)cap * sizeof *keys);
    uint32_t *vals = malloc((size_t)cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -ENOMEM;
    }
    memset(keys, 0xff, (size_t)cap * sizeof *keys);
    uint32_t mask = cap - 1u;
    if (m->keys)
        for (uint32_t i = 0; i <= m->mask; i++) {
            if (m->keys[i] == UINT64_MAX)
                continue;
            uint32_t s = slot_of(m->keys[i], mask);
            while (keys[s] != UINT64_MAX)
                s = (s + 1u) & mask;
            keys[s] = m->keys[i];
            vals[s] = m->vals[i];
        }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->mask = mask;
    return 0;
}

uint32_t u64_map_slot(const u64_map *m, uint64_t key, int *found)
{
    uint32_t s = slot_of(key, m->mask);
    for (;;) {
        if (m->keys[s] == key) {
            *found = 1;
            return s;
        }
        if (m->keys[s] == UINT64_MAX) {
            *found = 0;
            return s;
        }
        s = (s + 1u) & m->mask;
    }
}

void u64_map_free(u64_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}
