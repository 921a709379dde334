#include "flame_top.h"

#include "core/hash.h"
#include "sample_chart.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow_index(flame_top *t)
{
    uint32_t cap = t->mask ? (t->mask + 1) * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *ids = malloc(cap * sizeof *ids);
    if (!keys || !ids) {
        free(keys);
        free(ids);
        return -ENOMEM;
    }
    for (uint32_t i = 0; t->mask && i <= t->mask; i++) {
        if (!t->keys[i])
            continue;
        uint32_t h = (uint32_t)(hash_mix(t->keys[i]) & (cap - 1));
        while (keys[h])
            h = (h + 1) & (cap - 1);
        keys[h] = t->keys[i];
        ids[h] = t->ids[i];
    }
    free(t->keys);
    free(t->ids);
    t->keys = keys;
    t->ids = ids;
    t->mask = cap - 1;
    return 0;
}

static uint32_t new_node(flame_top *t, const char *label, uint32_t parent)
{
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        flame_node *n = realloc(t->nodes, cap * sizeof *n);
        if (!n)
            return UINT32_MAX;
        t->nodes = n;
        t->cap = cap;
    }
    char *l = strdup(label);
    if (!l)
        return UINT32_MAX;
    t->nodes[t->count] = (flame_node){.label = l, .parent = parent, .first_kid = UINT32_MAX,
                                      .next = UINT32_MAX};
    return t->count++;
}

/* The kid of parent labelled label, made when new. UINT32_MAX: out of memory. */
static uint32_t kid_of(flame_top *t, uint32_t parent, const char *label)
{
    if ((t->used + 1) * 2 > t->mask + 1 && grow_index(t))
        return UINT32_MAX;
    uint64_t key = hash_bytes(hash_str(label), &parent, sizeof parent) | 1u; /* never 0 */
    uint32_t h = (uint32_t)(hash_mix(key) & t->mask);
    for (; t->keys[h]; h = (h + 1) & t->mask) {
        const flame_node *n = &t->nodes[t->ids[h]];
        if (t->keys[h] == key && n->parent == parent && !strcmp(n->label, label))
            return t->ids[h];
    }
    uint32_t id = new_node(t, label, parent);
    if (id == UINT32_MAX)
        return id;
    t->keys[h] = key;
    t->ids[h] = id;
    t->used++;
    return id;
}

int flame_top_init(flame_top *t)
{
    memset(t, 0, sizeof *t);
    return new_node(t, "all", UINT32_MAX) == UINT32_MAX ? -ENOMEM : 0;
}

int flame_top_add(flame_top *t, const store_samples *s)
{
    char label[1024];
    for (uint32_t i = 0; i < s->stack_count; i++) {
        const store_sample_stack *st = &s->stacks[i];
        uint64_t w = sample_stack_width_ns(s, st);
        uint32_t node = 0;
        t->nodes[0].weight_ns += w;
        t->nodes[0].samples += st->count;
        for (uint32_t d = 0; d < st->depth && d + 1 < FLAME_TOP_DEPTH; d++) {
            const store_sample_frame *f = &s->frames[s->frame_ids[st->first + d]];
            const char *fn = s->strings[f->function], *file = s->strings[f->file];
            if (*file)
                snprintf(label, sizeof label, "%s (%s)", fn, file);
            else
                snprintf(label, sizeof label, "%s", fn);
            if ((node = kid_of(t, node, label)) == UINT32_MAX)
                return -ENOMEM;
            t->nodes[node].weight_ns += w;
            t->nodes[node].samples += st->count;
        }
    }
    return 0;
}

static int heavier_first(const void *a, const void *b, void *ctx)
{
    const flame_node *n = ctx;
    const flame_node *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];
    if (x->weight_ns != y->weight_ns)
        return x->weight_ns > y->weight_ns ? -1 : 1;
    int c = strcmp(x->label, y->label);
    return c ? c : (*(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1);
}

void flame_top_finish(flame_top *t)
{
    flame_node *n = t->nodes;
    uint64_t all = n[0].weight_ns;
    n[0].shown = 1;
    n[0].share = all ? 1.0 : 0;
    /* nodes were made parent first: a node's parent is decided before it */
    for (uint32_t i = 1; i < t->count; i++) {
        n[i].share = all ? (double)n[i].weight_ns / (double)all : 0;
        n[i].shown = n[i].share >= FLAME_TOP_MIN_SHARE && n[n[i].parent].shown;
        if (!n[i].shown && n[n[i].parent].shown)
            n[n[i].parent].hidden++;
    }
    uint32_t *order = malloc(((size_t)t->count + 1) * sizeof *order), k = 0;
    if (!order) { /* no order to link in: the root alone is shown, its kids hidden */
        n[0].hidden = 0;
        for (uint32_t i = 1; i < t->count; i++)
            n[i].shown = 0, n[0].hidden += n[i].parent == 0;
        return;
    }
    for (uint32_t i = 1; i < t->count; i++)
        if (n[i].shown)
            order[k++] = i;
    qsort_r(order, k, sizeof *order, heavier_first, n);
    for (uint32_t j = k; j-- > 0;) { /* lightest first: each links in front */
        flame_node *x = &n[order[j]];
        x->next = n[x->parent].first_kid;
        n[x->parent].first_kid = order[j];
    }
    free(order);
}

void flame_top_free(flame_top *t)
{
    for (uint32_t i = 0; i < t->count; i++)
        free(t->nodes[i].label);
    free(t->nodes);
    free(t->keys);
    free(t->ids);
    memset(t, 0, sizeof *t);
}
