/* Fuzz target for the .lapse reader (libFuzzer entry point; tests/fuzz/fuzz_driver.c
 * drives it without libFuzzer).
 *
 * For every input: store_decode with each combination of read flags must return
 * cleanly (0, or a negative code with a one-line message), and the flags must agree
 * with each other; a file that decodes must survive store_encode and decode again
 * with the same counts, and encoding that second decode must give the same bytes
 * (the reader normalizes once, then round trips exactly). What decodes is also
 * rendered as `lapse export` would, and built into `lapse view`'s timeline (its spans,
 * samples, process records and GPU tracks, analyze/gpu_track.c) and page data (to
 * /dev/null; -DFUZZ_NO_RENDER leaves them out).
 * A pack (several images in one file, as liblapse_mpi writes) must index cleanly or
 * be rejected with one line, and each member it indexes gets the checks above.
 * Then the input is read as a file (store_read_each, from a descriptor, the header
 * and each section header first): it must give what store_decode gives (the same
 * verdict and message, the same counts), hold no more than the file, and the bytes
 * it held, followed by a hole to the file's size, must read to the same verdict (a
 * reader never looks past what it examined to refuse a file).
 * Any violation aborts. */
#include "core/hist.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/pack.h"
#ifndef FUZZ_NO_RENDER
#include "render/perfetto.h"
#include "render/view_data.h"
#include "analyze/timeline.h"
#include "analyze/run_model.h"
#include "analyze/run_stats.h"
#include "render/report_render.h"
#include "store/sample_set.h"
#include "render/samples_write.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* For the driver: the outcome of the last input (rc of the plain decode, and its
 * message), so that it can tell rejection paths apart without coverage. */
int fuzz_last_rc;
char fuzz_last_error[256];

#define FUZZ_ASSERT(cond)                                                              \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz_reader: invariant failed at %s:%d: %s\n", __FILE__,  \
                    __LINE__, #cond);                                                  \
            abort();                                                                   \
        }                                                                              \
    } while (0)

static void check_failure(int rc, const store_file *f, const char *err)
{
    FUZZ_ASSERT(rc < 0);
    FUZZ_ASSERT(err[0] != 0);                    /* a message */
    FUZZ_ASSERT(memchr(err, 0, 256) != NULL);    /* terminated */
    FUZZ_ASSERT(strchr(err, '\n') == NULL);      /* one line */
    FUZZ_ASSERT(f->owned == NULL && f->names == NULL && f->node_count == 0); /* left empty */
}

/* Touches everything a reader of f may touch, so that the sanitizers see any
 * pointer the decoder got wrong. */
static uint64_t walk(const store_file *f)
{
    uint64_t h = 0;
    const store_meta *m = &f->meta;
    const char *strs[] = {m->lapse_version, m->host,     m->role,        m->run_id,
                          m->job_id,        m->end_reason, m->clock_source};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        FUZZ_ASSERT(strs[i] != NULL);
        h += strlen(strs[i]);
    }
    FUZZ_ASSERT(f->name_count == 0 || f->names != NULL);
    for (uint32_t i = 0; i < f->name_count; i++)
        h += strlen(f->names[i]);
    for (uint32_t i = 0; i < f->thread_count; i++)
        h += strlen(f->threads[i].name) + (uint64_t)f->threads[i].tid;
    for (uint32_t i = 0; i < f->node_count; i++) {
        const store_node *n = &f->nodes[i];
        FUZZ_ASSERT(n->thread < f->thread_count && n->name < f->name_count);
        FUZZ_ASSERT(n->parent == -1 || (n->parent >= 0 && (uint32_t)n->parent < i));
        h += strlen(f->names[n->name]) + n->calls;
        /* the reader gives the window of buckets [hist_lo, hist_lo + hist_n) */
        FUZZ_ASSERT((n->hist == NULL) == (n->hist_n == 0));
        if (n->hist) {
            FUZZ_ASSERT(n->hist_n >= 1 && n->hist_lo + n->hist_n <= HIST_BUCKETS);
            for (unsigned b = 0; b < n->hist_n; b++)
                h += n->hist[b];
        }
    }
    for (uint32_t i = 0; i < f->counter_count; i++) {
        FUZZ_ASSERT(f->counters[i].node < f->node_count && f->counters[i].name < f->name_count);
        h += strlen(f->names[f->counters[i].name]);
    }
    for (uint64_t i = 0; i < f->span_count; i++) {
        const store_span *s = &f->spans[i];
        FUZZ_ASSERT(s->thread < f->thread_count && s->name < f->name_count);
        FUZZ_ASSERT(s->end_ns >= s->begin_ns);
        h += strlen(f->names[s->name]) + s->end_ns;
    }
    const store_proc_samples *ps = &f->proc;
    FUZZ_ASSERT(ps->count == 0 || ps->records != NULL);
    for (uint32_t i = 0; i < ps->count; i++) {
        const store_proc_sample *r = &ps->records[i];
        FUZZ_ASSERT(r->end_ns > r->start_ns && r->intervals >= 1 && r->intervals <= ps->per_record);
        FUZZ_ASSERT(i == 0 || r->start_ns >= ps->records[i - 1].end_ns);
        FUZZ_ASSERT(r->quiet_chars + r->phased_chars <= r->read_chars + r->write_chars);
        h += r->read_chars + r->rss_max_bytes;
    }
    const store_samples *sm = f->samples;
    if (sm) {
        FUZZ_ASSERT(sm->mode != NULL && sm->string_count >= 1 && sm->strings[0][0] == 0);
        h += strlen(sm->mode);
        for (uint32_t i = 0; i < sm->string_count; i++)
            h += strlen(sm->strings[i]);
        for (uint32_t i = 0; i < sm->process_count; i++)
            h += strlen(sm->strings[sm->processes[i].command]) +
                 strlen(sm->strings[sm->processes[i].python_version]);
        for (uint32_t i = 0; i < sm->frame_count; i++)
            h += strlen(sm->strings[sm->frames[i].function]) +
                 strlen(sm->strings[sm->frames[i].file]);
        for (uint32_t i = 0; i < sm->stack_count; i++) {
            const store_sample_stack *st = &sm->stacks[i];
            FUZZ_ASSERT(st->first + st->depth <= sm->frame_id_count);
            FUZZ_ASSERT((st->state & ~STORE_SAMPLE_STATE_MASK) == 0 && st->count > 0);
            h += strlen(sm->strings[st->thread_name]) + strlen(sm->strings[st->span_path]);
            for (uint32_t d = 0; d < st->depth; d++)
                FUZZ_ASSERT(sm->frame_ids[st->first + d] < sm->frame_count);
        }
    }
    return h;
}

static void same_counts(const store_file *a, const store_file *b, int spans_too)
{
    FUZZ_ASSERT(a->name_count == b->name_count);
    FUZZ_ASSERT(a->thread_count == b->thread_count);
    FUZZ_ASSERT(a->node_count == b->node_count);
    FUZZ_ASSERT(a->counter_count == b->counter_count);
    if (spans_too)
        FUZZ_ASSERT(a->span_count == b->span_count);
    FUZZ_ASSERT((a->samples == NULL) == (b->samples == NULL));
    if (a->samples) {
        const store_samples *x = a->samples, *y = b->samples;
        FUZZ_ASSERT(x->string_count == y->string_count && x->frame_count == y->frame_count &&
                    x->process_count == y->process_count && x->stack_count == y->stack_count &&
                    x->frame_id_count == y->frame_id_count && x->samples == y->samples);
    }
}

static int fuzz_image(const uint8_t *data, size_t size)
{
    char err[256];
    store_file f;
    memset(err, 0, sizeof err);
    int rc = store_decode(data, size, 0, &f, err, sizeof err);
    fuzz_last_rc = rc;
    snprintf(fuzz_last_error, sizeof fuzz_last_error, "%s", rc ? err : "");

    /* the read flags: skipping never rejects a file the full read accepts, and
     * keeps all the rest */
    static const unsigned flag_sets[] = {STORE_READ_SKIP_SPANS, STORE_READ_SKIP_HIST,
                                         STORE_READ_SKIP_SPANS | STORE_READ_SKIP_HIST};
    for (size_t k = 0; k < sizeof flag_sets / sizeof flag_sets[0]; k++) {
        unsigned flags = flag_sets[k];
        store_file g;
        char gerr[256];
        memset(gerr, 0, sizeof gerr);
        int grc = store_decode(data, size, flags, &g, gerr, sizeof gerr);
        if (grc) {
            check_failure(grc, &g, gerr);
            FUZZ_ASSERT(rc != 0);
            continue;
        }
        walk(&g);
        if (flags & STORE_READ_SKIP_SPANS)
            FUZZ_ASSERT(g.span_count == 0 && g.spans == NULL);
        if (flags & STORE_READ_SKIP_HIST)
            for (uint32_t i = 0; i < g.node_count; i++)
                FUZZ_ASSERT(g.nodes[i].hist == NULL);
        if (rc == 0)
            same_counts(&f, &g, !(flags & STORE_READ_SKIP_SPANS));
        store_file_free(&g);
    }

    if (rc) {
        check_failure(rc, &f, err);
        return 0;
    }
    walk(&f);

#ifndef FUZZ_NO_RENDER
    /* `lapse export` renders whatever the reader accepts */
    static FILE *devnull;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    if (devnull) {
        uint64_t base = 0;
        perfetto_first_ns(&f, &base);
        perfetto_writer *w = perfetto_open(devnull);
        FUZZ_ASSERT(w != NULL);
        FUZZ_ASSERT(perfetto_add_file(w, &f, base, NULL) == 0);
        FUZZ_ASSERT(perfetto_add_file(w, &f, base, NULL) == 0); /* a pid seen before */
        FUZZ_ASSERT(perfetto_finish(w) == 0);
        /* `lapse view`: the timeline and the page's data, on the clock of the file's start */
        timeline_file t;
        memset(&t, 0, sizeof t);
        int trc = timeline_build(&f, f.meta.start_real_ns, &t);
        FUZZ_ASSERT(trc == 0 || trc == -ENOMEM);
        if (trc == 0) {
            uint64_t ops = 0;
            for (uint32_t k = 0; k < t.gpu_track_count; k++) {
                const tl_gpu_track *tr = &t.gpu_tracks[k];
                FUZZ_ASSERT(tr->rows <= TL_GPU_ROWS && tr->first == ops);
                for (uint32_t i = tr->first; i < tr->first + tr->count; i++) {
                    const tl_gpu_op *op = &t.gpu_ops[i];
                    FUZZ_ASSERT(op->row < tr->rows && op->name < t.gpu_name_count);
                    FUZZ_ASSERT(op->thread == UINT32_MAX || op->thread < t.thread_count);
                    FUZZ_ASSERT(op->path == UINT32_MAX || op->path < t.path_count);
                    FUZZ_ASSERT(op->span == UINT64_MAX || op->span < t.threads[op->thread].count);
                }
                ops += tr->count;
            }
            FUZZ_ASSERT(t.gpu_track_count <= TL_GPU_TRACKS);
            FUZZ_ASSERT(ops == t.gpu_op_count && ops == (f.activity ? f.activity->count : 0));
            view_data_writer vw;
            view_data_begin(&vw, devnull, f.meta.start_real_ns);
            view_data_add(&vw, "fuzz.lapse", &f, &t);
            FUZZ_ASSERT(view_data_finish(&vw) == 0);
            timeline_free(&t);
        }
    }
    /* `lapse record`'s outputs render whatever samples the reader accepts */
    if (devnull && f.samples) {
        sample_set *set = sample_set_from_store(f.samples);
        FUZZ_ASSERT(set != NULL);
        uint64_t count = 0;
        for (uint32_t i = 0; i < f.samples->stack_count; i++)
            count += f.samples->stacks[i].count;
        FUZZ_ASSERT(sample_set_total_count(set) == count); /* stacks merge, none is lost */
        FUZZ_ASSERT(samples_write_collapsed(set, devnull, SAMPLES_COLLAPSED_SPANS) == 0);
        FUZZ_ASSERT(samples_write_speedscope(set, devnull, f.meta.role) == 0);
        FUZZ_ASSERT(samples_write_flamegraph(set, devnull, f.meta.host) == 0);
        sample_set_free(set);
        /* and `lapse report` shows them (PYTHON SAMPLES, the sampling caveat) */
        run_model m;
        memset(&m, 0, sizeof m);
        m.input = strdup("fuzz");
        m.dir = strdup("fuzz");
        FUZZ_ASSERT(m.input && m.dir);
        int arc = run_model_add(&m, "fuzz.lapse", &f);
        FUZZ_ASSERT(arc == 0 || arc == -ERANGE); /* -ERANGE: sums no writer makes */
        FUZZ_ASSERT(run_model_finish(&m, NULL) == 0);
        report_model rep;
        report_inputs in = {.top = 3, .run_paths = 1};
        FUZZ_ASSERT(report_model_build(&m, &in, &rep) == 0);
        report_options ro = {0};
        FUZZ_ASSERT(report_write_text(devnull, &rep, &ro) == 0);
        FUZZ_ASSERT(report_write_json(devnull, &rep, &ro) == 0);
        report_model_free(&rep);
        run_model_free(&m);
    }
#endif

    /* round trip: encode, decode, same counts; then encoding is a fixed point */
    bytes_out one = {0};
    FUZZ_ASSERT(store_encode(&f, &one) == 0);
    store_file g;
    memset(err, 0, sizeof err);
    int grc = store_decode(one.data, one.len, 0, &g, err, sizeof err);
    if (grc)
        fprintf(stderr, "fuzz_reader: re-encoded file does not decode: %s\n", err);
    FUZZ_ASSERT(grc == 0);
    same_counts(&f, &g, 1);
    for (uint32_t i = 0; i < f.name_count; i++)
        FUZZ_ASSERT(strcmp(f.names[i], g.names[i]) == 0);
    for (uint32_t i = 0; i < f.node_count; i++) {
        const store_node *x = &f.nodes[i], *y = &g.nodes[i];
        FUZZ_ASSERT(x->parent == y->parent && x->thread == y->thread && x->name == y->name &&
                    x->depth == y->depth && x->calls == y->calls && x->total_ns == y->total_ns);
        /* zero counts among the file's pairs may narrow the window on the way
         * round; every bucket keeps its count */
        for (unsigned k = 0; k < x->hist_n; k++) {
            unsigned b = x->hist_lo + k;
            uint64_t other = b >= y->hist_lo && b < (unsigned)y->hist_lo + y->hist_n
                                 ? y->hist[b - y->hist_lo]
                                 : 0;
            FUZZ_ASSERT(x->hist[k] == other);
        }
    }
    for (uint32_t i = 0; f.samples && i < f.samples->stack_count; i++) {
        const store_sample_stack *x = &f.samples->stacks[i], *y = &g.samples->stacks[i];
        FUZZ_ASSERT(x->pid == y->pid && x->tid == y->tid && x->depth == y->depth &&
                    x->count == y->count && x->weight_ns == y->weight_ns &&
                    x->state == y->state && x->span_path == y->span_path);
    }
    for (uint64_t i = 0; i < f.span_count; i++) {
        const store_span *x = &f.spans[i], *y = &g.spans[i];
        FUZZ_ASSERT(x->thread == y->thread && x->name == y->name && x->depth == y->depth &&
                    x->begin_ns == y->begin_ns && x->end_ns == y->end_ns);
    }
    FUZZ_ASSERT(f.proc.interval_ms == g.proc.interval_ms && f.proc.per_record == g.proc.per_record &&
                f.proc.unreadable == g.proc.unreadable && f.proc.count == g.proc.count &&
                f.proc.sampler_cpu_ns == g.proc.sampler_cpu_ns);
    for (uint32_t i = 0; i < f.proc.count; i++)
        FUZZ_ASSERT(memcmp(&f.proc.records[i], &g.proc.records[i], sizeof(store_proc_sample)) == 0);
    FUZZ_ASSERT(f.gpu.interval_ms == g.gpu.interval_ms && f.gpu.device_count == g.gpu.device_count &&
                f.gpu.failed_calls == g.gpu.failed_calls);
    for (uint32_t i = 0; i < f.gpu.device_count; i++)
        FUZZ_ASSERT(f.gpu.devices[i].phase_count == g.gpu.devices[i].phase_count &&
                    f.gpu.devices[i].own_pct_sum == g.gpu.devices[i].own_pct_sum);
    bytes_out two = {0};
    FUZZ_ASSERT(store_encode(&g, &two) == 0);
    FUZZ_ASSERT(one.len == two.len && memcmp(one.data, two.data, one.len) == 0);
    bytes_out_free(&one);
    bytes_out_free(&two);
    store_file_free(&g);
    store_file_free(&f);
    return 0;
}

/* A pack: its index, then every member as an image of its own. The outcome is the
 * index's, or the first failing member's. */
static int fuzz_pack(const uint8_t *data, size_t size)
{
    store_pack_member *members = (store_pack_member *)1;
    uint32_t count = 7;
    char err[256];
    memset(err, 0, sizeof err);
    int rc = store_pack_index(data, size, &members, &count, err, sizeof err);
    if (rc) {
        FUZZ_ASSERT(rc < 0 && err[0] && strchr(err, '\n') == NULL);
        FUZZ_ASSERT(members == NULL && count == 0);
        fuzz_last_rc = rc;
        snprintf(fuzz_last_error, sizeof fuzz_last_error, "%s", err);
        return 0;
    }
    FUZZ_ASSERT(count == 0 || members != NULL);
    int first_rc = 0;
    char first_err[256] = "";
    for (uint32_t i = 0; i < count; i++) {
        FUZZ_ASSERT(members[i].offset >= STORE_PACK_HEADER_SIZE && members[i].offset <= size &&
                    members[i].length <= size - members[i].offset);
        /* a copy of exactly the member's size: the sanitizers see any read past it */
        uint8_t *copy = malloc(members[i].length ? (size_t)members[i].length : 1u);
        FUZZ_ASSERT(copy != NULL);
        memcpy(copy, data + members[i].offset, (size_t)members[i].length);
        fuzz_image(copy, (size_t)members[i].length);
        free(copy);
        if (fuzz_last_rc && !first_rc) {
            first_rc = fuzz_last_rc;
            snprintf(first_err, sizeof first_err, "member: %s", fuzz_last_error);
        }
    }
    free(members);
    fuzz_last_rc = first_rc;
    snprintf(fuzz_last_error, sizeof fuzz_last_error, "%s", first_err);
    return 0;
}

/* ---- the input as a file on disk ---- */

static char file_path[64];
static int file_fd = -1;

static void remove_file(void)
{
    unlink(file_path);
}

/* Writes data to the scratch file (on tmpfs where there is one), then a hole up to
 * size (>= len). */
static const char *as_file(const uint8_t *data, size_t len, uint64_t size)
{
    if (file_fd < 0) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(file_path, sizeof file_path, "%s/fuzz_reader.%ld.lapse", dir, (long)getpid());
        file_fd = open(file_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        FUZZ_ASSERT(file_fd >= 0);
        atexit(remove_file);
    }
    FUZZ_ASSERT(ftruncate(file_fd, 0) == 0);
    FUZZ_ASSERT(pwrite(file_fd, data, len, 0) == (ssize_t)len);
    FUZZ_ASSERT(ftruncate(file_fd, (off_t)size) == 0);
    return file_path;
}

/* What store_read_each passed. */
typedef struct seen {
    uint32_t images, decoded, unreadable, same;
    uint32_t nodes, names, spans; /* of the decoded images, summed */
    char why[256];                /* the first image's that was not decoded */
} seen;

static int note_image(void *ctx, const store_image *im)
{
    seen *s = ctx;
    s->images++;
    FUZZ_ASSERT(im->name != NULL);
    if (im->f) {
        FUZZ_ASSERT(im->why == NULL && im->same_as == NULL);
        walk(im->f);
        s->decoded++;
        s->nodes += im->f->node_count;
        s->names += im->f->name_count;
        s->spans += (uint32_t)im->f->span_count;
        return 0;
    }
    FUZZ_ASSERT(im->why != NULL && im->why[0] && strchr(im->why, '\n') == NULL);
    if (im->same_as)
        s->same++;
    else
        s->unreadable++;
    if (!s->why[0])
        snprintf(s->why, sizeof s->why, "%s", im->why);
    return 0;
}

static void fuzz_file(const uint8_t *data, size_t size)
{
    static const unsigned flag_sets[] = {0, STORE_READ_SKIP_SPANS | STORE_READ_SKIP_HIST,
                                         STORE_READ_META_ONLY};
    int pack = store_is_pack(data, size);
    for (size_t k = 0; k < sizeof flag_sets / sizeof flag_sets[0]; k++) {
        unsigned flags = flag_sets[k];
        seen s;
        memset(&s, 0, sizeof s);
        store_held held;
        char err[256];
        memset(err, 0, sizeof err);
        int rc = store_read_each(as_file(data, size, size), flags, note_image, &s, &held, err,
                                 sizeof err);
        if (rc) {
            FUZZ_ASSERT(rc < 0 && err[0] && strchr(err, '\n') == NULL);
            FUZZ_ASSERT(s.images == 0); /* a file refused whole: no image passed */
        }
        if (!pack) {
            store_file g;
            char gerr[256];
            memset(gerr, 0, sizeof gerr);
            int grc = store_decode(data, size, flags, &g, gerr, sizeof gerr);
            FUZZ_ASSERT(rc == grc);
            if (rc) {
                FUZZ_ASSERT(strcmp(err, gerr) == 0);
            } else {
                FUZZ_ASSERT(s.images == 1 && s.decoded == 1);
                FUZZ_ASSERT(s.nodes == g.node_count && s.names == g.name_count &&
                            s.spans == (uint32_t)g.span_count);
                store_file_free(&g);
            }
        }
        /* never more than the file; what was read, then a hole: the same verdict */
        FUZZ_ASSERT(held.data != NULL && held.size == size && held.len <= size);
        FUZZ_ASSERT(memcmp(held.data, data, held.len) == 0);
        seen t;
        memset(&t, 0, sizeof t);
        char terr[256];
        memset(terr, 0, sizeof terr);
        int trc = store_read_each(as_file(held.data, held.len, size), flags, note_image, &t, NULL,
                                  terr, sizeof terr);
        FUZZ_ASSERT(trc == rc && strcmp(terr, err) == 0);
        FUZZ_ASSERT(t.images == s.images && t.decoded == s.decoded &&
                    t.unreadable == s.unreadable && t.same == s.same && t.nodes == s.nodes &&
                    strcmp(t.why, s.why) == 0);
        store_held_free(&held);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (store_is_pack(data, size))
        fuzz_pack(data, size);
    else
        fuzz_image(data, size);
    int rc = fuzz_last_rc;
    char error[sizeof fuzz_last_error];
    memcpy(error, fuzz_last_error, sizeof error);
    fuzz_file(data, size);
    fuzz_last_rc = rc; /* the outcome the driver sorts inputs by */
    memcpy(fuzz_last_error, error, sizeof error);
    return 0;
}
