#include "crc32.h"

/* Slicing-by-8: eight table lookups per 8 bytes. */
static uint32_t crc_tables[8][256];
static int crc_tables_ready;

static void crc_tables_build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_tables[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_tables[t][i] = (crc_tables[t - 1][i] >> 8) ^ crc_tables[0][crc_tables[t - 1][i] & 0xFF];
    __atomic_store_n(&crc_tables_ready, 1, __ATOMIC_RELEASE);
}

uint32_t store_crc32_update(uint32_t crc, const void *data, size_t len)
{
    if (!__atomic_load_n(&crc_tables_ready, __ATOMIC_ACQUIRE))
        crc_tables_build(); /* idempotent: a race builds the same tables twice */
    const uint8_t *p = data;
    uint32_t c = crc ^ 0xFFFFFFFFu;
    while (len >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
                      (uint32_t)p[7] << 24;
        c = crc_tables[7][lo & 0xFF] ^ crc_tables[6][(lo >> 8) & 0xFF] ^
            crc_tables[5][(lo >> 16) & 0xFF] ^ crc_tables[4][lo >> 24] ^
            crc_tables[3][hi & 0xFF] ^ crc_tables[2][(hi >> 8) & 0xFF] ^
            crc_tables[1][(hi >> 16) & 0xFF] ^ crc_tables[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        c = crc_tables[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t store_crc32(const void *data, size_t len)
{
    return store_crc32_update(0, data, len);
}
