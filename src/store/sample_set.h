/* Python stack samples as an aggregated set: strings, frames, processes, stacks with
 * their sample counts and the time they stand for. The set's content is a
 * store_samples (model.h) that the set owns, so a .lapse writer takes it as it is
 * (f.samples = sample_set_data(set) before store_write_file; the set must outlive the
 * write) and a reader's store_samples can be turned back into a set. Every figure in
 * it is an estimate from sampling. Its writers: samples_file.h (.lapse files, section
 * SAMPLES, docs/format.md), render/samples_write.h (collapsed stacks, speedscope, the
 * flame graph SVG). */
#ifndef LAPSE_STORE_SAMPLE_SET_H
#define LAPSE_STORE_SAMPLE_SET_H

#include "model.h"

#include <stddef.h>
#include <stdint.h>

#define SAMPLE_NONE UINT32_MAX /* what the id functions return when out of memory */

enum sample_state {
    SAMPLE_RUNNING = STORE_SAMPLE_RUNNING, /* on a CPU (or not known to wait) */
    SAMPLE_GIL = STORE_SAMPLE_GIL,         /* held the GIL */
    SAMPLE_IDLE = STORE_SAMPLE_IDLE,       /* known to wait (sleep, lock, I/O) */
};

/* What identifies a stack besides its frames. */
typedef struct sample_key {
    int64_t pid, tid;
    uint32_t thread_name; /* string id (sample_set_string), 0 when unknown */
    uint32_t span_path;   /* string id of the lapse span path open on the thread
                             (names joined with "/"), 0 when none */
    uint32_t state;       /* SAMPLE_* bits */
} sample_key;

typedef struct sample_set sample_set;

sample_set *sample_set_new(void);
void sample_set_free(sample_set *set);

/* Interns s (len bytes, need not end with a NUL; len may be 0 for ""). Returns its
 * id (0 for ""), or SAMPLE_NONE when out of memory. */
uint32_t sample_set_string(sample_set *set, const char *s, size_t len);
/* Interns a frame: function is the qualified name, file the file name (string ids),
 * line 0 when unknown. Returns its id, or SAMPLE_NONE. */
uint32_t sample_set_frame(sample_set *set, uint32_t function, uint32_t file, uint32_t line);
/* Records a process (once per pid; a second call updates it). command and
 * python_version are string ids. 0, or -ENOMEM. */
int sample_set_process(sample_set *set, int64_t pid, int64_t ppid, uint32_t command,
                       uint32_t python_version);
/* Adds one sample of a stack: frame_ids root first (depth may be 0: a thread with no
 * Python frame), standing for weight_ns. Identical stacks (key and frames) are
 * aggregated: count + 1, weight_ns added. 0, -EINVAL (an id that does not exist,
 * state with unknown bits, depth above 65536: cap it), or -ENOMEM. */
int sample_set_add(sample_set *set, const sample_key *key, const uint32_t *frame_ids,
                   uint32_t depth, uint64_t weight_ns);

/* The recording's figures, written and read through this pointer: mode ("wall", "cpu"
 * or "gil"; the set keeps its own copy through sample_set_set_mode), rates, samples
 * taken, late samples, read errors, start and end (CLOCK_REALTIME ns), duration,
 * idle. The arrays in it are the set's: read them, never change them. */
store_samples *sample_set_data(sample_set *set);
const store_samples *sample_set_view(const sample_set *set);
/* Sets the mode string (copied). 0, or -ENOMEM. */
int sample_set_set_mode(sample_set *set, const char *mode);

/* A set holding a copy of s (e.g. from a decoded .lapse file). NULL when out of memory
 * or when s is inconsistent (an id that does not exist). */
sample_set *sample_set_from_store(const store_samples *s);

/* Adds the content of s (e.g. another file of the same run) to set: stacks, frames,
 * strings and processes are merged; samples, late samples and read errors add up;
 * the rate asked is the highest, the rate achieved the lowest, the recording spans
 * both; modes that differ become "mixed". 0, -EINVAL (s inconsistent) or -ENOMEM (the
 * set may then hold part of s). */
int sample_set_merge(sample_set *set, const store_samples *s);

/* Totals over all stacks. */
uint64_t sample_set_total_count(const sample_set *set);
uint64_t sample_set_total_weight_ns(const sample_set *set);

#endif
