/* The process sampler: I/O counters and RSS of the whole process, per interval
 * (docs/format.md, section PROCESS_SAMPLES). Driven by the session's sampler
 * thread; read by the writer. */
#ifndef LAPSE_COLLECT_PROC_SAMPLER_H
#define LAPSE_COLLECT_PROC_SAMPLER_H

#include "../store/model.h"

#include <stdint.h>

/* Forgets every reading; interval_ms 0: the sampler does not run. At start and
 * in a forked child. */
void proc_sampler_reset(uint32_t interval_ms);
/* Takes one reading (read_io: the process's I/O counters less lapse's own; read_rss:
 * its RSS; each 0 or -1; NULL: that half is not collected and reads 0); the interval since the previous reading is recorded, or
 * counted as unreadable when either reading failed. One thread calls it. */
void proc_sampler_tick(int (*read_io)(uint64_t out[4]), int (*read_rss)(uint64_t *out));
/* Copies the records (malloc'd, out->records; free it) for a write. 0 or -1. */
int proc_sampler_take(store_proc_samples *out);
/* The process's resident set size now (/proc/self/statm). 0 or -1. */
int proc_rss_bytes(uint64_t *out);

#endif
