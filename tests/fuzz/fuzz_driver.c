/* A standalone driver for LLVMFuzzerTestOneInput (tests/fuzz/fuzz_reader.c) where
 * there is no libFuzzer (gcc). No coverage feedback: it knows the .lapse layout
 * instead (docs/format.md, src/store/codec.c) and mutates valid files so that
 * mutations reach past the checksums, and it keeps inputs that end on a reject path
 * not seen before (the reader's message with its numbers blanked) as new parents.
 *
 *   fuzz_reader [-t SECONDS] [-s SEED] [-g DIR] [-v] [CORPUS_FILES...]
 *
 *   -t SECONDS  how long to mutate (default 10); 0 runs the seeds and the corpus
 *               files once, unmutated (to replay a crash)
 *   -s SEED     random seed (default: from the clock; printed)
 *   -g DIR      write the generated seed files to DIR (a corpus for libFuzzer), exit
 *   -v          list the reject paths seen, with counts
 *
 * On a crash or a failed invariant the input is written to fuzz-crash-<pid>.lapse
 * and printed in hex on stderr.
 */
#include "core/hist.h"
#include "store/codec.h"
#include "store/pack.h"
#include "fuzz_random.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern int fuzz_last_rc;
extern char fuzz_last_error[256];

#define FILE_HEADER_SIZE 32u
#define SECTION_HEADER_SIZE 24u
#define MAX_INPUT (1u << 20)
#define POOL_MAX 1024
#define SEEDS 48
#define PACK_SEEDS 8

/* ---- the input being tested, for the crash report ---- */

static const uint8_t *volatile current;
static volatile size_t current_len;
static char crash_path[64];

static void write_hex(int fd, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    char line[80];
    for (size_t i = 0; i < n; i += 32) {
        size_t k = 0;
        for (size_t j = i; j < n && j < i + 32; j++) {
            line[k++] = hex[p[j] >> 4];
            line[k++] = hex[p[j] & 15];
        }
        line[k++] = '\n';
        if (write(fd, line, k) < 0)
            return;
    }
}

static void put(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) < 0)
        return;
}

static void report_crash(void)
{
    const uint8_t *p = current;
    size_t n = current_len;
    if (!p)
        return;
    current = NULL; /* once */
    int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, p, n) < 0)
            put(2, "fuzz_reader: could not save the input\n");
        close(fd);
    }
    put(2, "\nfuzz_reader: CRASH on this input, saved as ");
    put(2, crash_path);
    put(2, " (replay: fuzz_reader -t 0 FILE); hex:\n");
    write_hex(2, p, n < 16384 ? n : 16384);
}

static void on_signal(int sig)
{
    report_crash();
    signal(sig, SIG_DFL);
    raise(sig);
}

#if defined(__SANITIZE_ADDRESS__)
void __sanitizer_set_death_callback(void (*callback)(void));
#define HAVE_DEATH_CALLBACK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
void __sanitizer_set_death_callback(void (*callback)(void));
#define HAVE_DEATH_CALLBACK 1
#endif
#endif

static void install_crash_report(void)
{
    snprintf(crash_path, sizeof crash_path, "fuzz-crash-%ld.lapse", (long)getpid());
    signal(SIGABRT, on_signal); /* failed invariants */
#ifdef HAVE_DEATH_CALLBACK
    __sanitizer_set_death_callback(report_crash); /* the sanitizers own SEGV */
#else
    signal(SIGSEGV, on_signal);
    signal(SIGBUS, on_signal);
    signal(SIGFPE, on_signal);
#endif
}

/* ---- the pool of parents ---- */

typedef struct input {
    uint8_t *data;
    size_t len;
} input;

static input pool[POOL_MAX];
static size_t pool_count, pool_fixed; /* the first pool_fixed are never replaced */

static void pool_add(const uint8_t *data, size_t len)
{
    if (len > MAX_INPUT)
        return;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return;
    memcpy(copy, data, len);
    if (pool_count < POOL_MAX) {
        pool[pool_count++] = (input){copy, len};
        return;
    }
    if (pool_fixed >= POOL_MAX) {
        free(copy);
        return;
    }
    size_t at = pool_fixed + below(POOL_MAX - pool_fixed);
    free(pool[at].data);
    pool[at] = (input){copy, len};
}

/* ---- random valid files ---- */

static char *rnd_string(void)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz_/.:-0123456789 \"\\";
    size_t n = below(4) == 0 ? 0 : below(14);
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned r = (unsigned)below(20);
        if (r == 0)
            s[i] = (char)(1 + below(31)); /* control: the reader makes it '?' */
        else if (r == 1)
            s[i] = (char)(0x80 + below(128)); /* not UTF-8 on its own */
        else
            s[i] = alphabet[below(sizeof alphabet - 1)];
    }
    s[n] = 0;
    return s;
}

static uint64_t rnd_value(void)
{
    switch (below(4)) {
    case 0: return below(16);
    case 1: return below(1000000);
    case 2: return rnd() >> below(64);
    default: return rnd();
    }
}

/* Encodes a random model that store_decode must accept. */
static void make_seed(bytes_out *out)
{
    store_file f;
    memset(&f, 0, sizeof f);
    store_meta *m = &f.meta;
    char *strs[7];
    for (int i = 0; i < 7; i++)
        strs[i] = rnd_string();
    m->format_version = STORE_FORMAT_VERSION;
    m->lapse_version = strs[0];
    m->host = strs[1];
    m->role = strs[2];
    m->run_id = strs[3];
    m->job_id = strs[4];
    m->end_reason = strs[5];
    m->clock_source = strs[6];
    m->pid = (int64_t)rnd_value();
    m->ppid = (int64_t)rnd_value();
    m->rank = one_in(2) ? -1 : (int64_t)below(64);
    m->world_size = one_in(2) ? -1 : (int64_t)below(64);
    uint64_t *u64s[] = {&m->start_real_ns, &m->start_mono_ns, &m->write_real_ns,
                        &m->write_mono_ns, &m->anchor_real_ns, &m->anchor_mono_ns,
                        &m->wall_ns, &m->cpu_user_ns, &m->cpu_sys_ns, &m->max_rss_kb,
                        &m->write_seq, &m->max_spans, &m->max_depth, &m->max_paths,
                        &m->max_counters, &m->timeline_dropped, &m->folded_depth,
                        &m->folded_paths, &m->unmatched_ends, &m->dropped_counters};
    for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++)
        *u64s[i] = rnd_value();
    /* a writer's bound: 0 (the default, 64) or up to 4096; the tree below is shallower */
    m->max_depth = one_in(4) ? 0 : 32 + below(STORE_MAX_DEPTH - 31);
    m->tsc_hz = one_in(2) ? 0.0 : 1e9 + (double)below(3000000000ull);
    m->final = (uint32_t)below(2);
    m->snapshot_interval_ms = (uint32_t)rnd_value();

    f.name_count = 1 + (uint32_t)below(12);
    f.names = calloc(f.name_count, sizeof *f.names);
    f.names[0] = strdup("");
    for (uint32_t i = 1; i < f.name_count; i++)
        f.names[i] = rnd_string();

    f.thread_count = (uint32_t)below(4); /* 0 threads: a valid, empty tree */
    f.threads = calloc(f.thread_count ? f.thread_count : 1, sizeof *f.threads);
    for (uint32_t i = 0; i < f.thread_count; i++) {
        f.threads[i].tid = (int64_t)rnd_value();
        f.threads[i].name = rnd_string();
    }

    uint32_t want = f.thread_count ? f.thread_count + (uint32_t)below(24) : 0;
    f.nodes = calloc(want ? want : 1, sizeof *f.nodes);
    for (uint32_t i = 0; i < want; i++) {
        store_node *n = &f.nodes[i];
        if (i < f.thread_count) { /* a root per thread first */
            n->parent = -1;
            n->thread = i;
        } else {
            uint32_t p = (uint32_t)below(i);
            n->parent = (int32_t)p;
            n->thread = f.nodes[p].thread;
            n->depth = f.nodes[p].depth + 1;
            n->name = (uint32_t)below(f.name_count);
        }
        n->calls = rnd_value();
        n->total_ns = rnd_value();
        n->child_ns = rnd_value();
        n->min_ns = rnd_value();
        n->max_ns = rnd_value();
        n->folded = one_in(4) ? rnd_value() : 0;
        if (one_in(3)) { /* dense: hist_lo = hist_n = 0 */
            n->hist = calloc(HIST_BUCKETS, sizeof *n->hist);
            unsigned used = one_in(8) ? HIST_BUCKETS : (unsigned)below(32);
            for (unsigned k = 0; k < used; k++)
                n->hist[used == HIST_BUCKETS ? k : below(HIST_BUCKETS)] = 1 + below(1000);
        } else if (one_in(2)) { /* a window, as the reader gives it */
            n->hist_lo = (uint16_t)below(HIST_BUCKETS);
            n->hist_n = (uint16_t)(1 + below(HIST_BUCKETS - n->hist_lo));
            n->hist = calloc(n->hist_n, sizeof *n->hist);
            for (unsigned k = 0; k < n->hist_n; k++)
                n->hist[k] = one_in(3) ? 0 : 1 + below(1000);
        }
    }
    f.node_count = want;

    f.counter_count = want ? (uint32_t)below(6) : 0;
    f.counters = calloc(f.counter_count ? f.counter_count : 1, sizeof *f.counters);
    for (uint32_t i = 0; i < f.counter_count; i++) {
        f.counters[i].node = (uint32_t)below(want);
        f.counters[i].name = (uint32_t)below(f.name_count);
        f.counters[i].sum = (int64_t)rnd_value();
        f.counters[i].updates = rnd_value();
    }

    f.span_count = f.thread_count ? below(24) : 0;
    f.spans = calloc(f.span_count ? f.span_count : 1, sizeof *f.spans);
    for (uint64_t i = 0; i < f.span_count; i++) {
        store_span *s = &f.spans[i];
        s->thread = (uint32_t)below(f.thread_count);
        s->name = (uint32_t)below(f.name_count);
        s->depth = 1 + (uint32_t)below(6);
        s->begin_ns = rnd_value() >> 1;
        s->end_ns = s->begin_ns + below(1000000);
    }

    /* the process sampler: records in time order, each within the bounds */
    if (!one_in(4)) {
        store_proc_samples *ps = &f.proc;
        ps->interval_ms = 1 + (uint32_t)below(5000);
        ps->per_record = 1u << below(8);
        ps->unreadable = one_in(2) ? 0 : rnd_value();
        ps->sampler_cpu_ns = rnd_value();
        ps->count = (uint32_t)below(12);
        ps->records = calloc(ps->count ? ps->count : 1, sizeof *ps->records);
        uint64_t t = rnd_value() >> 8;
        for (uint32_t i = 0; i < ps->count; i++) {
            store_proc_sample *r = &ps->records[i];
            r->start_ns = t + below(1000);
            r->end_ns = r->start_ns + 1 + below(1000000000);
            t = r->end_ns;
            r->read_chars = rnd_value() >> 2;
            r->write_chars = rnd_value() >> 2;
            r->read_bytes = rnd_value();
            r->write_bytes = rnd_value();
            uint64_t chars = r->read_chars + r->write_chars;
            r->quiet_chars = below(chars + 1);
            r->phased_chars = below(chars - r->quiet_chars + 1);
            r->rss_max_bytes = rnd_value();
            r->intervals = 1 + (uint32_t)below(ps->per_record);
            r->quiet_intervals = (uint32_t)below(r->intervals + 1);
        }
    }
    /* Python stack samples, half of the time */
    store_samples smp;
    memset(&smp, 0, sizeof smp);
    char *mode = rnd_string();
    if (one_in(2)) {
        smp.mode = mode;
        smp.rate_asked_hz = (double)below(20000);
        smp.rate_achieved_hz = (double)below(20000) / 3.0;
        smp.samples = rnd_value();
        smp.late_samples = rnd_value();
        smp.read_errors = rnd_value();
        smp.start_real_ns = rnd_value();
        smp.end_real_ns = rnd_value();
        smp.duration_ns = rnd_value();
        smp.idle = (uint32_t)below(2);
        smp.string_count = 1 + (uint32_t)below(10);
        smp.strings = calloc(smp.string_count, sizeof *smp.strings);
        smp.strings[0] = strdup("");
        for (uint32_t i = 1; i < smp.string_count; i++)
            smp.strings[i] = rnd_string();
        smp.process_count = (uint32_t)below(3);
        smp.processes = calloc(smp.process_count + 1, sizeof *smp.processes);
        for (uint32_t i = 0; i < smp.process_count; i++)
            smp.processes[i] = (store_sample_process){(int64_t)rnd_value(), (int64_t)rnd_value(),
                                                      (uint32_t)below(smp.string_count),
                                                      (uint32_t)below(smp.string_count)};
        smp.frame_count = (uint32_t)below(12);
        smp.frames = calloc(smp.frame_count + 1, sizeof *smp.frames);
        for (uint32_t i = 0; i < smp.frame_count; i++)
            smp.frames[i] = (store_sample_frame){(uint32_t)below(smp.string_count),
                                                 (uint32_t)below(smp.string_count),
                                                 (uint32_t)rnd_value()};
        smp.stack_count = (uint32_t)below(10);
        smp.stacks = calloc(smp.stack_count + 1, sizeof *smp.stacks);
        smp.frame_ids = calloc(smp.stack_count * 8 + 1, sizeof *smp.frame_ids);
        for (uint32_t i = 0; i < smp.stack_count; i++) {
            store_sample_stack *st = &smp.stacks[i];
            st->pid = one_in(2) ? 7 : (int64_t)below(4);
            st->tid = (int64_t)below(5);
            st->thread_name = (uint32_t)below(smp.string_count);
            st->span_path = (uint32_t)below(smp.string_count);
            st->state = (uint32_t)below(STORE_SAMPLE_STATE_MASK + 1);
            st->depth = smp.frame_count ? (uint32_t)below(9) : 0;
            st->first = smp.frame_id_count;
            st->count = 1 + below(1000);
            st->weight_ns = rnd_value();
            for (uint32_t d = 0; d < st->depth; d++)
                smp.frame_ids[smp.frame_id_count++] = (uint32_t)below(smp.frame_count);
        }
        f.samples = &smp;
    }
    store_child children[4];
    if (one_in(3)) { /* the children it forked (section CHILDREN) */
        f.child_count = (uint32_t)below(5);
        for (uint32_t i = 0; i < f.child_count; i++)
            children[i] = (store_child){1 + (int64_t)below(1u << 22), rnd_value()};
        f.children = children;
        f.children_unrecorded = one_in(4) ? rnd_value() : 0;
    }

    /* GPU telemetry (section GPU_DEVICE), a third of the time: sums within bounds */
    store_gpu_device devices[3];
    store_gpu_phase phases[3][4];
    char *gpu_strs[4] = {rnd_string(), rnd_string(), rnd_string(), rnd_string()};
    if (one_in(3)) {
        f.gpu.interval_ms = 1 + (uint32_t)below(5000);
        f.gpu.failed_calls = one_in(2) ? 0 : rnd_value();
        f.gpu.error = gpu_strs[0];
        f.gpu.device_count = (uint32_t)below(4);
        for (uint32_t i = 0; i < f.gpu.device_count; i++) {
            store_gpu_device *d = &devices[i];
            d->index = (uint32_t)below(16);
            d->name = gpu_strs[1 + i];
            d->ticks = below(1000000);
            d->busy_ticks = below(d->ticks + 1);
            d->busy_pct_sum = below(d->busy_ticks * 100 + 1);
            d->own_ticks = below(d->ticks + 1);
            d->own_pct_sum = below(d->own_ticks * 100 + 1);
            d->mem_peak_bytes = rnd_value();
            d->phase_count = (uint32_t)below(5);
            for (uint32_t k = 0; k < d->phase_count; k++) {
                store_gpu_phase *ph = &phases[i][k];
                ph->name = (uint32_t)below(f.name_count);
                ph->ticks = below(d->own_ticks + 1);
                ph->own_pct_sum = below(ph->ticks * 100 + 1);
            }
            d->phases = phases[i];
            /* its id (section GPU_DEVICE_IDS): none (an older writer), a uuid, or why not */
            int id = (int)below(3);
            d->uuid = id == 0 ? NULL : id == 1 ? "GPU-f0f0f0f0-0000-0000-0000-000000000000" : "";
            d->uuid_error = id == 0 ? NULL : id == 1 ? "" : "nvmlDeviceGetUUID: Unknown Error (999)";
        }
        f.gpu.devices = devices;
    }

    /* VRAM from torch (section GPU_MEMORY), a third of the time */
    store_gpu_memory_device vram_devs[3];
    char *vram_strs[7] = {rnd_string(), rnd_string(), rnd_string(), rnd_string(),
                          rnd_string(), rnd_string(), rnd_string()};
    store_gpu_memory vram = {1 + below(1000), 0, vram_strs[0], vram_devs, (uint32_t)below(4)};
    if (one_in(3)) {
        vram.resets = below(vram.readings + 1);
        for (uint32_t i = 0; i < vram.device_count; i++)
            vram_devs[i] = (store_gpu_memory_device){(uint32_t)below(16), vram_strs[1 + 2 * i],
                                                     vram_strs[2 + 2 * i], rnd_value(),
                                                     rnd_value()};
        f.gpu_memory = &vram;
    }

    /* GPU activity (section GPU_ACTIVITY), a third of the time: what the reader accepts,
     * times anywhere (0, near 2^63, 2^64 - 1), launches on any node or none, streams
     * past the view's 256 tracks, records overlapping past its 16 rows */
    store_gpu_activity act;
    store_gpu_record recs[48];
    char *act_strs[4] = {strdup(""), rnd_string(), rnd_string(), strdup("")};
    char *act_names[3] = {act_strs[0], act_strs[1], act_strs[2]};
    if (one_in(3)) {
        memset(&act, 0, sizeof act);
        act.state = one_in(8) ? STORE_GPU_MISSING : STORE_GPU_COLLECTED;
        act.note = act_strs[3];
        act.dropped = one_in(2) ? 0 : rnd_value();
        act.names = act_names;
        act.name_count = 1 + (uint32_t)below(3);
        act.count = (uint32_t)below(49);
        act.records = recs;
        static const uint64_t at[] = {0, 1000, 1ull << 62, (1ull << 63) - 8, 1ull << 63, UINT64_MAX - 1000};
        for (uint32_t i = 0; i < act.count; i++) {
            store_gpu_record *r = &recs[i];
            r->kind = STORE_GPU_KERNEL + (uint32_t)below(3);
            r->copy_kind = r->kind == STORE_GPU_MEMCPY ? (uint32_t)below(13) : 0;
            r->device = (uint32_t)below(3);
            r->stream = one_in(4) ? (uint32_t)rnd_value() : (uint32_t)below(4);
            r->name = r->kind == STORE_GPU_KERNEL ? (uint32_t)below(act.name_count) : 0;
            r->node = f.node_count && !one_in(4) ? (uint32_t)below(f.node_count) : STORE_GPU_NO_NODE;
            r->start_ns = one_in(2) ? at[below(6)] + below(1000) : rnd_value();
            uint64_t room = UINT64_MAX - r->start_ns;
            r->end_ns = r->start_ns + below(room < 1000000 ? room + 1 : 1000000);
            r->bytes = r->kind == STORE_GPU_KERNEL ? 0 : rnd_value();
            r->launch_ns = one_in(4) ? 0 : one_in(2) ? r->start_ns - below(2000) : rnd_value();
        }
        f.activity = &act;
    }

    if (store_encode(&f, out) != 0) {
        fprintf(stderr, "fuzz_reader: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < 4; i++) {
        free(gpu_strs[i]);
        free(act_strs[i]);
    }
    for (int i = 0; i < 7; i++)
        free(vram_strs[i]);
    for (uint32_t i = 0; i < smp.string_count; i++)
        free(smp.strings[i]);
    free(smp.strings);
    free(smp.processes);
    free(smp.frames);
    free(smp.stacks);
    free(smp.frame_ids);
    free(mode);
    for (int i = 0; i < 7; i++)
        free(strs[i]);
    for (uint32_t i = 0; i < f.name_count; i++)
        free(f.names[i]);
    for (uint32_t i = 0; i < f.thread_count; i++)
        free(f.threads[i].name);
    for (uint32_t i = 0; i < f.node_count; i++)
        free(f.nodes[i].hist);
    free(f.names);
    free(f.threads);
    free(f.nodes);
    free(f.counters);
    free(f.spans);
    free(f.proc.records);
}

/* ---- layout-aware mutation ---- */

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void set_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct section_at {
    size_t at;      /* header offset */
    size_t payload; /* payload offset */
    size_t plen;    /* payload length as far as it is inside the buffer */
    size_t end;     /* offset after the padding, clamped to the buffer */
} section_at;

/* Walks the sections as the reader would, as far as the lengths make sense. */
static size_t scan(const uint8_t *d, size_t len, section_at *out, size_t max)
{
    size_t n = 0, pos = FILE_HEADER_SIZE;
    while (n < max && len >= pos && len - pos >= SECTION_HEADER_SIZE) {
        uint64_t plen = get_le(d + pos + 8, 8);
        section_at s = {pos, pos + SECTION_HEADER_SIZE, 0, 0};
        size_t left = len - s.payload;
        s.plen = plen > left ? left : (size_t)plen;
        size_t pad = (8 - (plen & 7)) & 7;
        s.end = plen > left || pad > left - plen ? len : s.payload + (size_t)plen + pad;
        out[n++] = s;
        if (plen > left)
            break;
        pos = s.end;
    }
    return n;
}

/* Recomputes what a writer would have: section checksums (the payload one only
 * where the claimed length fits), the total length, the header checksum. */
static void fix_checksums(uint8_t *d, size_t len, int fix_section_count)
{
    if (len < FILE_HEADER_SIZE)
        return;
    section_at s[64];
    size_t n = scan(d, len, s, 64);
    for (size_t i = 0; i < n; i++) {
        uint64_t plen = get_le(d + s[i].at + 8, 8);
        if (plen == s[i].plen && !one_in(64))
            set_le(d + s[i].at + 16, crc32_ieee(d + s[i].payload, s[i].plen), 4);
        if (!one_in(64))
            set_le(d + s[i].at + 20, crc32_ieee(d + s[i].at, 20), 4);
    }
    if (!one_in(32))
        set_le(d + 16, len, 8);
    if (fix_section_count)
        set_le(d + 24, n, 4);
    set_le(d + 28, crc32_ieee(d, 28), 4);
}

/* A pack's own layout: the header (total length, index CRC, header CRC) and each
 * member it indexes, whose checksums are fixed as a file's. */
static void fix_pack_checksums(uint8_t *d, size_t len)
{
    if (len < STORE_PACK_HEADER_SIZE)
        return;
    uint64_t count = get_le(d + 12, 4);
    if (count <= (len - STORE_PACK_HEADER_SIZE) / 16) {
        for (uint64_t i = 0; i < count; i++) {
            uint64_t off = get_le(d + STORE_PACK_HEADER_SIZE + 16 * i, 8);
            uint64_t n = get_le(d + STORE_PACK_HEADER_SIZE + 16 * i + 8, 8);
            if (off <= len && n <= len - off && !one_in(16))
                fix_checksums(d + off, (size_t)n, one_in(8));
        }
        if (!one_in(32))
            set_le(d + 24, crc32_ieee(d + STORE_PACK_HEADER_SIZE, (size_t)count * 16), 4);
    }
    if (!one_in(32))
        set_le(d + 16, len, 8);
    set_le(d + 28, crc32_ieee(d, 28), 4);
}

/* A pack of 1-3 of the generated files (never of a pack), as liblapse_mpi writes them. */
static void make_pack(bytes_out *out)
{
    const uint8_t *images[3];
    size_t lens[3];
    uint32_t n = 1 + (uint32_t)below(3);
    for (uint32_t i = 0; i < n; i++) {
        const input *in = &pool[below(pool_count < SEEDS ? pool_count : SEEDS)];
        images[i] = in->data;
        lens[i] = in->len;
    }
    store_pack_encode(images, lens, n, out);
}

static const uint64_t interesting[] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 15, 16, 17, 20, 24, 31, 32, 33, 63, 64, 66, 127, 128, 255,
    256, 495, 496, 497, 511, 512, 1000, 1024, 4095, 4096, 32767, 32768, 65535, 65536,
    0x7fffffffull, 0x80000000ull, 0xfffffffeull, 0xffffffffull, 0x100000000ull,
    0x7fffffffffffffffull, 0x8000000000000000ull, 0xfffffffffffffffeull, 0xffffffffffffffffull};
#define INTERESTING (sizeof interesting / sizeof interesting[0])

static uint64_t pick_value(size_t len)
{
    switch (below(6)) {
    case 0: return len;
    case 1: return len / (1 + below(40));
    case 2: return rnd();
    case 3: return 0 - (1 + below(8)); /* -1 .. -8 */
    default: return interesting[below(INTERESTING)];
    }
}

typedef struct buf {
    uint8_t *d;
    size_t len, cap;
} buf;

static void buf_insert(buf *b, size_t at, const uint8_t *src, size_t n)
{
    if (b->len + n > b->cap || b->len + n > MAX_INPUT)
        return;
    memmove(b->d + at + n, b->d + at, b->len - at);
    if (src)
        memmove(b->d + at, src, n);
    else
        for (size_t i = 0; i < n; i++)
            b->d[at + i] = (uint8_t)rnd();
    b->len += n;
}

static void buf_delete(buf *b, size_t at, size_t n)
{
    memmove(b->d + at, b->d + at + n, b->len - at - n);
    b->len -= n;
}

static void mutate_once(buf *b)
{
    section_at s[64];
    size_t ns = scan(b->d, b->len, s, 64);
    size_t len = b->len;
    int width = 1 << below(4); /* 1, 2, 4 or 8 bytes */
    switch (below(14)) {
    case 0: /* bit flips */
        if (len)
            for (int k = 1 + (int)below(4); k > 0; k--)
                b->d[below(len)] ^= (uint8_t)(1u << below(8));
        break;
    case 1: /* a byte */
        if (len)
            b->d[below(len)] = one_in(2) ? (uint8_t)rnd() : (uint8_t)interesting[below(12)];
        break;
    case 2: /* an integer field anywhere, often aligned */
        if (len >= (size_t)width) {
            size_t at = below(len - (size_t)width + 1);
            if (one_in(2))
                at &= ~(size_t)3;
            set_le(b->d + at, pick_value(len), width);
        }
        break;
    case 3: /* arithmetic on a field */
        if (len >= (size_t)width) {
            size_t at = below(len - (size_t)width + 1);
            uint64_t v = get_le(b->d + at, width) + (uint64_t)((int64_t)below(33) - 16);
            set_le(b->d + at, v, width);
        }
        break;
    case 4: /* truncate: anywhere, or at a section boundary */
        if (ns && one_in(2)) {
            size_t i = below(ns);
            size_t cut[] = {s[i].at, s[i].payload, s[i].payload + s[i].plen / 2,
                            s[i].payload + s[i].plen};
            b->len = cut[below(4)];
        } else if (len) {
            b->len = below(len);
        }
        break;
    case 5: /* insert bytes */
        buf_insert(b, below(len + 1), NULL, 1 + below(one_in(4) ? 256 : 16));
        break;
    case 6: /* delete bytes */
        if (len) {
            size_t at = below(len);
            size_t n = 1 + below(len - at < 64 ? len - at : 64);
            buf_delete(b, at, n);
        }
        break;
    case 7: { /* splice with another input */
        input *o = &pool[below(pool_count)];
        if (!o->len || !len)
            break;
        size_t a = below(len), c = below(o->len);
        size_t n = o->len - c;
        if (a + n > b->cap)
            n = b->cap - a;
        memcpy(b->d + a, o->data + c, n);
        b->len = a + n;
        break;
    }
    case 8: /* a section header field: type, count or payload length */
        if (ns) {
            size_t i = below(ns);
            switch (below(3)) {
            case 0: set_le(b->d + s[i].at, one_in(2) ? below(9) : pick_value(len), 4); break;
            case 1: set_le(b->d + s[i].at + 4, pick_value(len), 4); break;
            default: set_le(b->d + s[i].at + 8, one_in(2) ? s[i].plen + below(17) - 8
                                                          : pick_value(len), 8);
            }
        }
        break;
    case 9: /* a length or index inside a payload (strings, counts, hist buckets) */
        if (ns) {
            size_t i = below(ns);
            if (s[i].plen >= 4) {
                size_t at = s[i].payload + below(s[i].plen - 3);
                set_le(b->d + at, pick_value(s[i].plen), one_in(4) ? 2 : 4);
            }
        }
        break;
    case 10: /* duplicate a whole section */
        if (ns) {
            size_t i = below(ns);
            size_t n = s[i].end - s[i].at;
            size_t at = ns > 1 ? s[below(ns)].at : s[i].end;
            if (n <= 65536) {
                uint8_t *copy = malloc(n);
                memcpy(copy, b->d + s[i].at, n);
                buf_insert(b, at, copy, n);
                free(copy);
            }
        }
        break;
    case 11: /* remove a whole section */
        if (ns) {
            size_t i = below(ns);
            buf_delete(b, s[i].at, s[i].end - s[i].at);
        }
        break;
    case 12: /* swap two neighbouring sections */
        if (ns >= 2) {
            size_t i = below(ns - 1);
            size_t n1 = s[i].end - s[i].at, n2 = s[i + 1].end - s[i + 1].at;
            uint8_t *tmp = malloc(n1 + n2);
            memcpy(tmp, b->d + s[i + 1].at, n2);
            memcpy(tmp + n2, b->d + s[i].at, n1);
            memcpy(b->d + s[i].at, tmp, n1 + n2);
            free(tmp);
        }
        break;
    default: /* the file header: version, section count, total length */
        if (len >= FILE_HEADER_SIZE) {
            static const size_t fields[][2] = {{8, 4}, {12, 4}, {16, 8}, {24, 4}};
            size_t k = below(4);
            set_le(b->d + fields[k][0], k == 0 && one_in(2) ? below(3) : pick_value(len),
                   (int)fields[k][1]);
        }
        break;
    }
}

/* ---- running ---- */

static uint64_t inputs, decoded_ok, rejected;

typedef struct reject_class {
    char text[160];
    uint64_t count;
} reject_class;
static reject_class classes[512];
static size_t class_count;

/* The reader's message with its numbers blanked; returns 1 when never seen. */
static int note_outcome(void)
{
    char key[160];
    if (fuzz_last_rc == 0)
        return 0;
    size_t k = 0;
    for (const char *p = fuzz_last_error; *p && k + 1 < sizeof key; p++) {
        if (*p >= '0' && *p <= '9') {
            if (k == 0 || key[k - 1] != '#')
                key[k++] = '#';
        } else {
            key[k++] = *p;
        }
    }
    key[k] = 0;
    for (size_t i = 0; i < class_count; i++)
        if (!strcmp(classes[i].text, key)) {
            classes[i].count++;
            return 0;
        }
    if (class_count < sizeof classes / sizeof classes[0]) {
        snprintf(classes[class_count].text, sizeof classes[0].text, "%s", key);
        classes[class_count++].count = 1;
    }
    return 1;
}

/* Runs one input from a buffer of exactly its size (so that the sanitizers see any
 * read past its end). Returns 1 when it is worth keeping as a parent. */
static int run_one(const uint8_t *data, size_t len)
{
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact)
        return 0;
    memcpy(exact, data, len);
    current_len = len;
    current = exact;
    LLVMFuzzerTestOneInput(exact, len);
    current = NULL;
    free(exact);
    inputs++;
    if (fuzz_last_rc == 0)
        decoded_ok++;
    else
        rejected++;
    return note_outcome();
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int load_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "fuzz_reader: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *data = malloc(MAX_INPUT);
    size_t n = data ? fread(data, 1, MAX_INPUT, fp) : 0;
    fclose(fp);
    if (!data)
        return -1;
    pool_add(data, n);
    free(data);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzz_reader [-t SECONDS] [-s SEED] [-g DIR] [-v] [CORPUS_FILES...]\n");
}

int main(int argc, char **argv)
{
    double seconds = 10;
    uint64_t seed = 0;
    int have_seed = 0, verbose = 0;
    const char *gen_dir = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "t:s:g:vh")) != -1) {
        switch (opt) {
        case 't': seconds = atof(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 0); have_seed = 1; break;
        case 'g': gen_dir = optarg; break;
        case 'v': verbose = 1; break;
        default: usage(); return opt == 'h' ? 0 : 2;
        }
    }
    if (!have_seed)
        seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    rng_state = seed;
    install_crash_report();

    for (int i = 0; i < SEEDS; i++) {
        bytes_out out = {0};
        make_seed(&out);
        if (gen_dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed-%02d.lapse", gen_dir, i);
            FILE *fp = fopen(path, "wb");
            if (!fp || fwrite(out.data, 1, out.len, fp) != out.len) {
                fprintf(stderr, "fuzz_reader: cannot write %s\n", path);
                return 1;
            }
            fclose(fp);
        }
        pool_add(out.data, out.len);
        bytes_out_free(&out);
    }
    if (gen_dir) {
        printf("fuzz_reader: wrote %d seed files to %s\n", SEEDS, gen_dir);
        return 0;
    }
    /* packs of the generated files, as parents (they must index and decode too) */
    for (int i = 0; i < PACK_SEEDS; i++) {
        bytes_out out = {0};
        make_pack(&out);
        pool_add(out.data, out.len);
        bytes_out_free(&out);
    }
    for (int i = optind; i < argc; i++)
        load_file(argv[i]);
    pool_fixed = pool_count;
    printf("fuzz_reader: seed %llu, %zu parents (%d generated, %zu from files), %.0f s\n",
           (unsigned long long)seed, pool_count, SEEDS + PACK_SEEDS,
           pool_count - SEEDS - PACK_SEEDS, seconds);
    fflush(stdout);

    double start = now_s();
    /* every parent once, unmutated: the generated ones must decode */
    for (size_t i = 0; i < pool_fixed; i++) {
        run_one(pool[i].data, pool[i].len);
        if (i < SEEDS + PACK_SEEDS && fuzz_last_rc != 0) {
            fprintf(stderr, "fuzz_reader: generated seed %zu does not decode: %s\n", i,
                    fuzz_last_error);
            return 1;
        }
    }

    buf b = {malloc(MAX_INPUT + 65536), 0, MAX_INPUT + 65536};
    double deadline = start + seconds;
    while (seconds > 0) {
        if ((inputs & 63) == 0 && now_s() >= deadline)
            break;
        input *parent = &pool[below(pool_count)];
        memcpy(b.d, parent->data, parent->len);
        b.len = parent->len;
        int rounds = 1 + (int)below(one_in(4) ? 8 : 3);
        for (int r = 0; r < rounds; r++)
            mutate_once(&b);
        if (!one_in(4)) { /* most inputs get past the checksums */
            if (store_is_pack(b.d, b.len))
                fix_pack_checksums(b.d, b.len);
            else
                fix_checksums(b.d, b.len, one_in(8));
        }
        if (run_one(b.d, b.len))
            pool_add(b.d, b.len);
        else if (fuzz_last_rc == 0 && one_in(16))
            pool_add(b.d, b.len); /* a decodable variant: a parent for deeper paths */
    }
    double took = now_s() - start;
    free(b.d);
    printf("fuzz_reader: %llu inputs, %llu decoded ok, %llu rejected in %.1f s\n",
           (unsigned long long)inputs, (unsigned long long)decoded_ok,
           (unsigned long long)rejected, took);
    if (verbose) {
        printf("reject paths seen (%zu):\n", class_count);
        for (size_t i = 0; i < class_count; i++)
            printf("  %10llu  %s\n", (unsigned long long)classes[i].count, classes[i].text);
    }
    for (size_t i = 0; i < pool_count; i++)
        free(pool[i].data);
    return 0;
}
