/* The core's span hooks: each hook's begin is called once for every frame a span
 * pushes (nested, keyed stacks that interleave, folded, suppressed and scaled
 * sampled frames), its end once when that frame closes (by token, by name, or
 * closed because an outer span ended first), with the value its begin returned;
 * two hooks end in reverse order; without hooks nothing is called and the fast
 * path's limit is the depth bound again. */
#include "lapse.h"

#include "../../src/core/core.h"
#include "../../src/core/names.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

#define MAX_EVENTS 256

typedef struct event {
    char what; /* 'b' or 'e' */
    int hook;
    uint32_t name;
    uint64_t value;
} event;
static event events[MAX_EVENTS];
static int n_events;
static uint64_t next_value = 100;
static uint32_t value_name[1024]; /* the name each value was returned for */

static uint64_t record_begin(int hook, uint32_t name)
{
    uint64_t v = next_value++;
    value_name[v % 1024] = name;
    if (n_events < MAX_EVENTS)
        events[n_events++] = (event){'b', hook, name, v};
    return v;
}

static void record_end(int hook, uint64_t v)
{
    if (n_events < MAX_EVENTS)
        events[n_events++] = (event){'e', hook, value_name[v % 1024], v};
}

static uint64_t begin0(uint32_t name) { return record_begin(0, name); }
static void end0(uint64_t v) { record_end(0, v); }
static uint64_t begin1(uint32_t name) { return record_begin(1, name); }
static void end1(uint64_t v) { record_end(1, v); }

static void session(uint32_t hooks, uint32_t max_depth)
{
    core_span_hook h[2] = {{begin0, end0}, {begin1, end1}};
    CHECK(core_span_hooks_set(h, hooks) == 0);
    core_config cfg = {max_depth, 64, 16, 0};
    CHECK(core_begin_session(&cfg) == 0);
    n_events = 0;
}

/* The events as text: "+a +b -b -a" (hook 0 only unless both asked for). */
static const char *trace(int both)
{
    static char buf[4096];
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n_events; i++) {
        if (!both && events[i].hook)
            continue;
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%c%s%s", used ? " " : "",
                                 events[i].what == 'b' ? '+' : '-', names_get(events[i].name),
                                 both ? (events[i].hook ? "1" : "0") : "");
    }
    return buf;
}

/* Every end's value came from one begin of the same hook, and every begin ended once. */
static void check_pairs(void)
{
    for (int i = 0; i < n_events; i++) {
        int matches = 0;
        for (int j = 0; j < n_events; j++)
            if (j != i && events[j].value == events[i].value && events[j].hook == events[i].hook &&
                events[j].what != events[i].what && (events[i].what == 'b') == (i < j))
                matches++;
        CHECK_EQ_U64(matches, 1);
    }
}

int main(void)
{
    uint32_t a = lapse_intern("a"), b = lapse_intern("b"), c = lapse_intern("c"),
             d = lapse_intern("d"), x = lapse_intern("x"), y = lapse_intern("y");

    /* nested, twice (the second time every path is known: the fast path's case) */
    session(1, 64);
    CHECK_EQ_U64(core_fast_limit, 0);
    for (int round = 0; round < 2; round++) {
        int ta = core_span_begin(a);
        int tb = core_span_begin(b);
        core_span_end_token(tb);
        core_span_end_token(ta);
        int tc = core_span_begin(c);
        core_span_end_name(c);
        (void)tc;
    }
    CHECK_STR(trace(0), "+a +b -b -a +c -c +a +b -b -a +c -c");
    check_pairs();
    CHECK_EQ_U64(core_tls->fast_limit, 0);

    /* an outer span ended first closes what was open inside it, innermost first */
    n_events = 0;
    int ta = core_span_begin(a);
    core_span_begin(b);
    core_span_begin(c);
    core_span_end_token(ta);
    CHECK_STR(trace(0), "+a +b +c -c -b -a");
    n_events = 0;
    core_span_begin(a);
    core_span_begin(b);
    core_span_end_name(a);
    CHECK_STR(trace(0), "+a +b -b -a");
    check_pairs();

    /* keyed stacks that interleave on one thread (asyncio tasks): each end gets its
     * own frame's value */
    n_events = 0;
    int k1 = 1, k2 = 2;
    int tx = core_span_begin_keyed(&k1, x);
    int ty = core_span_begin_keyed(&k2, y);
    core_span_end_keyed(&k1, tx);
    core_span_end_keyed(&k2, ty);
    CHECK_STR(trace(0), "+x +y -x -y");
    check_pairs();
    /* a task's stack inherits its parent's open spans, which it never ends */
    n_events = 0;
    int k3 = 3;
    ta = core_span_begin_keyed(NULL, a);
    core_stack_inherit(&k3, NULL);
    int tb = core_span_begin_keyed(&k3, b);
    core_span_end_keyed(&k3, tb);
    core_span_end_keyed(NULL, ta);
    CHECK_STR(trace(0), "+a +b -b -a");
    check_pairs();

    /* sampled: a skipped entry and what is inside it, a measured one and inside it */
    n_events = 0;
    int ts = core_span_begin_sampled(NULL, a, 0, 10);
    tb = core_span_begin(b);
    core_span_end_token(tb);
    core_span_end_token(ts);
    ts = core_span_begin_sampled(NULL, a, 1, 10);
    tb = core_span_begin(b);
    core_span_end_token(tb);
    core_span_end_token(ts);
    CHECK_STR(trace(0), "+a +b -b -a +a +b -b -a");
    check_pairs();
    CHECK_EQ_U64(core_tls->fast_limit, 0); /* the sampled frame's end restores it */

    /* folded: max_depth 2, a third level folds into its parent (a frame, hooked), a
     * fourth is not pushed (no frame, no hook) */
    session(1, 2);
    ta = core_span_begin(a);
    core_span_begin(b);
    core_span_begin(c);
    int td = core_span_begin(d);
    CHECK_EQ_U64(td, 0);
    core_span_end_name(d); /* nothing of that name open: ignored */
    core_span_end_token(ta);
    CHECK_STR(trace(0), "+a +b +c -c -b -a");
    check_pairs();

    /* two hooks: begun in order, ended in reverse */
    session(2, 64);
    ta = core_span_begin(a);
    core_span_end_token(ta);
    CHECK_STR(trace(1), "+a0 +a1 -a1 -a0");
    check_pairs();

    /* without hooks: nothing called, the fast path as it was */
    session(0, 64);
    CHECK_EQ_U64(core_fast_limit, 64);
    ta = core_span_begin(a);
    tb = core_span_begin(b);
    core_span_end_token(tb);
    core_span_end_token(ta);
    CHECK_EQ_U64(n_events, 0);
    CHECK_EQ_U64(core_tls->fast_limit, 64);

    /* a hook table that cannot be applied is refused */
    core_span_hook bad = {begin0, NULL};
    CHECK(core_span_hooks_set(&bad, 1) != 0);
    core_span_hook h3[3] = {{begin0, end0}, {begin0, end0}, {begin0, end0}};
    CHECK(core_span_hooks_set(h3, 3) != 0);
    return check_done("test_span_hooks");
}
