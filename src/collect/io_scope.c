/* The io scope (lapse.h: LAPSE_IO_SCOPE, lapse_io_measure_begin_/end_): the
 * process's I/O counters and RSS at a scope's entry and exit, added to the span
 * open there as counters. Used by C and by the Python extension (span(io=True)). */
#include "lapse.h"

#include <stdint.h>

static uint32_t io_counter_id(unsigned which)
{
    static uint32_t ids[7];
    static const char *const names[7] = {"io.read_chars", "io.write_chars", "io.read_bytes",
                                          "io.write_bytes", "io.unreadable", "mem.rss_growth",
                                          "mem.unreadable"};
    uint32_t id = __atomic_load_n(&ids[which], __ATOMIC_RELAXED);
    if (!id) {
        id = lapse_intern(names[which]);
        __atomic_store_n(&ids[which], id, __ATOMIC_RELAXED);
    }
    return id;
}

void lapse_io_measure_begin_(lapse_io_scope *scope)
{
    uint32_t f = lapse_features();
    scope->measured = f & LAPSE_FEATURE_IO ? lapse_io_counters(scope->at_entry) == 0 : 0;
    scope->rss_measured = f & LAPSE_FEATURE_MEMORY ? lapse_rss_bytes(&scope->rss_at_entry) == 0 : 0;
}

void lapse_io_measure_end_(lapse_io_scope *scope)
{
    uint32_t f = lapse_features();
    uint64_t at_exit[4], rss;
    if (f & LAPSE_FEATURE_MEMORY) {
        if (scope->rss_measured && lapse_rss_bytes(&rss) == 0)
            lapse_count_id(io_counter_id(5), (int64_t)(rss - scope->rss_at_entry));
        else
            lapse_count_id(io_counter_id(6), 1);
    }
    if (!(f & LAPSE_FEATURE_IO))
        return;
    if (scope->measured && lapse_io_counters(at_exit) == 0) {
        for (unsigned i = 0; i < 4; i++)
            lapse_count_id(io_counter_id(i), at_exit[i] > scope->at_entry[i]
                                                 ? (int64_t)(at_exit[i] - scope->at_entry[i])
                                                 : 0);
    } else {
        lapse_count_id(io_counter_id(4), 1); /* could not measure: nothing recorded */
    }
}

void lapse_io_scope_begin_(lapse_io_scope *scope, lapse_site *site)
{
    scope->token = 0;
    scope->measured = 0;
    if (!lapse_enabled_)
        return;
    lapse_io_measure_begin_(scope);
    scope->token = lapse_span_begin_site_(site);
}

void lapse_io_scope_end_(lapse_io_scope *scope)
{
    if (!scope->token)
        return;
    lapse_io_measure_end_(scope);
    lapse_span_end_token_(scope->token);
}
