#include "causal.h"

#include "clock.h"
#include "core.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

causal_record *causal_records;
uint64_t causal_cursor;
uint64_t causal_dropped;

int causal_begin(void)
{
    uint64_t used = __atomic_load_n(&causal_cursor, __ATOMIC_RELAXED);
    if (used > CAUSAL_MAX_RECORDS)
        used = CAUSAL_MAX_RECORDS;
    /* kept across sessions: what the last one wrote is cleared, or a record claimed
     * anew would show the old end before its own (an open wait read as complete) */
    if (causal_records)
        memset(causal_records, 0, (size_t)used * sizeof(causal_record));
    __atomic_store_n(&causal_cursor, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&causal_dropped, 0, __ATOMIC_RELAXED);
    if (causal_records)
        return 0;
    void *p = mmap(NULL, (size_t)CAUSAL_MAX_RECORDS * sizeof(causal_record),
                   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    causal_records = p;
    return 0;
}

/* A record for the calling thread, its end still 0; NULL when the buffer is full
 * (counted) or the thread has no state. */
static causal_record *claim(uint32_t name, uint8_t kind, uint64_t now, uint32_t *index)
{
    core_thread *t = core_thread_attach();
    if (!t || !causal_records)
        return NULL;
    uint64_t i = __atomic_fetch_add(&causal_cursor, 1, __ATOMIC_RELAXED);
    if (i >= CAUSAL_MAX_RECORDS) {
        __atomic_add_fetch(&causal_dropped, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    causal_record *r = &causal_records[i];
    r->begin = now;
    r->name = name;
    r->thread = (uint16_t)t->index;
    r->kind = kind;
    *index = (uint32_t)i;
    return r;
}

void causal_signal(uint32_t name)
{
    uint64_t now = core_ticks();
    uint32_t i;
    causal_record *r = claim(name, CAUSAL_SIGNAL, now, &i);
    if (r)
        __atomic_store_n(&r->end, now ? now : 1, __ATOMIC_RELEASE);
}

uint32_t causal_wait_begin(uint32_t name)
{
    uint32_t i;
    return claim(name, CAUSAL_WAIT, core_ticks(), &i) ? i + 1 : 0;
}

void causal_wait_end(uint32_t record)
{
    if (!record || record > CAUSAL_MAX_RECORDS || !causal_records)
        return;
    causal_record *r = &causal_records[record - 1];
    uint64_t now = core_ticks();
    if (now < r->begin)
        now = r->begin;
    __atomic_store_n(&r->end, now ? now : 1, __ATOMIC_RELEASE);
}
