#include "span_regions.h"

#include "timeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int span_regions_origin(const store_file *f, uint64_t *origin_ns)
{
    uint64_t off = timeline_clock_offset(f);
    if (f->meta.start_mono_ns) {
        *origin_ns = f->meta.start_mono_ns + off;
        return 0;
    }
    if (!f->span_count)
        return -1;
    uint64_t first = UINT64_MAX;
    for (uint64_t i = 0; i < f->span_count; i++)
        if (f->spans[i].begin_ns < first)
            first = f->spans[i].begin_ns;
    *origin_ns = first + off;
    return 0;
}

/* Spans in order of name, then start, then the longer first (a call before the
 * calls of the same name it holds). */
static int cmp_by_name_start(const void *a, const void *b, void *ctx)
{
    const store_span *spans = ctx;
    const store_span *x = &spans[*(const uint64_t *)a], *y = &spans[*(const uint64_t *)b];
    if (x->name != y->name)
        return x->name < y->name ? -1 : 1;
    if (x->begin_ns != y->begin_ns)
        return x->begin_ns < y->begin_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns > y->end_ns ? -1 : 1;
    return 0;
}

static int cmp_by_first_start(const void *a, const void *b)
{
    const span_region *x = a, *y = b;
    if (x->start_ns[0] != y->start_ns[0])
        return x->start_ns[0] < y->start_ns[0] ? -1 : 1;
    return strcmp(x->name, y->name);
}

int span_regions_build(const store_file *f, uint64_t origin_ns, span_regions *out)
{
    memset(out, 0, sizeof *out);
    uint64_t n = f->span_count;
    if (!n)
        return 0;
    uint64_t *order = malloc(n * sizeof *order);
    uint32_t regions = 0;
    if (!order)
        return -ENOMEM;
    for (uint64_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, cmp_by_name_start, (void *)f->spans);
    for (uint64_t k = 0; k < n; k++)
        if (!k || f->spans[order[k]].name != f->spans[order[k - 1]].name)
            regions++;
    out->regions = calloc(regions, sizeof *out->regions);
    out->times = malloc(2 * n * sizeof *out->times);
    if (!out->regions || !out->times) {
        free(order);
        span_regions_free(out);
        return -ENOMEM;
    }
    uint64_t off = timeline_clock_offset(f);
    span_region *r = NULL;
    for (uint64_t k = 0; k < n; k++) {
        const store_span *s = &f->spans[order[k]];
        if (!k || s->name != f->spans[order[k - 1]].name) {
            r = &out->regions[out->count++];
            r->name = f->names[s->name];
            r->start_ns = out->times + k;
            r->end_ns = out->times + n + k;
        }
        r->start_ns[r->count] = (int64_t)(s->begin_ns + off - origin_ns);
        r->end_ns[r->count] = (int64_t)(s->end_ns + off - origin_ns);
        r->count++;
    }
    free(order);
    qsort(out->regions, out->count, sizeof *out->regions, cmp_by_first_start);
    return 0;
}

void span_regions_free(span_regions *r)
{
    free(r->regions);
    free(r->times);
    memset(r, 0, sizeof *r);
}
