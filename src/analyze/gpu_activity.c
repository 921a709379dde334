#include "gpu_activity.h"

#include "report_model.h"
#include "store/model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_kernel_ns(const void *a, const void *b)
{
    const report_activity_kernel *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return (x->name > y->name) - (x->name < y->name);
}

static int cmp_kernel_name(const void *a, const void *b)
{
    const report_activity_kernel *x = a, *y = b;
    return (x->name > y->name) - (x->name < y->name);
}

typedef struct tagged_kernel {
    uint32_t span; /* index in report_activity.spans before they are ordered */
    report_activity_kernel k;
} tagged_kernel;

static int cmp_tagged(const void *a, const void *b)
{
    const tagged_kernel *x = a, *y = b;
    if (x->span != y->span)
        return x->span < y->span ? -1 : 1;
    return cmp_kernel_ns(&x->k, &y->k);
}

static int cmp_span(const void *a, const void *b)
{
    const report_activity_span *x = a, *y = b;
    if (x->kernel_ns != y->kernel_ns)
        return x->kernel_ns > y->kernel_ns ? -1 : 1;
    uint64_t bx = x->copy_bytes + x->set_bytes, by = y->copy_bytes + y->set_bytes;
    if (bx != by)
        return bx > by ? -1 : 1;
    if (x->path != y->path)
        return x->path < y->path ? -1 : 1;
    return x->unseen - y->unseen;
}

static uint64_t add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

int report_activity_build(const run_model *m, uint32_t role, unsigned top, report_activity *out)
{
    memset(out, 0, sizeof *out);
    int collected = 0;
    for (uint32_t i = 0; i < m->worker_count; i++) {
        const rm_worker *w = &m->workers[i];
        if (w->role_index != role || w->activity_state != STORE_GPU_COLLECTED)
            continue;
        out->processes++;
        out->dropped = add(out->dropped, w->activity_dropped);
        collected = 1;
    }
    out->state = collected ? REPORT_NONE_MEASURED : REPORT_NOT_COLLECTED;
    uint32_t entries = 0, kernels = 0;
    for (uint32_t i = 0; i < m->activity_count; i++)
        if (m->paths[m->activity[i].path].role == role) {
            entries++;
            kernels += m->activity[i].kind == STORE_GPU_KERNEL;
        }
    if (!entries)
        return 0;
    out->state = REPORT_MEASURED;
    out->spans = calloc(entries, sizeof *out->spans);
    out->span_top = calloc(kernels + 1u, sizeof *out->span_top);
    report_activity_kernel *all = calloc(kernels + 1u, sizeof *all);
    tagged_kernel *tagged = calloc(kernels + 1u, sizeof *tagged);
    if (!out->spans || !out->span_top || !all || !tagged) {
        free(all);
        free(tagged);
        report_activity_free(out);
        return -ENOMEM;
    }
    /* m->activity is by path, kind, name, unseen: a path's entries are together, its two
     * rows (seen, unseen) among them */
    uint32_t nall = 0;
    for (uint32_t i = 0; i < m->activity_count; i++) {
        const rm_activity *g = &m->activity[i];
        if (m->paths[g->path].role != role)
            continue;
        report_activity_span *s = NULL;
        for (uint32_t k = out->span_count; k-- > 0 && out->spans[k].path == g->path;)
            if (out->spans[k].unseen == (int)g->unseen)
                s = &out->spans[k];
        if (!s) {
            s = &out->spans[out->span_count++];
            s->path = g->path;
            s->unseen = (int)g->unseen;
        }
        if (g->kind == STORE_GPU_KERNEL) {
            s->kernels = add(s->kernels, g->count);
            s->kernel_ns = add(s->kernel_ns, g->ns);
            tagged[nall++] = (tagged_kernel){(uint32_t)(s - out->spans), {g->name, g->count, g->ns}};
        } else if (g->kind == STORE_GPU_MEMCPY) {
            s->copies = add(s->copies, g->count);
            s->copy_bytes = add(s->copy_bytes, g->bytes);
            s->copy_ns = add(s->copy_ns, g->ns);
        } else {
            s->sets = add(s->sets, g->count);
            s->set_bytes = add(s->set_bytes, g->bytes);
            s->set_ns = add(s->set_ns, g->ns);
        }
    }
    for (uint32_t k = 0; k < out->span_count; k++) {
        const report_activity_span *s = &out->spans[k];
        out->kernels = add(out->kernels, s->kernels);
        out->kernel_ns = add(out->kernel_ns, s->kernel_ns);
        out->copies = add(out->copies, s->copies);
        out->copy_bytes = add(out->copy_bytes, s->copy_bytes);
        out->copy_ns = add(out->copy_ns, s->copy_ns);
        out->sets = add(out->sets, s->sets);
        out->set_bytes = add(out->set_bytes, s->set_bytes);
        out->set_ns = add(out->set_ns, s->set_ns);
    }
    /* each span's kernels, most GPU time first: its at most REPORT_ACTIVITY_SPAN_TOP */
    qsort(tagged, nall, sizeof *tagged, cmp_tagged);
    for (uint32_t i = 0; i < nall;) {
        report_activity_span *s = &out->spans[tagged[i].span];
        s->top_first = out->span_top_count;
        for (; i < nall && &out->spans[tagged[i].span] == s; i++)
            if (s->top_count < REPORT_ACTIVITY_SPAN_TOP) {
                out->span_top[out->span_top_count++] = tagged[i].k;
                s->top_count++;
            }
    }
    for (uint32_t k = 0; k < out->span_count; k++) {
        report_activity_span *s = &out->spans[k];
        s->share = out->kernel_ns ? (double)s->kernel_ns / (double)out->kernel_ns : -1.0;
    }
    qsort(out->spans, out->span_count, sizeof *out->spans, cmp_span);
    for (uint32_t i = 0; i < nall; i++)
        all[i] = tagged[i].k;
    free(tagged);
    /* the role's kernels by name */
    qsort(all, nall, sizeof *all, cmp_kernel_name);
    uint32_t merged = 0;
    for (uint32_t i = 0; i < nall; i++) {
        if (merged && all[merged - 1].name == all[i].name) {
            all[merged - 1].count = add(all[merged - 1].count, all[i].count);
            all[merged - 1].ns = add(all[merged - 1].ns, all[i].ns);
        } else {
            all[merged++] = all[i];
        }
    }
    qsort(all, merged, sizeof *all, cmp_kernel_ns);
    out->top = all;
    out->top_count = merged < (top ? top : 10u) ? merged : (top ? top : 10u);
    return 0;
}

void report_activity_free(report_activity *g)
{
    free(g->spans);
    free(g->span_top);
    free(g->top);
    memset(g, 0, sizeof *g);
}
