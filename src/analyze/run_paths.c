/* The report's run paths: each span path merged over every role (report_model.h). */
#include "report_model.h"

#include "core/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct run_key {
    uint32_t parent; /* merged id of its parent; RM_NONE for a top-level span */
    uint32_t name;   /* string id (interned: equal names, equal ids) */
} run_key;

/* Gives each role path a merged id, the same for the same (merged parent, name) in
 * any role: id_of[i] (RM_NONE for a role root), keys[id]. Paths come parents first.
 * Returns how many ids, or -1 out of memory. */
static int64_t merge_ids(const run_model *m, uint32_t *id_of, run_key *keys)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)m->path_count)
        cap <<= 1;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, cap * sizeof *slots); /* RM_NONE */
    uint32_t count = 0;
    for (uint32_t i = 0; i < m->path_count; i++) {
        const rm_path *p = &m->paths[i];
        if (p->parent == RM_NONE) {
            id_of[i] = RM_NONE;
            continue;
        }
        run_key k = {id_of[p->parent], p->name};
        size_t s = hash_mix(((uint64_t)k.parent << 32) | k.name) & (cap - 1);
        while (slots[s] != RM_NONE && (keys[slots[s]].parent != k.parent || keys[slots[s]].name != k.name))
            s = (s + 1) & (cap - 1);
        if (slots[s] == RM_NONE) {
            slots[s] = count;
            keys[count++] = k;
        }
        id_of[i] = slots[s];
    }
    free(slots);
    return count;
}

typedef struct counter_ref {
    uint32_t run_path; /* index in run_paths */
    uint32_t counter;  /* index in run_model.counters */
} counter_ref;

static int cmp_counter_ref(const void *a, const void *b, void *ctx)
{
    const run_model *m = ctx;
    const counter_ref *x = a, *y = b;
    if (x->run_path != y->run_path)
        return x->run_path < y->run_path ? -1 : 1;
    int c = strcmp(rm_str(m, m->counters[x->counter].name), rm_str(m, m->counters[y->counter].name));
    if (c)
        return c;
    return x->counter < y->counter ? -1 : x->counter > y->counter;
}

/* The counters of every run path, those of one name added, by name. */
static int merge_counters(report_model *r, const uint32_t *run_of)
{
    const run_model *m = r->m;
    counter_ref *refs = malloc((m->counter_count ? m->counter_count : 1u) * sizeof *refs);
    r->run_counters = calloc(m->counter_count ? m->counter_count : 1u, sizeof *r->run_counters);
    if (!refs || !r->run_counters) {
        free(refs);
        return -ENOMEM;
    }
    uint32_t n = 0;
    for (uint32_t ro = 0; ro < m->role_count; ro++) {
        const rs_role *rs = &r->stats.roles[ro];
        for (uint32_t k = 0; k < rs->phase_count; k++) {
            uint32_t p = rs->phases[k];
            for (uint32_t c = m->paths[p].first_counter; c != RM_NONE; c = m->counters[c].next)
                refs[n++] = (counter_ref){run_of[p], c};
        }
    }
    qsort_r(refs, n, sizeof *refs, cmp_counter_ref, (void *)m);
    for (uint32_t i = 0; i < n; i++) {
        const rm_counter *ct = &m->counters[refs[i].counter];
        report_run_path *rp = &r->run_paths[refs[i].run_path];
        report_run_counter *last = r->run_counter_count ? &r->run_counters[r->run_counter_count - 1] : NULL;
        if (rp->counter_count && last->name == ct->name) {
            int64_t sum;
            if (__builtin_add_overflow(last->sum, ct->sum, &sum)) {
                sum = ct->sum < 0 ? INT64_MIN : INT64_MAX;
                last->overflowed = 1;
            }
            last->sum = sum;
            last->overflowed |= ct->overflowed;
            continue;
        }
        if (!rp->counter_count)
            rp->counters_first = r->run_counter_count;
        rp->counter_count++;
        r->run_counters[r->run_counter_count++] = (report_run_counter){ct->name, ct->sum, ct->overflowed};
    }
    free(refs);
    return 0;
}

int report_run_paths_build(report_model *r)
{
    const run_model *m = r->m;
    size_t n = m->path_count ? m->path_count : 1u;
    uint32_t *id_of = malloc(n * sizeof *id_of);
    uint32_t *order = malloc(n * sizeof *order); /* merged id -> index in run_paths */
    uint32_t *run_of = malloc(n * sizeof *run_of); /* role path -> index in run_paths */
    run_key *keys = malloc(n * sizeof *keys);
    r->run_paths = calloc(n, sizeof *r->run_paths);
    r->run_path_roles = malloc(n * sizeof *r->run_path_roles);
    int rc = -ENOMEM;
    if (!id_of || !order || !run_of || !keys || !r->run_paths || !r->run_path_roles)
        goto done;
    int64_t ids = merge_ids(m, id_of, keys);
    if (ids < 0)
        goto done;
    memset(order, 0xff, n * sizeof *order);
    /* first sight, figures and how many roles */
    for (uint32_t ro = 0; ro < m->role_count; ro++) {
        const rs_role *rs = &r->stats.roles[ro];
        for (uint32_t k = 0; k < rs->phase_count; k++) {
            uint32_t p = rs->phases[k], id = id_of[p];
            if (order[id] == RM_NONE) {
                order[id] = r->run_path_count++;
                report_run_path *rp = &r->run_paths[order[id]];
                rp->name = m->paths[p].name;
                rp->parent = keys[id].parent; /* a merged id, for now */
            }
            report_run_path *rp = &r->run_paths[order[id]];
            run_of[p] = order[id];
            rp->calls += m->paths[p].calls;
            rp->total_ns += m->paths[p].total_ns;
            rp->self_ns += rm_self_ns(&m->paths[p]);
            rp->estimated |= m->paths[p].sample_stride != 0 || m->paths[p].child_estimated != 0;
            rp->role_count++;
        }
    }
    uint32_t first = 0;
    for (uint32_t i = 0; i < r->run_path_count; i++) {
        report_run_path *rp = &r->run_paths[i];
        if (rp->parent != RM_NONE)
            rp->parent = order[rp->parent];
        rp->roles_first = first;
        first += rp->role_count;
        rp->role_count = 0; /* counted again as they are filled in */
    }
    for (uint32_t ro = 0; ro < m->role_count; ro++) {
        const rs_role *rs = &r->stats.roles[ro];
        for (uint32_t k = 0; k < rs->phase_count; k++) {
            report_run_path *rp = &r->run_paths[run_of[rs->phases[k]]];
            r->run_path_roles[rp->roles_first + rp->role_count++] = ro;
        }
    }
    rc = merge_counters(r, run_of);
done:
    free(id_of);
    free(order);
    free(run_of);
    free(keys);
    return rc;
}
