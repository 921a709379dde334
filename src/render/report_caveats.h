/* The CAVEATS of a run: what is missing or distorted, derived at read time. The text
 * and JSON reports (and both sides of a diff) list the same caveats in this order:
 * unreadable, duplicate, stale, not_final, signal, leftover_tmp, superseded,
 * inconsistent, dropped_spans, folded, unmatched_ends, dropped_counters, overflow,
 * missing_ranks, io_unreadable, sampling. */
#ifndef LAPSE_RENDER_REPORT_CAVEATS_H
#define LAPSE_RENDER_REPORT_CAVEATS_H

#include "analyze/run_model.h"

typedef struct report_caveat {
    const char *kind;         /* "unreadable", "stale", ... */
    const char *message;      /* one sentence, names what it is about */
    const char *file;         /* the one file it is about, else NULL */
    const char *kept;         /* duplicate: the image counted in place of file */
    const rm_worker *worker;  /* the one worker it is about, else NULL */
    uint64_t count;           /* spans, ends or updates it counts; 0 when not a count */
    uint32_t processes;       /* processes it concerns (0 for unreadable, superseded) */
    const uint32_t *paths;    /* folded: merged paths that received folded spans */
    uint32_t path_count;
} report_caveat;

typedef void (*report_caveat_fn)(void *ctx, const report_caveat *c);

/* Calls fn for each caveat of m, in order; returns how many, or -ENOMEM (then before
 * the first call of fn). */
long report_caveats(const run_model *m, report_caveat_fn fn, void *ctx);

/* A report_caveat_fn that writes each caveat as a JSON object into an open array. */
struct json_out;
typedef struct report_caveat_json_ctx {
    struct json_out *j;
    const run_model *m;
    const char *side; /* diff: "a" or "b", written as "side"; else NULL */
} report_caveat_json_ctx;
void report_caveat_json(void *ctx, const report_caveat *c);

/* "worker pid 123 on node07 (rank 3)" */
char *report_worker_name(char *buf, size_t n, const rm_worker *w);

#endif
