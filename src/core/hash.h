/* The one hash of lapse's hash tables and derived ids (the .lapse file's checksum is
 * store/crc32.c): FNV-1a over bytes, and a finalizer that mixes a 64-bit key (an
 * integer key, or an FNV-1a value) so that its low bits index a table of 2^k slots;
 * hash_index for the per-span tables of the core's hot path. */
#ifndef LAPSE_CORE_HASH_H
#define LAPSE_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 0xcbf29ce484222325ull /* FNV-1a's offset basis */

/* FNV-1a over n bytes at p, continuing from h (HASH_SEED to start). */
static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* FNV-1a of a NUL-terminated string. */
static inline uint64_t hash_str(const char *s)
{
    uint64_t h = HASH_SEED;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Every bit of k into the low bits (MurmurHash3's finalizer, one round). */
static inline uint64_t hash_mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* The slot of an integer key in a table of mask + 1 (a power of two, <= 2^32) slots
 * by one multiply (Fibonacci hashing: the product's high half), for the tables a span
 * looks up on every begin, where hash_mix's two more shift-xor steps measured
 * +0.8-1.2 ns a span pair (bench/span_cost, minima). */
static inline uint32_t hash_index(uint64_t k, uint32_t mask)
{
    return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

#endif
