#include "run_read.h"

#include "codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Who an image says it is (its meta), and which of the same process is read. */
typedef struct image_key {
    char *name, *host;
    int64_t pid;
    uint64_t start_real_ns, write_real_ns, write_seq;
    uint32_t final;
    size_t order;
    const char *same_as; /* NULL: read it; else the image read for its process */
} image_key;

typedef struct key_list {
    image_key *items;
    size_t count, cap;
    int failed;
} key_list;

static int collect_key(void *ctx, const store_image *im)
{
    key_list *l = ctx;
    if (!im->f)
        return 0; /* unreadable, or overlapping in its pack: pass 2 says so */
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        image_key *p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        l->items = p;
        l->cap = cap;
    }
    const store_meta *m = &im->f->meta;
    image_key *k = &l->items[l->count];
    memset(k, 0, sizeof *k);
    k->name = strdup(im->name);
    k->host = strdup(m->host ? m->host : "");
    if (!k->name || !k->host) {
        free(k->name);
        free(k->host);
        return -ENOMEM;
    }
    k->pid = m->pid;
    k->start_real_ns = m->start_real_ns;
    k->write_real_ns = m->write_real_ns;
    k->write_seq = m->write_seq;
    k->final = m->final != 0;
    k->order = l->count++;
    return 0;
}

/* Same process first together, the one to read first among them. */
static int cmp_process(const void *a, const void *b)
{
    const image_key *x = a, *y = b;
    int c = strcmp(x->host, y->host);
    if (c)
        return c;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->start_real_ns != y->start_real_ns)
        return x->start_real_ns < y->start_real_ns ? -1 : 1;
    if (x->final != y->final)
        return x->final ? -1 : 1;
    if (x->write_seq != y->write_seq)
        return x->write_seq > y->write_seq ? -1 : 1;
    if (x->write_real_ns != y->write_real_ns)
        return x->write_real_ns > y->write_real_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const image_key *)a)->name, ((const image_key *)b)->name);
}

static const image_key *find(const key_list *l, const char *name)
{
    if (!l->count)
        return NULL;
    image_key k = {.name = (char *)name};
    return bsearch(&k, l->items, l->count, sizeof k, cmp_name);
}

static void keys_free(key_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].name);
        free(l->items[i].host);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* store_read_each of the attempt's file i, from disk or from its buffer (then
 * nothing is held: the caller has the bytes). */
static int read_file(const store_attempt *a, size_t i, unsigned flags, store_each_fn fn,
                     void *ctx, store_held *held, char *err, size_t errlen)
{
    if (!a->buffers)
        return store_read_each(a->files[i], flags, fn, ctx, held, err, errlen);
    if (held)
        memset(held, 0, sizeof *held);
    return store_read_each_mem(&a->buffers[i], flags, fn, ctx, err, errlen);
}

/* The images of every file by their meta alone; then, for each process, which is
 * read. */
static int find_duplicates(const store_attempt *a, key_list *keys)
{
    for (size_t i = 0; i < a->file_count; i++) {
        char why[512];
        int rc = read_file(a, i, STORE_READ_META_ONLY, collect_key, keys, NULL, why, sizeof why);
        if (rc == -ENOMEM)
            return rc;
    }
    if (!keys->count)
        return 0;
    qsort(keys->items, keys->count, sizeof *keys->items, cmp_process);
    for (size_t i = 0, first = 0; i < keys->count; i++) {
        image_key *k = &keys->items[i], *w = &keys->items[first];
        if (i && !strcmp(k->host, w->host) && k->pid == w->pid &&
            k->start_real_ns == w->start_real_ns)
            k->same_as = w->name;
        else
            first = i;
    }
    qsort(keys->items, keys->count, sizeof *keys->items, cmp_name);
    return 0;
}

typedef struct pass {
    store_each_fn fn;
    void *ctx;
    const key_list *keys;
    int fn_rc;
} pass;

static int pass_image(void *ctx, const store_image *im)
{
    pass *p = ctx;
    const image_key *k = im->f ? find(p->keys, im->name) : NULL;
    if (k && k->same_as) {
        store_image dup = {im->name, NULL, "the same process as another file's", k->same_as};
        return p->fn_rc = p->fn(p->ctx, &dup);
    }
    return p->fn_rc = p->fn(p->ctx, im);
}

static int ignore_image(void *ctx, const store_image *im)
{
    (void)ctx;
    (void)im;
    return 0;
}

int store_read_attempt(const store_attempt *a, unsigned flags, store_each_fn fn, void *ctx,
                       store_hold_fn hold, void *hold_ctx)
{
    int rc = 0;
    for (size_t i = 0; i < a->skipped_count && rc == 0; i++) {
        store_image im = {a->skipped[i].path, NULL, a->skipped[i].why, NULL};
        rc = fn(ctx, &im);
    }
    key_list keys = {0};
    if (rc == 0)
        rc = find_duplicates(a, &keys);
    for (size_t i = 0; i < a->file_count && rc == 0; i++) {
        char why[512] = "";
        store_held held, *h = hold ? &held : NULL;
        const image_key *k = find(&keys, a->files[i]);
        int erc;
        if (k && k->same_as) { /* a plain file, and another holds its process */
            store_image dup = {a->files[i], NULL, "the same process as another file's", k->same_as};
            rc = fn(ctx, &dup);
            erc = h ? read_file(a, i, STORE_READ_META_ONLY, ignore_image, NULL, h, why, sizeof why)
                    : 0;
        } else {
            pass p = {fn, ctx, &keys, 0};
            erc = read_file(a, i, flags, pass_image, &p, h, why, sizeof why);
            if (p.fn_rc)
                rc = p.fn_rc;
            else if (erc == -ENOMEM)
                rc = erc;
            else if (erc) {
                store_image bad = {a->files[i], NULL, why, NULL};
                rc = fn(ctx, &bad);
            }
        }
        if (h && rc == 0 && held.data) /* opened as a regular file: its bytes read */
            hold(hold_ctx, a->files[i], h);
        else if (h)
            store_held_free(h);
    }
    keys_free(&keys);
    return rc;
}
