/* The extension's span hook (session.h, lapse_session_set_span_hook: one slot): one
 * dispatcher for annotate=True (annotate.c) and a backend's window (window.c), set
 * for the next session only when one of them is on, so that without both spans cost
 * what they cost. The window counts at the begin and keeps no value; annotate's
 * record_function is the value its end closes. */
#include "ext.h"

#include "session/session.h"

static uint64_t dispatch_begin(uint32_t id)
{
    ext_window_begin(id); /* first: the backend is open for the span that opens it */
    return ext_annotate_begin(id);
}

static void dispatch_end(uint64_t value)
{
    if (value)
        ext_annotate_end(value);
}

void ext_span_hook_update(void)
{
    if (ext_annotate_on() || ext_window_on())
        lapse_session_set_span_hook(dispatch_begin, dispatch_end);
    else
        lapse_session_set_span_hook(NULL, NULL);
}
