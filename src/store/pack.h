/* A pack: several whole .lapse images in one file, as liblapse_mpi's rank 0 writes
 * the images of every rank at MPI_Finalize (docs/format.md, "Packs"). */
#ifndef LAPSE_STORE_PACK_H
#define LAPSE_STORE_PACK_H

#include "bytes.h"

#include <stddef.h>
#include <stdint.h>

#define STORE_PACK_VERSION 1u
#define STORE_PACK_HEADER_SIZE 32u
#define STORE_PACK_MAX_MEMBERS (1u << 20)

#define STORE_PACK_NO_OVERLAP UINT32_MAX

typedef struct store_pack_member {
    uint64_t offset, length; /* of the member's .lapse image within the pack */
    uint32_t overlaps;       /* the member whose bytes it shares (one that starts before
                                it, or at the same place and comes first in the index);
                                STORE_PACK_NO_OVERLAP when none */
} store_pack_member;

typedef struct store_pack_header_info {
    uint32_t members, index_crc;
    size_t index_len; /* bytes of the index, after the header */
} store_pack_header_info;

/* 1 when data starts with the pack magic (then it is a pack or a broken one). */
int store_is_pack(const uint8_t *data, size_t len);

/* Appends a pack of count images to out. Returns 0, or -ENOMEM. */
int store_pack_encode(const uint8_t *const *images, const size_t *lens, uint32_t count,
                      bytes_out *out);

/* Checks a pack's header (len bytes of it at hand) against the pack's size: magic,
 * checksum, version, length, and an index that fits. 0, or -EINVAL with one line. */
int store_pack_header(const uint8_t *data, size_t len, uint64_t size, store_pack_header_info *h,
                      char *err, size_t errlen);

/* Checks the index (h->index_len bytes) and returns the members (malloc'd; free it):
 * each lies inside the pack and after the index, and each that shares bytes with
 * another says which (`overlaps`). 0, or a negative code with one line in err. */
int store_pack_members(const uint8_t *index, const store_pack_header_info *h, uint64_t size,
                       store_pack_member **members, char *err, size_t errlen);

/* Both, for a pack in memory. The members themselves are not decoded. */
int store_pack_index(const uint8_t *data, size_t len, store_pack_member **members,
                     uint32_t *count, char *err, size_t errlen);

#endif
