/* For the Fortran test programs: C's size of lapse_options, to compare with the
 * module's copy of the record (lapse_options_bytes). */
#include "lapse.h"

#include <stddef.h>

size_t lapse_test_c_options_bytes(void);

size_t lapse_test_c_options_bytes(void)
{
    return sizeof(lapse_options);
}
