/* Python stack samples: an aggregated set (strings, frames, processes, stacks with
 * their sample counts and the time they stand for) and its writers: collapsed stacks
 * (flamegraph.pl input), speedscope JSON, a self-contained interactive flame graph
 * SVG and .lapse files (section SAMPLES, docs/format.md).
 *
 * The set's content is a store_samples (src/store/model.h) that the set owns, so a
 * .lapse writer takes it as it is and a reader's store_samples can be turned back
 * into a set. Every figure in it is an estimate from sampling. */
#ifndef LAPSE_SAMPLES_SAMPLES_H
#define LAPSE_SAMPLES_SAMPLES_H

#include "../store/model.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* ---- writers: each returns 0, or -EIO when writing to out failed ---- */

enum samples_collapsed_flags {
    SAMPLES_COLLAPSED_NO_HEADER = 1u << 0, /* leave out the "# ..." comment lines */
    SAMPLES_COLLAPSED_WEIGHT_US = 1u << 1, /* values: the time stacks stand for, in us
                                              (default: sample counts) */
    SAMPLES_COLLAPSED_SPANS = 1u << 2,     /* put "[span a/b]" under the thread frame */
};
/* Collapsed stacks, one line per stack: "process;thread;frame;frame count", frames
 * root first as "function (file:line)". The "process" frame is there only when the
 * set holds more than one process. The header (lines starting with "#", which
 * flamegraph.pl counts as ignored) says what the values are. */
int samples_write_collapsed(const sample_set *set, FILE *out, unsigned flags);

/* speedscope's file format (https://www.speedscope.app/file-format-schema.json): one
 * "sampled" profile per thread, weights in microseconds of the time the samples stand
 * for. name names the file in speedscope. */
int samples_write_speedscope(const sample_set *set, FILE *out, const char *name);

/* A self-contained interactive flame graph: SVG with inline script (click a frame to
 * zoom, search to highlight, reset), one tower per process and thread, widths by the
 * time samples stand for. title goes at the top. */
int samples_write_flamegraph(const sample_set *set, FILE *out, const char *title);

/* The process that a .lapse file of samples describes. */
typedef struct samples_file_meta {
    int64_t pid, ppid;   /* the target (ppid -1 when unknown) */
    const char *host;    /* NULL: this machine's name */
    const char *role;    /* NULL: "python" */
    const char *run_id;  /* NULL: made from pid and start time */
    uint64_t start_real_ns, end_real_ns; /* 0: the set's recording start/end */
    const char *end_reason; /* NULL: "exit" (the recording ended) */
} samples_file_meta;

/* Writes a final .lapse file (atomically; flags: STORE_SHARE) holding the samples of
 * one target process: meta, an empty span tree and the SAMPLES section, so `lapse
 * report` reads it. 0, or a negative code with one line in err. */
int samples_save_lapse(const sample_set *set, const samples_file_meta *meta, const char *path,
                       unsigned flags, char *err, size_t errlen);
/* The samples of every file of PATH (a .lapse file, a run directory or a directory of
 * runs, as `lapse report` takes it) merged, written as format: "collapsed",
 * "speedscope" or "flamegraph" (title for the flame graph and speedscope). 0, or a
 * negative code with one line in err (no such path, no file with samples, unknown
 * format, write error). */
int samples_export(const char *path, const char *format, const char *title, FILE *out,
                   char *err, size_t errlen);

/* Adds the samples of set to an existing .lapse file (a run's file of the sampled
 * process: one target, one run, one file): reads it whole, merges with samples it may
 * already hold, writes it back atomically, with its owner and mode (store_update:
 * no link followed). With owner >= 0 the file and its directory must belong to that
 * uid (the target's). Call it once the process has written its final file (a later
 * snapshot of the process would replace the file without them). 0, or a negative
 * code with one line in err (-EPERM: another user's, -ELOOP: a link). */
int samples_add_to_lapse(const sample_set *set, const char *path, int64_t owner, char *err,
                         size_t errlen);

/* The samples of the file samples_path (as `lapse record --format lapse` writes it)
 * added to the .lapse file target (samples_add_to_lapse, with no owner: the caller's
 * own file), then samples_path removed.
 * 0, or a negative code with one line in err (samples_path is then kept). */
int samples_move_to_lapse(const char *samples_path, const char *target, char *err, size_t errlen);

/* To add samples to a store_file of your own (e.g. a run's file): f.samples =
 * sample_set_data(set) before store_write_file; the set must outlive the write. */

#endif
