/* .lapse files of Python samples: a file of one sampled process, and samples added
 * to an existing run file. */
#ifndef LAPSE_STORE_SAMPLES_FILE_H
#define LAPSE_STORE_SAMPLES_FILE_H

#include "sample_set.h"

/* The process that a .lapse file of samples describes. */
typedef struct samples_file_meta {
    int64_t pid, ppid;   /* the target (ppid -1 when unknown) */
    const char *host;    /* NULL: this machine's name */
    const char *role;    /* NULL: "python" */
    const char *run_id;  /* NULL: made from pid and start time */
    uint64_t start_real_ns, end_real_ns; /* 0: the set's recording start/end */
    const char *end_reason; /* NULL: "exit" (the recording ended) */
    /* What the target used, as read at the end (wait4 of a launched target, else its
     * /proc/PID/stat and status); 0 where it could not be read: CPU time and context
     * switches are then unknown in the file (cpu_unknown, -1), not 0. */
    int has_cpu, has_ctx;
    uint64_t cpu_user_ns, cpu_sys_ns, max_rss_kb;
    int64_t ctx_voluntary, ctx_involuntary;
} samples_file_meta;

/* Writes a final .lapse file (atomically; flags: STORE_SHARE) holding the samples of
 * one target process: meta, an empty span tree and the SAMPLES section, so `lapse
 * report` reads it. 0, or a negative code with one line in err. */
int samples_save_lapse(const sample_set *set, const samples_file_meta *meta, const char *path,
                       unsigned flags, char *err, size_t errlen);

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
