/* The process's I/O counters less lapse's own (lapse_io_counters, lapse_rss_bytes in
 * lapse.h), and the lock that keeps a reading from seeing one of lapse's writes half
 * done. Used by the process sampler, the io scope, and the session's writes. */
#ifndef LAPSE_COLLECT_IO_H
#define LAPSE_COLLECT_IO_H

#include <signal.h>
#include <stdint.h>

/* Where the counters are read: /proc/self/io, or for tests of the unreadable path
 * the file named by $LAPSE_TEST_IO_FILE. At each session's start. */
void collect_io_configure(void);

/* Counts bytes that lapse itself read (from /proc) as its own: left out of the
 * process's I/O. Any thread. */
void collect_own_read(uint64_t bytes);

/* Blocks, in the calling thread, the signals lapse handles (saved: the mask before):
 * a handler that interrupted a write of lapse's on its own thread could neither wait
 * for it nor write itself. */
void collect_block_handled_signals(sigset_t *saved);

/* Around each file write of lapse's (and the snapshot it writes): readings wait for
 * it, and what the calling thread moved meanwhile (measured, /proc/thread-self/io) is
 * counted as lapse's own. end: counted 0 when the write never ran. */
typedef struct collect_own_write {
    int measured;
    uint64_t before[4];
} collect_own_write;
void collect_io_write_begin(collect_own_write *w);
void collect_io_write_end(collect_own_write *w, int counted);

/* fork: no reading may be in progress across it (pthread_atfork order: after the
 * session's write lock). */
void collect_io_fork_prepare(void);
void collect_io_fork_parent(void);
void collect_io_fork_child(void);

#endif
