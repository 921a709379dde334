#include "gecko.h"

#include "json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gecko_writer {
    json_out j;
    FILE *out;
    uint64_t base;
};

enum { CAT_OTHER = 0, CAT_SPAN = 1, CAT_PYTHON = 2 };

gecko_writer *gecko_open(FILE *out, uint64_t base_real_ns)
{
    gecko_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->out = out;
    w->base = base_real_ns;
    json_init(&w->j, out);
    w->j.compact = 1;
    json_out *j = &w->j;
    json_begin_object(j, NULL);
    json_begin_object(j, "meta");
    json_double(j, "interval", 1.0, 6);
    json_double(j, "startTime", (double)base_real_ns / 1e6, 17);
    json_u64(j, "processType", 0);
    json_str(j, "product", "lapse");
    json_u64(j, "stackwalk", 0);
    json_u64(j, "version", GECKO_META_VERSION);
    json_u64(j, "preprocessedProfileVersion", GECKO_PROCESSED_VERSION);
    json_bool(j, "symbolicationNotSupported", 1);
    json_begin_array(j, "markerSchema");
    json_end_array(j);
    json_begin_array(j, "categories");
    static const char *cats[][2] = {{"Other", "grey"}, {"Span", "blue"}, {"Python", "yellow"}};
    for (int i = 0; i < 3; i++) {
        json_begin_object(j, NULL);
        json_str(j, "name", cats[i][0]);
        json_str(j, "color", cats[i][1]);
        json_begin_array(j, "subcategories");
        json_str(j, NULL, "Other");
        json_end_array(j);
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
    json_begin_array(j, "libs");
    json_end_array(j);
    json_begin_array(j, "pages");
    json_end_array(j);
    json_begin_array(j, "counters");
    json_end_array(j);
    json_begin_array(j, "threads");
    return w;
}

static double ms(int64_t ns) { return (double)ns / 1e6; }

/* An empty table: each column an empty array, length 0. */
static void empty_table(json_out *j, const char *key, const char *const *cols, int n)
{
    json_begin_object(j, key);
    for (int i = 0; i < n; i++) {
        json_begin_array(j, cols[i]);
        json_end_array(j);
    }
    json_u64(j, "length", 0);
    json_end_object(j);
}

static void tail_tables(json_out *j)
{
    static const char *resource[] = {"lib", "name", "host", "type"};
    static const char *native[] = {"libIndex", "address", "name", "functionSize"};
    empty_table(j, "resourceTable", resource, 4);
    empty_table(j, "nativeSymbols", native, 4);
}

/* The fields of a thread before its tables. */
static void thread_head(json_out *j, const char *name, const char *process, int64_t pid,
                        int64_t tid, double start_ms)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)pid);
    json_str(j, "processType", "default");
    json_str(j, "processName", process);
    json_double(j, "processStartupTime", start_ms, 15);
    json_null(j, "processShutdownTime");
    json_double(j, "registerTime", start_ms, 15);
    json_null(j, "unregisterTime");
    json_begin_array(j, "pausedRanges");
    json_end_array(j);
    json_str(j, "name", name);
    json_bool(j, "isMainThread", pid == tid);
    json_str(j, "pid", buf);
    json_i64(j, "tid", tid);
}

static void no_samples(json_out *j)
{
    static const char *stack[] = {"frame", "prefix", "category", "subcategory"};
    static const char *frame[] = {"address", "inlineDepth", "category", "subcategory", "func",
                                  "nativeSymbol", "innerWindowID", "implementation", "line",
                                  "column"};
    static const char *func[] = {"isJS", "relevantForJS", "name", "resource", "fileName",
                                 "lineNumber", "columnNumber"};
    json_begin_object(j, "samples");
    json_str(j, "weightType", "samples");
    json_null(j, "weight");
    json_begin_array(j, "stack");
    json_end_array(j);
    json_begin_array(j, "time");
    json_end_array(j);
    json_u64(j, "length", 0);
    json_end_object(j);
    empty_table(j, "stackTable", stack, 4);
    empty_table(j, "frameTable", frame, 10);
    empty_table(j, "funcTable", func, 7);
}

/* A thread of spans: its markers, named by path (string k is path k). */
static void span_thread(json_out *j, const store_file *f, const timeline_file *t,
                        const tl_thread *th, double start_ms)
{
    char proc[300];
    snprintf(proc, sizeof proc, "%s pid %lld", *f->meta.role ? f->meta.role : "process",
             (long long)f->meta.pid);
    char name[64];
    if (!*th->name)
        snprintf(name, sizeof name, "thread %lld", (long long)th->tid);
    json_begin_object(j, NULL);
    thread_head(j, *th->name ? th->name : name, proc, f->meta.pid, th->tid, start_ms);
    no_samples(j);
    const tl_span *s = t->spans + th->first;
    json_begin_object(j, "markers");
    json_begin_array(j, "data");
    for (uint64_t i = 0; i < th->count; i++)
        json_null(j, NULL);
    json_end_array(j);
    json_begin_array(j, "name");
    for (uint64_t i = 0; i < th->count; i++)
        json_u64(j, NULL, s[i].path);
    json_end_array(j);
    json_begin_array(j, "startTime");
    for (uint64_t i = 0; i < th->count; i++)
        json_double(j, NULL, ms(s[i].begin_ns), 15);
    json_end_array(j);
    json_begin_array(j, "endTime");
    for (uint64_t i = 0; i < th->count; i++)
        json_double(j, NULL, ms(s[i].begin_ns + (int64_t)s[i].dur_ns), 15);
    json_end_array(j);
    json_begin_array(j, "phase");
    for (uint64_t i = 0; i < th->count; i++)
        json_u64(j, NULL, 1); /* an interval */
    json_end_array(j);
    json_begin_array(j, "category");
    for (uint64_t i = 0; i < th->count; i++)
        json_u64(j, NULL, CAT_SPAN);
    json_end_array(j);
    json_u64(j, "length", th->count);
    json_end_object(j);
    tail_tables(j);
    json_begin_array(j, "stringArray");
    for (uint32_t i = 0; i < t->path_count; i++)
        json_str(j, NULL, t->paths[i]);
    json_end_array(j);
    json_end_object(j);
}

static void empty_markers(json_out *j)
{
    static const char *cols[] = {"data", "name", "startTime", "endTime", "phase", "category"};
    empty_table(j, "markers", cols, 6);
}

/* The stack tree of one sampled thread: (prefix, frame) -> stack, frames and
 * functions numbered as first seen. Open addressing over 64-bit keys. */
typedef struct ids {
    uint64_t *keys; /* 0: empty */
    uint32_t *vals;
    uint32_t mask, used;
} ids;

static int ids_get(ids *x, uint64_t key, uint32_t fresh, uint32_t *out, int *added)
{
    key += 1; /* never 0 */
    if ((x->used + 1) * 2 > x->mask + 1) {
        uint32_t cap = x->mask ? (x->mask + 1) * 2 : 256;
        uint64_t *k = calloc(cap, sizeof *k);
        uint32_t *v = malloc(cap * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return -ENOMEM;
        }
        for (uint32_t i = 0; x->mask && i <= x->mask; i++)
            if (x->keys[i]) {
                uint32_t h = (uint32_t)(x->keys[i] * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
                while (k[h])
                    h = (h + 1) & (cap - 1);
                k[h] = x->keys[i];
                v[h] = x->vals[i];
            }
        free(x->keys);
        free(x->vals);
        x->keys = k;
        x->vals = v;
        x->mask = cap - 1;
    }
    uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32) & x->mask;
    for (; x->keys[h]; h = (h + 1) & x->mask)
        if (x->keys[h] == key) {
            *out = x->vals[h];
            *added = 0;
            return 0;
        }
    x->keys[h] = key;
    x->vals[h] = fresh;
    x->used++;
    *out = fresh;
    *added = 1;
    return 0;
}

static void ids_free(ids *x)
{
    free(x->keys);
    free(x->vals);
}

typedef struct u32s {
    uint32_t *v;
    size_t n, cap;
} u32s;

static int push(u32s *a, uint32_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        uint32_t *p = realloc(a->v, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static void u32_col(json_out *j, const char *key, const u32s *a, int none_is_null)
{
    json_begin_array(j, key);
    for (size_t i = 0; i < a->n; i++)
        if (none_is_null && a->v[i] == UINT32_MAX)
            json_null(j, NULL);
        else
            json_u64(j, NULL, a->v[i]);
    json_end_array(j);
}

static void const_col(json_out *j, const char *key, size_t n, int kind)
{
    json_begin_array(j, key);
    for (size_t i = 0; i < n; i++) {
        if (kind == 0)
            json_null(j, NULL);
        else if (kind == 1)
            json_bool(j, NULL, 0);
        else
            json_i64(j, NULL, kind == 2 ? 0 : kind == 3 ? -1 : CAT_PYTHON);
    }
    json_end_array(j);
}

enum { COL_NULL = 0, COL_FALSE = 1, COL_ZERO = 2, COL_MINUS1 = 3, COL_PYTHON = 4 };

/* The samples of (pid, tid) in s: one thread. *weight: the samples it stands for. */
static int sample_thread(json_out *j, const store_samples *s, int64_t pid, int64_t tid,
                         double start_ms, double at_ms, uint64_t *entries, uint64_t *weight)
{
    ids stacks = {0}, frames = {0}, funcs = {0}, strs = {0};
    u32s st_frame = {0}, st_prefix = {0}, fr_func = {0}, fr_line = {0}, fn_name = {0},
         fn_file = {0}, strings = {0}, leaf = {0};
    u32s counts = {0};
    int rc = 0;
    const char *tname = "";
    for (uint32_t i = 0; !rc && i < s->stack_count; i++) {
        const store_sample_stack *k = &s->stacks[i];
        if (k->pid != pid || k->tid != tid)
            continue;
        if (!*tname && k->thread_name < s->string_count)
            tname = s->strings[k->thread_name];
        uint32_t prefix = UINT32_MAX;
        for (uint32_t d = 0; !rc && d < k->depth; d++) {
            uint32_t fid = s->frame_ids[k->first + d];
            const store_sample_frame *fr = &s->frames[fid];
            int added;
            uint32_t fn = 0, frame = 0, stack = 0, sname = 0, sfile = 0;
            /* strings: the sample set's ids, renumbered for this thread */
            rc = ids_get(&strs, fr->function, (uint32_t)strings.n, &sname, &added);
            if (!rc && added)
                rc = push(&strings, fr->function);
            if (!rc)
                rc = ids_get(&strs, fr->file, (uint32_t)strings.n, &sfile, &added);
            if (!rc && added)
                rc = push(&strings, fr->file);
            if (!rc)
                rc = ids_get(&funcs, (uint64_t)fr->function << 32 | fr->file, (uint32_t)fn_name.n,
                             &fn, &added);
            if (!rc && added && !(rc = push(&fn_name, sname)))
                rc = push(&fn_file, sfile);
            if (!rc)
                rc = ids_get(&frames, fid, (uint32_t)fr_func.n, &frame, &added);
            if (!rc && added && !(rc = push(&fr_func, fn)))
                rc = push(&fr_line, fr->line ? fr->line : UINT32_MAX);
            if (!rc)
                rc = ids_get(&stacks, (uint64_t)(prefix + 1u) << 32 | frame, (uint32_t)st_frame.n,
                             &stack, &added);
            if (!rc && added && !(rc = push(&st_frame, frame)))
                rc = push(&st_prefix, prefix);
            prefix = stack;
        }
        /* a stack without a frame (no Python code on the thread): a null stack */
        if (!rc && !(rc = push(&leaf, prefix)))
            rc = push(&counts, (uint32_t)(k->count > UINT32_MAX ? UINT32_MAX : k->count));
        *weight += k->count;
    }
    if (!rc) {
        char name[300];
        snprintf(name, sizeof name, "python %s", *tname ? tname : "thread");
        char proc[64];
        snprintf(proc, sizeof proc, "python pid %lld", (long long)pid);
        json_begin_object(j, NULL);
        thread_head(j, name, proc, pid, tid, start_ms);
        json_begin_object(j, "samples");
        json_str(j, "weightType", "samples");
        u32_col(j, "weight", &counts, 0);
        u32_col(j, "stack", &leaf, 1);
        json_begin_array(j, "time");
        for (size_t i = 0; i < leaf.n; i++)
            json_double(j, NULL, at_ms, 15);
        json_end_array(j);
        json_u64(j, "length", leaf.n);
        json_end_object(j);
        json_begin_object(j, "stackTable");
        u32_col(j, "frame", &st_frame, 0);
        u32_col(j, "prefix", &st_prefix, 1);
        const_col(j, "category", st_frame.n, COL_PYTHON);
        const_col(j, "subcategory", st_frame.n, COL_ZERO);
        json_u64(j, "length", st_frame.n);
        json_end_object(j);
        json_begin_object(j, "frameTable");
        const_col(j, "address", fr_func.n, COL_MINUS1);
        const_col(j, "inlineDepth", fr_func.n, COL_ZERO);
        const_col(j, "category", fr_func.n, COL_PYTHON);
        const_col(j, "subcategory", fr_func.n, COL_ZERO);
        u32_col(j, "func", &fr_func, 0);
        const_col(j, "nativeSymbol", fr_func.n, COL_NULL);
        const_col(j, "innerWindowID", fr_func.n, COL_ZERO);
        const_col(j, "implementation", fr_func.n, COL_NULL);
        u32_col(j, "line", &fr_line, 1);
        const_col(j, "column", fr_func.n, COL_NULL);
        json_u64(j, "length", fr_func.n);
        json_end_object(j);
        json_begin_object(j, "funcTable");
        const_col(j, "isJS", fn_name.n, COL_FALSE);
        const_col(j, "relevantForJS", fn_name.n, COL_FALSE);
        u32_col(j, "name", &fn_name, 0);
        const_col(j, "resource", fn_name.n, COL_MINUS1);
        u32_col(j, "fileName", &fn_file, 0);
        const_col(j, "lineNumber", fn_name.n, COL_NULL);
        const_col(j, "columnNumber", fn_name.n, COL_NULL);
        json_u64(j, "length", fn_name.n);
        json_end_object(j);
        empty_markers(j);
        tail_tables(j);
        json_begin_array(j, "stringArray");
        for (size_t i = 0; i < strings.n; i++)
            json_str(j, NULL, strings.v[i] < s->string_count ? s->strings[strings.v[i]] : "");
        json_end_array(j);
        json_end_object(j);
        *entries += leaf.n;
    }
    ids_free(&stacks);
    ids_free(&frames);
    ids_free(&funcs);
    ids_free(&strs);
    u32s *all[] = {&st_frame, &st_prefix, &fr_func, &fr_line, &fn_name, &fn_file, &strings,
                   &leaf, &counts};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]->v);
    return rc;
}

int gecko_add_file(gecko_writer *w, const store_file *f, const timeline_file *t,
                   gecko_file_stats *stats)
{
    gecko_file_stats st = {0};
    json_out *j = &w->j;
    uint64_t off = timeline_clock_offset(f);
    double start_ms = ms((int64_t)(f->meta.start_mono_ns + off - w->base));
    for (uint32_t i = 0; i < t->thread_count; i++) {
        if (!t->threads[i].count)
            continue;
        span_thread(j, f, t, &t->threads[i], start_ms);
        st.threads++;
        st.markers += t->threads[i].count;
    }
    const store_samples *s = f->samples;
    int rc = 0;
    if (s) {
        double at_ms = ms((int64_t)(s->start_real_ns - w->base));
        /* each (pid, tid) once, in order of first sight */
        for (uint32_t i = 0; !rc && i < s->stack_count; i++) {
            uint32_t k = 0;
            while (k < i && (s->stacks[k].pid != s->stacks[i].pid ||
                             s->stacks[k].tid != s->stacks[i].tid))
                k++;
            if (k < i)
                continue;
            rc = sample_thread(j, s, s->stacks[i].pid, s->stacks[i].tid, at_ms, at_ms,
                               &st.samples, &st.weight);
            st.threads++;
        }
    }
    if (stats)
        *stats = st;
    if (rc)
        return rc;
    return ferror(w->out) ? -EIO : 0;
}

int gecko_finish(gecko_writer *w)
{
    json_end_array(&w->j);
    json_end_object(&w->j);
    json_finish(&w->j);
    fflush(w->out);
    int rc = ferror(w->out) ? -EIO : 0;
    free(w);
    return rc;
}
