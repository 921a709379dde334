#include "proc_track.h"

/* bytes over ns as bytes per second, rounded down (ns > 0: the reader checks end > start) */
static uint64_t per_second(uint64_t bytes, uint64_t ns)
{
    return (uint64_t)((unsigned __int128)bytes * 1000000000u / ns);
}

proc_point proc_track_point(const store_file *f, uint32_t i, uint64_t offset)
{
    const store_proc_samples *ps = &f->proc;
    const store_proc_sample *r = &ps->records[i];
    uint64_t ns = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 1;
    return (proc_point){
        .begin_ns = (int64_t)(r->start_ns + offset),
        .end_ns = (int64_t)(r->end_ns + offset),
        .rss_bytes = r->rss_max_bytes,
        .read_per_s = per_second(r->read_chars, ns),
        .write_per_s = per_second(r->write_chars, ns),
        .gap_after = i + 1 == ps->count || ps->records[i + 1].start_ns != r->end_ns,
    };
}
