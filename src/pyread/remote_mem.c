/* process_vm_readv with a per-sample page cache; see remote_mem.h. */
#include "remote_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int remote_mem_init(remote_mem *rm, pid_t pid)
{
    memset(rm, 0, sizeof *rm);
    rm->pid = pid;
    rm->blocks = malloc(sizeof(*rm->blocks) * REMOTE_CACHE_BLOCKS);
    return rm->blocks ? 0 : -1;
}

void remote_mem_free(remote_mem *rm)
{
    free(rm->blocks);
    rm->blocks = NULL;
}

static unsigned hint_of(uint64_t block)
{
    uint64_t b = block / REMOTE_BLOCK;
    return (unsigned)((b ^ (b >> 8)) % REMOTE_HINTS);
}

/* Remember that `block` is in `slot`, for find_block. */
static void mark_valid(remote_mem *rm, int slot, uint64_t block)
{
    rm->valid[slot] = 1;
    rm->block_addr[slot] = block;
    rm->hint[hint_of(block)] = (unsigned char)slot;
}

/* Insertion sort: a pass uses a few dozen blocks, mostly in the order of the last
 * pass (qsort would allocate). */
static void sort_u64(uint64_t *a, int n)
{
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

void remote_mem_reset(remote_mem *rm)
{
    uint64_t addr[REMOTE_CACHE_BLOCKS];
    int n = 0;
    for (int i = 0; i < REMOTE_CACHE_BLOCKS; i++)
        if (rm->valid[i] && rm->used[i])
            addr[n++] = rm->block_addr[i];
    memset(rm->valid, 0, sizeof rm->valid);
    memset(rm->used, 0, sizeof rm->used);
    rm->next_slot = 0;
    rm->watch_ok = 0;
    /* The watched value first: the kernel copies the remote ranges in order. Then
     * ranges from a used block to the last used block after it with gaps of at most
     * REMOTE_MERGE_GAP unused blocks (the kernel looks up and pins each remote
     * range's pages separately: copying a few unused bytes costs less than another
     * range), read into consecutive slots. */
    sort_u64(addr, n);
    struct iovec remote[REMOTE_CACHE_BLOCKS + 1], local[2];
    uint64_t range_first[REMOTE_CACHE_BLOCKS];
    int range_blocks[REMOTE_CACHE_BLOCKS];
    int nr = 0, slot = 0, nl = 0;
    size_t watch_len = 0;
    if (rm->watch_addr) {
        watch_len = sizeof rm->watch_value;
        remote[nr++] = (struct iovec){(void *)(uintptr_t)rm->watch_addr, watch_len};
        local[nl++] = (struct iovec){&rm->watch_value, watch_len};
    }
    int first_range = nr;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && addr[j + 1] - addr[j] <= (uint64_t)(REMOTE_MERGE_GAP + 1) * REMOTE_BLOCK &&
               slot + (int)((addr[j + 1] - addr[i]) / REMOTE_BLOCK) + 1 <= REMOTE_CACHE_BLOCKS)
            j++;
        int blocks = (int)((addr[j] - addr[i]) / REMOTE_BLOCK) + 1;
        if (slot + blocks > REMOTE_CACHE_BLOCKS)
            break;
        range_first[nr - first_range] = addr[i];
        range_blocks[nr - first_range] = blocks;
        remote[nr++] = (struct iovec){(void *)(uintptr_t)addr[i], (size_t)blocks * REMOTE_BLOCK};
        slot += blocks;
        i = j + 1;
    }
    if (nr == 0)
        return;
    if (slot)
        local[nl++] = (struct iovec){rm->blocks[0], (size_t)slot * REMOTE_BLOCK};
    rm->syscalls++;
    ssize_t got = process_vm_readv(rm->pid, local, (unsigned long)nl, remote, (unsigned long)nr, 0);
    if (got < (ssize_t)watch_len || got <= 0)
        return;
    rm->watch_ok = watch_len > 0;
    rm->bytes += (uint64_t)got;
    uint64_t left = (uint64_t)got - watch_len;
    int filled = 0;
    for (int r = 0; r < nr - first_range && left >= REMOTE_BLOCK; r++)
        for (int k = 0; k < range_blocks[r] && left >= REMOTE_BLOCK; k++, filled++) {
            mark_valid(rm, filled, range_first[r] + (uint64_t)k * REMOTE_BLOCK);
            left -= REMOTE_BLOCK;
        }
    rm->next_slot = slot % REMOTE_CACHE_BLOCKS;
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

static int find_block(const remote_mem *rm, uint64_t block)
{
    int h = rm->hint[hint_of(block)];
    if (rm->valid[h] && rm->block_addr[h] == block)
        return h;
    /* a miss, or two blocks sharing a hint: look at every slot */
    for (int i = 0; i < REMOTE_CACHE_BLOCKS; i++)
        if (rm->valid[i] && rm->block_addr[i] == block)
            return i;
    return -1;
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
        int slot = rm->next_slot;
        rm->next_slot = (rm->next_slot + 1) % REMOTE_CACHE_BLOCKS;
        rm->valid[slot] = 0;
        rm->used[slot] = 0;
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
        rm->used[slot] = 1;
        size_t off = (size_t)(a - block);
        size_t chunk = REMOTE_BLOCK - off;
        if (chunk > len - done)
            chunk = len - done;
        memcpy((char *)buf + done, rm->blocks[slot] + off, chunk);
        done += chunk;
    }
    return 0;
}
