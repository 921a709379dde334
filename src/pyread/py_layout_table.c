/* The generated per-version tables, by minor version. */
#include "py_layout.h"

#include <stddef.h>

const py_layout *py_layout_for_table(int major, int minor)
{
    if (major != 3)
        return NULL;
    if (minor == 11)
        return &py_layout_3_11;
    if (minor == 12)
        return &py_layout_3_12;
    return NULL;
}
