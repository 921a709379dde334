/* Where an outside reader finds the spans open on each thread of a live process
 * (for `lapse record`, which samples Python stacks from outside and tags each sample
 * with the lapse span path open on its thread). The core exports one symbol with
 * default visibility, `lapse_span_registry`, of this layout (version 1; 64-bit Linux,
 * little-endian, every address 8 bytes). Nothing here is written on the span hot
 * path: the registry only says where the engine's own state is and how it is laid
 * out, and a reader follows it with process_vm_readv (src/pyread/span_stack.c).
 *
 * Walk: *threads_head is the first core_thread of the current session (NULL: none);
 * each thread's `next` is at thread_off_next. A thread belongs to the session when its
 * u32 at thread_off_gen equals the u32 at gen (0: no session); it has exited when its
 * i32 at thread_off_exited is nonzero. At thread_off_tid is its i64 kernel tid, at
 * thread_off_depth the u32 number of open frames, at thread_off_stack the address of
 * its frames (frame_size bytes each; frame 0 is the thread root, frames 1..depth the
 * open spans, outermost first). A frame's u32 name id is at frame_off_name and its u32
 * flags at frame_off_flags; a frame with frame_flag_folded was folded into its parent
 * (the report counts it there) and is left out of the path. A name id below the u32 at
 * names_count is read as: chunk = ((u64 *)names_chunks)[id >> names_chunk_bits], then
 * the char * at chunk + 8 * (id & ((1 << names_chunk_bits) - 1)), a NUL-terminated
 * string that never changes once published. Reads race with the program: a reader
 * checks every count and index, caps depth at max_depth and threads at max_threads,
 * and takes a result that fails a check as unknown. */
#ifndef LAPSE_CORE_SPAN_REGISTRY_H
#define LAPSE_CORE_SPAN_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#define LAPSE_SPAN_REGISTRY_MAGIC "lapse-spans-v1"
#define LAPSE_SPAN_REGISTRY_VERSION 1u
#define LAPSE_SPAN_REGISTRY_SYMBOL "lapse_span_registry"

typedef struct lapse_span_registry_v1 {
    char magic[16];         /* LAPSE_SPAN_REGISTRY_MAGIC, NUL padded */
    uint32_t version;       /* LAPSE_SPAN_REGISTRY_VERSION */
    uint32_t size;          /* sizeof this struct */
    const void *gen;        /* u32: the current session generation, 0 = none */
    const void *threads_head; /* core_thread *: the first thread */
    const void *names_chunks; /* const char **[]: the name table's chunks */
    const void *names_count;  /* u32: ids published so far */
    uint32_t names_chunk_bits;
    uint32_t thread_off_next, thread_off_gen, thread_off_tid, thread_off_depth;
    uint32_t thread_off_stack, thread_off_exited;
    uint32_t frame_size, frame_off_name, frame_off_flags, frame_flag_folded;
    uint32_t max_threads, max_depth;
    uint32_t reserved;
} lapse_span_registry_v1;

/* ---- the reader, for tools (src/pyread/span_stack.c, in lapse_tools; never in the
 * injected core) ---- */
#include <sys/types.h>

typedef struct span_stack_reader span_stack_reader;

/* Finds the registry in pid's memory (through the ELF symbol tables of the files it
 * maps). 0, or a negative code with one line in msg: -ENOENT when the process has no
 * lapse core, -EPERM/-ESRCH from process_vm_readv. */
int span_stack_open(pid_t pid, span_stack_reader **out, char *msg, size_t msglen);
void span_stack_close(span_stack_reader *r);
/* The lapse span path open on thread tid of the target: span names, outermost first,
 * joined with "/" into buf (cut to len). Returns the number of spans (0: none open, no
 * session, or the thread never opened a span), or a negative code when a read failed
 * (-ESRCH: the process is gone) or raced with the program (-EAGAIN): unknown. */
int span_stack_path(span_stack_reader *r, int64_t tid, char *buf, size_t len);
/* process_vm_readv calls made so far (for the sampler's cost figures). */
uint64_t span_stack_reads(const span_stack_reader *r);

#endif
