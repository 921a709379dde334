#include "codec.h"

#include "../core/core.h"
#include "../core/hist.h"
#include "crc32.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(STORE_MAX_DEPTH == CORE_MAX_DEPTH, "a reader accepts what a writer may ask for");

static const uint8_t store_magic[8] = {0x89, 'L', 'A', 'P', 'S', 'E', '\r', '\n'};

/* ---- meta fields: one table drives both directions ---- */

enum meta_type { META_U64 = 1, META_I64 = 2, META_F64 = 3, META_STR = 4, META_U32 = 5 };

typedef struct meta_field {
    const char *key;
    int type;
    size_t offset;
} meta_field;

#define M(key, type, field) {key, type, offsetof(store_meta, field)}
static const meta_field meta_fields[] = {
    M("lapse_version", META_STR, lapse_version),
    M("host", META_STR, host),
    M("role", META_STR, role),
    M("run_id", META_STR, run_id),
    M("job_id", META_STR, job_id),
    M("launcher", META_STR, launcher),
    M("end_reason", META_STR, end_reason),
    M("clock_source", META_STR, clock_source),
    M("pid", META_I64, pid),
    M("ppid", META_I64, ppid),
    M("rank", META_I64, rank),
    M("world_size", META_I64, world_size),
    M("local_rank", META_I64, local_rank),
    M("start_real_ns", META_U64, start_real_ns),
    M("start_mono_ns", META_U64, start_mono_ns),
    M("write_real_ns", META_U64, write_real_ns),
    M("write_mono_ns", META_U64, write_mono_ns),
    M("anchor_real_ns", META_U64, anchor_real_ns),
    M("anchor_mono_ns", META_U64, anchor_mono_ns),
    M("wall_ns", META_U64, wall_ns),
    M("cpu_user_ns", META_U64, cpu_user_ns),
    M("cpu_sys_ns", META_U64, cpu_sys_ns),
    M("max_rss_kb", META_U64, max_rss_kb),
    M("cpu_unknown", META_U32, cpu_unknown),
    M("ctx_voluntary", META_I64, ctx_voluntary),
    M("ctx_involuntary", META_I64, ctx_involuntary),
    M("tsc_hz", META_F64, tsc_hz),
    M("write_seq", META_U64, write_seq),
    M("final", META_U32, final),
    M("snapshot_interval_ms", META_U32, snapshot_interval_ms),
    M("max_spans", META_U64, max_spans),
    M("max_depth", META_U64, max_depth),
    M("max_paths", META_U64, max_paths),
    M("max_counters", META_U64, max_counters),
    M("cpu_sample_ms", META_U32, cpu_sample_ms),
    M("cpu_ticks", META_U64, cpu_ticks),
    M("cpu_ticks_late", META_U64, cpu_ticks_late),
    M("cpu_sampler_ns", META_U64, cpu_sampler_ns),
    M("cpu_sampler_rt", META_U32, cpu_sampler_rt),
    M("thread_names", META_U32, thread_names),
    M("features", META_U32, features),
    M("timeline_dropped", META_U64, timeline_dropped),
    M("folded_depth", META_U64, folded_depth),
    M("folded_paths", META_U64, folded_paths),
    M("unmatched_ends", META_U64, unmatched_ends),
    M("dropped_counters", META_U64, dropped_counters),
    M("write_failures", META_U64, write_failures),
    M("write_error", META_STR, write_error),
    M("missing", META_STR, missing),
    M("absent", META_STR, absent),
    M("gpu_time_missing", META_STR, gpu_time_missing),
    M("window_backend", META_STR, window_backend),
    M("window_phase", META_STR, window_phase),
    M("window_start", META_U64, window_start),
    M("window_stop", META_U64, window_stop),
    M("window_entries", META_U64, window_entries),
    M("window_opened_entry", META_U64, window_opened_entry),
    M("window_closed_entry", META_U64, window_closed_entry),
    M("window_open_ns", META_U64, window_open_ns),
    M("window_close_ns", META_U64, window_close_ns),
    M("window_trace", META_STR, window_trace),
    M("window_error", META_STR, window_error),
    M("activity_pauses", META_U32, activity_pauses),
    M("activity_paused_ns", META_U64, activity_paused_ns),
    M("activity_pause_from_ns", META_U64, activity_pause_from_ns),
    M("activity_pause_to_ns", META_U64, activity_pause_to_ns),
};
#undef M
#define META_FIELD_COUNT (sizeof meta_fields / sizeof meta_fields[0])

/* ---- encoding ---- */

static size_t section_begin(bytes_out *out, uint32_t type, uint32_t count)
{
    size_t at = out->len;
    bytes_put_u32(out, type);
    bytes_put_u32(out, count);
    bytes_put_u64(out, 0); /* payload length, patched */
    bytes_put_u32(out, 0); /* payload crc, patched */
    bytes_put_u32(out, 0); /* header crc, patched */
    return at;
}

static void section_end(bytes_out *out, size_t at)
{
    if (out->failed)
        return;
    size_t payload = at + STORE_SECTION_HEADER_SIZE;
    uint64_t len = out->len - payload;
    bytes_patch_u64(out, at + 8, len);
    bytes_patch_u32(out, at + 16, store_crc32(out->data + payload, (size_t)len));
    bytes_patch_u32(out, at + 20, store_crc32(out->data + at, 20));
    static const uint8_t pad[8];
    bytes_put(out, pad, (8 - (len & 7)) & 7);
}

static void encode_meta(const store_meta *m, bytes_out *out)
{
    size_t at = section_begin(out, STORE_SECTION_META, (uint32_t)META_FIELD_COUNT);
    for (size_t i = 0; i < META_FIELD_COUNT; i++) {
        const meta_field *fd = &meta_fields[i];
        const char *base = (const char *)m + fd->offset;
        size_t klen = strlen(fd->key);
        bytes_put_u16(out, (uint16_t)klen);
        bytes_put(out, fd->key, klen);
        uint8_t type = (uint8_t)fd->type;
        bytes_put(out, &type, 1);
        uint64_t v = 0;
        switch (fd->type) {
        case META_STR:
            bytes_put_str(out, *(char *const *)base);
            continue;
        case META_U32:
            v = *(const uint32_t *)base;
            break;
        default: /* U64, I64 and F64 are all 8 bytes */
            memcpy(&v, base, 8);
            break;
        }
        bytes_put_u64(out, v);
    }
    section_end(out, at);
}

static void encode_samples(const store_samples *s, bytes_out *out)
{
    size_t at = section_begin(out, STORE_SECTION_SAMPLES, s->stack_count);
    uint64_t v;
    bytes_put_str(out, s->mode ? s->mode : "");
    memcpy(&v, &s->rate_asked_hz, 8);
    bytes_put_u64(out, v);
    memcpy(&v, &s->rate_achieved_hz, 8);
    bytes_put_u64(out, v);
    bytes_put_u64(out, s->samples);
    bytes_put_u64(out, s->late_samples);
    bytes_put_u64(out, s->read_errors);
    bytes_put_u64(out, s->start_real_ns);
    bytes_put_u64(out, s->end_real_ns);
    bytes_put_u64(out, s->duration_ns);
    bytes_put_u32(out, s->idle);
    bytes_put_u32(out, s->string_count);
    for (uint32_t i = 0; i < s->string_count; i++)
        bytes_put_str(out, s->strings[i] ? s->strings[i] : "");
    bytes_put_u32(out, s->process_count);
    for (uint32_t i = 0; i < s->process_count; i++) {
        const store_sample_process *p = &s->processes[i];
        bytes_put_u64(out, (uint64_t)p->pid);
        bytes_put_u64(out, (uint64_t)p->ppid);
        bytes_put_u32(out, p->command);
        bytes_put_u32(out, p->python_version);
    }
    bytes_put_u32(out, s->frame_count);
    for (uint32_t i = 0; i < s->frame_count; i++) {
        bytes_put_u32(out, s->frames[i].function);
        bytes_put_u32(out, s->frames[i].file);
        bytes_put_u32(out, s->frames[i].line);
    }
    for (uint32_t i = 0; i < s->stack_count; i++) {
        const store_sample_stack *st = &s->stacks[i];
        bytes_put_u64(out, (uint64_t)st->pid);
        bytes_put_u64(out, (uint64_t)st->tid);
        bytes_put_u32(out, st->thread_name);
        bytes_put_u32(out, st->span_path);
        bytes_put_u32(out, st->state);
        bytes_put_u32(out, st->depth);
        bytes_put_u64(out, st->count);
        bytes_put_u64(out, st->weight_ns);
        for (uint32_t d = 0; d < st->depth; d++)
            bytes_put_u32(out, s->frame_ids[st->first + d]);
    }
    section_end(out, at);
}

static void encode_activity(const store_gpu_activity *g, bytes_out *out)
{
    size_t at = section_begin(out, STORE_SECTION_GPU_ACTIVITY, g->count);
    bytes_put_u32(out, g->state);
    bytes_put_str(out, g->note ? g->note : "");
    bytes_put_u64(out, g->dropped);
    bytes_put_u32(out, g->name_count);
    for (uint32_t i = 0; i < g->name_count; i++)
        bytes_put_str(out, g->names[i] ? g->names[i] : "");
    for (uint32_t i = 0; i < g->count; i++) {
        const store_gpu_record *r = &g->records[i];
        bytes_put_u32(out, r->kind);
        bytes_put_u32(out, r->copy_kind);
        bytes_put_u32(out, r->device);
        bytes_put_u32(out, r->stream);
        bytes_put_u32(out, r->name);
        bytes_put_u32(out, r->node);
        bytes_put_u64(out, r->start_ns);
        bytes_put_u64(out, r->end_ns);
        bytes_put_u64(out, r->bytes);
        bytes_put_u64(out, r->launch_ns);
    }
    section_end(out, at);
}

int store_encode(const store_file *f, bytes_out *out)
{
    size_t start = out->len;
    bytes_put(out, store_magic, 8);
    bytes_put_u32(out, STORE_FORMAT_VERSION);
    bytes_put_u32(out, 0); /* flags */
    bytes_put_u64(out, 0); /* total length, patched */
    int children = f->child_count || f->children_unrecorded;
    int causal = f->causal_count || f->causal_dropped;
    int gpu = f->gpu.interval_ms != 0;
    uint32_t gpu_ids = 0; /* devices with an id (GPU_DEVICE_IDS) */
    for (uint32_t i = 0; gpu && i < f->gpu.device_count; i++)
        gpu_ids += f->gpu.devices[i].uuid != NULL;
    uint32_t gpu_timed = 0; /* nodes with a GPU time figure, measured or missing */
    for (uint32_t i = 0; i < f->node_count; i++)
        gpu_timed += (f->nodes[i].gpu_timed | f->nodes[i].gpu_untimed) != 0;
    bytes_put_u32(out, 9u + (f->samples ? 1u : 0u) + (children ? 1u : 0u) +
                           (causal ? 1u : 0u) + (gpu ? 1u : 0u) + (gpu_ids ? 1u : 0u) +
                           (gpu_timed ? 1u : 0u) + (f->activity ? 1u : 0u) +
                           (f->gpu_memory ? 1u : 0u)); /* section count */
    bytes_put_u32(out, 0); /* header crc, patched */

    encode_meta(&f->meta, out);

    size_t at = section_begin(out, STORE_SECTION_NAMES, f->name_count);
    for (uint32_t i = 0; i < f->name_count; i++)
        bytes_put_str(out, f->names[i] ? f->names[i] : "");
    section_end(out, at);

    at = section_begin(out, STORE_SECTION_THREADS, f->thread_count);
    for (uint32_t i = 0; i < f->thread_count; i++) {
        bytes_put_u64(out, (uint64_t)f->threads[i].tid);
        bytes_put_str(out, f->threads[i].name);
    }
    section_end(out, at);

    at = section_begin(out, STORE_SECTION_NODES, f->node_count);
    for (uint32_t i = 0; i < f->node_count; i++) {
        const store_node *n = &f->nodes[i];
        bytes_put_u32(out, (uint32_t)n->parent);
        bytes_put_u32(out, n->thread);
        bytes_put_u32(out, n->name);
        bytes_put_u32(out, n->depth);
        bytes_put_u64(out, n->calls);
        bytes_put_u64(out, n->total_ns);
        bytes_put_u64(out, n->child_ns);
        bytes_put_u64(out, n->min_ns);
        bytes_put_u64(out, n->max_ns);
        bytes_put_u64(out, n->folded);
        unsigned lo = n->hist_n ? n->hist_lo : 0;
        unsigned len = n->hist_n ? n->hist_n : HIST_BUCKETS;
        if (!n->hist || lo >= HIST_BUCKETS)
            len = 0;
        if (lo + len > HIST_BUCKETS)
            len = HIST_BUCKETS - lo;
        uint16_t used = 0;
        for (unsigned i = 0; i < len; i++)
            used += n->hist[i] != 0;
        bytes_put_u16(out, used);
        for (unsigned i = 0; i < len; i++)
            if (n->hist[i]) {
                bytes_put_u16(out, (uint16_t)(lo + i));
                bytes_put_u64(out, n->hist[i]);
            }
    }
    section_end(out, at);

    at = section_begin(out, STORE_SECTION_COUNTERS, f->counter_count);
    for (uint32_t i = 0; i < f->counter_count; i++) {
        bytes_put_u32(out, f->counters[i].node);
        bytes_put_u32(out, f->counters[i].name);
        bytes_put_u64(out, (uint64_t)f->counters[i].sum);
        bytes_put_u64(out, f->counters[i].updates);
    }
    section_end(out, at);

    if (causal) { /* before the spans: a reader keeps the spans of a file that has it */
        at = section_begin(out, STORE_SECTION_CAUSALITY, f->causal_count);
        bytes_put_u64(out, f->causal_dropped);
        for (uint32_t i = 0; i < f->causal_count; i++) {
            const store_causal *c = &f->causal[i];
            bytes_put_u32(out, c->thread);
            bytes_put_u32(out, c->name);
            bytes_put_u32(out, c->kind);
            bytes_put_u32(out, 0);
            bytes_put_u64(out, c->begin_ns);
            bytes_put_u64(out, c->end_ns);
        }
        section_end(out, at);
    }

    uint32_t spans = f->span_count > UINT32_MAX ? UINT32_MAX : (uint32_t)f->span_count;
    at = section_begin(out, STORE_SECTION_SPANS, spans);
    for (uint32_t i = 0; i < spans; i++) {
        const store_span *s = &f->spans[i];
        bytes_put_u32(out, s->thread);
        bytes_put_u32(out, s->name);
        bytes_put_u32(out, s->depth);
        bytes_put_u32(out, 0);
        bytes_put_u64(out, s->begin_ns);
        bytes_put_u64(out, s->end_ns);
    }
    section_end(out, at);

    uint32_t estimated = 0;
    for (uint32_t i = 0; i < f->node_count; i++)
        estimated += f->nodes[i].sample_stride || f->nodes[i].child_estimated;
    at = section_begin(out, STORE_SECTION_ESTIMATES, estimated);
    for (uint32_t i = 0; i < f->node_count; i++)
        if (f->nodes[i].sample_stride || f->nodes[i].child_estimated) {
            bytes_put_u32(out, i);
            bytes_put_u32(out, f->nodes[i].sample_stride);
            bytes_put_u32(out, f->nodes[i].child_estimated);
        }
    section_end(out, at);

    const store_proc_samples *ps = &f->proc;
    at = section_begin(out, STORE_SECTION_PROCESS_SAMPLES, ps->count);
    bytes_put_u32(out, ps->interval_ms);
    bytes_put_u32(out, ps->per_record);
    bytes_put_u64(out, ps->unreadable);
    bytes_put_u64(out, ps->sampler_cpu_ns);
    for (uint32_t i = 0; i < ps->count; i++) {
        const store_proc_sample *r = &ps->records[i];
        bytes_put_u64(out, r->start_ns);
        bytes_put_u64(out, r->end_ns);
        bytes_put_u64(out, r->read_chars);
        bytes_put_u64(out, r->write_chars);
        bytes_put_u64(out, r->read_bytes);
        bytes_put_u64(out, r->write_bytes);
        bytes_put_u64(out, r->quiet_chars);
        bytes_put_u64(out, r->phased_chars);
        bytes_put_u64(out, r->rss_max_bytes);
        bytes_put_u32(out, r->intervals);
        bytes_put_u32(out, r->quiet_intervals);
    }
    section_end(out, at);

    if (f->samples)
        encode_samples(f->samples, out);

    uint32_t ticked = 0;
    for (uint32_t i = 0; i < f->node_count; i++)
        ticked += f->nodes[i].cpu_ticks != 0;
    at = section_begin(out, STORE_SECTION_CPU_TICKS, ticked);
    for (uint32_t i = 0; i < f->node_count; i++)
        if (f->nodes[i].cpu_ticks) {
            bytes_put_u32(out, i);
            bytes_put_u64(out, f->nodes[i].cpu_ticks);
            bytes_put_u64(out, f->nodes[i].cpu_wait_ticks);
        }
    section_end(out, at);

    if (children) {
        at = section_begin(out, STORE_SECTION_CHILDREN, f->child_count);
        bytes_put_u64(out, f->children_unrecorded);
        for (uint32_t i = 0; i < f->child_count; i++) {
            bytes_put_u64(out, (uint64_t)f->children[i].pid);
            bytes_put_u64(out, f->children[i].fork_mono_ns);
        }
        section_end(out, at);
    }

    if (gpu) {
        const store_gpu *g = &f->gpu;
        at = section_begin(out, STORE_SECTION_GPU_DEVICE, g->device_count);
        bytes_put_u32(out, g->interval_ms);
        bytes_put_u32(out, 0);
        bytes_put_u64(out, g->failed_calls);
        bytes_put_str(out, g->error);
        for (uint32_t i = 0; i < g->device_count; i++) {
            const store_gpu_device *dv = &g->devices[i];
            bytes_put_u32(out, dv->index);
            bytes_put_u32(out, dv->phase_count);
            bytes_put_str(out, dv->name);
            bytes_put_u64(out, dv->ticks);
            bytes_put_u64(out, dv->busy_ticks);
            bytes_put_u64(out, dv->busy_pct_sum);
            bytes_put_u64(out, dv->own_ticks);
            bytes_put_u64(out, dv->own_pct_sum);
            bytes_put_u64(out, dv->mem_peak_bytes);
            for (uint32_t k = 0; k < dv->phase_count; k++) {
                bytes_put_u32(out, dv->phases[k].name);
                bytes_put_u32(out, 0);
                bytes_put_u64(out, dv->phases[k].ticks);
                bytes_put_u64(out, dv->phases[k].own_pct_sum);
            }
        }
        section_end(out, at);
    }
    if (gpu_ids) { /* a section of its own: section 13's layout stays as older readers know it */
        at = section_begin(out, STORE_SECTION_GPU_DEVICE_IDS, gpu_ids);
        for (uint32_t i = 0; i < f->gpu.device_count; i++) {
            const store_gpu_device *dv = &f->gpu.devices[i];
            if (!dv->uuid)
                continue;
            bytes_put_u32(out, dv->index);
            bytes_put_u32(out, 0);
            bytes_put_str(out, dv->uuid);
            bytes_put_str(out, dv->uuid_error ? dv->uuid_error : "");
        }
        section_end(out, at);
    }
    if (f->gpu_memory) {
        const store_gpu_memory *g = f->gpu_memory;
        at = section_begin(out, STORE_SECTION_GPU_MEMORY, g->device_count);
        bytes_put_u64(out, g->readings);
        bytes_put_u64(out, g->resets);
        bytes_put_str(out, g->error);
        for (uint32_t i = 0; i < g->device_count; i++) {
            const store_gpu_memory_device *dv = &g->devices[i];
            bytes_put_u32(out, dv->index);
            bytes_put_u32(out, 0);
            bytes_put_str(out, dv->uuid);
            bytes_put_str(out, dv->name);
            bytes_put_u64(out, dv->allocated_peak_bytes);
            bytes_put_u64(out, dv->reserved_peak_bytes);
        }
        section_end(out, at);
    }
    if (f->activity)
        encode_activity(f->activity, out);
    if (gpu_timed) {
        at = section_begin(out, STORE_SECTION_GPU_TIME, gpu_timed);
        for (uint32_t i = 0; i < f->node_count; i++)
            if (f->nodes[i].gpu_timed | f->nodes[i].gpu_untimed) {
                bytes_put_u32(out, i);
                bytes_put_u64(out, f->nodes[i].gpu_ns);
                bytes_put_u64(out, f->nodes[i].gpu_timed);
                bytes_put_u64(out, f->nodes[i].gpu_untimed);
            }
        section_end(out, at);
    }

    if (out->failed)
        return -ENOMEM;
    bytes_patch_u64(out, start + 16, out->len - start);
    bytes_patch_u32(out, start + 28, store_crc32(out->data + start, 28));
    return 0;
}

/* ---- decoding ---- */

/* The reader's memory: a chain of blocks, each filled from the front. Everything
 * store_decode returns lives here and goes with one store_file_free. */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

#define ARENA_BLOCK_SIZE (256u * 1024u)

static void *arena_alloc(store_file *f, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    arena_block *b = f->owned;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > ARENA_BLOCK_SIZE / 4 ? size : ARENA_BLOCK_SIZE;
        arena_block *nb = malloc(sizeof(arena_block) + cap);
        if (!nb)
            return NULL;
        nb->used = 0;
        nb->cap = cap;
        if (cap == size && b) { /* a large piece: keep filling the current block */
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            f->owned = nb;
        }
        b = nb;
    }
    void *p = (char *)b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

void store_file_free(store_file *f)
{
    arena_block *b = f->owned;
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
    memset(f, 0, sizeof *f);
}

typedef store_decoder decoder;

static int fail(decoder *d, const char *fmt, ...)
{
    if (d->err && d->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->err, d->errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static char *dup_span(decoder *d, const uint8_t *p, size_t n)
{
    char *s = arena_alloc(d->f, n + 1);
    if (!s)
        return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    /* names end up in text reports: keep them printable */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            s[i] = '?';
    return s;
}

static char *get_str(decoder *d, bytes_in *in)
{
    uint32_t n = bytes_get_u32(in);
    const uint8_t *p = bytes_get_span(in, n);
    if (!p)
        return NULL;
    return dup_span(d, p, n);
}

/* A count read from the file must fit in what is left of its payload. */
static int count_fits(const bytes_in *in, uint64_t count, size_t min_item)
{
    return count <= bytes_left(in) / min_item;
}

static int decode_meta(decoder *d, bytes_in *in, uint32_t count)
{
    store_meta *m = &d->f->meta;
    for (uint32_t i = 0; i < count; i++) {
        uint16_t klen = bytes_get_u16(in);
        const uint8_t *key = bytes_get_span(in, klen);
        uint8_t type = bytes_get_u8(in);
        if (!key)
            return fail(d, "meta section is cut short");
        const meta_field *fd = NULL;
        for (size_t k = 0; k < META_FIELD_COUNT; k++)
            if (strlen(meta_fields[k].key) == klen && !memcmp(meta_fields[k].key, key, klen))
                fd = &meta_fields[k];
        if (type == META_STR) {
            char *s = get_str(d, in);
            if (!s)
                return fail(d, "meta section is cut short");
            if (fd && fd->type == META_STR)
                *(char **)((char *)m + fd->offset) = s;
            continue;
        }
        if (type < META_U64 || type > META_U32)
            return fail(d, "meta field has unknown type %u", type);
        uint64_t v = bytes_get_u64(in);
        if (in->failed)
            return fail(d, "meta section is cut short");
        if (!fd || fd->type == META_STR)
            continue;
        if (fd->type == META_U32)
            *(uint32_t *)((char *)m + fd->offset) = (uint32_t)v;
        else
            memcpy((char *)m + fd->offset, &v, 8);
    }
    /* the deepest node a writer with these bounds produces (it folds deeper spans) */
    if (m->max_depth > STORE_MAX_DEPTH)
        return fail(d, "max_depth %llu is more than a writer can ask for (%u)",
                    (unsigned long long)m->max_depth, STORE_MAX_DEPTH);
    d->max_depth = m->max_depth ? (uint32_t)m->max_depth : STORE_DEFAULT_DEPTH;
    return 0;
}

static int decode_names(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 4))
        return fail(d, "names section claims %u names, more than it holds", count);
    f->names = arena_alloc(f, (size_t)count * sizeof(char *));
    if (!f->names)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        f->names[i] = get_str(d, in);
        if (!f->names[i])
            return fail(d, "names section is cut short");
    }
    f->name_count = count;
    if (count == 0 || f->names[0][0] != 0)
        return fail(d, "names section must start with the empty name");
    return 0;
}

static int decode_threads(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 12))
        return fail(d, "threads section claims %u threads, more than it holds", count);
    f->threads = arena_alloc(f, (size_t)count * sizeof(store_thread));
    if (!f->threads)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        f->threads[i].tid = (int64_t)bytes_get_u64(in);
        f->threads[i].name = get_str(d, in);
        if (!f->threads[i].name)
            return fail(d, "threads section is cut short");
    }
    f->thread_count = count;
    return 0;
}

static int decode_nodes(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    const size_t node_min = 16 + 6 * 8 + 2;
    if (!count_fits(in, count, node_min))
        return fail(d, "nodes section claims %u nodes, more than it holds", count);
    f->nodes = arena_alloc(f, (size_t)count * sizeof(store_node));
    d->thread_has_root = arena_alloc(f, f->thread_count ? f->thread_count : 1);
    if (!f->nodes || !d->thread_has_root)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        store_node *n = &f->nodes[i];
        n->parent = (int32_t)bytes_get_u32(in);
        n->thread = bytes_get_u32(in);
        n->name = bytes_get_u32(in);
        n->depth = bytes_get_u32(in);
        n->calls = bytes_get_u64(in);
        n->total_ns = bytes_get_u64(in);
        n->child_ns = bytes_get_u64(in);
        n->min_ns = bytes_get_u64(in);
        n->max_ns = bytes_get_u64(in);
        n->folded = bytes_get_u64(in);
        uint16_t used = bytes_get_u16(in);
        if (in->failed)
            return fail(d, "nodes section is cut short at node %u", i);
        if (n->thread >= f->thread_count || n->name >= f->name_count)
            return fail(d, "node %u names a thread or name that does not exist", i);
        if (n->parent < 0) {
            /* a thread's root: name 0, depth 0, the first node of its thread */
            if (n->parent != -1 || n->depth != 0 || n->name != 0 || d->thread_has_root[n->thread])
                return fail(d, "node %u has a bad parent", i);
            d->thread_has_root[n->thread] = 1;
        } else if (n->depth > d->max_depth) {
            return fail(d, "node %u is nested %u deep, deeper than its writer folds (max_depth %u)",
                        i, n->depth, d->max_depth);
        } else if ((uint32_t)n->parent >= i || f->nodes[n->parent].thread != n->thread ||
                   f->nodes[n->parent].depth + 1 != n->depth) {
            return fail(d, "node %u has a bad parent", i);
        }
        if (used > HIST_BUCKETS || !count_fits(in, used, 10))
            return fail(d, "node %u has a bad histogram", i);
        if (used == 0)
            continue;
        /* pairs are (u16 bucket, u64 count), buckets strictly increasing: check
         * them, then give the tight window from the first to the last */
        const uint8_t *pairs = bytes_get_span(in, (size_t)used * 10);
        int last = -1;
        for (uint16_t k = 0; k < used; k++) {
            int b = pairs[10 * k] | pairs[10 * k + 1] << 8;
            if (b <= last || b >= (int)HIST_BUCKETS)
                return fail(d, "node %u has a bad histogram", i);
            last = b;
        }
        if (d->flags & STORE_READ_SKIP_HIST)
            continue;
        unsigned lo = pairs[0] | pairs[1] << 8;
        n->hist_lo = (uint16_t)lo;
        n->hist_n = (uint16_t)(last - (int)lo + 1);
        n->hist = arena_alloc(f, n->hist_n * sizeof(uint64_t));
        if (!n->hist)
            return -ENOMEM;
        for (uint16_t k = 0; k < used; k++) {
            const uint8_t *p = pairs + 10 * k;
            n->hist[(p[0] | p[1] << 8) - lo] = bytes_le(p + 2, 8);
        }
    }
    f->node_count = count;
    return 0;
}

static int decode_counters(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 24))
        return fail(d, "counters section claims %u counters, more than it holds", count);
    f->counters = arena_alloc(f, (size_t)count * sizeof(store_counter));
    if (!f->counters)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        store_counter *c = &f->counters[i];
        c->node = bytes_get_u32(in);
        c->name = bytes_get_u32(in);
        c->sum = (int64_t)bytes_get_u64(in);
        c->updates = bytes_get_u64(in);
        if (c->node >= f->node_count || c->name >= f->name_count)
            return fail(d, "counter %u names a node or name that does not exist", i);
    }
    f->counter_count = count;
    return 0;
}

/* Section CAUSALITY. A file that has signals or waits keeps its spans even when the
 * reader skips them (STORE_READ_SKIP_SPANS): the critical path is cut by them. */
static int decode_causality(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (bytes_left(in) != 8u + (uint64_t)count * 32u)
        return fail(d, "causality section: %u records do not fill its %zu bytes", count,
                    bytes_left(in));
    f->causal_dropped = bytes_get_u64(in);
    if (count == 0)
        return 0;
    store_causal *c = arena_alloc(f, (size_t)count * sizeof *c);
    if (!c)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        c[i].thread = bytes_get_u32(in);
        c[i].name = bytes_get_u32(in);
        c[i].kind = bytes_get_u32(in);
        (void)bytes_get_u32(in);
        c[i].begin_ns = bytes_get_u64(in);
        c[i].end_ns = bytes_get_u64(in);
        if (c[i].thread >= f->thread_count || c[i].name == 0 || c[i].name >= f->name_count ||
            (c[i].kind != STORE_CAUSAL_SIGNAL && c[i].kind != STORE_CAUSAL_WAIT) ||
            c[i].end_ns < c[i].begin_ns ||
            (c[i].kind == STORE_CAUSAL_SIGNAL && c[i].end_ns != c[i].begin_ns))
            return fail(d, "causal record %u is malformed", i);
    }
    f->causal = c;
    f->causal_count = count;
    d->flags &= ~(unsigned)STORE_READ_SKIP_SPANS;
    return 0;
}

static int decode_spans(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 32))
        return fail(d, "spans section claims %u spans, more than it holds", count);
    if (d->flags & STORE_READ_SKIP_SPANS)
        return 0;
    f->spans = arena_alloc(f, (size_t)count * sizeof(store_span));
    if (!f->spans)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        store_span *s = &f->spans[i];
        s->thread = bytes_get_u32(in);
        s->name = bytes_get_u32(in);
        s->depth = bytes_get_u32(in);
        (void)bytes_get_u32(in);
        s->begin_ns = bytes_get_u64(in);
        s->end_ns = bytes_get_u64(in);
        if (s->thread >= f->thread_count || s->name >= f->name_count || s->end_ns < s->begin_ns)
            return fail(d, "span %u is malformed", i);
    }
    f->span_count = count;
    return 0;
}

static int decode_estimates(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 12))
        return fail(d, "estimates section claims %u entries, more than it holds", count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node = bytes_get_u32(in);
        uint32_t stride = bytes_get_u32(in);
        uint32_t child = bytes_get_u32(in);
        if (node >= f->node_count || child > 1)
            return fail(d, "estimate %u names a node that does not exist", i);
        f->nodes[node].sample_stride = stride;
        f->nodes[node].child_estimated = child;
    }
    return 0;
}

/* An older writer's wait% (sampled wall and CPU per node): checked, not used (its
 * figures were wrong by up to 50 points; docs/format.md). */
static int decode_cpu_samples(decoder *d, bytes_in *in, uint32_t count)
{
    if (!count_fits(in, count, 20))
        return fail(d, "cpu samples section claims %u entries, more than it holds", count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node = bytes_get_u32(in);
        bytes_get_u64(in);
        bytes_get_u64(in);
        if (node >= d->f->node_count)
            return fail(d, "cpu sample %u names a node that does not exist", i);
    }
    return 0;
}

static int decode_cpu_ticks(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 20))
        return fail(d, "cpu ticks section claims %u entries, more than it holds", count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node = bytes_get_u32(in);
        uint64_t ticks = bytes_get_u64(in);
        uint64_t wait = bytes_get_u64(in);
        if (node >= f->node_count)
            return fail(d, "cpu tick entry %u names a node that does not exist", i);
        if (wait > ticks)
            return fail(d, "cpu tick entry %u has more waiting ticks than ticks", i);
        f->nodes[node].cpu_ticks = ticks;
        f->nodes[node].cpu_wait_ticks = wait;
    }
    return 0;
}

static int decode_gpu_time(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    if (!count_fits(in, count, 28))
        return fail(d, "gpu time section claims %u entries, more than it holds", count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t node = bytes_get_u32(in);
        uint64_t ns = bytes_get_u64(in), timed = bytes_get_u64(in), untimed = bytes_get_u64(in);
        if (node >= f->node_count)
            return fail(d, "gpu time entry %u names a node that does not exist", i);
        if (ns && !timed)
            return fail(d, "gpu time entry %u has GPU time but no timed entry", i);
        f->nodes[node].gpu_ns = ns;
        f->nodes[node].gpu_timed = timed;
        f->nodes[node].gpu_untimed = untimed;
    }
    return 0;
}

static int decode_proc_samples(decoder *d, bytes_in *in, uint32_t count)
{
    store_proc_samples *ps = &d->f->proc;
    if (bytes_left(in) != STORE_PROC_HEADER_SIZE + (uint64_t)count * STORE_PROC_RECORD_SIZE)
        return fail(d, "process samples section: %u records do not fill its %zu bytes", count,
                    bytes_left(in));
    if (count > STORE_MAX_PROC_RECORDS)
        return fail(d, "process samples section holds %u records, more than %u", count,
                    STORE_MAX_PROC_RECORDS);
    ps->interval_ms = bytes_get_u32(in);
    ps->per_record = bytes_get_u32(in);
    ps->unreadable = bytes_get_u64(in);
    ps->sampler_cpu_ns = bytes_get_u64(in);
    if (ps->interval_ms == 0 && (count || ps->unreadable || ps->per_record))
        return fail(d, "process samples section has records but no interval");
    if (ps->interval_ms && (ps->per_record == 0 || (ps->per_record & (ps->per_record - 1))))
        return fail(d, "process samples section: %u intervals per record is not a power of two",
                    ps->per_record);
    if (count == 0)
        return 0;
    ps->records = arena_alloc(d->f, (size_t)count * sizeof(store_proc_sample));
    if (!ps->records)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        store_proc_sample *r = &ps->records[i];
        r->start_ns = bytes_get_u64(in);
        r->end_ns = bytes_get_u64(in);
        r->read_chars = bytes_get_u64(in);
        r->write_chars = bytes_get_u64(in);
        r->read_bytes = bytes_get_u64(in);
        r->write_bytes = bytes_get_u64(in);
        r->quiet_chars = bytes_get_u64(in);
        r->phased_chars = bytes_get_u64(in);
        r->rss_max_bytes = bytes_get_u64(in);
        r->intervals = bytes_get_u32(in);
        r->quiet_intervals = bytes_get_u32(in);
        /* the chars are sums of 64-bit deltas: one that wraps is a bad file */
        uint64_t chars = r->read_chars + r->write_chars;
        if (r->end_ns <= r->start_ns || (i && r->start_ns < ps->records[i - 1].end_ns))
            return fail(d, "process sample %u is out of time order", i);
        if (r->intervals == 0 || r->intervals > ps->per_record ||
            r->quiet_intervals > r->intervals)
            return fail(d, "process sample %u counts %u intervals (at most %u)", i, r->intervals,
                        ps->per_record);
        if (chars < r->read_chars || r->quiet_chars > chars ||
            r->phased_chars > chars - r->quiet_chars)
            return fail(d, "process sample %u splits more bytes than it moved", i);
    }
    ps->count = count;
    return 0;
}

static int decode_children(decoder *d, bytes_in *in, uint32_t count)
{
    if (bytes_left(in) != 8u + (uint64_t)count * 16u)
        return fail(d, "children section: %u children do not fill its %zu bytes", count,
                    bytes_left(in));
    d->f->children_unrecorded = bytes_get_u64(in);
    if (count == 0)
        return 0;
    store_child *c = arena_alloc(d->f, (size_t)count * sizeof *c);
    if (!c)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        c[i].pid = (int64_t)bytes_get_u64(in);
        c[i].fork_mono_ns = bytes_get_u64(in);
        if (c[i].pid <= 0)
            return fail(d, "child %u has pid %lld", i, (long long)c[i].pid);
    }
    d->f->children = c;
    d->f->child_count = count;
    return 0;
}

/* Section GPU_ACTIVITY: the payload must hold exactly what its counts say; every
 * name and node a record names exists. */
static int decode_activity(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    store_gpu_activity *g = arena_alloc(f, sizeof *g);
    if (!g)
        return -ENOMEM;
    memset(g, 0, sizeof *g);
    g->state = bytes_get_u32(in);
    g->note = get_str(d, in);
    g->dropped = bytes_get_u64(in);
    uint32_t n = bytes_get_u32(in);
    if (in->failed || !g->note)
        return fail(d, "gpu activity section is cut short");
    if (g->state != STORE_GPU_COLLECTED && g->state != STORE_GPU_MISSING)
        return fail(d, "gpu activity section has state %u", g->state);
    if (!count_fits(in, n, 4))
        return fail(d, "gpu activity section claims %u names, more than it holds", n);
    g->names = arena_alloc(f, ((size_t)n + 1) * sizeof(char *));
    if (!g->names)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        if (!(g->names[i] = get_str(d, in)))
            return fail(d, "gpu activity section is cut short in its names");
    g->name_count = n;
    if (n == 0 || g->names[0][0] != 0)
        return fail(d, "gpu activity section's names must start with the empty name");
    if (bytes_left(in) != (uint64_t)count * 56u)
        return fail(d, "gpu activity section: %u records do not fill its %zu bytes", count,
                    bytes_left(in));
    g->records = arena_alloc(f, ((size_t)count + 1) * sizeof *g->records);
    if (!g->records)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        store_gpu_record *r = &g->records[i];
        r->kind = bytes_get_u32(in);
        r->copy_kind = bytes_get_u32(in);
        r->device = bytes_get_u32(in);
        r->stream = bytes_get_u32(in);
        r->name = bytes_get_u32(in);
        r->node = bytes_get_u32(in);
        r->start_ns = bytes_get_u64(in);
        r->end_ns = bytes_get_u64(in);
        r->bytes = bytes_get_u64(in);
        r->launch_ns = bytes_get_u64(in);
        if (r->kind < STORE_GPU_KERNEL || r->kind > STORE_GPU_MEMSET)
            return fail(d, "gpu record %u has kind %u", i, r->kind);
        if (r->name >= g->name_count || (r->node != STORE_GPU_NO_NODE && r->node >= f->node_count))
            return fail(d, "gpu record %u names a name or node that does not exist", i);
        if (r->end_ns < r->start_ns)
            return fail(d, "gpu record %u ends before it starts", i);
    }
    g->count = count;
    f->activity = g;
    return 0;
}

/* Section GPU_DEVICE: counts checked against what is left, names against NAMES,
 * sums against their ticks (a percent is at most 100). */
#define GPU_MAX_DEVICES 64u
#define GPU_MAX_PHASES 256u
static int over_percent(uint64_t sum, uint64_t ticks)
{
    return ticks < UINT64_MAX / 100u ? sum > ticks * 100u : 0;
}

static int decode_gpu(decoder *d, bytes_in *in, uint32_t count)
{
    store_gpu *g = &d->f->gpu;
    if (count > GPU_MAX_DEVICES)
        return fail(d, "GPU section: %u devices (at most %u)", count, GPU_MAX_DEVICES);
    g->interval_ms = bytes_get_u32(in);
    bytes_get_u32(in);
    g->failed_calls = bytes_get_u64(in);
    g->error = get_str(d, in);
    if (!g->error)
        return in->failed ? fail(d, "GPU section is truncated") : -ENOMEM;
    if (g->interval_ms == 0)
        return fail(d, "GPU section: interval 0");
    if (count) {
        g->devices = arena_alloc(d->f, (size_t)count * sizeof *g->devices);
        if (!g->devices)
            return -ENOMEM;
        memset(g->devices, 0, (size_t)count * sizeof *g->devices);
    }
    for (uint32_t i = 0; i < count; i++) {
        store_gpu_device *dv = &g->devices[i];
        dv->index = bytes_get_u32(in);
        uint32_t phases = bytes_get_u32(in);
        dv->name = get_str(d, in);
        if (!dv->name)
            return in->failed ? fail(d, "GPU section is truncated") : -ENOMEM;
        dv->ticks = bytes_get_u64(in);
        dv->busy_ticks = bytes_get_u64(in);
        dv->busy_pct_sum = bytes_get_u64(in);
        dv->own_ticks = bytes_get_u64(in);
        dv->own_pct_sum = bytes_get_u64(in);
        dv->mem_peak_bytes = bytes_get_u64(in);
        if (phases > GPU_MAX_PHASES || bytes_left(in) < (uint64_t)phases * 24u)
            return fail(d, "GPU device %u: %u phases do not fit", i, phases);
        if (dv->busy_ticks > dv->ticks || dv->own_ticks > dv->ticks ||
            over_percent(dv->busy_pct_sum, dv->busy_ticks) ||
            over_percent(dv->own_pct_sum, dv->own_ticks))
            return fail(d, "GPU device %u: more utilisation than ticks", i);
        if (phases) {
            dv->phases = arena_alloc(d->f, (size_t)phases * sizeof *dv->phases);
            if (!dv->phases)
                return -ENOMEM;
        }
        for (uint32_t k = 0; k < phases; k++) {
            store_gpu_phase *p = &dv->phases[k];
            p->name = bytes_get_u32(in);
            bytes_get_u32(in);
            p->ticks = bytes_get_u64(in);
            p->own_pct_sum = bytes_get_u64(in);
            if (p->name >= d->f->name_count || p->ticks > dv->own_ticks ||
                over_percent(p->own_pct_sum, p->ticks))
                return fail(d, "GPU device %u phase %u is out of bounds", i, k);
        }
        dv->phase_count = phases;
    }
    if (in->failed || bytes_left(in))
        return fail(d, "GPU section: its %u devices do not fill its payload", count);
    g->device_count = count;
    return 0;
}

/* Section SAMPLES: everything is checked against what came before it in the payload;
 * the payload must hold exactly what its counts say. */
static int decode_samples(decoder *d, bytes_in *in, uint32_t count)
{
    store_file *f = d->f;
    store_samples *s = arena_alloc(f, sizeof *s);
    if (!s)
        return -ENOMEM;
    s->mode = get_str(d, in);
    uint64_t v = bytes_get_u64(in);
    memcpy(&s->rate_asked_hz, &v, 8);
    v = bytes_get_u64(in);
    memcpy(&s->rate_achieved_hz, &v, 8);
    s->samples = bytes_get_u64(in);
    s->late_samples = bytes_get_u64(in);
    s->read_errors = bytes_get_u64(in);
    s->start_real_ns = bytes_get_u64(in);
    s->end_real_ns = bytes_get_u64(in);
    s->duration_ns = bytes_get_u64(in);
    s->idle = bytes_get_u32(in);
    if (!s->mode || in->failed)
        return fail(d, "samples section is cut short");
    if (!isfinite(s->rate_asked_hz) || s->rate_asked_hz < 0 || !isfinite(s->rate_achieved_hz) ||
        s->rate_achieved_hz < 0 || s->idle > 1)
        return fail(d, "samples section has a bad rate or flag");

    uint32_t n = bytes_get_u32(in);
    if (in->failed || !count_fits(in, n, 4))
        return fail(d, "samples section claims %u strings, more than it holds", n);
    s->strings = arena_alloc(f, ((size_t)n + 1) * sizeof(char *));
    if (!s->strings)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        s->strings[i] = get_str(d, in);
        if (!s->strings[i])
            return fail(d, "samples section is cut short in its strings");
    }
    s->string_count = n;
    if (n == 0 || s->strings[0][0] != 0)
        return fail(d, "samples section's strings must start with the empty string");

    n = bytes_get_u32(in);
    if (in->failed || !count_fits(in, n, 24))
        return fail(d, "samples section claims %u processes, more than it holds", n);
    s->processes = arena_alloc(f, ((size_t)n + 1) * sizeof(store_sample_process));
    if (!s->processes)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        store_sample_process *p = &s->processes[i];
        p->pid = (int64_t)bytes_get_u64(in);
        p->ppid = (int64_t)bytes_get_u64(in);
        p->command = bytes_get_u32(in);
        p->python_version = bytes_get_u32(in);
        if (p->command >= s->string_count || p->python_version >= s->string_count)
            return fail(d, "sampled process %u names a string that does not exist", i);
    }
    s->process_count = n;

    n = bytes_get_u32(in);
    if (in->failed || !count_fits(in, n, 12))
        return fail(d, "samples section claims %u frames, more than it holds", n);
    s->frames = arena_alloc(f, ((size_t)n + 1) * sizeof(store_sample_frame));
    if (!s->frames)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        store_sample_frame *fr = &s->frames[i];
        fr->function = bytes_get_u32(in);
        fr->file = bytes_get_u32(in);
        fr->line = bytes_get_u32(in);
        if (fr->function >= s->string_count || fr->file >= s->string_count)
            return fail(d, "sampled frame %u names a string that does not exist", i);
    }
    s->frame_count = n;

    const size_t stack_min = 48;
    if (!count_fits(in, count, stack_min))
        return fail(d, "samples section claims %u stacks, more than it holds", count);
    s->stacks = arena_alloc(f, ((size_t)count + 1) * sizeof(store_sample_stack));
    /* every frame id takes 4 bytes of what is left */
    uint64_t ids_max = bytes_left(in) / 4;
    s->frame_ids = arena_alloc(f, ((size_t)ids_max + 1) * sizeof(uint32_t));
    if (!s->stacks || !s->frame_ids)
        return -ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        store_sample_stack *st = &s->stacks[i];
        st->pid = (int64_t)bytes_get_u64(in);
        st->tid = (int64_t)bytes_get_u64(in);
        st->thread_name = bytes_get_u32(in);
        st->span_path = bytes_get_u32(in);
        st->state = bytes_get_u32(in);
        st->depth = bytes_get_u32(in);
        st->count = bytes_get_u64(in);
        st->weight_ns = bytes_get_u64(in);
        if (in->failed)
            return fail(d, "samples section is cut short at stack %u", i);
        if (st->thread_name >= s->string_count || st->span_path >= s->string_count ||
            (st->state & ~STORE_SAMPLE_STATE_MASK) || st->count == 0)
            return fail(d, "sampled stack %u is malformed", i);
        if (st->depth > STORE_MAX_FRAMES || !count_fits(in, st->depth, 4))
            return fail(d, "sampled stack %u claims %u frames, more than it holds", i, st->depth);
        st->first = s->frame_id_count;
        for (uint32_t k = 0; k < st->depth; k++) {
            uint32_t id = bytes_get_u32(in);
            if (id >= s->frame_count)
                return fail(d, "sampled stack %u names a frame that does not exist", i);
            s->frame_ids[s->frame_id_count++] = id;
        }
    }
    s->stack_count = count;
    if (bytes_left(in) != 0)
        return fail(d, "samples section has %zu bytes more than its counts say", bytes_left(in));
    f->samples = s;
    return 0;
}

/* ---- framing: the file header and the section headers, checked on their own ---- */

int store_header_check(const uint8_t *data, size_t len, store_header *h, char *err, size_t errlen)
{
    decoder d = {.err = err, .errlen = errlen};
    memset(h, 0, sizeof *h);
    if (len < 8 || memcmp(data, store_magic, 8) != 0)
        return fail(&d, "not a .lapse file (bad magic)");
    if (len < STORE_FILE_HEADER_SIZE)
        return fail(&d, "file is truncated: %zu bytes, the header alone is %u", len,
                    STORE_FILE_HEADER_SIZE);
    bytes_in in = {data, STORE_FILE_HEADER_SIZE, 8, 0};
    h->version = bytes_get_u32(&in);
    (void)bytes_get_u32(&in);
    h->total = bytes_get_u64(&in);
    h->sections = bytes_get_u32(&in);
    uint32_t hcrc = bytes_get_u32(&in);
    if (store_crc32(data, 28) != hcrc)
        return fail(&d, "file header checksum mismatch");
    if (h->version != STORE_FORMAT_VERSION)
        return fail(&d, "format version %u is not supported (this lapse reads %u)", h->version,
                    STORE_FORMAT_VERSION);
    return 0;
}

int store_section_check(const uint8_t *data, uint32_t index, store_section *s, char *err,
                        size_t errlen)
{
    decoder d = {.err = err, .errlen = errlen};
    bytes_in in = {data, STORE_SECTION_HEADER_SIZE, 0, 0};
    s->index = index;
    s->type = bytes_get_u32(&in);
    s->count = bytes_get_u32(&in);
    s->len = bytes_get_u64(&in);
    s->crc = bytes_get_u32(&in);
    if (store_crc32(data, 20) != bytes_get_u32(&in))
        return fail(&d, "section %u header checksum mismatch", index);
    return 0;
}

/* Section GPU_DEVICE_IDS: each entry names a device of GPU_DEVICE (by its NVML index),
 * once; a uuid, or why there is none. */
static int decode_gpu_ids(decoder *d, bytes_in *in, uint32_t count)
{
    store_gpu *g = &d->f->gpu;
    if (count > g->device_count)
        return fail(d, "GPU device ids: %u ids for %u devices", count, g->device_count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t index = bytes_get_u32(in);
        bytes_get_u32(in);
        char *uuid = get_str(d, in), *why = uuid ? get_str(d, in) : NULL;
        if (!uuid || !why)
            return in->failed ? fail(d, "GPU device ids section is truncated") : -ENOMEM;
        store_gpu_device *dv = NULL;
        for (uint32_t k = 0; k < g->device_count && !dv; k++)
            if (g->devices[k].index == index && !g->devices[k].uuid)
                dv = &g->devices[k];
        if (!dv)
            return fail(d, "GPU device ids: id %u names device %u, not in the GPU section "
                           "(or named before)", i, index);
        if (!*uuid == !*why)
            return fail(d, "GPU device ids: device %u needs a uuid or why not, not %s", index,
                        *uuid ? "both" : "neither");
        dv->uuid = uuid;
        dv->uuid_error = why;
    }
    if (in->failed || bytes_left(in))
        return fail(d, "GPU device ids: its %u ids do not fill its payload", count);
    return 0;
}

/* Section GPU_MEMORY: counts checked against what is left. */
static int decode_gpu_memory(decoder *d, bytes_in *in, uint32_t count)
{
    if (count > GPU_MAX_DEVICES)
        return fail(d, "GPU memory section: %u devices (at most %u)", count, GPU_MAX_DEVICES);
    store_gpu_memory *g = arena_alloc(d->f, sizeof *g);
    if (!g)
        return -ENOMEM;
    memset(g, 0, sizeof *g);
    g->readings = bytes_get_u64(in);
    g->resets = bytes_get_u64(in);
    if (!(g->error = get_str(d, in)))
        return in->failed ? fail(d, "GPU memory section is truncated") : -ENOMEM;
    if (g->resets > g->readings)
        return fail(d, "GPU memory section: more resets than readings");
    if (count) {
        g->devices = arena_alloc(d->f, (size_t)count * sizeof *g->devices);
        if (!g->devices)
            return -ENOMEM;
        memset(g->devices, 0, (size_t)count * sizeof *g->devices);
    }
    for (uint32_t i = 0; i < count; i++) {
        store_gpu_memory_device *dv = &g->devices[i];
        dv->index = bytes_get_u32(in);
        bytes_get_u32(in);
        if (!(dv->uuid = get_str(d, in)) || !(dv->name = get_str(d, in)))
            return in->failed ? fail(d, "GPU memory section is truncated") : -ENOMEM;
        dv->allocated_peak_bytes = bytes_get_u64(in);
        dv->reserved_peak_bytes = bytes_get_u64(in);
    }
    if (in->failed || bytes_left(in))
        return fail(d, "GPU memory section: its %u devices do not fill its payload", count);
    if (count && !g->readings)
        return fail(d, "GPU memory section: devices without a reading");
    g->device_count = count;
    d->f->gpu_memory = g;
    return 0;
}

/* ---- decoding, one section at a time ---- */

/* Sections must come in this order; later ones refer to earlier ones. Of them, META,
 * NAMES, THREADS and NODES are required. */
static const uint32_t section_order[] = {
    STORE_SECTION_META,          STORE_SECTION_NAMES,    STORE_SECTION_THREADS,
    STORE_SECTION_NODES,         STORE_SECTION_COUNTERS, STORE_SECTION_CAUSALITY,
    STORE_SECTION_SPANS,
    STORE_SECTION_ESTIMATES,     STORE_SECTION_CPU_SAMPLES,
    STORE_SECTION_PROCESS_SAMPLES, STORE_SECTION_SAMPLES, STORE_SECTION_CPU_TICKS,
    STORE_SECTION_CHILDREN,      STORE_SECTION_GPU_DEVICE, STORE_SECTION_GPU_DEVICE_IDS,
    STORE_SECTION_GPU_MEMORY,    STORE_SECTION_GPU_ACTIVITY,  STORE_SECTION_GPU_TIME};
#define SECTION_KINDS (sizeof section_order / sizeof section_order[0])
#define REQUIRED_SECTIONS 4u

void store_decoder_begin(store_decoder *d, store_file *f, unsigned flags, char *err,
                         size_t errlen)
{
    memset(d, 0, sizeof *d);
    memset(f, 0, sizeof *f);
    f->meta.rank = f->meta.world_size = f->meta.local_rank = -1; /* absent: unknown */
    f->meta.ctx_voluntary = f->meta.ctx_involuntary = -1;
    d->f = f;
    d->err = err;
    d->errlen = errlen;
    d->flags = flags;
    d->max_depth = STORE_DEFAULT_DEPTH;
}

int store_decoder_wants(const store_decoder *d, uint32_t type)
{
    if (d->done)
        return 0;
    if (type == STORE_SECTION_SPANS && (d->flags & STORE_READ_SKIP_SPANS))
        return 0;
    for (unsigned k = 0; k < SECTION_KINDS; k++)
        if (section_order[k] == type)
            return 1;
    return 0; /* a section from a newer writer: skipped */
}

int store_decoder_section(store_decoder *d, const store_section *s, const uint8_t *payload)
{
    int known = 0;
    for (unsigned k = 0; k < SECTION_KINDS; k++)
        if (section_order[k] == s->type) {
            known = 1;
            if (k < d->next)
                return fail(d, "section %u (type %u) is out of order", s->index, s->type);
            /* a later section needs the required ones before it */
            for (unsigned j = d->next; j < k && j < REQUIRED_SECTIONS; j++)
                return fail(d, "section type %u is missing", section_order[j]);
            d->next = k + 1;
        }
    if (!known || !payload)
        return 0;
    bytes_in in = {payload, (size_t)s->len, 0, 0};
    int rc = 0;
    switch (s->type) {
    case STORE_SECTION_META: rc = decode_meta(d, &in, s->count); break;
    case STORE_SECTION_NAMES: rc = decode_names(d, &in, s->count); break;
    case STORE_SECTION_THREADS: rc = decode_threads(d, &in, s->count); break;
    case STORE_SECTION_NODES: rc = decode_nodes(d, &in, s->count); break;
    case STORE_SECTION_COUNTERS: rc = decode_counters(d, &in, s->count); break;
    case STORE_SECTION_SPANS: rc = decode_spans(d, &in, s->count); break;
    case STORE_SECTION_ESTIMATES: rc = decode_estimates(d, &in, s->count); break;
    case STORE_SECTION_CPU_SAMPLES: rc = decode_cpu_samples(d, &in, s->count); break;
    case STORE_SECTION_PROCESS_SAMPLES: rc = decode_proc_samples(d, &in, s->count); break;
    case STORE_SECTION_SAMPLES: rc = decode_samples(d, &in, s->count); break;
    case STORE_SECTION_CPU_TICKS: rc = decode_cpu_ticks(d, &in, s->count); break;
    case STORE_SECTION_CHILDREN: rc = decode_children(d, &in, s->count); break;
    case STORE_SECTION_CAUSALITY: rc = decode_causality(d, &in, s->count); break;
    case STORE_SECTION_GPU_DEVICE: rc = decode_gpu(d, &in, s->count); break;
    case STORE_SECTION_GPU_DEVICE_IDS: rc = decode_gpu_ids(d, &in, s->count); break;
    case STORE_SECTION_GPU_MEMORY: rc = decode_gpu_memory(d, &in, s->count); break;
    case STORE_SECTION_GPU_ACTIVITY: rc = decode_activity(d, &in, s->count); break;
    case STORE_SECTION_GPU_TIME: rc = decode_gpu_time(d, &in, s->count); break;
    default: break;
    }
    if (rc == -ENOMEM)
        fail(d, "out of memory");
    if (rc == 0 && s->type == STORE_SECTION_META && (d->flags & STORE_READ_META_ONLY))
        d->done = 1;
    return rc;
}

int store_decoder_finish(store_decoder *d, uint32_t version)
{
    store_file *f = d->f;
    if (!d->done && d->next < REQUIRED_SECTIONS)
        return fail(d, "file has no span tree");
    static char empty[] = "";
    char **strs[] = {&f->meta.lapse_version, &f->meta.host, &f->meta.role, &f->meta.run_id,
                     &f->meta.job_id, &f->meta.end_reason, &f->meta.clock_source,
                     &f->meta.launcher, &f->meta.missing, &f->meta.absent};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (!*strs[i])
            *strs[i] = empty;
    f->meta.format_version = version;
    return 0;
}

int store_decode(const uint8_t *data, size_t len, unsigned flags, store_file *f, char *err,
                 size_t errlen)
{
    decoder d;
    store_decoder_begin(&d, f, flags, err, errlen);
    store_header h;
    int rc = store_header_check(data, len, &h, err, errlen);
    if (rc)
        return rc;
    if (h.total != len)
        return fail(&d, "file is truncated: %zu of %llu bytes", len, (unsigned long long)h.total);
    size_t pos = STORE_FILE_HEADER_SIZE;
    for (uint32_t i = 0; i < h.sections && rc == 0 && !d.done; i++) {
        store_section s;
        if (len - pos < STORE_SECTION_HEADER_SIZE) {
            rc = fail(&d, "section %u is cut short", i);
            break;
        }
        if ((rc = store_section_check(data + pos, i, &s, err, errlen)) != 0)
            break;
        pos += STORE_SECTION_HEADER_SIZE;
        if (s.len > len - pos) {
            rc = fail(&d, "section %u is cut short", i);
            break;
        }
        const uint8_t *payload = data + pos;
        if (store_crc32(payload, (size_t)s.len) != s.crc) {
            rc = fail(&d, "section %u checksum mismatch", i);
            break;
        }
        rc = store_decoder_section(&d, &s, store_decoder_wants(&d, s.type) ? payload : NULL);
        pos += (size_t)s.len;
        size_t pad = (8 - (s.len & 7)) & 7;
        if (rc == 0 && pad > len - pos)
            rc = fail(&d, "section %u is cut short", i);
        pos += pad;
    }
    if (rc == 0)
        rc = store_decoder_finish(&d, h.version);
    if (rc)
        store_file_free(f);
    return rc;
}
