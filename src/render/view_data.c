#include "view_data.h"

#include <errno.h>

void view_data_begin(view_data_writer *w, FILE *out, uint64_t base_real_ns)
{
    json_init(&w->j, out);
    w->j.compact = 1;
    json_begin_object(&w->j, NULL);
    json_str(&w->j, "schema", VIEW_DATA_SCHEMA);
    json_u64(&w->j, "version", VIEW_DATA_VERSION);
    json_u64(&w->j, "base_real_ns", base_real_ns);
    json_begin_array(&w->j, "processes");
}

/* x - prev, mod 2^64 as the timelines' clock: the columns' begins are differences, and
 * the times of a file no writer makes may lie 2^63 apart */
static int64_t delta(int64_t x, int64_t prev)
{
    return (int64_t)((uint64_t)x - (uint64_t)prev);
}

static void rank_json(json_out *j, const char *key, int64_t v)
{
    if (v >= 0)
        json_i64(j, key, v);
    else
        json_null(j, key);
}

/* Columns of one thread's spans: begin as the difference from the previous span's
 * begin (the first from 0), so that the numbers stay short. */
static void thread_json(json_out *j, const timeline_file *t, const tl_thread *th)
{
    const tl_span *s = t->spans + th->first;
    json_begin_object(j, NULL);
    json_i64(j, "tid", th->tid);
    json_str(j, "name", th->name);
    json_begin_array(j, "begin");
    int64_t prev = 0;
    for (uint64_t i = 0; i < th->count; i++) {
        json_i64(j, NULL, delta(s[i].begin_ns, prev));
        prev = s[i].begin_ns;
    }
    json_end_array(j);
    json_begin_array(j, "dur");
    for (uint64_t i = 0; i < th->count; i++)
        json_u64(j, NULL, s[i].dur_ns);
    json_end_array(j);
    json_begin_array(j, "level");
    for (uint64_t i = 0; i < th->count; i++)
        json_u64(j, NULL, s[i].level);
    json_end_array(j);
    json_begin_array(j, "path");
    for (uint64_t i = 0; i < th->count; i++)
        json_u64(j, NULL, s[i].path);
    json_end_array(j);
    json_end_object(j);
}

static void samples_json(json_out *j, const store_samples *s)
{
    json_begin_object(j, "samples");
    json_str(j, "mode", s->mode);
    json_begin_array(j, "strings");
    for (uint32_t i = 0; i < s->string_count; i++)
        json_str(j, NULL, s->strings[i]);
    json_end_array(j);
    /* frames: function, file, line (string ids, line 0 unknown), flattened */
    json_begin_array(j, "frames");
    for (uint32_t i = 0; i < s->frame_count; i++) {
        json_u64(j, NULL, s->frames[i].function);
        json_u64(j, NULL, s->frames[i].file);
        json_u64(j, NULL, s->frames[i].line);
    }
    json_end_array(j);
    json_begin_array(j, "frame_ids");
    for (uint64_t i = 0; i < s->frame_id_count; i++)
        json_u64(j, NULL, s->frame_ids[i]);
    json_end_array(j);
    json_begin_object(j, "stacks");
#define STACK_COLUMN(key, field, put)                  \
    json_begin_array(j, key);                          \
    for (uint32_t i = 0; i < s->stack_count; i++)      \
        put(j, NULL, s->stacks[i].field);              \
    json_end_array(j)
    STACK_COLUMN("pid", pid, json_i64);
    STACK_COLUMN("tid", tid, json_i64);
    STACK_COLUMN("thread_name", thread_name, json_u64);
    STACK_COLUMN("span_path", span_path, json_u64);
    STACK_COLUMN("state", state, json_u64);
    STACK_COLUMN("first", first, json_u64);
    STACK_COLUMN("depth", depth, json_u64);
    STACK_COLUMN("count", count, json_u64);
    STACK_COLUMN("weight_ns", weight_ns, json_u64);
#undef STACK_COLUMN
    json_end_object(j);
    json_end_object(j);
}

/* A sampled thread's merged flame chart: columns, begin as the difference from the
 * previous slice's begin. */
static void chart_json(json_out *j, const tl_chart *c)
{
    json_begin_object(j, NULL);
    json_i64(j, "pid", c->pid);
    json_i64(j, "tid", c->tid);
    json_u64(j, "thread_name", c->thread_name);
    json_begin_array(j, "begin");
    int64_t prev = 0;
    for (size_t i = 0; i < c->count; i++) {
        json_i64(j, NULL, delta(c->slices[i].ts, prev));
        prev = c->slices[i].ts;
    }
    json_end_array(j);
    json_begin_array(j, "dur");
    for (size_t i = 0; i < c->count; i++)
        json_u64(j, NULL, c->slices[i].dur);
    json_end_array(j);
    json_begin_array(j, "depth");
    for (size_t i = 0; i < c->count; i++)
        json_u64(j, NULL, c->slices[i].depth);
    json_end_array(j);
    json_begin_array(j, "frame");
    for (size_t i = 0; i < c->count; i++)
        json_u64(j, NULL, c->slices[i].frame);
    json_end_array(j);
    json_end_object(j);
}

/* The process sampler's records: columns, begin as the difference from the previous
 * record's begin; each record one value over [begin, begin + dur). */
static void proc_json(json_out *j, const timeline_file *t)
{
    json_begin_object(j, "proc");
    json_bool(j, "rss", t->proc_rss);
    json_bool(j, "io", t->proc_io);
    json_u64(j, "rss_peak", t->rss_peak);
    json_u64(j, "io_peak", t->io_peak);
    json_begin_array(j, "begin");
    int64_t prev = 0;
    for (uint32_t i = 0; i < t->proc_count; i++) {
        json_i64(j, NULL, delta(t->proc[i].begin_ns, prev));
        prev = t->proc[i].begin_ns;
    }
    json_end_array(j);
#define PROC_COLUMN(key, value)                     \
    json_begin_array(j, key);                       \
    for (uint32_t i = 0; i < t->proc_count; i++)    \
        json_u64(j, NULL, value);                   \
    json_end_array(j)
    PROC_COLUMN("dur", (uint64_t)(t->proc[i].end_ns - t->proc[i].begin_ns));
    PROC_COLUMN("rss", t->proc[i].rss_bytes);
    PROC_COLUMN("read_per_s", t->proc[i].read_per_s);
    PROC_COLUMN("write_per_s", t->proc[i].write_per_s);
#undef PROC_COLUMN
    json_end_object(j);
}

/* The GPU tracks (analyze/gpu_track.h): per (device, stream), columns of its ops, begin
 * as the difference from the previous op's begin; null where a launch was not seen or
 * the timeline does not hold the launching span. */
static void gpu_json(json_out *j, const timeline_file *t, const store_gpu_activity *g)
{
    json_begin_object(j, "gpu");
    json_u64(j, "dropped", g->dropped);
    json_begin_array(j, "names");
    for (uint32_t i = 0; i < t->gpu_name_count; i++)
        json_str(j, NULL, t->gpu_names[i]);
    json_end_array(j);
    json_begin_array(j, "tracks");
    for (uint32_t k = 0; k < t->gpu_track_count; k++) {
        const tl_gpu_track *tr = &t->gpu_tracks[k];
        const tl_gpu_op *op = t->gpu_ops + tr->first;
        json_begin_object(j, NULL);
        json_u64(j, "device", tr->device);
        json_u64(j, "stream", tr->stream);
        json_u64(j, "more", tr->more);
        json_u64(j, "rows", tr->rows);
        json_begin_array(j, "begin");
        int64_t prev = 0;
        for (uint32_t i = 0; i < tr->count; i++) {
            json_i64(j, NULL, delta(op[i].begin_ns, prev));
            prev = op[i].begin_ns;
        }
        json_end_array(j);
#define OP_COLUMN(key, put, value, known)             \
    json_begin_array(j, key);                         \
    for (uint32_t i = 0; i < tr->count; i++) {        \
        if (known)                                    \
            put(j, NULL, value);                      \
        else                                          \
            json_null(j, NULL);                       \
    }                                                 \
    json_end_array(j)
        OP_COLUMN("dur", json_u64, op[i].dur_ns, 1);
        OP_COLUMN("row", json_u64, op[i].row, 1);
        OP_COLUMN("kind", json_u64, op[i].kind, 1);
        OP_COLUMN("name", json_u64, op[i].name, 1);
        OP_COLUMN("bytes", json_u64, op[i].bytes, 1);
        OP_COLUMN("thread", json_u64, op[i].thread, op[i].thread != UINT32_MAX);
        OP_COLUMN("queue_ns", json_i64, op[i].queue_ns, op[i].thread != UINT32_MAX);
        OP_COLUMN("path", json_u64, op[i].path, op[i].path != UINT32_MAX);
        OP_COLUMN("span", json_u64, op[i].span, op[i].span != UINT64_MAX);
#undef OP_COLUMN
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
}

void view_data_add(view_data_writer *w, const char *file, const store_file *f,
                   const timeline_file *t)
{
    json_out *j = &w->j;
    const store_meta *m = &f->meta;
    json_begin_object(j, NULL);
    json_str(j, "file", file);
    json_i64(j, "pid", m->pid);
    json_str(j, "host", m->host);
    json_str(j, "role", m->role);
    rank_json(j, "rank", m->rank);
    json_u64(j, "max_spans", m->max_spans);
    json_u64(j, "dropped", t->dropped);
    if (t->dropped)
        json_i64(j, "dropped_at_ns", t->dropped_at_ns);
    else
        json_null(j, "dropped_at_ns");
    json_begin_array(j, "paths");
    for (uint32_t i = 0; i < t->path_count; i++)
        json_str(j, NULL, t->paths[i]);
    json_end_array(j);
    json_begin_array(j, "threads");
    for (uint32_t i = 0; i < t->thread_count; i++)
        thread_json(j, t, &t->threads[i]);
    json_end_array(j);
    if (f->samples && f->samples->stack_count) {
        samples_json(j, f->samples);
        json_begin_array(j, "charts");
        for (uint32_t i = 0; i < t->chart_count; i++)
            chart_json(j, &t->charts[i]);
        json_end_array(j);
    } else {
        json_null(j, "samples");
        json_null(j, "charts");
    }
    if (t->proc_count)
        proc_json(j, t);
    else
        json_null(j, "proc");
    if (t->gpu_op_count)
        gpu_json(j, t, f->activity);
    else
        json_null(j, "gpu");
    json_end_object(j);
}

int view_data_finish(view_data_writer *w)
{
    json_end_array(&w->j);
    json_end_object(&w->j);
    json_finish(&w->j);
    return ferror(w->j.f) ? -EIO : 0;
}
