/* The .lapse codec: round trip, checksums, truncation at every length, bounds. */
#include "../../src/core/hist.h"
#include "../../src/store/codec.h"
#include "../../src/store/crc32.h"
#include "../../src/store/file_io.h"
#include "../../src/store/pack.h"
#include "../../src/store/run_dir.h"
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t hist_a[HIST_BUCKETS], hist_b[HIST_BUCKETS];

static void sample_model(store_file *f)
{
    static char *names[] = {"", "step", "load", "bytes"};
    static store_thread threads[] = {{101, "main"}, {102, "worker \"q\""}};
    static store_node nodes[4];
    static store_counter counters[] = {{1, 3, -5, 2}, {2, 3, 1ll << 40, 7}};
    static store_span spans[] = {{0, 1, 1, 1000, 5000}, {1, 2, 1, 2000, 2500}};
    memset(f, 0, sizeof *f);
    hist_a[3] = 2;
    hist_a[100] = 5;
    hist_b[HIST_BUCKETS - 1] = 1;
    nodes[0] = (store_node){-1, 0, 0, 0, 0, 0, 900, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nodes[1] = (store_node){0, 0, 1, 1, 7, 900, 100, 3, 500, 0, hist_a, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nodes[2] = (store_node){-1, 1, 0, 0, 0, 0, 40, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    nodes[3] = (store_node){2, 1, 2, 1, 1, 40, 0, 40, 40, 2, hist_b, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    counters[1].node = 3;
    f->names = names;
    f->name_count = 4;
    f->threads = threads;
    f->thread_count = 2;
    f->nodes = nodes;
    f->node_count = 4;
    f->counters = counters;
    f->counter_count = 2;
    f->spans = spans;
    f->span_count = 2;
    f->meta.host = "node07";
    f->meta.role = "actor";
    f->meta.run_id = "20260101T000000-abcdef";
    f->meta.job_id = "";
    f->meta.end_reason = "SIGTERM";
    f->meta.clock_source = "tsc";
    f->meta.lapse_version = "0.1.0";
    f->meta.pid = 4242;
    f->meta.rank = 3;
    f->meta.world_size = -1;
    f->meta.tsc_hz = 2.5e9;
    f->meta.final = 1;
    f->meta.write_seq = 17;
    f->meta.timeline_dropped = 9;
}

static void test_round_trip(void)
{
    store_file in, out;
    sample_model(&in);
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    char err[256] = "";
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.node_count, 4);
    CHECK_EQ_U64(out.thread_count, 2);
    CHECK_EQ_U64(out.counter_count, 2);
    CHECK_EQ_U64(out.span_count, 2);
    CHECK(!strcmp(out.names[2], "load"));
    CHECK(!strcmp(out.threads[1].name, "worker \"q\""));
    CHECK_EQ_U64(out.threads[1].tid, 102);
    CHECK_EQ_U64(out.nodes[1].calls, 7);
    CHECK_EQ_U64(out.nodes[1].min_ns, 3);
    /* histograms come back as the window of their non-zero buckets */
    CHECK_EQ_U64(out.nodes[1].hist_lo, 3);
    CHECK_EQ_U64(out.nodes[1].hist_n, 98);
    CHECK(out.nodes[1].hist && !memcmp(out.nodes[1].hist, hist_a + 3, 98 * sizeof(uint64_t)));
    CHECK_EQ_U64(out.nodes[3].hist_lo, HIST_BUCKETS - 1);
    CHECK(out.nodes[3].hist && out.nodes[3].hist_n == 1 && out.nodes[3].hist[0] == 1);
    CHECK(out.nodes[0].hist == NULL);
    CHECK_EQ_U64(out.counters[0].sum, (uint64_t)-5);
    CHECK_EQ_U64(out.counters[1].sum, 1ull << 40);
    CHECK_EQ_U64(out.spans[0].end_ns, 5000);
    CHECK(!strcmp(out.meta.host, "node07"));
    CHECK(!strcmp(out.meta.end_reason, "SIGTERM"));
    CHECK_EQ_U64(out.meta.pid, 4242);
    CHECK(out.meta.rank == 3 && out.meta.world_size == -1);
    CHECK(out.meta.tsc_hz == 2.5e9);
    CHECK_EQ_U64(out.meta.write_seq, 17);
    CHECK_EQ_U64(out.meta.timeline_dropped, 9);
    CHECK_EQ_U64(out.meta.format_version, STORE_FORMAT_VERSION);
    store_file_free(&out);

    CHECK(store_decode(buf.data, buf.len, STORE_READ_SKIP_SPANS | STORE_READ_SKIP_HIST, &out, err,
                       sizeof err) == 0);
    CHECK_EQ_U64(out.span_count, 0);
    CHECK(out.nodes[1].hist == NULL);
    CHECK_EQ_U64(out.nodes[1].calls, 7);
    store_file_free(&out);

    /* every prefix is rejected with a message, never a crash */
    int all_rejected = 1, all_explained = 1;
    for (size_t n = 0; n < buf.len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, buf.data, n);
        err[0] = 0;
        if (store_decode(copy, n, 0, &out, err, sizeof err) == 0) {
            all_rejected = 0;
            store_file_free(&out);
        }
        if (!err[0])
            all_explained = 0;
        free(copy);
    }
    CHECK(all_rejected);
    CHECK(all_explained);

    /* a flipped bit anywhere after the magic is caught (checksums) */
    int all_caught = 1;
    for (size_t at = 8; at < buf.len; at += 7) {
        buf.data[at] ^= 0x10;
        if (store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0) {
            /* only padding bytes may flip unnoticed */
            store_file_free(&out);
            if (buf.data[at] != 0x10)
                all_caught = 0;
        }
        buf.data[at] ^= 0x10;
    }
    CHECK(all_caught);

    /* messages say what is wrong */
    CHECK(store_decode(buf.data, buf.len - 1, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "truncated") != NULL);
    uint8_t junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    CHECK(store_decode(junk, sizeof junk, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "not a .lapse file") != NULL);
    bytes_out_free(&buf);
}

static void test_bad_indices_rejected(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    in.nodes[3].parent = 3; /* a node cannot be its own parent */
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "bad parent") != NULL);
    bytes_out_free(&buf);
    sample_model(&in);
    in.nodes[3].parent = 2;
    in.counters[0].node = 99;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
    bytes_out_free(&buf);
    in.counters[0].node = 1;
    bytes_out_free(&buf);

    sample_model(&in);
    in.nodes[3] = (store_node){-1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0}; /* a second root */
    in.counter_count = 1;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
    bytes_out_free(&buf);

    sample_model(&in);
    char *named_first[] = {"x", "step", "load", "bytes"};
    in.names = named_first; /* name 0 must be the empty name */
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "empty name") != NULL);
    bytes_out_free(&buf);
}

/* Appends a section (header, payload, padding) as docs/format.md lays it out. */
static void put_section(bytes_out *out, uint32_t type, uint32_t count, const bytes_out *payload)
{
    size_t at = out->len;
    bytes_put_u32(out, type);
    bytes_put_u32(out, count);
    bytes_put_u64(out, payload->len);
    bytes_put_u32(out, store_crc32(payload->data, payload->len));
    bytes_put_u32(out, 0);
    bytes_patch_u32(out, at + 20, store_crc32(out->data + at, 20));
    bytes_put(out, payload->data, payload->len);
    static const uint8_t pad[8];
    bytes_put(out, pad, (8 - (payload->len & 7)) & 7);
}

/* The file of f with the sections for which keep() is 0 left out and, before the
 * first section of type insert_before, one more: (type, count, payload). */
static void rewrite(const bytes_out *file, int (*keep)(uint32_t type), uint32_t insert_before,
                    uint32_t type, uint32_t count, const bytes_out *payload, bytes_out *out)
{
    bytes_put(out, file->data, 32);
    uint32_t sections = 0;
    size_t pos = 32;
    while (pos + 24 <= file->len) {
        uint32_t t, n;
        uint64_t len;
        memcpy(&t, file->data + pos, 4);
        memcpy(&n, file->data + pos + 4, 4);
        memcpy(&len, file->data + pos + 8, 8);
        size_t whole = 24 + (size_t)len + ((8 - (len & 7)) & 7);
        if (t == insert_before && payload) {
            put_section(out, type, count, payload);
            sections++;
            payload = NULL;
        }
        if (keep(t)) {
            bytes_put(out, file->data + pos, whole);
            sections++;
        }
        pos += whole;
    }
    bytes_patch_u64(out, 16, out->len);
    bytes_patch_u32(out, 24, sections);
    bytes_patch_u32(out, 28, store_crc32(out->data, 28));
}

/* A backend window's record (META window_*) comes back as written; a file without
 * one reads as none ("" and 0). */
static void test_backend_window(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    bytes_out none = {0};
    CHECK(store_encode(&in, &none) == 0);
    CHECK(store_decode(none.data, none.len, 0, &out, err, sizeof err) == 0);
    CHECK(!out.meta.window_backend || !out.meta.window_backend[0]);
    CHECK_EQ_U64(out.meta.window_opened_entry, 0);
    store_file_free(&out);
    in.meta.window_backend = "torch";
    in.meta.window_phase = "iteration";
    in.meta.window_start = 100;
    in.meta.window_stop = 110;
    in.meta.window_entries = 110;
    in.meta.window_opened_entry = 100;
    in.meta.window_closed_entry = 110;
    in.meta.window_open_ns = 5000000;
    in.meta.window_close_ns = 9000000;
    in.meta.window_trace = "/run/host/backend/torch-42.json";
    in.meta.window_error = "";
    in.meta.activity_pauses = 3;
    in.meta.activity_paused_ns = 7000000;
    in.meta.activity_pause_from_ns = 5000000;
    in.meta.activity_pause_to_ns = 19000000;
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK(out.meta.window_backend && strcmp(out.meta.window_backend, "torch") == 0);
    CHECK(out.meta.window_phase && strcmp(out.meta.window_phase, "iteration") == 0);
    CHECK_EQ_U64(out.meta.window_start, 100);
    CHECK_EQ_U64(out.meta.window_stop, 110);
    CHECK_EQ_U64(out.meta.window_entries, 110);
    CHECK_EQ_U64(out.meta.window_opened_entry, 100);
    CHECK_EQ_U64(out.meta.window_closed_entry, 110);
    CHECK_EQ_U64(out.meta.window_open_ns, 5000000);
    CHECK_EQ_U64(out.meta.window_close_ns, 9000000);
    CHECK(out.meta.window_trace && strcmp(out.meta.window_trace, "/run/host/backend/torch-42.json") == 0);
    CHECK_EQ_U64(out.meta.activity_pauses, 3);
    CHECK_EQ_U64(out.meta.activity_paused_ns, 7000000);
    CHECK_EQ_U64(out.meta.activity_pause_from_ns, 5000000);
    CHECK_EQ_U64(out.meta.activity_pause_to_ns, 19000000);
    store_file_free(&out);
    free(buf.data);
    free(none.data);
}

/* GPU time of gpu_time phases: per node, with the entries whose time is missing and
 * the reason; a file without any has no GPU_TIME section; GPU time without a timed
 * entry is rejected. */
static void test_gpu_time(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    bytes_out none = {0};
    CHECK(store_encode(&in, &none) == 0);
    in.nodes[1].gpu_ns = 2500000;
    in.nodes[1].gpu_timed = 3;
    in.nodes[3].gpu_untimed = 2;
    in.meta.gpu_time_missing = "no CUDA context on this thread";
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(buf.len > none.len);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.nodes[1].gpu_ns, 2500000);
    CHECK_EQ_U64(out.nodes[1].gpu_timed, 3);
    CHECK_EQ_U64(out.nodes[1].gpu_untimed, 0);
    CHECK_EQ_U64(out.nodes[3].gpu_untimed, 2);
    CHECK_EQ_U64(out.nodes[2].gpu_timed, 0);
    CHECK(strcmp(out.meta.gpu_time_missing, "no CUDA context on this thread") == 0);
    store_file_free(&out);
    CHECK(store_decode(none.data, none.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.nodes[1].gpu_timed, 0);
    store_file_free(&out);
    in.nodes[1].gpu_timed = 0; /* written: it has a missing entry */
    in.nodes[1].gpu_untimed = 1;
    bytes_out bad = {0};
    CHECK(store_encode(&in, &bad) == 0);
    CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU time but no timed entry") != NULL);
    bytes_out_free(&bad);
    bytes_out_free(&buf);
    bytes_out_free(&none);
}

static int not_gpu_memory(uint32_t type) { return type != STORE_SECTION_GPU_MEMORY; }

/* GPU_MEMORY (section 14): every figure comes back; more resets than readings, or a
 * payload its devices do not fill, is rejected; an older reader, which does not know
 * the type, skips it and reads the rest. */
static void test_gpu_memory(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    store_gpu_memory_device devs[] = {
        {0, "GPU-1111aaaa-0000-0000-0000-000000000000", "NVIDIA H200", 256000000, 268435456},
        {3, "", "", 0, 0}};
    store_gpu_memory g = {12, 1, "", devs, 2};
    in.gpu_memory = &g;
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK(out.gpu_memory != NULL);
    if (out.gpu_memory) {
        const store_gpu_memory *o = out.gpu_memory;
        CHECK_EQ_U64(o->readings, 12);
        CHECK_EQ_U64(o->resets, 1);
        CHECK(!strcmp(o->error, ""));
        CHECK_EQ_U64(o->device_count, 2);
        CHECK_EQ_U64(o->devices[0].index, 0);
        CHECK(!strcmp(o->devices[0].uuid, "GPU-1111aaaa-0000-0000-0000-000000000000"));
        CHECK(!strcmp(o->devices[0].name, "NVIDIA H200"));
        CHECK_EQ_U64(o->devices[0].allocated_peak_bytes, 256000000);
        CHECK_EQ_U64(o->devices[0].reserved_peak_bytes, 268435456);
        CHECK_EQ_U64(o->devices[1].index, 3);
    }
    store_file_free(&out);

    bytes_out bad = {0};
    g.resets = 13;
    CHECK(store_encode(&in, &bad) == 0);
    CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU memory section: more resets than readings") != NULL);
    g.resets = 1;
    bytes_out_free(&bad);

    /* a section where GPU_MEMORY is, one byte short of its devices: rejected */
    bytes_out other = {0}, payload = {0};
    bytes_put_u64(&payload, 1);
    bytes_put_u64(&payload, 0);
    bytes_put_str(&payload, "");
    bytes_put_u32(&payload, 0);
    rewrite(&buf, not_gpu_memory, STORE_SECTION_GPU_MEMORY, STORE_SECTION_GPU_MEMORY, 1, &payload,
            &other);
    CHECK(store_decode(other.data, other.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU memory section is truncated") != NULL);
    bytes_out_free(&other);

    /* an unknown section type where GPU_MEMORY is: skipped, the rest reads */
    rewrite(&buf, not_gpu_memory, STORE_SECTION_GPU_MEMORY, 99, 1, &payload, &other);
    CHECK(store_decode(other.data, other.len, 0, &out, err, sizeof err) == 0);
    CHECK(out.gpu_memory == NULL);
    CHECK_EQ_U64(out.node_count, 4);
    store_file_free(&out);
    bytes_out_free(&other);
    bytes_out_free(&payload);
    bytes_out_free(&buf);
}

static int all_but_ticks(uint32_t type) { return type != STORE_SECTION_CPU_TICKS; }
static int not_gpu(uint32_t type) { return type != STORE_SECTION_GPU_DEVICE; }

/* GPU_DEVICE (section 13): every figure comes back; a phase naming no name, or
 * more utilisation than readings, is rejected; a reader skips the section when it
 * does not know it (an older one: the same file without it reads the same). */
static void test_gpu_device(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    static store_gpu_phase phases[] = {{1, 3, 90}, {0, 1, 10}};
    static store_gpu_device dev = {2, "Fake GPU 2", 4, 3, 210, 3, 90, 2000000, phases, 2, NULL, NULL};
    in.gpu = (store_gpu){50, 1, "nvmlDeviceGetUtilizationRates: Unknown Error (999)", &dev, 1};
    in.meta.missing = "";
    in.meta.absent = "device: libnvidia-ml.so.1: not here";
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.gpu.interval_ms, 50);
    CHECK_EQ_U64(out.gpu.failed_calls, 1);
    CHECK(!strcmp(out.gpu.error, "nvmlDeviceGetUtilizationRates: Unknown Error (999)"));
    CHECK(!strcmp(out.meta.absent, "device: libnvidia-ml.so.1: not here"));
    CHECK_EQ_U64(out.gpu.device_count, 1);
    if (out.gpu.device_count == 1) {
        const store_gpu_device *d = &out.gpu.devices[0];
        CHECK(!strcmp(d->name, "Fake GPU 2"));
        CHECK_EQ_U64(d->index, 2);
        CHECK_EQ_U64(d->ticks, 4);
        CHECK_EQ_U64(d->busy_ticks, 3);
        CHECK_EQ_U64(d->busy_pct_sum, 210);
        CHECK_EQ_U64(d->own_ticks, 3);
        CHECK_EQ_U64(d->own_pct_sum, 90);
        CHECK_EQ_U64(d->mem_peak_bytes, 2000000);
        CHECK_EQ_U64(d->phase_count, 2);
        CHECK_EQ_U64(d->phases[0].name, 1);
        CHECK_EQ_U64(d->phases[0].ticks, 3);
        CHECK_EQ_U64(d->phases[1].own_pct_sum, 10);
    }
    store_file_free(&out);

    bytes_out bad = {0};
    phases[0].name = 4; /* past the names */
    CHECK(store_encode(&in, &bad) == 0);
    CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU device 0 phase 0 is out of bounds") != NULL);
    phases[0].name = 1;
    dev.own_pct_sum = 301; /* more than 100% over 3 readings */
    bad.len = 0;
    CHECK(store_encode(&in, &bad) == 0);
    CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU device 0: more utilisation than ticks") != NULL);
    dev.own_pct_sum = 90;
    bytes_out_free(&bad);

    /* an unknown section type where GPU_DEVICE is: skipped, the rest reads */
    bytes_out other = {0}, payload = {0};
    bytes_put_u64(&payload, 7);
    rewrite(&buf, not_gpu, STORE_SECTION_GPU_DEVICE, 99, 1, &payload, &other);
    CHECK(store_decode(other.data, other.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.gpu.interval_ms, 0);
    CHECK_EQ_U64(out.node_count, 4);
    store_file_free(&out);
    bytes_out_free(&other);
    bytes_out_free(&payload);
    bytes_out_free(&buf);
}

static int not_gpu_ids(uint32_t type) { return type != STORE_SECTION_GPU_DEVICE_IDS; }

/* GPU_DEVICE_IDS (section 16): each device's uuid, or why NVML gave none, comes back
 * on its GPU_DEVICE device; one without an id (NULL) has none; an id naming no
 * device, or with both a uuid and a why, is rejected; an older reader, which does not
 * know the type, skips it and reads section 13 as before. */
static void test_gpu_device_ids(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    store_gpu_device dev[3] = {
        {0, "Fake GPU 0", 4, 4, 200, 4, 80, 1000, NULL, 0,
         "GPU-0000aaaa-1111-2222-3333-444455556666", ""},
        {1, "Fake GPU 1", 2, 2, 20, 2, 10, 2000, NULL, 0, "",
         "nvmlDeviceGetUUID: Unknown Error (999)"},
        {2, "Fake GPU 2", 1, 1, 1, 1, 1, 3000, NULL, 0, NULL, NULL}};
    in.gpu = (store_gpu){50, 0, "", dev, 3};
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.gpu.device_count, 3);
    if (out.gpu.device_count == 3) {
        const store_gpu_device *d = out.gpu.devices;
        CHECK(d[0].uuid && !strcmp(d[0].uuid, "GPU-0000aaaa-1111-2222-3333-444455556666"));
        CHECK(d[0].uuid_error && !strcmp(d[0].uuid_error, ""));
        CHECK(d[1].uuid && !strcmp(d[1].uuid, ""));
        CHECK(d[1].uuid_error && !strcmp(d[1].uuid_error, "nvmlDeviceGetUUID: Unknown Error (999)"));
        CHECK(d[2].uuid == NULL && d[2].uuid_error == NULL);
        CHECK_EQ_U64(d[2].mem_peak_bytes, 3000);
    }
    store_file_free(&out);

    /* an older reader: type 16 unknown (here 99 where it stands), skipped; section 13
     * reads as before, with no ids */
    bytes_out other = {0}, payload = {0};
    bytes_put_u32(&payload, 0);
    bytes_put_u32(&payload, 0);
    bytes_put_str(&payload, "GPU-x");
    bytes_put_str(&payload, "");
    rewrite(&buf, not_gpu_ids, STORE_SECTION_GPU_DEVICE_IDS, 99, 1, &payload, &other);
    CHECK(store_decode(other.data, other.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.gpu.device_count, 3);
    if (out.gpu.device_count == 3) {
        CHECK(out.gpu.devices[0].uuid == NULL && out.gpu.devices[1].uuid == NULL);
        CHECK_EQ_U64(out.gpu.devices[1].mem_peak_bytes, 2000);
    }
    store_file_free(&out);
    bytes_out_free(&other);

    /* an id naming a device the GPU section does not have: rejected */
    bytes_out bad = {0};
    other.len = 0;
    bytes_out_free(&payload);
    bytes_put_u32(&payload, 7);
    bytes_put_u32(&payload, 0);
    bytes_put_str(&payload, "GPU-x");
    bytes_put_str(&payload, "");
    rewrite(&buf, not_gpu_ids, STORE_SECTION_GPU_DEVICE_IDS, STORE_SECTION_GPU_DEVICE_IDS, 1,
            &payload, &other);
    CHECK(store_decode(other.data, other.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU device ids: id 0 names device 7, not in the GPU section") != NULL);

    /* a uuid and a why at once: rejected */
    dev[0].uuid_error = "nvmlDeviceGetUUID: Unknown Error (999)";
    bad = (bytes_out){0};
    CHECK(store_encode(&in, &bad) == 0);
    CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "GPU device ids: device 0 needs a uuid or why not, not both") != NULL);
    bytes_out_free(&bad);
    bytes_out_free(&other);
    bytes_out_free(&payload);
    bytes_out_free(&buf);
}

/* wait%: the ticks per node and the sampler's figures come back; an older writer's
 * CPU_SAMPLES section is read and left out of the figures. */
static void test_cpu_ticks(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    in.nodes[1].cpu_ticks = 400;
    in.nodes[1].cpu_wait_ticks = 300;
    in.nodes[3].cpu_ticks = 7;
    in.meta.cpu_sample_ms = 10;
    in.meta.cpu_ticks = 1234;
    in.meta.cpu_ticks_late = 5;
    in.meta.cpu_sampler_ns = 987654;
    in.meta.cpu_sampler_rt = 1;
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.nodes[1].cpu_ticks, 400);
    CHECK_EQ_U64(out.nodes[1].cpu_wait_ticks, 300);
    CHECK_EQ_U64(out.nodes[3].cpu_ticks, 7);
    CHECK_EQ_U64(out.nodes[3].cpu_wait_ticks, 0);
    CHECK_EQ_U64(out.nodes[2].cpu_ticks, 0);
    CHECK_EQ_U64(out.meta.cpu_ticks, 1234);
    CHECK_EQ_U64(out.meta.cpu_ticks_late, 5);
    CHECK_EQ_U64(out.meta.cpu_sampler_ns, 987654);
    CHECK_EQ_U64(out.meta.cpu_sampler_rt, 1);
    store_file_free(&out);

    /* more waiting ticks than ticks is rejected, with a message */
    in.nodes[1].cpu_wait_ticks = 401;
    bytes_out bad = {0};
    CHECK(store_encode(&in, &bad) == 0);
    CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "more waiting ticks than ticks") != NULL);
    bytes_out_free(&bad);

    /* a file of an older writer: section 8 (u32 node, u64 sampled wall, u64 sampled
     * cpu) instead of CPU_TICKS. It reads; its wait figures are not used. */
    bytes_out old = {0}, payload = {0};
    bytes_put_u32(&payload, 1);
    bytes_put_u64(&payload, 1000000);
    bytes_put_u64(&payload, 400000);
    rewrite(&buf, all_but_ticks, STORE_SECTION_PROCESS_SAMPLES, STORE_SECTION_CPU_SAMPLES, 1,
            &payload, &old);
    err[0] = 0;
    CHECK(store_decode(old.data, old.len, 0, &out, err, sizeof err) == 0);
    if (!err[0]) {
        CHECK_EQ_U64(out.node_count, 4);
        CHECK_EQ_U64(out.nodes[1].cpu_ticks, 0);
        CHECK_EQ_U64(out.nodes[1].calls, 7);
        store_file_free(&out);
    }
    /* ... and its node indices are still checked */
    bytes_out worse = {0};
    payload.len = 0;
    bytes_put_u32(&payload, 99);
    bytes_put_u64(&payload, 1);
    bytes_put_u64(&payload, 1);
    rewrite(&buf, all_but_ticks, STORE_SECTION_PROCESS_SAMPLES, STORE_SECTION_CPU_SAMPLES, 1,
            &payload, &worse);
    CHECK(store_decode(worse.data, worse.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "cpu sample 0 names a node that does not exist") != NULL);
    bytes_out_free(&worse);
    bytes_out_free(&payload);
    bytes_out_free(&old);
    bytes_out_free(&buf);
}

static void test_atomic_file(void)
{
    char dir[] = "/tmp/lapse-test-store-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    CHECK(store_make_dirs(path, 0) == 0);
    snprintf(path, sizeof path, "%s/a/b/c/x.lapse", dir);
    store_file in, out;
    sample_model(&in);
    CHECK(store_write_file(path, &in, 0, err, sizeof err) == 0);
    CHECK(store_read_file(path, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.node_count, 4);
    store_file_free(&out);
    CHECK(access(path, F_OK) == 0);
    /* the temporary is gone: x.lapse is all the directory holds */
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    DIR *d = opendir(path);
    struct dirent *e;
    int entries = 0;
    while (d && (e = readdir(d)))
        entries += e->d_name[0] != '.';
    if (d)
        closedir(d);
    CHECK(entries == 1);
    snprintf(path, sizeof path, "%s/missing.lapse", dir);
    CHECK(store_read_file(path, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "No such file") != NULL);
    snprintf(path, sizeof path, "%s/no/such/dir/x.lapse", dir);
    CHECK(store_write_file(path, &in, 0, err, sizeof err) != 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* No node deeper than its writer's max_depth (64 when absent); no max_depth above
 * what a session may ask for. */
static void test_depth_bound(void)
{
    store_file in, out;
    char err[256];
    bytes_out buf = {0};
    sample_model(&in);
    in.nodes[1].depth = 1; /* as written: fine */
    in.meta.max_depth = 1;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    store_file_free(&out);
    bytes_out_free(&buf);

    /* a chain of 65 under the default bound of 64 */
    static store_node chain[66];
    sample_model(&in);
    chain[0] = (store_node){.parent = -1};
    for (int i = 1; i <= 65; i++)
        chain[i] = (store_node){.parent = i - 1, .name = 1, .depth = (uint32_t)i};
    in.nodes = chain;
    in.node_count = 66;
    in.counter_count = 0;
    in.span_count = 0;
    in.thread_count = 1;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "node 65 is nested 65 deep, deeper than its writer folds (max_depth 64)") != NULL);
    bytes_out_free(&buf);
    in.meta.max_depth = 65;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    store_file_free(&out);
    bytes_out_free(&buf);
    in.meta.max_depth = STORE_MAX_DEPTH + 1;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
    CHECK(strstr(err, "max_depth 4097 is more than a writer can ask for (4096)") != NULL);
    bytes_out_free(&buf);
}

typedef struct seen {
    unsigned decoded, unreadable, same;
    char same_as[64];
} seen;

static int count_image(void *ctx, const store_image *im)
{
    seen *s = ctx;
    if (im->f)
        s->decoded++;
    else if (im->same_as) {
        s->same++;
        snprintf(s->same_as, sizeof s->same_as, "%s", strrchr(im->same_as, '['));
    } else
        s->unreadable++;
    return 0;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
}

/* Reading from disk: the header before anything else, what was read held. */
static void test_read_from_disk(const char *dir)
{
    char path[512], err[256];
    seen s;
    store_held held;

    /* 2 GB of zeros: refused at its magic, 32 bytes read and held */
    snprintf(path, sizeof path, "%s/zeros.lapse", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 2ll << 30) == 0);
    close(fd);
    memset(&s, 0, sizeof s);
    CHECK(store_read_each(path, 0, count_image, &s, &held, err, sizeof err) == -EINVAL);
    CHECK(!strcmp(err, "not a .lapse file (bad magic)"));
    CHECK(s.decoded + s.unreadable + s.same == 0);
    CHECK_EQ_U64(held.len, 32);
    CHECK_EQ_U64(held.size, 2ull << 30);
    store_held_free(&held);
    unlink(path);

    /* a good file: all of it held; cut after its header: the header held */
    store_file in;
    sample_model(&in);
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    snprintf(path, sizeof path, "%s/good.lapse", dir);
    write_bytes(path, buf.data, buf.len);
    memset(&s, 0, sizeof s);
    CHECK(store_read_each(path, STORE_READ_SKIP_SPANS, count_image, &s, &held, err, sizeof err) == 0);
    CHECK(s.decoded == 1 && held.len == buf.len && !memcmp(held.data, buf.data, buf.len));
    store_held_free(&held);
    buf.data[40] ^= 1; /* the first section header's checksum fails */
    write_bytes(path, buf.data, buf.len);
    CHECK(store_read_each(path, 0, count_image, &s, &held, err, sizeof err) == -EINVAL);
    CHECK(!strcmp(err, "section 0 header checksum mismatch"));
    CHECK_EQ_U64(held.len, 32 + 24);
    store_held_free(&held);

    /* a pack whose index names one member three times: read once */
    buf.data[40] ^= 1;
    const uint8_t *images[1] = {buf.data};
    size_t lens[1] = {buf.len};
    bytes_out pack = {0};
    CHECK(store_pack_encode(images, lens, 1, &pack) == 0);
    bytes_out three = {0};
    bytes_put(&three, pack.data, 32);
    for (int i = 0; i < 3; i++) /* three entries, all at the member after a 48-byte index */
        bytes_put(&three, pack.data + 32, 16);
    bytes_put(&three, pack.data + 48, pack.len - 48);
    for (int i = 0; i < 3; i++)
        bytes_patch_u64(&three, 32 + 16 * (size_t)i, 32 + 48);
    bytes_patch_u32(&three, 12, 3);
    bytes_patch_u64(&three, 16, three.len);
    bytes_patch_u32(&three, 24, store_crc32(three.data + 32, 48));
    bytes_patch_u32(&three, 28, store_crc32(three.data, 28));
    store_pack_member *members;
    uint32_t count;
    CHECK(store_pack_index(three.data, three.len, &members, &count, err, sizeof err) == 0);
    CHECK(count == 3 && members[0].overlaps == STORE_PACK_NO_OVERLAP && members[1].overlaps == 0 &&
          members[2].overlaps == 0);
    free(members);
    snprintf(path, sizeof path, "%s/pack.lapse", dir);
    write_bytes(path, three.data, three.len);
    memset(&s, 0, sizeof s);
    CHECK(store_read_each(path, 0, count_image, &s, NULL, err, sizeof err) == 0);
    CHECK(s.decoded == 1 && s.same == 2 && !strcmp(s.same_as, "[0]"));
    bytes_out_free(&three);
    bytes_out_free(&pack);
    bytes_out_free(&buf);
    unlink(path);
    snprintf(path, sizeof path, "%s/good.lapse", dir);
    unlink(path);
}

/* The listing: lstat, links followed only inside, the rest named and not opened. */
static void test_listing(const char *dir)
{
    char run[512], path[600], other[600], err[256];
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(path, sizeof path, "%s/run/h", dir);
    CHECK(store_make_dirs(path, 0) == 0);
    store_file in;
    sample_model(&in);
    snprintf(path, sizeof path, "%s/run/h/a.lapse", dir);
    CHECK(store_write_file(path, &in, 0, err, sizeof err) == 0);
    snprintf(other, sizeof other, "%s/outside.lapse", dir);
    CHECK(store_write_file(other, &in, 0, err, sizeof err) == 0);
    snprintf(path, sizeof path, "%s/run/h/out.lapse", dir);
    CHECK(symlink(other, path) == 0);
    snprintf(path, sizeof path, "%s/run/h/in.lapse", dir);
    CHECK(symlink("a.lapse", path) == 0);
    snprintf(path, sizeof path, "%s/run/h/loop.lapse", dir);
    CHECK(symlink("loop.lapse", path) == 0);
    snprintf(path, sizeof path, "%s/run/h/fifo.lapse", dir);
    CHECK(mkfifo(path, 0600) == 0);
    snprintf(path, sizeof path, "%s/run/d.lapse", dir);
    CHECK(mkdir(path, 0700) == 0);

    store_run_listing l;
    CHECK(store_list_run(run, &l, err, sizeof err) == 0);
    CHECK(l.count == 1);
    const store_attempt *a = &l.attempts[0];
    CHECK(a->file_count == 1); /* a.lapse, and in.lapse leads to it */
    snprintf(path, sizeof path, "%s/run/h/a.lapse", dir);
    CHECK(a->file_count && !strcmp(a->files[0], path));
    CHECK(a->skipped_count == 4);
    const char *want[][2] = {{"out.lapse", "not read: a symbolic link that leaves the run directory"},
                             {"loop.lapse", "not read: a symbolic link loop"},
                             {"fifo.lapse", "not read: a FIFO, not a regular file"},
                             {"d.lapse", "not read: a directory, not a .lapse file"}};
    for (size_t w = 0; w < 4; w++) {
        int found = 0;
        for (size_t k = 0; k < a->skipped_count; k++) {
            const char *base = strrchr(a->skipped[k].path, '/');
            found |= base && !strcmp(base + 1, want[w][0]) &&
                     !strncmp(a->skipped[k].why, want[w][1], strlen(want[w][1]));
        }
        if (!found)
            fprintf(stderr, "test_listing: no skipped %s (%s)\n", want[w][0], want[w][1]);
        CHECK(found);
    }
    store_run_listing_free(&l);
}

/* CRC-32 bit by bit, as the polynomial says: what the fast paths must agree with. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* Every length up to past several 64-byte folds, at every alignment, and updates
 * split anywhere; then a long run. */
static void test_crc32(void)
{
    CHECK_EQ_U64(store_crc32("123456789", 9), 0xCBF43926u);
    CHECK_EQ_U64(store_crc32_update(store_crc32("1234", 4), "56789", 5), 0xCBF43926u);
    size_t big = 1u << 20;
    uint8_t *buf = malloc(big + 16);
    CHECK(buf != NULL);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < big + 16; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    int bad = 0;
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n <= 600; n++)
            bad += store_crc32(buf + off, n) != crc_bitwise(0, buf + off, n);
    for (size_t cut = 0; cut <= 300; cut += 7) {
        uint32_t first = store_crc32(buf + 3, cut);
        bad += store_crc32_update(first, buf + 3 + cut, 500 - cut) != crc_bitwise(0, buf + 3, 500);
    }
    bad += store_crc32(buf + 5, big) != crc_bitwise(0, buf + 5, big);
    CHECK(bad == 0);
    free(buf);
}

/* The children a process forked (section CHILDREN) come back in order; a file with
 * none has no section; a section whose length does not match its count, or with a pid
 * that is no process, is rejected. */
static void test_children(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    bytes_out none = {0};
    CHECK(store_encode(&in, &none) == 0);
    CHECK(store_decode(none.data, none.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.child_count, 0);
    CHECK(out.children == NULL);
    CHECK_EQ_U64(out.children_unrecorded, 0);
    store_file_free(&out);

    store_child kids[3] = {{4242, 1000}, {4243, 2000}, {77, 3000}};
    in.children = kids;
    in.child_count = 3;
    in.children_unrecorded = 5;
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK_EQ_U64(buf.len, none.len + 24 + 8 + 3 * 16);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.child_count, 3);
    CHECK_EQ_U64(out.children_unrecorded, 5);
    for (int i = 0; i < 3 && out.children; i++) {
        CHECK_EQ_U64((uint64_t)out.children[i].pid, (uint64_t)kids[i].pid);
        CHECK_EQ_U64(out.children[i].fork_mono_ns, kids[i].fork_mono_ns);
    }
    store_file_free(&out);

    /* one child claimed, 8 + 9 bytes: rejected; a pid of 0: rejected */
    for (int k = 0; k < 2; k++) {
        bytes_out bad = {0}, payload = {0};
        bytes_put(&bad, none.data, none.len);
        bytes_put_u64(&payload, 0);
        bytes_put_u64(&payload, k ? 0 : 4242);
        bytes_put_u64(&payload, 1000);
        if (!k)
            bytes_put(&payload, (const uint8_t *)"x", 1);
        put_section(&bad, STORE_SECTION_CHILDREN, 1, &payload);
        uint32_t sections;
        memcpy(&sections, bad.data + 24, 4);
        bytes_patch_u64(&bad, 16, bad.len);
        bytes_patch_u32(&bad, 24, sections + 1);
        bytes_patch_u32(&bad, 28, store_crc32(bad.data, 28));
        err[0] = 0;
        CHECK(store_decode(bad.data, bad.len, 0, &out, err, sizeof err) != 0);
        CHECK(strstr(err, k ? "child 0 has pid 0" : "1 children do not fill its 25 bytes") != NULL);
        bytes_out_free(&bad);
        bytes_out_free(&payload);
    }
    bytes_out_free(&buf);
    bytes_out_free(&none);
}

/* Signals and waits (section CAUSALITY) come back in order, with the count dropped;
 * a file that has them keeps its spans under STORE_READ_SKIP_SPANS, one without does
 * not; a record of an unknown kind, a signal that lasts, a wait that ends before it
 * begins, or a thread or name out of range is rejected. */
static void test_causality(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    bytes_out none = {0};
    CHECK(store_encode(&in, &none) == 0);
    CHECK(store_decode(none.data, none.len, STORE_READ_SKIP_SPANS, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.causal_count, 0);
    CHECK_EQ_U64(out.span_count, 0); /* skipped */
    store_file_free(&out);

    store_causal rec[3] = {{0, 1, STORE_CAUSAL_SIGNAL, 1500, 1500},
                           {1, 2, STORE_CAUSAL_WAIT, 1200, 1600},
                           {1, 1, STORE_CAUSAL_WAIT, 1700, 1700}};
    in.causal = rec;
    in.causal_count = 3;
    in.causal_dropped = 4;
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK_EQ_U64(buf.len, none.len + 24 + 8 + 3 * 32);
    CHECK(store_decode(buf.data, buf.len, STORE_READ_SKIP_SPANS, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.causal_count, 3);
    CHECK_EQ_U64(out.causal_dropped, 4);
    CHECK_EQ_U64(out.span_count, 2); /* kept: the critical path needs them */
    for (int i = 0; i < 3 && out.causal; i++) {
        CHECK_EQ_U64(out.causal[i].thread, rec[i].thread);
        CHECK_EQ_U64(out.causal[i].name, rec[i].name);
        CHECK_EQ_U64(out.causal[i].kind, rec[i].kind);
        CHECK_EQ_U64(out.causal[i].begin_ns, rec[i].begin_ns);
        CHECK_EQ_U64(out.causal[i].end_ns, rec[i].end_ns);
    }
    store_file_free(&out);
    bytes_out_free(&buf);

    /* only dropped ones: the section, empty */
    in.causal_count = 0;
    CHECK(store_encode(&in, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK_EQ_U64(out.causal_dropped, 4);
    store_file_free(&out);
    bytes_out_free(&buf);

    static const store_causal bad[] = {{0, 1, 3, 1500, 1500},
                                       {0, 1, STORE_CAUSAL_SIGNAL, 1500, 1501},
                                       {0, 1, STORE_CAUSAL_WAIT, 1600, 1500},
                                       {2, 1, STORE_CAUSAL_WAIT, 1500, 1600},
                                       {0, 4, STORE_CAUSAL_WAIT, 1500, 1600},
                                       {0, 0, STORE_CAUSAL_SIGNAL, 1500, 1500}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        in.causal = (store_causal *)&bad[k];
        in.causal_count = 1;
        CHECK(store_encode(&in, &buf) == 0);
        err[0] = 0;
        CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) != 0);
        CHECK(strstr(err, "causal record 0 is malformed") != NULL);
        bytes_out_free(&buf);
    }
    bytes_out_free(&none);
}

/* bytes of `none` with one more section (type, count, payload) at its end */
static void append_section(bytes_out *out, const bytes_out *none, uint32_t type, uint32_t count,
                           const bytes_out *payload)
{
    bytes_put(out, none->data, none->len);
    put_section(out, type, count, payload);
    uint32_t sections;
    memcpy(&sections, out->data + 24, 4);
    bytes_patch_u64(out, 16, out->len);
    bytes_patch_u32(out, 24, sections + 1);
    bytes_patch_u32(out, 28, store_crc32(out->data, 28));
}

static void test_gpu_activity(void)
{
    store_file in, out;
    char err[256];
    sample_model(&in);
    bytes_out none = {0};
    CHECK(store_encode(&in, &none) == 0);
    CHECK(store_decode(none.data, none.len, 0, &out, err, sizeof err) == 0);
    CHECK(out.activity == NULL); /* absent: not asked for */
    store_file_free(&out);

    char *names[] = {"", "gemm", "relu"};
    store_gpu_record recs[] = {
        {STORE_GPU_KERNEL, 0, 0, 7, 1, 1, 1000, 3000, 0, 900},
        {STORE_GPU_MEMCPY, 1, 1, 8, 0, 3, 4000, 4100, 1u << 20, 3990},
        {STORE_GPU_KERNEL, 0, 0, 7, 2, STORE_GPU_NO_NODE, 5000, 5001, 0, 0},
    };
    store_gpu_activity g = {STORE_GPU_COLLECTED, "", 6, names, 3, recs, 3};
    in.activity = &g;
    bytes_out buf = {0};
    CHECK(store_encode(&in, &buf) == 0);
    CHECK_EQ_U64(buf.len, none.len + 24 + 4 + 4 + 8 + 4 + (4 + 4 + 4 + 4 + 4) + 3 * 56);
    CHECK(store_decode(buf.data, buf.len, 0, &out, err, sizeof err) == 0);
    CHECK(out.activity != NULL);
    if (out.activity) {
        CHECK_EQ_U64(out.activity->state, STORE_GPU_COLLECTED);
        CHECK_EQ_U64(out.activity->dropped, 6);
        CHECK_EQ_U64(out.activity->name_count, 3);
        CHECK(strcmp(out.activity->names[2], "relu") == 0);
        CHECK_EQ_U64(out.activity->count, 3);
        CHECK(out.activity->count == 3 && memcmp(out.activity->records, recs, sizeof recs) == 0);
    }
    store_file_free(&out);
    bytes_out_free(&buf);

    /* a node that does not exist, an end before the start, a bad kind, a short payload:
     * each rejected with its line */
    struct {
        store_gpu_record r;
        const char *why;
    } bad[] = {
        {{STORE_GPU_KERNEL, 0, 0, 7, 1, 4, 1000, 3000, 0, 0}, "names a name or node that does not exist"},
        {{STORE_GPU_KERNEL, 0, 0, 7, 3, 1, 1000, 3000, 0, 0}, "names a name or node that does not exist"},
        {{STORE_GPU_KERNEL, 0, 0, 7, 1, 1, 3000, 1000, 0, 0}, "ends before it starts"},
        {{4, 0, 0, 7, 1, 1, 1000, 3000, 0, 0}, "has kind 4"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        store_gpu_activity b = {STORE_GPU_COLLECTED, "", 0, names, 3, &bad[k].r, 1};
        in.activity = &b;
        bytes_out enc = {0};
        CHECK(store_encode(&in, &enc) == 0);
        err[0] = 0;
        CHECK(store_decode(enc.data, enc.len, 0, &out, err, sizeof err) != 0);
        CHECK(strstr(err, bad[k].why) != NULL);
        bytes_out_free(&enc);
    }
    in.activity = NULL;

    /* sections a newer writer adds (19, 99: sections to come) are skipped */
    static const uint32_t unknown[] = {19, 99};
    for (size_t u = 0; u < sizeof unknown / sizeof unknown[0]; u++) {
        uint32_t type = unknown[u];
        bytes_out with = {0}, payload = {0};
        bytes_put_u64(&payload, 0xfeedu);
        append_section(&with, &none, type, 1, &payload);
        err[0] = 0;
        CHECK(store_decode(with.data, with.len, 0, &out, err, sizeof err) == 0);
        CHECK(out.activity == NULL);
        CHECK_EQ_U64(out.node_count, 4);
        store_file_free(&out);
        bytes_out_free(&with);
        bytes_out_free(&payload);
    }
    bytes_out_free(&none);
}

int main(void)
{
    test_crc32();
    test_round_trip();
    test_bad_indices_rejected();
    test_cpu_ticks();
    test_gpu_device();
    test_gpu_device_ids();
    test_gpu_memory();
    test_gpu_time();
    test_backend_window();
    test_children();
    test_gpu_activity();
    test_causality();
    test_atomic_file();
    test_depth_bound();
    char dir[] = "/tmp/lapse-test-read-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    test_read_from_disk(dir);
    test_listing(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return check_done("test_store");
}
