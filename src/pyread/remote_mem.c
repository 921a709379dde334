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
    rm->pages = malloc(sizeof(*rm->pages) * REMOTE_CACHE_PAGES);
    return rm->pages ? 0 : -1;
}

void remote_mem_free(remote_mem *rm)
{
    free(rm->pages);
    rm->pages = NULL;
}

void remote_mem_reset(remote_mem *rm)
{
    memset(rm->valid, 0, sizeof rm->valid);
    rm->next_slot = 0;
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

static int find_page(const remote_mem *rm, uint64_t page)
{
    for (int i = 0; i < REMOTE_CACHE_PAGES; i++)
        if (rm->valid[i] && rm->page_addr[i] == page)
            return i;
    return -1;
}

/* Fill the cache with `page` and up to REMOTE_FILL_PAGES-1 pages below it not yet
 * cached, in one call ordered from `page` downward (a failure part way keeps what came). */
static int fill_page(remote_mem *rm, uint64_t page)
{
    struct iovec local[REMOTE_FILL_PAGES], remote[REMOTE_FILL_PAGES];
    int slots[REMOTE_FILL_PAGES];
    int n = 0;
    for (int k = 0; k < REMOTE_FILL_PAGES; k++) {
        uint64_t p = page - (uint64_t)k * REMOTE_PAGE;
        if (k > 0 && (p > page || find_page(rm, p) >= 0))
            break;
        int slot = rm->next_slot;
        rm->next_slot = (rm->next_slot + 1) % REMOTE_CACHE_PAGES;
        rm->valid[slot] = 0;
        slots[n] = slot;
        local[n] = (struct iovec){rm->pages[slot], REMOTE_PAGE};
        remote[n] = (struct iovec){(void *)(uintptr_t)p, REMOTE_PAGE};
        n++;
    }
    rm->syscalls++;
    ssize_t got = process_vm_readv(rm->pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
    if (got < (ssize_t)REMOTE_PAGE) {
        rm->last_errno = got < 0 ? errno : EFAULT;
        return -1;
    }
    rm->bytes += (uint64_t)got;
    int whole = (int)(got / REMOTE_PAGE);
    for (int i = 0; i < whole; i++) {
        rm->valid[slots[i]] = 1;
        rm->page_addr[slots[i]] = page - (uint64_t)i * REMOTE_PAGE;
    }
    return slots[0];
}

int remote_read_cached(remote_mem *rm, uint64_t addr, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        uint64_t a = addr + done;
        uint64_t page = a & ~(uint64_t)(REMOTE_PAGE - 1);
        int slot = find_page(rm, page);
        if (slot < 0)
            slot = fill_page(rm, page);
        if (slot < 0)
            return -1;
        size_t off = (size_t)(a - page);
        size_t chunk = REMOTE_PAGE - off;
        if (chunk > len - done)
            chunk = len - done;
        memcpy((char *)buf + done, rm->pages[slot] + off, chunk);
        done += chunk;
    }
    return 0;
}
