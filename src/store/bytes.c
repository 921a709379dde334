#include "bytes.h"

#include <stdlib.h>
#include <string.h>

void bytes_out_reserve(bytes_out *b, size_t extra)
{
    if (b->failed || b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return;
    }
    b->data = p;
    b->cap = cap;
}

void bytes_put(bytes_out *b, const void *src, size_t n)
{
    bytes_out_reserve(b, n);
    if (b->failed)
        return;
    if (n)
        memcpy(b->data + b->len, src, n);
    b->len += n;
}

static void put_le(bytes_out *b, uint64_t v, int n)
{
    uint8_t tmp[8];
    for (int i = 0; i < n; i++)
        tmp[i] = (uint8_t)(v >> (8 * i));
    bytes_put(b, tmp, (size_t)n);
}

void bytes_put_u16(bytes_out *b, uint16_t v) { put_le(b, v, 2); }
void bytes_put_u32(bytes_out *b, uint32_t v) { put_le(b, v, 4); }
void bytes_put_u64(bytes_out *b, uint64_t v) { put_le(b, v, 8); }

void bytes_put_str(bytes_out *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    bytes_put_u32(b, (uint32_t)n);
    bytes_put(b, s, n);
}

void bytes_patch_u32(bytes_out *b, size_t at, uint32_t v)
{
    if (b->failed || at + 4 > b->len)
        return;
    for (int i = 0; i < 4; i++)
        b->data[at + i] = (uint8_t)(v >> (8 * i));
}

void bytes_patch_u64(bytes_out *b, size_t at, uint64_t v)
{
    if (b->failed || at + 8 > b->len)
        return;
    for (int i = 0; i < 8; i++)
        b->data[at + i] = (uint8_t)(v >> (8 * i));
}

void bytes_out_free(bytes_out *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

const uint8_t *bytes_get_span(bytes_in *b, size_t n)
{
    if (b->failed || b->len - b->pos < n) {
        b->failed = 1;
        return NULL;
    }
    const uint8_t *p = b->data + b->pos;
    b->pos += n;
    return p;
}
