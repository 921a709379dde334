/* pstats: the marshal'd dict that Python's pstats module and snakeviz read,
 * {(file, line, function): (cc, nc, tt, ct, {caller: (cc, nc, tt, ct)})}, from the
 * samples: one entry per function (file and qualified name), counts in samples, times
 * in seconds of the time the samples stand for. Written in CPython's marshal format
 * (Python/marshal.c): dicts '{' ... '0', tuples '(' n, ints 'i' or 'l', binary floats
 * 'g', strings 'u' (UTF-8), all little-endian; every marshal version reads them. */
#include "store/sample_set.h"
#include "samples_write.h"
#include "utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void put_u32(FILE *out, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, out);
}

/* 'i' (int32) when it fits, else 'l': 15-bit digits, least significant first. */
static void put_int(FILE *out, uint64_t v)
{
    if (v <= INT32_MAX) {
        fputc('i', out);
        put_u32(out, (uint32_t)v);
        return;
    }
    uint32_t digits = 0;
    for (uint64_t x = v; x; x >>= 15)
        digits++;
    fputc('l', out);
    put_u32(out, digits);
    for (; v; v >>= 15) {
        fputc((int)(v & 0xff), out);
        fputc((int)((v >> 8) & 0x7f), out);
    }
}

static void put_float(FILE *out, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    fputc('g', out);
    for (int i = 0; i < 8; i++)
        fputc((int)((bits >> (8 * i)) & 0xff), out);
}

/* s as 'u': bytes that are not valid UTF-8 become '?' (marshal refuses them). */
static void put_str(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    fputc('u', out);
    put_u32(out, (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n));
    for (size_t i = 0; i < n && i < UINT32_MAX;) {
        size_t k = utf8_seq_len(p + i);
        if (!k || i + k > n) {
            fputc('?', out);
            i++;
            continue;
        }
        fwrite(p + i, 1, k, out);
        i += k;
    }
}

static void put_tuple(FILE *out, uint32_t n)
{
    fputc('(', out);
    put_u32(out, n);
}

typedef struct func {
    uint32_t file, function; /* string ids */
    uint32_t line;           /* the lowest line the samples saw in it, 0 when none */
    uint64_t count, weight_ns, self_ns;
    uint64_t last_stack;     /* 1 + the last stack counted in count and weight_ns */
} func;

/* One caller -> callee step of one stack. */
typedef struct edge {
    uint32_t callee, caller, stack, leaf;
} edge;

static const store_samples *sort_s;

static int cmp_frame_by_function(const void *a, const void *b)
{
    const store_sample_frame *x = &sort_s->frames[*(const uint32_t *)a],
                             *y = &sort_s->frames[*(const uint32_t *)b];
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->function != y->function)
        return x->function < y->function ? -1 : 1;
    return 0;
}

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static void put_key(FILE *out, const store_samples *s, const func *f)
{
    put_tuple(out, 3);
    put_str(out, s->strings[f->file]);
    put_int(out, f->line);
    put_str(out, s->strings[f->function][0] ? s->strings[f->function] : "?");
}

int samples_write_pstats(const sample_set *set, FILE *out)
{
    const store_samples *s = sample_set_view(set);
    uint32_t *order = malloc(((size_t)s->frame_count + 1) * sizeof *order);
    uint32_t *func_of = malloc(((size_t)s->frame_count + 1) * sizeof *func_of);
    func *funcs = calloc((size_t)s->frame_count + 1, sizeof *funcs);
    edge *edges = malloc(((size_t)s->frame_id_count + 1) * sizeof *edges);
    int rc = order && func_of && funcs && edges ? 0 : -ENOMEM;
    uint32_t nfunc = 0;
    size_t nedge = 0;
    if (!rc) {
        /* functions: the frames of one file and qualified name, whatever their line */
        for (uint32_t i = 0; i < s->frame_count; i++)
            order[i] = i;
        sort_s = s;
        qsort(order, s->frame_count, sizeof *order, cmp_frame_by_function);
        for (uint32_t i = 0; i < s->frame_count; i++) {
            const store_sample_frame *fr = &s->frames[order[i]];
            if (!nfunc || cmp_frame_by_function(&order[i - 1], &order[i])) {
                funcs[nfunc].file = fr->file;
                funcs[nfunc].function = fr->function;
                nfunc++;
            }
            func *f = &funcs[nfunc - 1];
            if (fr->line && (!f->line || fr->line < f->line))
                f->line = fr->line;
            func_of[order[i]] = nfunc - 1;
        }
        for (uint32_t i = 0; i < s->stack_count; i++) {
            const store_sample_stack *st = &s->stacks[i];
            for (uint32_t d = 0; d < st->depth; d++) {
                uint32_t fi = func_of[s->frame_ids[st->first + d]];
                func *f = &funcs[fi];
                if (d + 1 == st->depth)
                    f->self_ns += st->weight_ns;
                if (f->last_stack != (uint64_t)i + 1) { /* once per stack: recursion */
                    f->last_stack = (uint64_t)i + 1;
                    f->count += st->count;
                    f->weight_ns += st->weight_ns;
                }
                if (d)
                    edges[nedge++] = (edge){fi, func_of[s->frame_ids[st->first + d - 1]], i,
                                            d + 1 == st->depth};
            }
        }
        qsort(edges, nedge, sizeof *edges, cmp_edge);
        uint32_t seen = 0;
        for (uint32_t fi = 0; fi < nfunc; fi++)
            seen += funcs[fi].count > 0;
        if (!seen)
            rc = -ENODATA;
    }
    if (!rc)
        fputc('{', out);
    size_t e = 0;
    for (uint32_t fi = 0; fi < nfunc && !rc; fi++) {
        const func *f = &funcs[fi];
        if (!f->count)
            continue;
        put_key(out, s, f);
        put_tuple(out, 5);
        put_int(out, f->count);
        put_int(out, f->count);
        put_float(out, f->self_ns / 1e9);
        put_float(out, f->weight_ns / 1e9);
        fputc('{', out);
        while (e < nedge && edges[e].callee == fi) {
            uint32_t caller = edges[e].caller;
            uint64_t count = 0, weight_ns = 0, self_ns = 0;
            while (e < nedge && edges[e].callee == fi && edges[e].caller == caller) {
                uint32_t stack = edges[e].stack, leaf = 0;
                for (; e < nedge && edges[e].callee == fi && edges[e].caller == caller &&
                       edges[e].stack == stack;
                     e++)
                    leaf |= edges[e].leaf;
                count += s->stacks[stack].count;
                weight_ns += s->stacks[stack].weight_ns;
                if (leaf)
                    self_ns += s->stacks[stack].weight_ns;
            }
            put_key(out, s, &funcs[caller]);
            put_tuple(out, 4);
            put_int(out, count);
            put_int(out, count);
            put_float(out, self_ns / 1e9);
            put_float(out, weight_ns / 1e9);
        }
        fputc('0', out);
    }
    if (!rc)
        fputc('0', out);
    free(order);
    free(func_of);
    free(funcs);
    free(edges);
    if (rc)
        return rc;
    return ferror(out) ? -EIO : 0;
}
