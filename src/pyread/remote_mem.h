/* Reading another process's memory with process_vm_readv only: the target is never
 * stopped. remote_read copies one range; remote_read_cached serves reads from a small
 * per-sample cache of whole pages, filling a miss with the page and the pages below
 * it in one system call (a thread's frames sit next to each other on its data stack,
 * callers below callees), so that a deep stack costs a few calls, not one per frame. */
#ifndef LAPSE_PYREAD_REMOTE_MEM_H
#define LAPSE_PYREAD_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REMOTE_PAGE 4096u
#define REMOTE_CACHE_PAGES 32
#define REMOTE_FILL_PAGES 4

typedef struct remote_mem {
    pid_t pid;
    uint64_t page_addr[REMOTE_CACHE_PAGES];
    unsigned char valid[REMOTE_CACHE_PAGES];
    int next_slot;
    unsigned char (*pages)[REMOTE_PAGE];
    /* counters since open */
    uint64_t syscalls;
    uint64_t bytes;
    int last_errno; /* errno of the last failed read (EPERM, ESRCH, EFAULT...) */
} remote_mem;

int remote_mem_init(remote_mem *rm, pid_t pid);
void remote_mem_free(remote_mem *rm);
/* Forget cached pages: call at the start of each sample. */
void remote_mem_reset(remote_mem *rm);
/* Copy len bytes at addr; 0, or -1 (errno in rm->last_errno) if any byte could not be read. */
int remote_read(remote_mem *rm, uint64_t addr, void *buf, size_t len);
int remote_read_cached(remote_mem *rm, uint64_t addr, void *buf, size_t len);
/* Read up to len bytes, stopping at the first unreadable page; returns bytes read. */
size_t remote_read_some(remote_mem *rm, uint64_t addr, void *buf, size_t len);
int remote_read_u64(remote_mem *rm, uint64_t addr, uint64_t *out);

#endif
