/* The innermost span open on the calling thread, for collectors that attribute
 * work to the span that launched it (CUPTI's launch callbacks). */
#include "core.h"

int core_innermost(uint32_t *thread, uint32_t *node)
{
    core_thread *t = core_thread_attach();
    if (!t)
        return -1;
    *thread = t->index;
    *node = t->stack[t->depth].node; /* stack[0] is the root frame: CORE_ROOT */
    return 0;
}
