/* The public span and counter entry points, and the session started from the
 * environment (LAPSE_PROFILE=1). */
#include "lapse.h"

#include "../core/core.h"
#include "../core/names.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

LAPSE_API volatile int lapse_enabled_;

uint32_t lapse_intern(const char *name) { return names_intern(name); }

void lapse_set_thread_name(const char *name)
{
    if (lapse_enabled_)
        core_thread_set_name(name);
}

int lapse_span_begin_id(uint32_t name_id)
{
    return lapse_enabled_ ? core_span_begin(name_id) : 0;
}

void lapse_span_end_id(uint32_t name_id)
{
    if (lapse_enabled_)
        core_span_end_name(name_id);
}

int lapse_span_begin_keyed(const void *key, uint32_t name_id)
{
    return lapse_enabled_ ? core_span_begin_keyed(key, name_id) : 0;
}

void lapse_span_end_keyed(const void *key, int token)
{
    if (token)
        core_span_end_keyed(key, token);
}

int lapse_span_begin_sampled(const void *key, uint32_t name_id, int measured, uint32_t stride)
{
    return lapse_enabled_ ? core_span_begin_sampled(key, name_id, measured, stride) : 0;
}

void lapse_stack_inherit(const void *child_key, const void *parent_key)
{
    if (lapse_enabled_)
        core_stack_inherit(child_key, parent_key);
}

void lapse_span_end_keyed_name(const void *key, uint32_t name_id)
{
    if (lapse_enabled_)
        core_span_end_keyed_name(key, name_id);
}

uint32_t lapse_current_path(const void *key, char sep, char *buf, size_t len)
{
    if (!lapse_enabled_) {
        if (len)
            buf[0] = 0;
        return 0;
    }
    return core_current_path(key, sep, buf, len);
}

void lapse_count_id(uint32_t name_id, int64_t n)
{
    if (lapse_enabled_)
        core_count(name_id, n);
}

void lapse_count_name(const char *name, int64_t n)
{
    if (lapse_enabled_)
        core_count(names_intern(name), n);
}

__attribute__((constructor)) static void lapse_autostart(void)
{
    const char *v = getenv("LAPSE_PROFILE");
    if (!v || strcmp(v, "1") != 0)
        return;
    if (lapse_start(NULL) != 0)
        fprintf(stderr, "lapse: warning: profiling is off: %s\n", lapse_last_error());
    else
        session_mark_from_environment();
}
