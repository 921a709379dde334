/* The top of the flame graph of a run's Python samples, for the page that is read
 * without script (lapse view writes it as markup): the stacks of every file merged
 * frame by frame from the root, frames keyed by "function (file)", as the page's Flame
 * tab merges them, to a depth of FLAME_TOP_DEPTH; a frame is shown when it stands for
 * at least FLAME_TOP_MIN_SHARE of the samples' time (the others are counted in its
 * parent's hidden figures). Widths are the time the samples stand for
 * (sample_stack_width_ns): estimates from sampling. */
#ifndef LAPSE_ANALYZE_FLAME_TOP_H
#define LAPSE_ANALYZE_FLAME_TOP_H

#include "store/model.h"

#include <stdint.h>

#define FLAME_TOP_DEPTH 8
#define FLAME_TOP_MIN_SHARE 0.01

typedef struct flame_node {
    char *label;        /* "function (file)"; the root's "all" */
    uint64_t weight_ns; /* the time its samples stand for */
    uint64_t samples;
    double share;       /* weight_ns / the root's (0 when the root has none) */
    uint32_t parent;    /* UINT32_MAX for the root */
    uint32_t first_kid, next; /* shown kids, heaviest first; UINT32_MAX ends */
    uint32_t hidden;    /* kids not shown (below FLAME_TOP_MIN_SHARE) */
    int shown;
} flame_node;

typedef struct flame_top {
    flame_node *nodes;  /* nodes[0] is the root */
    uint32_t count, cap;
    uint64_t *keys;     /* building: (parent, label) hash + 1 -> id; 0 empty */
    uint32_t *ids, mask, used;
} flame_top;

/* 0 or -ENOMEM. */
int flame_top_init(flame_top *t);
/* Merges the stacks of s. 0 or -ENOMEM (t then holds part of s). */
int flame_top_add(flame_top *t, const store_samples *s);
/* Shares, what is shown, the kids' order. */
void flame_top_finish(flame_top *t);
void flame_top_free(flame_top *t);

#endif
