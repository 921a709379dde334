/* Reading another process's memory with process_vm_readv only: the target is never
 * stopped. remote_read copies one range; remote_read_cached serves reads from a
 * per-pass cache of 512-byte blocks, filling a miss with the block and the blocks
 * below it in one system call (a thread's frames sit next to each other on its data
 * stack, callers below callees), so that a deep stack costs a few calls, not one per
 * frame; and each pass starts by reading, in one batch, every block the previous
 * pass used, so that a target in a steady state costs one call per pass. */
#ifndef LAPSE_PYREAD_REMOTE_MEM_H
#define LAPSE_PYREAD_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REMOTE_PAGE 4096u
#define REMOTE_BLOCK 512u          /* cache granularity: divides a page, so a block never spans two */
#define REMOTE_MIN_BLOCKS 128      /* slots to start with: a pass of a few threads fits, and stays in cache */
#define REMOTE_MAX_BLOCKS 2048     /* 1 MiB: room for a few hundred threads' blocks in a pass */
#define REMOTE_HINTS 256           /* direct-mapped first guess, small enough to stay in cache */
#define REMOTE_FILL_MAX 16         /* blocks one miss may fill */
#define REMOTE_MERGE_GAP 2         /* unused blocks read to join two ranges in one */
#define REMOTE_IOV_MAX 1024        /* remote ranges per process_vm_readv (the kernel's UIO_MAXIOV) */

/* A slot in the hash index: the slot holding a block (its address is in block_addr),
 * valid in the pass whose generation's low 16 bits are gen. */
typedef struct remote_index_entry {
    uint16_t gen;
    uint16_t slot;
} remote_index_entry;

typedef struct remote_mem {
    pid_t pid;
    /* cap slots of REMOTE_BLOCK bytes; a pass that runs out of them doubles cap at the
     * next reset, up to REMOTE_MAX_BLOCKS (a target with many threads) */
    int cap;
    int grow;
    /* A slot holds block_addr[slot] in the pass whose generation is slot_gen[slot];
     * a new pass makes every slot empty by moving gen on. */
    uint32_t gen;
    uint64_t *block_addr;
    uint32_t *slot_gen;
    uint32_t *used_gen;  /* read from in the pass of this generation */
    uint16_t *used_list; /* the slots read from in this pass */
    int used_count;
    int next_slot;
    uint16_t hint[REMOTE_HINTS];  /* by a hash of a block's address: its last slot */
    remote_index_entry *index;    /* 2 * cap entries, open addressing */
    unsigned char (*blocks)[REMOTE_BLOCK];
    /* scratch of remote_mem_reset, cap each */
    uint64_t *used_addr, *range_first;
    int *range_blocks;
    /* A 4-byte value read first in each pass's batch, before every block (0: none) */
    uint64_t watch_addr;
    uint32_t watch_value;
    int watch_ok; /* watch_value was read in this pass */
    /* counters since open */
    uint64_t syscalls;
    uint64_t bytes;
    int last_errno; /* errno of the last failed read (EPERM, ESRCH, EFAULT...) */
} remote_mem;

int remote_mem_init(remote_mem *rm, pid_t pid);
void remote_mem_free(remote_mem *rm);
/* Start a pass: forget what was cached, then read again, in one call (more past
 * REMOTE_IOV_MAX ranges), every block the previous pass used (a target in a steady
 * state needs no other read), and first of all the watched value. */
void remote_mem_reset(remote_mem *rm);
/* How many blocks this pass has used so far: a mark for remote_mem_refresh. */
int remote_mem_used_mark(const remote_mem *rm);
/* Read again, in one call, the blocks holding first[0..nfirst) (in that order: what
 * points to the rest before the rest), then every other block used since `mark`:
 * what a torn read saw, read anew at one moment. 0, or -1 (a block that could not be
 * read is dropped from the cache). */
int remote_mem_refresh(remote_mem *rm, const uint64_t *first, int nfirst, int mark);
/* Read the 4 bytes at addr (0: nothing) at the start of each pass's batch. */
void remote_mem_watch(remote_mem *rm, uint64_t addr);
/* Copy len bytes at addr; 0, or -1 (errno in rm->last_errno) if any byte could not be read. */
int remote_read(remote_mem *rm, uint64_t addr, void *buf, size_t len);
/* The same through the cache: a miss reads the missing block and up to fill-1
 * blocks below it (fill 1: just the block) in one call. */
int remote_read_cached(remote_mem *rm, uint64_t addr, void *buf, size_t len, int fill);
/* Read up to len bytes, stopping at the first unreadable page; returns bytes read. */
size_t remote_read_some(remote_mem *rm, uint64_t addr, void *buf, size_t len);
int remote_read_u64(remote_mem *rm, uint64_t addr, uint64_t *out);

#endif
