#include "crc32.h"

static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_table_build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    __atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t store_crc32(const void *data, size_t len)
{
    if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE))
        crc_table_build(); /* idempotent: a race builds the same table twice */
    const uint8_t *p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}
