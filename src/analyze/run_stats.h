/* What a report derives from a merged run model: per role, its paths in the order of
 * their strings, the order by self time, the top-level spans, the most-called loop,
 * and each path's figures (quantiles, share, wait%, the spread across ranks) made on
 * demand by run_stats_phase from the merged path: a run of a million paths holds no
 * figure per path that it does not print. Both the text and the JSON report render
 * from this. */
#ifndef LAPSE_ANALYZE_RUN_STATS_H
#define LAPSE_ANALYZE_RUN_STATS_H

#include "rank_spread.h"
#include "run_model.h"

/* The figures of one phase (run_stats_phase). */
typedef struct rs_phase {
    uint32_t path;    /* index in run_model.paths */
    uint64_t self_ns; /* total - child, never below 0 */
    double mean_ns, p50_ns, p90_ns, p95_ns, p99_ns; /* per-call wall time; 0 without calls */
    double share_of_busy; /* total / the role's busy time; -1 when the role has none */
    double wait_share;    /* estimated share of the CPU sampler's ticks in it at which its
                             thread was off CPU (wait_share.h); -1 when too few ticks
                             saw it (run_model.paths has the ticks) */
    double gpu_mean_ns;   /* GPU time per entry of a gpu_time phase that has one; -1
                             when none has (run_model.paths has the sums) */
    rank_spread across_ranks; /* per-rank total time over the role's ranks; ranks == 0
                                 when the role's processes have no rank */
} rs_phase;

#define RS_IO_BINS 48 /* columns of the I/O sparkline */

/* A role's process sampler figures, summed over its processes that ran it: the I/O
 * over those that collected I/O, the RSS peak over those that collected memory. */
typedef struct rs_io {
    uint32_t processes;   /* processes of the role whose process sampler read I/O */
    uint32_t interval_ms; /* the largest sampler period among them */
    uint64_t intervals, quiet_intervals, unreadable, sampler_cpu_ns;
    uint64_t read_chars, write_chars, read_bytes, write_bytes, quiet_chars, phased_chars;
    uint64_t rss_peak_bytes;  /* largest RSS reading of one process */
    uint32_t children_in_run; /* processes of the run whose parent is one of these (same
                                 host): a parent's /proc/self/io includes the I/O of the
                                 children it waited for, so theirs counts twice */
    uint32_t rss_peak_worker; /* RM_NONE when none */
    uint32_t rss_interval_ms; /* that process's sampler period */
    /* bytes (read_chars + write_chars) per column of the run's time, each record
     * spread evenly over its stretch */
    uint64_t bins_start_real_ns, bin_ns;
    double bins[RS_IO_BINS];
} rs_io;

/* A role's CPU samplers (wait%), summed over its processes that ran one. */
typedef struct rs_wait_sampler {
    uint32_t processes;          /* with a CPU sampler */
    uint32_t realtime_processes; /* of them, those whose sampler had real-time priority */
    uint64_t ticks, late_ticks, cpu_ns;
    double late_share;      /* late / ticks; -1 without ticks */
    double cpu_ns_per_tick; /* the sampler's CPU per tick; -1 without ticks */
} rs_wait_sampler;

typedef struct rs_role {
    uint32_t role;      /* index in run_model.roles */
    uint32_t *phases;   /* every path of the role except its root (index in
                           run_model.paths), in the order of their strings */
    uint32_t phase_count;
    uint32_t *by_self;  /* phase indices, largest self time first: the first
                           by_self_count (the top asked for) */
    uint32_t by_self_count;
    uint32_t *top_level; /* phase indices of depth-1 paths, largest total first: the
                            first top_level_shown (the top asked for) */
    uint32_t top_level_count, top_level_shown; /* depth-1 paths; of them in top_level */
    uint64_t top_level_ns; /* their totals added */
    uint64_t *scratch;  /* room for the spread across ranks of one phase at a time */
    uint32_t loop;      /* phase index of the most-called loop, RM_NONE when none */
    int has_wait;       /* some phase has CPU sampler ticks */
    rs_wait_sampler wait_sampler;
    rs_io io;
} rs_role;

typedef struct run_stats {
    rs_role *roles; /* parallel to run_model.roles */
    uint32_t role_count;
} run_stats;

/* An order by a figure: key descending, then tie ascending; index is what is ordered. */
typedef struct rs_key {
    uint64_t key;
    uint32_t tie, index;
} rs_key;
/* Sorts keys so. 0 or -ENOMEM (keys unchanged). */
int rs_key_sort(rs_key *keys, uint32_t n);

/* The first k keys in that order of those pushed, without holding the others: room
 * for k keys (k 0: all of them, grown as they come). */
typedef struct rs_top {
    rs_key *keys;
    uint32_t k, n, cap;
    int heap; /* keys[0..k) is a heap, the last in the order at its root */
} rs_top;
/* 0 or -ENOMEM. */
int rs_top_init(rs_top *t, uint32_t k);
int rs_top_push(rs_top *t, rs_key key);
/* Sorts what it kept: t->keys[0..t->n). 0 or -ENOMEM. */
int rs_top_sort(rs_top *t);
void rs_top_free(rs_top *t);

/* top: the phases by self time kept in by_self (0: all). 0 or -ENOMEM. */
int run_stats_build(const run_model *m, uint32_t top, run_stats *s);
void run_stats_free(run_stats *s);

/* The figures of phase k of role rs (rs->phases[k]), made from its merged path. One
 * call at a time per role (its spread across ranks is worked out in rs->scratch). */
void run_stats_phase(const run_model *m, const rs_role *rs, uint32_t k, rs_phase *out);

/* The most-called loop of a role: among paths called more than once, the shallowest
 * depth; at that depth the most calls (then the larger total, then the first in
 * string order). phases: path indices in the order of their strings. */
uint32_t run_stats_pick_loop(const run_model *m, const uint32_t *phases, uint32_t count);

#endif
