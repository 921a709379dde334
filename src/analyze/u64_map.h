/* A map from 64-bit keys (any but UINT64_MAX) to 32-bit values: open addressing,
 * linear probing, grown by the caller at half full. Zero-initialised it is empty. */
#ifndef LAPSE_ANALYZE_U64_MAP_H
#define LAPSE_ANALYZE_U64_MAP_H

#include <stdint.h>

typedef struct u64_map {
    uint64_t *keys; /* UINT64_MAX: empty */
    uint32_t *vals;
    uint32_t mask, used;
} u64_map;

/* Doubles the table (1,024 slots at first); 0 or -ENOMEM (the map unchanged). */
int u64_map_grow(u64_map *m);
/* 1 when the next insertion needs u64_map_grow first (more than half full after it). */
static inline int u64_map_full(const u64_map *m)
{
    return (m->used + 1u) * 2u > m->mask + 1u;
}
/* The slot of key; *found says whether it holds key (else it is the empty slot to
 * fill: keys[slot] = key, vals[slot] = value, used++). The map has a table. */
uint32_t u64_map_slot(const u64_map *m, uint64_t key, int *found);
void u64_map_free(u64_map *m);

#endif
