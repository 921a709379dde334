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

typedef struct store_pack_member {
    uint64_t offset, length; /* of the member's .lapse image within the pack */
} store_pack_member;

/* 1 when data starts with the pack magic (then it is a pack or a broken one). */
int store_is_pack(const uint8_t *data, size_t len);

/* Appends a pack of count images to out. Returns 0, or -ENOMEM. */
int store_pack_encode(const uint8_t *const *images, const size_t *lens, uint32_t count,
                      bytes_out *out);

/* Checks a pack's header and index and returns its members (malloc'd; free it):
 * each lies inside the pack and after the index. The members themselves are not
 * decoded. Returns 0, or a negative code with one line in err. */
int store_pack_index(const uint8_t *data, size_t len, store_pack_member **members,
                     uint32_t *count, char *err, size_t errlen);

#endif
