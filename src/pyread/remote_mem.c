/* process_vm_readv with a per-pass block cache; see remote_mem.h. */
#include "remote_mem.h"

#include "core/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

static void free_slots(remote_mem *rm)
{
    free(rm->blocks);
    free(rm->block_addr);
    free(rm->slot_gen);
    free(rm->used_gen);
    free(rm->used_list);
    free(rm->index);
    free(rm->used_addr);
    free(rm->range_first);
    free(rm->range_blocks);
}

/* Make room for cap slots, every one empty, keeping the n used addresses in keep
 * (for the reset under way). 0, or -1 with the old slots kept. */
static int resize(remote_mem *rm, int cap, const uint64_t *keep, int n)
{
    remote_mem r = *rm;
    r.cap = cap;
    r.blocks = malloc(sizeof(*r.blocks) * (size_t)cap);
    r.block_addr = calloc((size_t)cap, sizeof *r.block_addr);
    r.slot_gen = calloc((size_t)cap, sizeof *r.slot_gen);
    r.used_gen = calloc((size_t)cap, sizeof *r.used_gen);
    r.used_list = calloc((size_t)cap, sizeof *r.used_list);
    r.index = calloc(2 * (size_t)cap, sizeof *r.index); /* generation 0: empty */
    r.used_addr = calloc((size_t)cap, sizeof *r.used_addr);
    r.range_first = calloc((size_t)cap, sizeof *r.range_first);
    r.range_blocks = calloc((size_t)cap, sizeof *r.range_blocks);
    if (!r.blocks || !r.block_addr || !r.slot_gen || !r.used_gen || !r.used_list || !r.index || !r.used_addr ||
        !r.range_first || !r.range_blocks) {
        free_slots(&r);
        return -1;
    }
    if (n)
        memcpy(r.used_addr, keep, sizeof *keep * (size_t)n);
    memset(r.hint, 0, sizeof r.hint);
    r.used_count = 0;
    r.next_slot = 0;
    free_slots(rm);
    *rm = r;
    return 0;
}

int remote_mem_init(remote_mem *rm, pid_t pid)
{
    memset(rm, 0, sizeof *rm);
    rm->pid = pid;
    rm->gen = 1; /* every slot and index entry (generation 0) is empty */
    return resize(rm, REMOTE_MIN_BLOCKS, NULL, 0);
}

void remote_mem_free(remote_mem *rm)
{
    free_slots(rm);
    memset(rm, 0, sizeof *rm);
}

static unsigned hint_of(uint64_t block)
{
    uint64_t b = block / REMOTE_BLOCK;
    return (unsigned)((b ^ (b >> 8)) % REMOTE_HINTS);
}

static unsigned index_of(const remote_mem *rm, uint64_t block)
{
    return (unsigned)hash_mix(block / REMOTE_BLOCK) & (unsigned)(2 * rm->cap - 1);
}

static int holds(const remote_mem *rm, int slot, uint64_t block)
{
    return slot < rm->cap && rm->slot_gen[slot] == rm->gen && rm->block_addr[slot] == block;
}

/* The slot holding `block` in this pass, or -1: the hint first (a pass of one thread
 * finds all its blocks there), then the index. */
static int find_block(const remote_mem *rm, uint64_t block)
{
    int h = rm->hint[hint_of(block)];
    if (holds(rm, h, block))
        return h;
    unsigned mask = (unsigned)(2 * rm->cap - 1), i = index_of(rm, block);
    for (int k = 0; k < 2 * rm->cap; k++, i = (i + 1) & mask) {
        const remote_index_entry *e = &rm->index[i];
        if (e->gen != (uint16_t)rm->gen)
            return -1; /* an empty entry ends the probe */
        if (holds(rm, e->slot, block))
            return e->slot;
    }
    return -1;
}

/* `slot` holds `block` from now on in this pass. (A full index leaves the block out:
 * it is then read again when asked for.) A slot given another block keeps its old
 * index entry, which no longer matches: probes go past it. */
static void mark_valid(remote_mem *rm, int slot, uint64_t block)
{
    rm->slot_gen[slot] = rm->gen;
    rm->block_addr[slot] = block;
    rm->hint[hint_of(block)] = (uint16_t)slot;
    unsigned mask = (unsigned)(2 * rm->cap - 1), i = index_of(rm, block);
    for (int k = 0; k < 2 * rm->cap; k++, i = (i + 1) & mask) {
        remote_index_entry *e = &rm->index[i];
        if (e->gen != (uint16_t)rm->gen) {
            *e = (remote_index_entry){(uint16_t)rm->gen, (uint16_t)slot};
            return;
        }
    }
}

/* The next slot for a block read now; running out of slots in one pass asks for
 * more at the next reset. */
static int take_slot(remote_mem *rm)
{
    int slot = rm->next_slot;
    if (++rm->next_slot == rm->cap) {
        rm->next_slot = 0;
        rm->grow = 1;
    }
    rm->slot_gen[slot] = 0;
    rm->used_gen[slot] = 0;
    return slot;
}

static void mark_used(remote_mem *rm, int slot)
{
    if (rm->used_gen[slot] == rm->gen)
        return;
    rm->used_gen[slot] = rm->gen;
    if (rm->used_count < rm->cap)
        rm->used_list[rm->used_count++] = (uint16_t)slot;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A pass of one thread uses a few dozen blocks: insertion sort, cheaper there than
 * qsort's calls; qsort for the hundreds of a target with many threads. */
static void sort_u64(uint64_t *a, int n)
{
    if (n > 64) {
        qsort(a, (size_t)n, sizeof a[0], cmp_u64);
        return;
    }
    for (int i = 1; i < n; i++) {
        uint64_t v = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

void remote_mem_watch(remote_mem *rm, uint64_t addr)
{
    rm->watch_addr = addr;
    rm->watch_ok = 0;
}

/* A new generation: every slot and index entry of the last pass is empty now. */
static void next_generation(remote_mem *rm)
{
    if ((uint16_t)++rm->gen == 0) { /* the index's 16 bits wrapped: clear what an old generation could match */
        memset(rm->slot_gen, 0, sizeof *rm->slot_gen * (size_t)rm->cap);
        memset(rm->used_gen, 0, sizeof *rm->used_gen * (size_t)rm->cap);
        memset(rm->index, 0, sizeof *rm->index * 2 * (size_t)rm->cap);
        rm->gen++;
    }
    rm->used_count = 0;
    rm->next_slot = 0;
    rm->watch_ok = 0;
}

void remote_mem_reset(remote_mem *rm)
{
    /* the blocks the ending pass used, in address order */
    uint64_t *addr = rm->used_addr;
    int n = 0;
    for (int i = 0; i < rm->used_count; i++) {
        int slot = rm->used_list[i];
        if (rm->used_gen[slot] == rm->gen && rm->slot_gen[slot] == rm->gen)
            addr[n++] = rm->block_addr[slot];
    }
    if (rm->grow && rm->cap < REMOTE_MAX_BLOCKS && resize(rm, 2 * rm->cap, addr, n) == 0)
        addr = rm->used_addr;
    rm->grow = 0;
    next_generation(rm);
    sort_u64(addr, n);
    /* Remote ranges from a used block to the last used block after it with gaps of
     * at most REMOTE_MERGE_GAP unused blocks (the kernel looks up and pins each
     * remote range's pages separately: copying a few unused bytes costs less than
     * another range), read into consecutive slots. */
    int nr = 0, slots = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && addr[j + 1] - addr[j] <= (uint64_t)(REMOTE_MERGE_GAP + 1) * REMOTE_BLOCK &&
               slots + (int)((addr[j + 1] - addr[i]) / REMOTE_BLOCK) + 1 <= rm->cap)
            j++;
        int blocks = (int)((addr[j] - addr[i]) / REMOTE_BLOCK) + 1;
        if (slots + blocks > rm->cap) {
            rm->grow = 1;
            break;
        }
        rm->range_first[nr] = addr[i];
        rm->range_blocks[nr] = blocks;
        slots += blocks;
        nr++;
        i = j + 1;
    }
    /* The watched value first (the kernel copies the remote ranges in order), then
     * the ranges, REMOTE_IOV_MAX to a call. */
    int r = 0, slot = 0, first = 1;
    while (r < nr || (first && rm->watch_addr)) {
        struct iovec local[2], remote[64];
        struct iovec *rv = remote;
        int want = (nr - r < REMOTE_IOV_MAX - 1 ? nr - r : REMOTE_IOV_MAX - 1) + 1;
        if (want > (int)(sizeof remote / sizeof remote[0]) && !(rv = malloc(sizeof *rv * (size_t)want)))
            return;
        int nl = 0, nrem = 0;
        size_t watch_len = 0, range_len = 0;
        if (first && rm->watch_addr) {
            watch_len = sizeof rm->watch_value;
            rv[nrem++] = (struct iovec){(void *)(uintptr_t)rm->watch_addr, watch_len};
            local[nl++] = (struct iovec){&rm->watch_value, watch_len};
        }
        int r_end = r;
        while (r_end < nr && nrem < want) {
            size_t len = (size_t)rm->range_blocks[r_end] * REMOTE_BLOCK;
            rv[nrem++] = (struct iovec){(void *)(uintptr_t)rm->range_first[r_end], len};
            range_len += len;
            r_end++;
        }
        if (range_len)
            local[nl++] = (struct iovec){rm->blocks[slot], range_len};
        first = 0;
        rm->syscalls++;
        ssize_t got = process_vm_readv(rm->pid, local, (unsigned long)nl, rv, (unsigned long)nrem, 0);
        if (rv != remote)
            free(rv);
        if (got < (ssize_t)watch_len || got <= 0)
            return;
        rm->watch_ok |= watch_len > 0;
        rm->bytes += (uint64_t)got;
        uint64_t left = (uint64_t)got - watch_len;
        for (; r < r_end && left >= REMOTE_BLOCK; r++)
            for (int k = 0; k < rm->range_blocks[r] && left >= REMOTE_BLOCK; k++, slot++) {
                mark_valid(rm, slot, rm->range_first[r] + (uint64_t)k * REMOTE_BLOCK);
                left -= REMOTE_BLOCK;
            }
        rm->next_slot = slot % rm->cap;
        if ((uint64_t)got < watch_len + range_len)
            return; /* a range failed part way: the rest is read when asked for */
    }
}

int remote_mem_used_mark(const remote_mem *rm)
{
    return rm->used_count;
}

#define REFRESH_MAX 64 /* blocks read again for one thread: its newest frames come first */

int remote_mem_refresh(remote_mem *rm, const uint64_t *first, int nfirst, int mark)
{
    struct iovec local[REFRESH_MAX], remote[REFRESH_MAX];
    int slots[REFRESH_MAX], n = 0;
    for (int i = 0; i < nfirst + rm->used_count - mark && n < REFRESH_MAX; i++) {
        int slot = i < nfirst ? find_block(rm, first[i] & ~(uint64_t)(REMOTE_BLOCK - 1)) : rm->used_list[mark + i - nfirst];
        int seen = slot < 0 || rm->slot_gen[slot] != rm->gen;
        for (int k = 0; k < n && !seen; k++)
            seen = slots[k] == slot;
        if (!seen)
            slots[n++] = slot;
    }
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++) {
        local[i] = (struct iovec){rm->blocks[slots[i]], REMOTE_BLOCK};
        remote[i] = (struct iovec){(void *)(uintptr_t)rm->block_addr[slots[i]], REMOTE_BLOCK};
    }
    rm->syscalls++;
    ssize_t got = process_vm_readv(rm->pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
    if (got < 0) {
        rm->last_errno = errno;
        got = 0;
    }
    rm->bytes += (uint64_t)got;
    /* the kernel stops at the first block it cannot read: that one and the rest no
     * longer hold what the cache says */
    for (int i = (int)(got / REMOTE_BLOCK); i < n; i++)
        rm->slot_gen[slots[i]] = 0;
    return got == (ssize_t)n * REMOTE_BLOCK ? 0 : -1;
}

int remote_read(remote_mem *rm, uint64_t addr, void *buf, size_t len)
{
    if (len == 0)
        return 0;
    struct iovec local = {buf, len};
    struct iovec remote = {(void *)(uintptr_t)addr, len};
    rm->syscalls++;
    ssize_t n = process_vm_readv(rm->pid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)len) {
        rm->bytes += len;
        return 0;
    }
    rm->last_errno = n < 0 ? errno : EFAULT;
    return -1;
}

size_t remote_read_some(remote_mem *rm, uint64_t addr, void *buf, size_t len)
{
    /* One remote iovec per page: the kernel stops at the first that fails. */
    struct iovec local[16], remote[16];
    size_t done = 0;
    while (done < len) {
        int n = 0;
        size_t want = 0;
        uint64_t a = addr + done;
        while (n < 16 && done + want < len) {
            size_t chunk = REMOTE_PAGE - (size_t)((a + want) % REMOTE_PAGE);
            if (chunk > len - done - want)
                chunk = len - done - want;
            local[n] = (struct iovec){(char *)buf + done + want, chunk};
            remote[n] = (struct iovec){(void *)(uintptr_t)(a + want), chunk};
            want += chunk;
            n++;
        }
        rm->syscalls++;
        ssize_t got = process_vm_readv(rm->pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
        if (got <= 0) {
            rm->last_errno = got < 0 ? errno : EFAULT;
            break;
        }
        rm->bytes += (uint64_t)got;
        done += (size_t)got;
        if ((size_t)got < want)
            break;
    }
    return done;
}

int remote_read_u64(remote_mem *rm, uint64_t addr, uint64_t *out)
{
    return remote_read(rm, addr, out, sizeof *out);
}

/* Fill the cache with `block` and up to fill-1 blocks below it not yet cached, in
 * one call ordered from `block` downward (a failure part way keeps what came). */
static int fill_block(remote_mem *rm, uint64_t block, int fill)
{
    struct iovec local[REMOTE_FILL_MAX], remote[REMOTE_FILL_MAX];
    int slots[REMOTE_FILL_MAX];
    int n = 0;
    if (fill < 1)
        fill = 1;
    if (fill > REMOTE_FILL_MAX)
        fill = REMOTE_FILL_MAX;
    for (int k = 0; k < fill; k++) {
        uint64_t b = block - (uint64_t)k * REMOTE_BLOCK;
        if (k > 0 && (b > block || find_block(rm, b) >= 0))
            break;
        int slot = take_slot(rm);
        slots[n] = slot;
        local[n] = (struct iovec){rm->blocks[slot], REMOTE_BLOCK};
        remote[n] = (struct iovec){(void *)(uintptr_t)b, REMOTE_BLOCK};
        n++;
    }
    rm->syscalls++;
    ssize_t got = process_vm_readv(rm->pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
    if (got < (ssize_t)REMOTE_BLOCK) {
        rm->last_errno = got < 0 ? errno : EFAULT;
        return -1;
    }
    rm->bytes += (uint64_t)got;
    int whole = (int)(got / REMOTE_BLOCK);
    for (int i = 0; i < whole; i++)
        mark_valid(rm, slots[i], block - (uint64_t)i * REMOTE_BLOCK);
    return slots[0];
}

int remote_read_cached(remote_mem *rm, uint64_t addr, void *buf, size_t len, int fill)
{
    size_t done = 0;
    while (done < len) {
        uint64_t a = addr + done;
        uint64_t block = a & ~(uint64_t)(REMOTE_BLOCK - 1);
        int slot = find_block(rm, block);
        if (slot < 0)
            slot = fill_block(rm, block, fill);
        if (slot < 0)
            return -1;
        mark_used(rm, slot);
        size_t off = (size_t)(a - block);
        size_t chunk = REMOTE_BLOCK - off;
        if (chunk > len - done)
            chunk = len - done;
        memcpy((char *)buf + done, rm->blocks[slot] + off, chunk);
        done += chunk;
    }
    return 0;
}
