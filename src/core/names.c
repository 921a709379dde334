#include "names.h"

#include "hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS NAMES_CHUNK_BITS
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define CHUNKS (NAMES_MAX / CHUNK_SIZE)

/* id -> name, in fixed chunks so readers never see a moved array (also readers
 * outside the process: src/core/span_registry.h; not static for that) */
const char **name_chunks[CHUNKS];
uint32_t name_count_published = 1; /* id 0 is "" */

/* name -> id, open addressing; only touched under the lock */
static uint32_t *lookup_ids;
static uint32_t *lookup_hashes;
static uint32_t lookup_cap;

static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_name(const char *s)
{
    uint32_t h = (uint32_t)hash_mix(hash_str(s));
    return h ? h : 1;
}

const char *names_get(uint32_t id)
{
    if (id == 0 || id >= __atomic_load_n(&name_count_published, __ATOMIC_ACQUIRE))
        return "";
    return name_chunks[id >> CHUNK_BITS][id & (CHUNK_SIZE - 1)];
}

uint32_t names_count(void)
{
    return __atomic_load_n(&name_count_published, __ATOMIC_ACQUIRE);
}

static int lookup_grow(void)
{
    uint32_t cap = lookup_cap ? lookup_cap * 2 : 1024;
    uint32_t *ids = calloc(cap, sizeof *ids);
    uint32_t *hashes = calloc(cap, sizeof *hashes);
    if (!ids || !hashes) {
        free(ids);
        free(hashes);
        return -1;
    }
    for (uint32_t i = 0; i < lookup_cap; i++) {
        if (!lookup_ids[i])
            continue;
        uint32_t slot = lookup_hashes[i] & (cap - 1);
        while (ids[slot])
            slot = (slot + 1) & (cap - 1);
        ids[slot] = lookup_ids[i];
        hashes[slot] = lookup_hashes[i];
    }
    free(lookup_ids);
    free(lookup_hashes);
    lookup_ids = ids;
    lookup_hashes = hashes;
    lookup_cap = cap;
    return 0;
}

uint32_t names_intern(const char *name)
{
    if (!name || !*name)
        return 0;
    uint32_t h = hash_name(name);
    uint32_t id = 0;
    pthread_mutex_lock(&names_mu);
    uint32_t count = name_count_published;
    if ((count + 1) * 2 > lookup_cap && lookup_grow() != 0)
        goto out;
    uint32_t slot = h & (lookup_cap - 1);
    while (lookup_ids[slot]) {
        uint32_t other = lookup_ids[slot];
        if (lookup_hashes[slot] == h &&
            strcmp(name_chunks[other >> CHUNK_BITS][other & (CHUNK_SIZE - 1)], name) == 0) {
            id = other;
            goto out;
        }
        slot = (slot + 1) & (lookup_cap - 1);
    }
    if (count >= NAMES_MAX)
        goto out;
    const char ***chunk = &name_chunks[count >> CHUNK_BITS];
    if (!*chunk && !(*chunk = calloc(CHUNK_SIZE, sizeof(char *))))
        goto out;
    char *copy = strdup(name);
    if (!copy)
        goto out;
    (*chunk)[count & (CHUNK_SIZE - 1)] = copy;
    lookup_ids[slot] = count;
    lookup_hashes[slot] = h;
    id = count;
    __atomic_store_n(&name_count_published, count + 1, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&names_mu);
    return id;
}

void names_lock_for_fork(void) { pthread_mutex_lock(&names_mu); }
void names_unlock_after_fork(void) { pthread_mutex_unlock(&names_mu); }
void names_after_fork_child(void) { pthread_mutex_init(&names_mu, NULL); }
