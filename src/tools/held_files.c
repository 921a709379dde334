#include "held_files.h"

#include <stdlib.h>
#include <string.h>

void held_files_add(void *ctx, const char *file, store_held *held)
{
    held_files *l = ctx;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        held_file *p = realloc(l->items, cap * sizeof *p);
        if (!p) {
            l->failed = 1;
            store_held_free(held);
            return;
        }
        l->items = p;
        l->cap = cap;
    }
    char *copy = strdup(file);
    if (!copy) {
        l->failed = 1;
        store_held_free(held);
        return;
    }
    l->items[l->count].file = copy;
    l->items[l->count].held = *held;
    l->count++;
}

store_buffer *held_files_buffers(const held_files *l)
{
    store_buffer *b = calloc(l->count ? l->count : 1, sizeof *b);
    for (size_t i = 0; b && i < l->count; i++) {
        const held_file *h = &l->items[i];
        b[i] = (store_buffer){h->file, h->held.data, h->held.len, h->held.size};
    }
    return b;
}

void held_files_free(held_files *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].file);
        store_held_free(&l->items[i].held);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}
