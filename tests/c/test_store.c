/* The .lapse codec: round trip, checksums, truncation at every length, bounds. */
#include "../../src/core/hist.h"
#include "../../src/store/codec.h"
#include "../../src/store/crc32.h"
#include "../../src/store/file_io.h"
#include "check.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
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
    nodes[0] = (store_node){-1, 0, 0, 0, 0, 0, 900, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0};
    nodes[1] = (store_node){0, 0, 1, 1, 7, 900, 100, 3, 500, 0, hist_a, 0, 0, 0, 0, 0, 0};
    nodes[2] = (store_node){-1, 1, 0, 0, 0, 0, 40, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0};
    nodes[3] = (store_node){2, 1, 2, 1, 1, 40, 0, 40, 40, 2, hist_b, 0, 0, 0, 0, 0, 0};
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
    in.nodes[3] = (store_node){-1, 1, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0, 0, 0}; /* a second root */
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

int main(void)
{
    CHECK_EQ_U64(store_crc32("123456789", 9), 0xCBF43926u);
    test_round_trip();
    test_bad_indices_rejected();
    test_atomic_file();
    return check_done("test_store");
}
