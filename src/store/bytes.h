/* Little-endian byte buffers: a growable writer and a bounds-checked reader. */
#ifndef LAPSE_STORE_BYTES_H
#define LAPSE_STORE_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct bytes_out {
    uint8_t *data;
    size_t len, cap;
    int failed; /* an allocation failed; the content is incomplete */
} bytes_out;

void bytes_out_reserve(bytes_out *b, size_t extra);
void bytes_put(bytes_out *b, const void *src, size_t n);
void bytes_put_u16(bytes_out *b, uint16_t v);
void bytes_put_u32(bytes_out *b, uint32_t v);
void bytes_put_u64(bytes_out *b, uint64_t v);
void bytes_put_str(bytes_out *b, const char *s); /* u32 length, then the bytes */
void bytes_patch_u32(bytes_out *b, size_t at, uint32_t v);
void bytes_patch_u64(bytes_out *b, size_t at, uint64_t v);
void bytes_out_free(bytes_out *b);

typedef struct bytes_in {
    const uint8_t *data;
    size_t len, pos;
    int failed; /* a read went past the end; every later read returns 0 */
} bytes_in;

/* The little-endian value of the n (1..8) bytes at p: one load where the host is
 * little-endian (the decoder reads millions of fields). */
static inline uint64_t bytes_le(const uint8_t *p, int n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n);
    return v;
#else
    uint64_t v = 0;
    for (int i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
#endif
}

static inline uint64_t bytes_get_le_(bytes_in *b, int n)
{
    if (b->failed || b->len - b->pos < (size_t)n) {
        b->failed = 1;
        return 0;
    }
    uint64_t v = bytes_le(b->data + b->pos, n);
    b->pos += (size_t)n;
    return v;
}

static inline uint8_t bytes_get_u8(bytes_in *b) { return (uint8_t)bytes_get_le_(b, 1); }
static inline uint16_t bytes_get_u16(bytes_in *b) { return (uint16_t)bytes_get_le_(b, 2); }
static inline uint32_t bytes_get_u32(bytes_in *b) { return (uint32_t)bytes_get_le_(b, 4); }
static inline uint64_t bytes_get_u64(bytes_in *b) { return bytes_get_le_(b, 8); }
/* Returns a pointer into the buffer and its length, or NULL on overrun. */
const uint8_t *bytes_get_span(bytes_in *b, size_t n);
static inline size_t bytes_left(const bytes_in *b) { return b->failed ? 0 : b->len - b->pos; }

#endif
