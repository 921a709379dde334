/* CPython 3.11+ location table (co_linetable): the source line of an instruction. */
#ifndef LAPSE_PYREAD_LINE_TABLE_H
#define LAPSE_PYREAD_LINE_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at code unit `unit` (offset in 2-byte code units from
 * co_code_adaptive), by CPython's rule: the entry with start <= unit < end. A
 * negative unit (a frame not yet started) is the first line. Returns -1 where the
 * table says "no location", does not cover the unit, or gives a line below 0. */
int line_table_line(const uint8_t *table, size_t len, int firstlineno, long unit);

#endif
