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

int store_pack_index(const uint8_t *data, size_t len, store_pack_member **members,
                     uint32_t *count, char *err, size_t errlen)
{
    *members = NULL;
    *count = 0;
    if (!store_is_pack(data, len)) {
        snprintf(err, errlen, "not a lapse pack (bad magic)");
        return -EINVAL;
    }
    if (len < STORE_PACK_HEADER_SIZE) {
        snprintf(err, errlen, "pack is truncated: %zu bytes, the header alone is %u", len,
                 STORE_PACK_HEADER_SIZE);
        return -EINVAL;
    }
    bytes_in h = {data, STORE_PACK_HEADER_SIZE, 8, 0};
    uint32_t version = bytes_get_u32(&h);
    uint32_t n = bytes_get_u32(&h);
    uint64_t total = bytes_get_u64(&h);
    uint32_t icrc = bytes_get_u32(&h);
    uint32_t hcrc = bytes_get_u32(&h);
    if (store_crc32(data, 28) != hcrc) {
        snprintf(err, errlen, "pack header checksum mismatch");
        return -EINVAL;
    }
    if (version != STORE_PACK_VERSION) {
        snprintf(err, errlen, "pack version %u is not supported (this lapse reads %u)", version,
                 STORE_PACK_VERSION);
        return -EINVAL;
    }
    if (total != len) {
        snprintf(err, errlen, "pack is truncated: %zu of %llu bytes", len, (unsigned long long)total);
        return -EINVAL;
    }
    if (n > STORE_PACK_MAX_MEMBERS || (uint64_t)n * INDEX_ENTRY_SIZE > len - STORE_PACK_HEADER_SIZE) {
        snprintf(err, errlen, "pack claims %u members, more than it holds", n);
        return -EINVAL;
    }
    size_t index_len = (size_t)n * INDEX_ENTRY_SIZE;
    if (store_crc32(data + STORE_PACK_HEADER_SIZE, index_len) != icrc) {
        snprintf(err, errlen, "pack index checksum mismatch");
        return -EINVAL;
    }
    store_pack_member *m = malloc((n ? n : 1u) * sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    bytes_in in = {data + STORE_PACK_HEADER_SIZE, index_len, 0, 0};
    uint64_t body = STORE_PACK_HEADER_SIZE + (uint64_t)index_len;
    for (uint32_t i = 0; i < n; i++) {
        m[i].offset = bytes_get_u64(&in);
        m[i].length = bytes_get_u64(&in);
        if (m[i].offset < body || m[i].offset > len || m[i].length > len - m[i].offset) {
            snprintf(err, errlen, "pack member %u lies outside the pack", i);
            free(m);
            return -EINVAL;
        }
    }
    *members = m;
    *count = n;
    return 0;
}
