#ifndef LAPSE_STORE_CRC32_H
#define LAPSE_STORE_CRC32_H
#include <stddef.h>
#include <stdint.h>
/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), as zlib's crc32(). */
uint32_t store_crc32(const void *data, size_t len);
/* The CRC of the bytes before data followed by data, given crc of the bytes before
 * (0 for none): as zlib's crc32(crc, data, len). */
uint32_t store_crc32_update(uint32_t crc, const void *data, size_t len);
#endif
