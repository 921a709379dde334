#include "pack.h"

#include "crc32.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t pack_magic[8] = {0x89, 'L', 'A', 'P', 'S', 'E', 'P', 'K'};
#define INDEX_ENTRY_SIZE 16u

int store_is_pack(const uint8_t *data, size_t len)
{
    return len >= 8 && memcmp(data, pack_magic, 8) == 0;
}

int store_pack_encode(const uint8_t *const *images, const size_t *lens, uint32_t count,
                      bytes_out *out)
{
    size_t start = out->len;
    uint64_t index_len = (uint64_t)count * INDEX_ENTRY_SIZE;
    uint64_t total = STORE_PACK_HEADER_SIZE + index_len;
    for (uint32_t i = 0; i < count; i++)
        total += (lens[i] + 7u) & ~(uint64_t)7u;
    bytes_put(out, pack_magic, 8);
    bytes_put_u32(out, STORE_PACK_VERSION);
    bytes_put_u32(out, count);
    bytes_put_u64(out, total);
    bytes_put_u32(out, 0); /* index CRC, patched below */
    bytes_put_u32(out, 0); /* header CRC, patched below */
    size_t index_at = out->len;
    uint64_t offset = STORE_PACK_HEADER_SIZE + index_len;
    for (uint32_t i = 0; i < count; i++) {
        bytes_put_u64(out, offset);
        bytes_put_u64(out, lens[i]);
        offset += (lens[i] + 7u) & ~(uint64_t)7u;
    }
    static const uint8_t zeros[8] = {0};
    for (uint32_t i = 0; i < count; i++) {
        bytes_put(out, images[i], lens[i]);
        bytes_put(out, zeros, ((lens[i] + 7u) & ~(size_t)7u) - lens[i]);
    }
    if (out->failed)
        return -ENOMEM;
    bytes_patch_u32(out, start + 24, store_crc32(out->data + index_at, (size_t)index_len));
    bytes_patch_u32(out, start + 28, store_crc32(out->data + start, 28));
    return 0;
}

int store_pack_header(const uint8_t *data, size_t len, uint64_t size, store_pack_header_info *h,
                      char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (!store_is_pack(data, len)) {
        snprintf(err, errlen, "not a lapse pack (bad magic)");
        return -EINVAL;
    }
    if (len < STORE_PACK_HEADER_SIZE) {
        snprintf(err, errlen, "pack is truncated: %zu bytes, the header alone is %u", len,
                 STORE_PACK_HEADER_SIZE);
        return -EINVAL;
    }
    bytes_in in = {data, STORE_PACK_HEADER_SIZE, 8, 0};
    uint32_t version = bytes_get_u32(&in);
    h->members = bytes_get_u32(&in);
    uint64_t total = bytes_get_u64(&in);
    h->index_crc = bytes_get_u32(&in);
    uint32_t hcrc = bytes_get_u32(&in);
    if (store_crc32(data, 28) != hcrc) {
        snprintf(err, errlen, "pack header checksum mismatch");
        return -EINVAL;
    }
    if (version != STORE_PACK_VERSION) {
        snprintf(err, errlen, "pack version %u is not supported (this lapse reads %u)", version,
                 STORE_PACK_VERSION);
        return -EINVAL;
    }
    if (total != size) {
        snprintf(err, errlen, "pack is truncated: %llu of %llu bytes", (unsigned long long)size,
                 (unsigned long long)total);
        return -EINVAL;
    }
    if (h->members > STORE_PACK_MAX_MEMBERS ||
        (uint64_t)h->members * INDEX_ENTRY_SIZE > size - STORE_PACK_HEADER_SIZE) {
        snprintf(err, errlen, "pack claims %u members, more than it holds", h->members);
        return -EINVAL;
    }
    h->index_len = (size_t)h->members * INDEX_ENTRY_SIZE;
    return 0;
}

static int cmp_by_offset(const void *a, const void *b)
{
    const store_pack_member *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->overlaps < y->overlaps ? -1 : x->overlaps > y->overlaps; /* its index, here */
}

int store_pack_members(const uint8_t *index, const store_pack_header_info *h, uint64_t size,
                       store_pack_member **members, char *err, size_t errlen)
{
    *members = NULL;
    uint32_t n = h->members;
    if (store_crc32(index, h->index_len) != h->index_crc) {
        snprintf(err, errlen, "pack index checksum mismatch");
        return -EINVAL;
    }
    store_pack_member *m = malloc((n ? n : 1u) * sizeof *m);
    store_pack_member *sorted = malloc((n ? n : 1u) * sizeof *sorted);
    if (!m || !sorted) {
        free(m);
        free(sorted);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    bytes_in in = {index, h->index_len, 0, 0};
    uint64_t body = STORE_PACK_HEADER_SIZE + (uint64_t)h->index_len;
    for (uint32_t i = 0; i < n; i++) {
        m[i].offset = bytes_get_u64(&in);
        m[i].length = bytes_get_u64(&in);
        m[i].overlaps = STORE_PACK_NO_OVERLAP;
        if (m[i].offset < body || m[i].offset > size || m[i].length > size - m[i].offset) {
            snprintf(err, errlen, "pack member %u lies outside the pack", i);
            free(m);
            free(sorted);
            return -EINVAL;
        }
        sorted[i] = m[i];
        sorted[i].overlaps = i;
    }
    /* by offset: a member that starts before the end of one before it shares bytes
     * with it (a writer lays members out one after another) */
    qsort(sorted, n, sizeof *sorted, cmp_by_offset);
    uint64_t end = 0;
    uint32_t owner = 0;
    for (uint32_t k = 0; k < n; k++) {
        const store_pack_member *s = &sorted[k];
        if (k && s->offset < end) {
            m[s->overlaps].overlaps = owner;
            continue;
        }
        end = s->offset + s->length;
        owner = s->overlaps;
    }
    free(sorted);
    *members = m;
    return 0;
}

int store_pack_index(const uint8_t *data, size_t len, store_pack_member **members,
                     uint32_t *count, char *err, size_t errlen)
{
    *members = NULL;
    *count = 0;
    store_pack_header_info h;
    int rc = store_pack_header(data, len, len, &h, err, errlen);
    if (rc == 0)
        rc = store_pack_members(data + STORE_PACK_HEADER_SIZE, &h, len, members, err, errlen);
    if (rc == 0)
        *count = h.members;
    return rc;
}
