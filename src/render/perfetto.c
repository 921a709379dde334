/* Chrome trace JSON from .lapse timelines; see perfetto.h. */
#include "perfetto.h"
#include "json_out.h"
#include "analyze/gpu_track.h"
#include "analyze/proc_track.h"
#include "analyze/sample_chart.h"
#include "analyze/timeline.h"
#include "core/hash.h"

#include "samples_labels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if LAPSE_HAVE_ZLIB
#include <zlib.h>
#endif

#define OUT_BUF_SIZE (256u * 1024u)
#define SYNTHETIC_ID_BASE 0x40000000ll /* above any Linux pid or tid (2^22) */

/* ---- a set of int64 (pids already given a track) ---- */

typedef struct id_set {
    int64_t *slots;
    uint8_t *used;
    size_t cap, count;
} id_set;

static size_t id_hash(int64_t v, size_t cap)
{
    return (size_t)hash_mix((uint64_t)v) & (cap - 1);
}

static int id_set_has(const id_set *s, int64_t v)
{
    if (!s->cap)
        return 0;
    for (size_t i = id_hash(v, s->cap);; i = (i + 1) & (s->cap - 1)) {
        if (!s->used[i])
            return 0;
        if (s->slots[i] == v)
            return 1;
    }
}

static int id_set_add(id_set *s, int64_t v)
{
    if ((s->count + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        int64_t *slots = calloc(cap, sizeof *slots);
        uint8_t *used = calloc(cap, 1);
        if (!slots || !used) {
            free(slots);
            free(used);
            return -ENOMEM;
        }
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->used[i])
                continue;
            size_t k = id_hash(s->slots[i], cap);
            while (used[k])
                k = (k + 1) & (cap - 1);
            used[k] = 1;
            slots[k] = s->slots[i];
        }
        free(s->slots);
        free(s->used);
        s->slots = slots;
        s->used = used;
        s->cap = cap;
    }
    size_t k = id_hash(v, s->cap);
    while (s->used[k]) {
        if (s->slots[k] == v)
            return 0;
        k = (k + 1) & (s->cap - 1);
    }
    s->used[k] = 1;
    s->slots[k] = v;
    s->count++;
    return 0;
}

static void id_set_free(id_set *s)
{
    free(s->slots);
    free(s->used);
    memset(s, 0, sizeof *s);
}

/* ---- buffered output ---- */

struct perfetto_writer {
    FILE *out;
    char *buf;
    size_t len;
    int failed;
    int events; /* events written so far (for the commas) */
    id_set pids;
    int64_t next_synthetic;
    uint64_t next_flow; /* flow ids, unique in the trace */
#if LAPSE_HAVE_ZLIB
    z_stream *z;  /* gzip: the buffer is deflated on its way out; NULL: plain */
    unsigned char *zbuf;
#endif
};

#define ZBUF_SIZE (64u * 1024u)

#if LAPSE_HAVE_ZLIB
/* Deflates what is in w->buf (all of it: finish at the end) and writes it out. */
static void gz_write(perfetto_writer *w, int finish)
{
    z_stream *z = w->z;
    z->next_in = (unsigned char *)w->buf;
    z->avail_in = (uInt)w->len;
    int rc;
    do {
        z->next_out = w->zbuf;
        z->avail_out = ZBUF_SIZE;
        rc = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
        size_t have = ZBUF_SIZE - z->avail_out;
        if (rc == Z_STREAM_ERROR || (have && fwrite(w->zbuf, 1, have, w->out) != have))
            w->failed = 1;
    } while (!w->failed && (z->avail_out == 0 || (finish && rc != Z_STREAM_END)));
}
#endif

static void out_flush(perfetto_writer *w)
{
#if LAPSE_HAVE_ZLIB
    if (w->z) {
        if (w->len && !w->failed)
            gz_write(w, 0);
        w->len = 0;
        return;
    }
#endif
    if (w->len && !w->failed && fwrite(w->buf, 1, w->len, w->out) != w->len)
        w->failed = 1;
    w->len = 0;
}

/* Room for n more bytes (n <= OUT_BUF_SIZE). */
static inline char *out_reserve(perfetto_writer *w, size_t n)
{
    if (w->len + n > OUT_BUF_SIZE)
        out_flush(w);
    return w->buf + w->len;
}

static void out_put(perfetto_writer *w, const char *s, size_t n)
{
    while (n) {
        size_t room = OUT_BUF_SIZE - w->len;
        if (!room) {
            out_flush(w);
            room = OUT_BUF_SIZE;
        }
        size_t k = n < room ? n : room;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

static void out_str(perfetto_writer *w, const char *s) { out_put(w, s, strlen(s)); }

#define OUT_LIT(w, lit) out_put((w), (lit), sizeof(lit) - 1)

/* Decimal digits of v into the end of tmp[20]; returns the first digit. */
static inline char *fmt_u64(char tmp[20], uint64_t v)
{
    char *p = tmp + 20;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

static inline void out_u64(perfetto_writer *w, uint64_t v)
{
    char tmp[20];
    char *p = fmt_u64(tmp, v);
    out_put(w, p, (size_t)(tmp + 20 - p));
}

static inline void out_i64(perfetto_writer *w, int64_t v)
{
    if (v < 0) {
        OUT_LIT(w, "-");
        out_u64(w, 0 - (uint64_t)v);
    } else {
        out_u64(w, (uint64_t)v);
    }
}

/* Nanoseconds as microseconds with three decimals ("%.3f" of ns / 1000, exact). */
static inline void out_us(perfetto_writer *w, int64_t ns)
{
    uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    char *p = out_reserve(w, 32);
    char *start = p;
    if (ns < 0)
        *p++ = '-';
    char tmp[20];
    char *d = fmt_u64(tmp, u / 1000);
    size_t n = (size_t)(tmp + 20 - d);
    memcpy(p, d, n);
    p += n;
    unsigned frac = (unsigned)(u % 1000);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    p[2] = (char)('0' + frac / 10 % 10);
    p[3] = (char)('0' + frac % 10);
    p += 4;
    w->len += (size_t)(p - start);
}

/* ---- JSON strings: json_out.c's escape ---- */

/* Writes "s" (with the quotes), escaped. */
static void out_json_str(perfetto_writer *w, const char *s)
{
    char small[256];
    size_t n = json_escape(small, sizeof small, s);
    OUT_LIT(w, "\"");
    if (n < sizeof small) {
        out_put(w, small, n);
    } else {
        char *big = malloc(n + 1);
        if (big) {
            json_escape(big, n + 1, s);
            out_put(w, big, n);
            free(big);
        } else {
            out_put(w, small, sizeof small - 1); /* cut short, still valid JSON */
        }
    }
    OUT_LIT(w, "\"");
}

/* Every name of the file, escaped once (a run can have millions of spans). */
typedef struct name_cache {
    const char **str;
    uint32_t *len;
    char *text;
} name_cache;

static int name_cache_build(name_cache *c, const store_file *f)
{
    memset(c, 0, sizeof *c);
    size_t total = 0;
    uint32_t count = f->name_count;
    c->str = calloc(count ? count : 1, sizeof *c->str);
    c->len = calloc(count ? count : 1, sizeof *c->len);
    if (!c->str || !c->len)
        goto oom;
    for (uint32_t i = 0; i < count; i++) {
        size_t n = json_escape(NULL, 0, f->names[i]);
        if (n > UINT32_MAX - 1)
            goto oom;
        total += n + 1;
    }
    c->text = malloc(total ? total : 1);
    if (!c->text)
        goto oom;
    char *p = c->text;
    for (uint32_t i = 0; i < count; i++) {
        size_t n = json_escape(p, (size_t)-1 / 2, f->names[i]);
        c->str[i] = p;
        c->len[i] = (uint32_t)n;
        p += n + 1;
    }
    return 0;
oom:
    free(c->str);
    free(c->len);
    free(c->text);
    memset(c, 0, sizeof *c);
    return -ENOMEM;
}

static void name_cache_free(name_cache *c)
{
    free(c->str);
    free(c->len);
    free(c->text);
}

/* ---- events ---- */

static void event_start(perfetto_writer *w)
{
    if (w->events++)
        OUT_LIT(w, ",\n");
    else
        OUT_LIT(w, "\n");
}

static void meta_event(perfetto_writer *w, const char *what, int64_t pid, int64_t tid,
                       const char *arg_key, const char *str_value, int64_t int_value)
{
    event_start(w);
    out_str(w, "{\"ph\":\"M\",\"name\":\"");
    out_str(w, what);
    out_str(w, "\",\"pid\":");
    out_i64(w, pid);
    out_str(w, ",\"tid\":");
    out_i64(w, tid);
    out_str(w, ",\"args\":{\"");
    out_str(w, arg_key);
    out_str(w, "\":");
    if (str_value)
        out_json_str(w, str_value);
    else
        out_i64(w, int_value);
    out_str(w, "}}");
}

int perfetto_first_ns(const store_file *f, uint64_t *first_ns)
{
    uint64_t off = timeline_clock_offset(f);
    uint64_t first = UINT64_MAX;
    for (uint64_t i = 0; i < f->span_count; i++)
        if (f->spans[i].begin_ns + off < first)
            first = f->spans[i].begin_ns + off;
    if (f->proc.count && f->proc.records[0].start_ns + off < first)
        first = f->proc.records[0].start_ns + off; /* the sampler's counter tracks */
    if (f->samples && f->samples->stack_count && f->samples->start_real_ns &&
        f->samples->start_real_ns < first)
        first = f->samples->start_real_ns; /* the Python samples' tracks */
    for (uint32_t i = 0; f->activity && i < f->activity->count; i++) { /* the GPU tracks, the flows */
        const store_gpu_record *r = &f->activity->records[i];
        uint64_t at = r->launch_ns && r->launch_ns < r->start_ns ? r->launch_ns : r->start_ns;
        if (at + off < first)
            first = at + off;
    }
    if (first == UINT64_MAX && f->meta.start_mono_ns)
        first = f->meta.start_mono_ns + off;
    if (first == UINT64_MAX)
        return -1;
    *first_ns = first;
    return 0;
}

static void writer_free(perfetto_writer *w)
{
#if LAPSE_HAVE_ZLIB
    if (w->z) {
        deflateEnd(w->z);
        free(w->z);
        free(w->zbuf);
    }
#endif
    id_set_free(&w->pids);
    free(w->buf);
    free(w);
}

static perfetto_writer *writer_new(FILE *out, int gzip)
{
    perfetto_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->buf = malloc(OUT_BUF_SIZE);
    if (!w->buf) {
        free(w);
        return NULL;
    }
    w->out = out;
#if LAPSE_HAVE_ZLIB
    if (gzip) {
        w->z = calloc(1, sizeof *w->z);
        w->zbuf = malloc(ZBUF_SIZE);
        /* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
        if (!w->z || !w->zbuf ||
            deflateInit2(w->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(w->z);
            free(w->zbuf);
            w->z = NULL;
            writer_free(w);
            return NULL;
        }
    }
#else
    (void)gzip;
#endif
    return w;
}

static void perfetto_start(perfetto_writer *w)
{
    w->next_synthetic = SYNTHETIC_ID_BASE;
    out_str(w, "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"lapse export\"},\n"
               "\"traceEvents\":[");
}

int perfetto_gzip_available(void) { return LAPSE_HAVE_ZLIB; }

perfetto_writer *perfetto_open_gzip(FILE *out)
{
    if (!LAPSE_HAVE_ZLIB)
        return NULL;
    perfetto_writer *w = writer_new(out, 1);
    if (w)
        perfetto_start(w);
    return w;
}

perfetto_writer *perfetto_open(FILE *out)
{
    perfetto_writer *w = writer_new(out, 0);
    if (w)
        perfetto_start(w);
    return w;
}


int perfetto_finish(perfetto_writer *w)
{
    out_str(w, "\n]}\n");
#if LAPSE_HAVE_ZLIB
    if (w->z && !w->failed) {
        gz_write(w, 1);
        w->len = 0;
    }
#endif
    out_flush(w);
    int failed = w->failed || fflush(w->out) != 0 || ferror(w->out);
    writer_free(w);
    return failed ? -EIO : 0;
}

typedef struct tid_slot {
    int64_t tid;
    uint32_t index;
} tid_slot;

static int cmp_tid_slot(const void *a, const void *b)
{
    const tid_slot *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The tid of each thread's track: its tid, unless an earlier thread of the file
 * has the same one (a tid the kernel reused), then a synthetic one. */
static int64_t *track_tids(const store_file *f, int *renamed)
{
    uint32_t n = f->thread_count;
    int64_t *tids = malloc((n ? n : 1) * sizeof *tids);
    tid_slot *s = malloc((n ? n : 1) * sizeof *s);
    if (!tids || !s) {
        free(tids);
        free(s);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        s[i].tid = f->threads[i].tid;
        s[i].index = i;
        tids[i] = f->threads[i].tid;
    }
    qsort(s, n, sizeof *s, cmp_tid_slot);
    int64_t next = SYNTHETIC_ID_BASE;
    *renamed = 0;
    for (uint32_t i = 1; i < n; i++) {
        if (s[i].tid != s[i - 1].tid)
            continue;
        /* pick an id no thread of the file has */
        for (;;) {
            tid_slot key = {next, 0};
            uint32_t lo = 0, hi = n;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s[mid].tid < key.tid)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || s[lo].tid != next)
                break;
            next++;
        }
        tids[s[i].index] = next++;
        *renamed = 1;
    }
    free(s);
    return tids;
}

/* ---- Python samples: one merged flame chart per sampled thread ----
 *
 * A file's samples are aggregated stacks (counts and the time they stand for), with
 * no instant of their own. Each sampled thread gets a track of its own, named as
 * merged, on which its stacks are laid side by side from the recording's start, each
 * as wide as the time it stands for, frames of a common prefix merged: the x axis of
 * that track is time sampled, not when it ran. */

/* The track pid for a sampled process: the file's own track when it is the file's
 * process, else its pid (or a synthetic one) named after its command. */
static int sample_process_track(perfetto_writer *w, const store_file *f, int64_t file_track_pid,
                                int64_t pid, int64_t *seen_pid, int64_t *seen_track,
                                uint32_t *seen_n, int64_t *track)
{
    if (pid == f->meta.pid) {
        *track = file_track_pid;
        return 0;
    }
    for (uint32_t i = 0; i < *seen_n; i++)
        if (seen_pid[i] == pid) {
            *track = seen_track[i];
            return 0;
        }
    int64_t t = pid;
    if (id_set_has(&w->pids, t)) {
        while (id_set_has(&w->pids, w->next_synthetic))
            w->next_synthetic++;
        t = w->next_synthetic++;
    }
    if (id_set_add(&w->pids, t))
        return -ENOMEM;
    char label[600];
    samples_process_label(f->samples, pid, label, sizeof label);
    meta_event(w, "process_name", t, t, "name", label, 0);
    seen_pid[*seen_n] = pid;
    seen_track[*seen_n] = t;
    (*seen_n)++;
    *track = t;
    return 0;
}

static int add_samples(perfetto_writer *w, const store_file *f, uint64_t base_ns,
                       int64_t file_track_pid, perfetto_file_stats *st)
{
    const store_samples *s = f->samples;
    samples_thread *threads;
    uint32_t thread_count, *thread_of;
    if (samples_threads(s, &threads, &thread_count, &thread_of))
        return -ENOMEM;
    uint32_t *idx = malloc(((size_t)s->stack_count + 1) * sizeof *idx);
    int64_t *seen_pid = malloc(((size_t)thread_count + 1) * sizeof *seen_pid);
    int64_t *seen_track = malloc(((size_t)thread_count + 1) * sizeof *seen_track);
    uint32_t seen_n = 0;
    sample_chart slices = {0};
    int rc = idx && seen_pid && seen_track ? 0 : -ENOMEM;
    int64_t ts0 = (int64_t)(s->start_real_ns - base_ns);
    char label[1024], tname[1200];
    for (uint32_t t = 0; t < thread_count && rc == 0; t++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->stack_count; i++)
            if (thread_of[i] == t && s->stacks[i].depth)
                idx[n++] = i;
        if (!n)
            continue;
        int64_t track;
        rc = sample_process_track(w, f, file_track_pid, threads[t].pid, seen_pid, seen_track,
                                  &seen_n, &track);
        if (rc)
            break;
        int64_t tid = w->next_synthetic++;
        samples_thread_label(s, &threads[t], label, sizeof label);
        snprintf(tname, sizeof tname, "%s: Python samples, merged (width = time sampled, not when)",
                 label);
        meta_event(w, "thread_name", track, tid, "name", tname, 0);
        meta_event(w, "thread_sort_index", track, tid, "sort_index", NULL, 1000000 + (int64_t)t);
        st->threads++;
        rc = sample_chart_layout(s, idx, n, ts0, &slices);
        if (rc)
            break;
        for (size_t i = 0; i < slices.count; i++) {
            const sample_slice *sl = &slices.items[i];
            samples_frame_label(s, sl->frame, label, sizeof label);
            event_start(w);
            OUT_LIT(w, "{\"ph\":\"X\",\"name\":");
            out_json_str(w, label);
            OUT_LIT(w, ",\"pid\":");
            out_i64(w, track);
            OUT_LIT(w, ",\"tid\":");
            out_i64(w, tid);
            OUT_LIT(w, ",\"ts\":");
            out_us(w, sl->ts);
            OUT_LIT(w, ",\"dur\":");
            out_us(w, sl->dur > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)sl->dur);
            OUT_LIT(w, "}");
            st->sample_slices++;
        }
    }
    sample_chart_free(&slices);
    free(idx);
    free(seen_pid);
    free(seen_track);
    free(threads);
    free(thread_of);
    return rc;
}

/* The GPU tracks (section GPU_ACTIVITY): one per device and stream of the file, under
 * its process, each record a slice; a flow arrow from the launching thread, at the
 * launching call, to each record the collector saw launched. */
#define GPU_TRACK_BASE 0x7ff00000ll /* track ids above any Linux tid (2^22) */
#define GPU_TRACKS_MAX 4096u        /* more (device, stream) pairs share the last */

static int add_activity(perfetto_writer *w, const store_file *f, uint64_t base_ns, int64_t pid,
                   const int64_t *tids, perfetto_file_stats *st)
{
    const store_gpu_activity *g = f->activity;
    uint64_t off = timeline_clock_offset(f);
    uint64_t *tracks = malloc(GPU_TRACKS_MAX * sizeof *tracks); /* device << 32 | stream */
    if (!tracks)
        return -ENOMEM;
    uint32_t ntracks = 0;
    for (uint32_t i = 0; i < g->count; i++) {
        const store_gpu_record *r = &g->records[i];
        uint64_t key = (uint64_t)r->device << 32 | r->stream;
        uint32_t t = 0;
        while (t < ntracks && tracks[t] != key)
            t++;
        if (t == ntracks && ntracks < GPU_TRACKS_MAX) {
            tracks[ntracks++] = key;
            char name[64];
            snprintf(name, sizeof name, "GPU %u stream %u", r->device, r->stream);
            meta_event(w, "thread_name", pid, GPU_TRACK_BASE + t, "name", name, 0);
            meta_event(w, "thread_sort_index", pid, GPU_TRACK_BASE + t, "sort_index", NULL,
                       (int64_t)f->thread_count + t);
        } else if (t == ntracks) {
            t = GPU_TRACKS_MAX - 1;
        }
        char label[64];
        const char *name = g->names[r->name];
        if (r->kind == STORE_GPU_MEMCPY) {
            snprintf(label, sizeof label, "memcpy %s", gpu_copy_kind_name(r->copy_kind));
            name = label;
        } else if (r->kind == STORE_GPU_MEMSET) {
            name = "memset";
        }
        event_start(w);
        OUT_LIT(w, "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":");
        out_json_str(w, name);
        OUT_LIT(w, ",\"pid\":");
        out_i64(w, pid);
        OUT_LIT(w, ",\"tid\":");
        out_i64(w, GPU_TRACK_BASE + t);
        OUT_LIT(w, ",\"ts\":");
        out_us(w, (int64_t)(r->start_ns + off - base_ns));
        OUT_LIT(w, ",\"dur\":");
        out_us(w, (int64_t)(r->end_ns - r->start_ns));
        if (r->kind != STORE_GPU_KERNEL) {
            OUT_LIT(w, ",\"args\":{\"bytes\":");
            out_u64(w, r->bytes);
            OUT_LIT(w, "}");
        }
        OUT_LIT(w, "}");
        st->gpu_slices++;
        if (r->node == STORE_GPU_NO_NODE || !r->launch_ns)
            continue;
        /* the flow: from the launching thread's open span to the record */
        uint64_t id = ++w->next_flow;
        event_start(w);
        OUT_LIT(w, "{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":");
        out_u64(w, id);
        OUT_LIT(w, ",\"pid\":");
        out_i64(w, pid);
        OUT_LIT(w, ",\"tid\":");
        out_i64(w, tids[f->nodes[r->node].thread]);
        OUT_LIT(w, ",\"ts\":");
        out_us(w, (int64_t)(r->launch_ns + off - base_ns));
        OUT_LIT(w, "}");
        event_start(w);
        OUT_LIT(w, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":");
        out_u64(w, id);
        OUT_LIT(w, ",\"pid\":");
        out_i64(w, pid);
        OUT_LIT(w, ",\"tid\":");
        out_i64(w, GPU_TRACK_BASE + t);
        OUT_LIT(w, ",\"ts\":");
        out_us(w, (int64_t)(r->start_ns + off - base_ns));
        OUT_LIT(w, "}");
        st->flows++;
    }
    st->gpu_tracks = ntracks;
    free(tracks);
    return 0;
}

int perfetto_add_file(perfetto_writer *w, const store_file *f, uint64_t base_ns,
                      perfetto_file_stats *stats)
{
    const store_meta *m = &f->meta;
    perfetto_file_stats st = {0};
    name_cache names;
    if (name_cache_build(&names, f))
        return -ENOMEM;
    int renamed = 0;
    int64_t *tids = track_tids(f, &renamed);
    if (!tids) {
        name_cache_free(&names);
        return -ENOMEM;
    }

    /* the process track: the file's pid unless another file already has it */
    int64_t pid = m->pid;
    if (id_set_has(&w->pids, pid)) {
        while (id_set_has(&w->pids, w->next_synthetic))
            w->next_synthetic++;
        pid = w->next_synthetic++;
    }
    if (id_set_add(&w->pids, pid)) {
        free(tids);
        name_cache_free(&names);
        return -ENOMEM;
    }
    st.pid = pid;

    char label[1024];
    snprintf(label, sizeof label, "%s %lld@%s", m->role && *m->role ? m->role : "?",
             (long long)m->pid, m->host && *m->host ? m->host : "?");
    meta_event(w, "process_name", pid, pid, "name", label, 0);
    if (m->rank >= 0)
        meta_event(w, "process_sort_index", pid, pid, "sort_index", NULL, m->rank);

    for (uint32_t i = 0; i < f->thread_count; i++) {
        const store_thread *t = &f->threads[i];
        char tname[512];
        if (t->name && *t->name)
            snprintf(tname, sizeof tname, "%s", t->name);
        else
            snprintf(tname, sizeof tname, "thread %u", i);
        if (tids[i] != t->tid) {
            size_t len = strlen(tname);
            snprintf(tname + len, sizeof tname - len, " (tid %lld)", (long long)t->tid);
        }
        meta_event(w, "thread_name", pid, tids[i], "name", tname, 0);
        meta_event(w, "thread_sort_index", pid, tids[i], "sort_index", NULL, (int64_t)i);
        st.threads++;
    }

    /* one complete slice per span */
    uint64_t off = timeline_clock_offset(f);
    char pidtxt[24];
    {
        char tmp[20];
        char *p = fmt_u64(tmp, pid < 0 ? 0 - (uint64_t)pid : (uint64_t)pid);
        size_t n = (size_t)(tmp + 20 - p);
        size_t k = 0;
        if (pid < 0)
            pidtxt[k++] = '-';
        memcpy(pidtxt + k, p, n);
        pidtxt[k + n] = 0;
    }
    size_t pidlen = strlen(pidtxt);
    /* in the timeline's order: per thread by start, a parent before the spans it
     * holds (viewers nest complete slices of one thread by their order in the file
     * when start times tie) */
    uint64_t *order = malloc((f->span_count ? f->span_count : 1) * sizeof *order);
    if (!order) {
        free(tids);
        name_cache_free(&names);
        return -ENOMEM;
    }
    timeline_span_order(f, order);
    int64_t last_end = INT64_MIN;
    for (uint64_t k = 0; k < f->span_count; k++) {
        const store_span *s = &f->spans[order[k]];
        int64_t ts = (int64_t)(s->begin_ns + off - base_ns);
        uint64_t dur = s->end_ns - s->begin_ns;
        int64_t end = (int64_t)(s->end_ns + off - base_ns);
        if (end > last_end)
            last_end = end;
        event_start(w);
        OUT_LIT(w, "{\"ph\":\"X\",\"name\":\"");
        out_put(w, names.str[s->name], names.len[s->name]);
        OUT_LIT(w, "\",\"pid\":");
        out_put(w, pidtxt, pidlen);
        OUT_LIT(w, ",\"tid\":");
        out_i64(w, tids[s->thread]);
        OUT_LIT(w, ",\"ts\":");
        out_us(w, ts);
        OUT_LIT(w, ",\"dur\":");
        out_us(w, dur > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)dur);
        OUT_LIT(w, "}");
        st.slices++;
    }
    free(order);

    /* the process sampler: counter tracks of RSS and of the I/O rate per record
     * (analyze/proc_track.h, as lapse view's line tracks) */
    for (uint32_t i = 0; i < f->proc.count; i++) {
        proc_point pt = proc_track_point(f, i, off - base_ns);
        event_start(w);
        OUT_LIT(w, "{\"ph\":\"C\",\"name\":\"lapse: I/O bytes/s\",\"pid\":");
        out_put(w, pidtxt, pidlen);
        OUT_LIT(w, ",\"ts\":");
        out_us(w, pt.begin_ns);
        OUT_LIT(w, ",\"args\":{\"read\":");
        out_u64(w, pt.read_per_s);
        OUT_LIT(w, ",\"written\":");
        out_u64(w, pt.write_per_s);
        OUT_LIT(w, "}}");
        event_start(w);
        OUT_LIT(w, "{\"ph\":\"C\",\"name\":\"lapse: RSS bytes (max)\",\"pid\":");
        out_put(w, pidtxt, pidlen);
        OUT_LIT(w, ",\"ts\":");
        out_us(w, pt.begin_ns);
        OUT_LIT(w, ",\"args\":{\"rss\":");
        out_u64(w, pt.rss_bytes);
        OUT_LIT(w, "}}");
        if (pt.gap_after) { /* nothing known after it: the rate drops to 0 */
            event_start(w);
            OUT_LIT(w, "{\"ph\":\"C\",\"name\":\"lapse: I/O bytes/s\",\"pid\":");
            out_put(w, pidtxt, pidlen);
            OUT_LIT(w, ",\"ts\":");
            out_us(w, pt.end_ns);
            OUT_LIT(w, ",\"args\":{\"read\":0,\"written\":0}}");
        }
        st.counters += 2 + (uint64_t)pt.gap_after;
    }

    if (f->samples && f->samples->stack_count) {
        int rc = add_samples(w, f, base_ns, pid, &st);
        if (rc) {
            free(tids);
            name_cache_free(&names);
            return rc;
        }
    }

    if (f->activity && f->activity->count && add_activity(w, f, base_ns, pid, tids, &st)) {
        free(tids);
        name_cache_free(&names);
        return -ENOMEM;
    }

    if (m->timeline_dropped) {
        st.dropped = m->timeline_dropped;
        char text[256];
        snprintf(text, sizeof text,
                 "timeline incomplete: %llu spans not recorded (max_spans %llu)",
                 (unsigned long long)m->timeline_dropped, (unsigned long long)m->max_spans);
        meta_event(w, "process_labels", pid, pid, "labels", text, 0);
        /* an instant where the timeline stops: after its last span, else at the write */
        int64_t at = f->span_count ? last_end
                                   : (int64_t)(m->write_mono_ns + off - base_ns);
        event_start(w);
        out_str(w, "{\"ph\":\"i\",\"s\":\"p\",\"name\":\"lapse: timeline full, spans dropped\","
                   "\"pid\":");
        out_i64(w, pid);
        out_str(w, ",\"tid\":");
        out_i64(w, f->thread_count ? tids[0] : pid);
        out_str(w, ",\"ts\":");
        out_us(w, at);
        out_str(w, ",\"args\":{\"dropped\":");
        out_u64(w, m->timeline_dropped);
        out_str(w, ",\"max_spans\":");
        out_u64(w, m->max_spans);
        out_str(w, "}}");
    }

    free(tids);
    name_cache_free(&names);
    if (stats)
        *stats = st;
    return w->failed ? -EIO : 0;
}
