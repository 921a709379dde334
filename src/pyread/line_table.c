/* Decoding of the 3.11+ location table (Objects/locations.md in CPython):
 * each entry starts with a byte 1cccclll (code c, length l+1 code units), followed
 * by varints of 6-bit chunks (0x40 = more follows); signed varints carry the sign
 * in their low bit. Codes: 15 no location, 14 long form (line delta, end line delta,
 * column+1, end column+1), 13 no columns (line delta), 10-12 one line form (delta
 * code-10, two column bytes), 0-9 short form (same line, one column byte). */
#include "line_table.h"

static int read_varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
    uint32_t v = 0;
    int shift = 0;
    for (;;) {
        if (*i >= len || shift > 28)
            return -1;
        uint8_t b = t[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        shift += 6;
        if (!(b & 64))
            break;
    }
    *out = v;
    return 0;
}

static int read_signed_varint(const uint8_t *t, size_t len, size_t *i, int *out)
{
    uint32_t u;
    if (read_varint(t, len, i, &u) != 0)
        return -1;
    *out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
    return 0;
}

int line_table_line(const uint8_t *table, size_t len, int firstlineno, long unit)
{
    if (unit < 0)
        return firstlineno >= 0 ? firstlineno : -1;
    long start = 0;
    int line = firstlineno;
    size_t i = 0;
    while (i < len) {
        uint8_t head = table[i++];
        if (!(head & 0x80))
            return -1; /* not at an entry boundary: a corrupt table */
        int code = (head >> 3) & 15;
        long end = start + (head & 7) + 1;
        int delta = 0;
        uint32_t skip;
        switch (code) {
        case 15:
            break;
        case 14:
            if (read_signed_varint(table, len, &i, &delta) != 0 || read_varint(table, len, &i, &skip) != 0 ||
                read_varint(table, len, &i, &skip) != 0 || read_varint(table, len, &i, &skip) != 0)
                return -1;
            break;
        case 13:
            if (read_signed_varint(table, len, &i, &delta) != 0)
                return -1;
            break;
        case 10:
        case 11:
        case 12:
            delta = code - 10;
            i += 2;
            break;
        default:
            i += 1;
            break;
        }
        if (i > len)
            return -1;
        line += delta;
        if (start <= unit && unit < end)
            return code == 15 || line < 0 ? -1 : line; /* below 0: a corrupt table */
        start = end;
    }
    return -1;
}
