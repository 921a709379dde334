/* The span hooks: a table of begin/end callbacks that the slow path of a span's
 * begin and the flagged branch of its close call (core.h). */
#include "core.h"

#include <errno.h>

static core_span_hook pending[CORE_SPAN_HOOKS];
static uint32_t pending_count;
static core_span_hook hooks[CORE_SPAN_HOOKS];
uint32_t core_span_hook_count; /* of the current session */

int core_span_hooks_set(const core_span_hook *set, uint32_t n)
{
    if (n > CORE_SPAN_HOOKS)
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        if (!set[i].begin || !set[i].end)
            return -EINVAL;
        pending[i] = set[i];
    }
    pending_count = n;
    return 0;
}

void core_span_hooks_apply(void)
{
    for (uint32_t i = 0; i < pending_count; i++)
        hooks[i] = pending[i];
    __atomic_store_n(&core_span_hook_count, pending_count, __ATOMIC_RELEASE);
    core_fast_limit = pending_count ? 0 : core_cfg.max_depth;
}

size_t core_stack_bytes(void)
{
    size_t frames = core_cfg.max_depth + 2u;
    return frames * sizeof(core_frame) +
           (core_span_hook_count ? frames * CORE_SPAN_HOOKS * sizeof(uint64_t) : 0);
}

/* The hook values of frame f of t's current stack: after the stack's frames. */
static uint64_t *values(const core_thread *t, const core_frame *f)
{
    uint64_t *all = (uint64_t *)(t->stack + core_cfg.max_depth + 2u);
    return all + (size_t)(f - t->stack) * CORE_SPAN_HOOKS;
}

void core_span_hooks_begin(core_thread *t, core_frame *f)
{
    uint32_t n = __atomic_load_n(&core_span_hook_count, __ATOMIC_ACQUIRE);
    uint64_t *v = values(t, f);
    for (uint32_t i = 0; i < n; i++)
        v[i] = hooks[i].begin(f->name);
    f->flags |= CORE_FRAME_HOOKED;
}

void core_span_hooks_end(const core_thread *t, const core_frame *f)
{
    uint32_t n = __atomic_load_n(&core_span_hook_count, __ATOMIC_ACQUIRE);
    const uint64_t *v = values(t, f);
    for (uint32_t i = n; i-- > 0;)
        hooks[i].end(v[i]);
}
