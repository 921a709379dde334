#include "crc32.h"

/* Slicing-by-8 (eight table lookups per 8 bytes) everywhere; on x86-64 processors
 * with PCLMULQDQ, runs of 64 bytes and more are folded with carry-less multiplies
 * instead (about ten times the speed: a report reads every byte of every file). */
static uint32_t crc_tables[8][256];
static int crc_tables_ready;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_FOLD 1
#include <immintrin.h>
static int crc_fold_ok; /* the processor has PCLMULQDQ and SSE4.1 */
#endif

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
#ifdef CRC_FOLD
    __builtin_cpu_init();
    crc_fold_ok = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
    __atomic_store_n(&crc_tables_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_slice8(uint32_t c, const uint8_t *p, size_t len)
{
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
    return c;
}

#ifdef CRC_FOLD
/* Folding in the bit-reflected domain (Gopal et al., "Fast CRC computation for
 * generic polynomials using PCLMULQDQ", Intel, 2009). With P the CRC-32 polynomial
 * 0x104C11DB7 and K(n) = reflect32(x^n mod P) << 1:
 *   a 128-bit lane folds over 512 bits with K(4*128+32), K(4*128-32);
 *   over 128 bits with K(128+32), K(128-32); to 64 bits with K(128-32), then K(64);
 *   Barrett reduction with P' = reflect33(P) and mu' = reflect33(x^64 / P). */
#define K_544 0x154442bd4ull
#define K_480 0x1c6e41596ull
#define K_160 0x1751997d0ull
#define K_96 0x0ccaa009eull
#define K_64 0x163cd6124ull
#define P_REFLECTED 0x1db710641ull
#define MU_REFLECTED 0x1f7011641ull

/* a lane times k (its low half by k's low, its high half by k's high), plus next */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i x, __m128i k,
                                                                     __m128i next)
{
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                                       _mm_clmulepi64_si128(x, k, 0x11)),
                         next);
}

/* The CRC state c (not inverted) after len bytes at p; len >= 64, a multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_fold(uint32_t c, const uint8_t *p,
                                                                   size_t len)
{
    __m128i x1 = _mm_loadu_si128((const __m128i *)p);
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 48));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
    p += 64;
    len -= 64;
    const __m128i k512 = _mm_set_epi64x((long long)K_480, (long long)K_544);
    while (len >= 64) {
        x1 = fold(x1, k512, _mm_loadu_si128((const __m128i *)p));
        x2 = fold(x2, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
        x3 = fold(x3, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
        x4 = fold(x4, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
        p += 64;
        len -= 64;
    }
    const __m128i k128 = _mm_set_epi64x((long long)K_96, (long long)K_160);
    x1 = fold(x1, k128, x2);
    x1 = fold(x1, k128, x3);
    x1 = fold(x1, k128, x4);
    for (; len >= 16; p += 16, len -= 16)
        x1 = fold(x1, k128, _mm_loadu_si128((const __m128i *)p));

    /* 128 bits to 64: the low half times K(96) onto the high half */
    const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k128, 0x10));
    /* 64 bits to 32 (in bits 32..63 after the multiply) */
    const __m128i k64 = _mm_set_epi64x(0, (long long)K_64);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
                       _mm_clmulepi64_si128(_mm_and_si128(x1, low32), k64, 0x00));
    /* Barrett: q = (low 32 bits x mu') mod x^32, remainder = x - q x P' */
    const __m128i pmu = _mm_set_epi64x((long long)MU_REFLECTED, (long long)P_REFLECTED);
    __m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), pmu, 0x10), low32);
    x1 = _mm_xor_si128(x1, _mm_clmulepi64_si128(q, pmu, 0x00));
    return (uint32_t)_mm_extract_epi32(x1, 1);
}
#endif

uint32_t store_crc32_update(uint32_t crc, const void *data, size_t len)
{
    if (!__atomic_load_n(&crc_tables_ready, __ATOMIC_ACQUIRE))
        crc_tables_build(); /* idempotent: a race builds the same tables twice */
    const uint8_t *p = data;
    uint32_t c = crc ^ 0xFFFFFFFFu;
#ifdef CRC_FOLD
    if (crc_fold_ok && len >= 64) {
        size_t run = len & ~(size_t)15;
        c = crc_fold(c, p, run);
        p += run;
        len -= run;
    }
#endif
    return crc_slice8(c, p, len) ^ 0xFFFFFFFFu;
}

uint32_t store_crc32(const void *data, size_t len)
{
    return store_crc32_update(0, data, len);
}
