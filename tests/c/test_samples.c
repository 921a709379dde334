/* Python stack samples: the set (interning, aggregation, checks), its writers
 * (collapsed, speedscope parsed back by python3's json, flame graph SVG parsed back
 * by python3's xml, pstats by python3's pstats) and the SAMPLES section of .lapse files (round trip, strict
 * decoding, truncation at every length). */
#include "../../src/analyze/flame_top.h"
#include "../../src/analyze/run_model.h"
#include "../../src/analyze/run_stats.h"
#include "../../src/analyze/sample_stats.h"
#include "../../src/render/report_render.h"
#include "store/sample_set.h"
#include "store/samples_file.h"
#include "render/samples_write.h"
#include "render/samples_labels.h"
#include "tools/export_samples.h"
#include "../../src/store/codec.h"
#include "../../src/store/file_io.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/lapse-test-samples-XXXXXX";

static uint32_t str(sample_set *s, const char *v) { return sample_set_string(s, v, strlen(v)); }

/* A set with two threads of one process:
 *   MainThread (tid 11): main;work;leaf x3 (3 ms), main;work x1 (1 ms), in span "step/load"
 *   worker (tid 12):     run;leaf x2 (4 ms), idle */
static sample_set *make_set(void)
{
    sample_set *s = sample_set_new();
    uint32_t app = str(s, "app.py"), lib = str(s, "lib/util.py");
    uint32_t f_main = sample_set_frame(s, str(s, "main"), app, 30);
    uint32_t f_work = sample_set_frame(s, str(s, "Worker.work"), app, 12);
    uint32_t f_leaf = sample_set_frame(s, str(s, "leaf"), lib, 5);
    uint32_t f_run = sample_set_frame(s, str(s, "run"), app, 40);
    sample_key k1 = {100, 11, str(s, "MainThread"), str(s, "step/load"),
                     SAMPLE_RUNNING | SAMPLE_GIL};
    sample_key k2 = {100, 12, str(s, "worker"), 0, SAMPLE_IDLE};
    uint32_t a[] = {f_main, f_work, f_leaf}, b[] = {f_run, f_leaf};
    for (int i = 0; i < 3; i++)
        sample_set_add(s, &k1, a, 3, 1000000);
    sample_set_add(s, &k1, a, 2, 1000000);
    sample_set_add(s, &k2, b, 2, 2000000);
    sample_set_add(s, &k2, b, 2, 2000000);
    store_samples *d = sample_set_data(s);
    sample_set_set_mode(s, "cpu");
    d->rate_asked_hz = 1000;
    d->rate_achieved_hz = 998.5;
    d->samples = 6;
    d->late_samples = 1;
    d->read_errors = 2;
    d->start_real_ns = 1700000000000000000ull;
    d->end_real_ns = d->start_real_ns + 6000000;
    d->duration_ns = 6000000;
    sample_set_process(s, 100, 1, str(s, "python app.py --fast"), str(s, "3.12.1"));
    return s;
}

static void test_set(void)
{
    sample_set *s = sample_set_new();
    CHECK(s != NULL);
    CHECK_U64(sample_set_string(s, "", 0), 0);
    uint32_t a = str(s, "alpha"), b = str(s, "beta");
    CHECK(a != b && a != 0 && b != 0);
    CHECK_U64(str(s, "alpha"), a);
    CHECK_U64(sample_set_string(s, "alphabet", 5), a); /* len bytes only */
    uint32_t f1 = sample_set_frame(s, a, b, 3), f2 = sample_set_frame(s, a, b, 4);
    CHECK(f1 != f2);
    CHECK_U64(sample_set_frame(s, a, b, 3), f1);
    CHECK_U64(sample_set_frame(s, 999, b, 3), SAMPLE_NONE);
    sample_key k = {1, 2, a, 0, SAMPLE_RUNNING};
    uint32_t st[] = {f1, f2};
    CHECK(sample_set_add(s, &k, st, 2, 10) == 0);
    CHECK(sample_set_add(s, &k, st, 2, 20) == 0);
    CHECK(sample_set_add(s, &k, st, 1, 5) == 0); /* a different stack: shorter */
    k.state = SAMPLE_IDLE;
    CHECK(sample_set_add(s, &k, st, 2, 7) == 0); /* a different key */
    const store_samples *v = sample_set_view(s);
    CHECK_U64(v->stack_count, 3);
    CHECK_U64(v->stacks[0].count, 2);
    CHECK_U64(v->stacks[0].weight_ns, 30);
    CHECK_U64(sample_set_total_count(s), 4);
    CHECK_U64(sample_set_total_weight_ns(s), 42);
    /* bad input is refused, not stored */
    uint32_t bad[] = {f1, 77};
    CHECK(sample_set_add(s, &k, bad, 2, 1) == -EINVAL);
    k.state = 64;
    CHECK(sample_set_add(s, &k, st, 2, 1) == -EINVAL);
    k.state = 0;
    k.span_path = 12345;
    CHECK(sample_set_add(s, &k, st, 2, 1) == -EINVAL);
    CHECK_U64(v->stack_count, 3);
    /* many distinct strings and stacks: the tables grow and keep every id */
    uint32_t ids[2000];
    char buf[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(buf, sizeof buf, "fn%d", i);
        ids[i] = sample_set_frame(s, str(s, buf), b, (uint32_t)i);
    }
    for (int i = 0; i < 2000; i++) {
        snprintf(buf, sizeof buf, "fn%d", i);
        CHECK(sample_set_frame(s, str(s, buf), b, (uint32_t)i) == ids[i]);
    }
    k = (sample_key){1, 2, 0, 0, 0};
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < 1999; i++)
            sample_set_add(s, &k, &ids[i], 2, 1);
    CHECK_U64(v->stack_count, 3 + 1999);
    CHECK_U64(sample_set_total_count(s), 4 + 2 * 1999);
    sample_set_free(s);
}

/* Runs python3 on a script with the path as argv[1]; returns what it printed. */
static char *python(const char *script, const char *path)
{
    char sp[512];
    snprintf(sp, sizeof sp, "%s/check.py", tmpdir);
    FILE *f = fopen(sp, "w");
    fputs(script, f);
    fclose(f);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "python3 %s %s 2>&1", sp, path);
    FILE *p = popen(cmd, "r");
    static char out[8192];
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    if (p)
        pclose(p);
    return out;
}

static char *write_to_string(int which, sample_set *s, unsigned flags)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc = which == 0   ? samples_write_collapsed(s, m, flags)
             : which == 1 ? samples_write_speedscope(s, m, "test")
                          : samples_write_flamegraph(s, m, "t <&> \"x\"");
    CHECK(rc == 0);
    fclose(m);
    return buf;
}

static void test_collapsed(void)
{
    sample_set *s = make_set();
    char *out = write_to_string(0, s, SAMPLES_COLLAPSED_NO_HEADER);
    CHECK_STR(out, "MainThread (tid 11);main (app.py:30);Worker.work (app.py:12) 1\n"
                   "MainThread (tid 11);main (app.py:30);Worker.work (app.py:12);leaf "
                   "(lib/util.py:5) 3\n"
                   "worker (tid 12);run (app.py:40);leaf (lib/util.py:5) 2\n");
    free(out);
    out = write_to_string(0, s, SAMPLES_COLLAPSED_WEIGHT_US | SAMPLES_COLLAPSED_SPANS);
    CHECK(!strncmp(out, "# lapse collapsed stacks", 24));
    CHECK(strstr(out, "# values: microseconds") != NULL);
    CHECK(strstr(out, "MainThread (tid 11);[span step/load];main (app.py:30);Worker.work "
                      "(app.py:12);leaf (lib/util.py:5) 3000\n") != NULL);
    CHECK(strstr(out, "worker (tid 12);run (app.py:40);leaf (lib/util.py:5) 4000\n") != NULL);
    free(out);
    /* a ';' or newline in a name cannot split a line; two processes get a process frame;
     * identical lines (differing only by state) are merged */
    uint32_t f = sample_set_frame(s, str(s, "odd;name\nx"), 0, 0);
    sample_key k = {200, 21, 0, 0, SAMPLE_RUNNING};
    sample_set_add(s, &k, &f, 1, 1);
    k.state = SAMPLE_IDLE;
    sample_set_add(s, &k, &f, 1, 1);
    out = write_to_string(0, s, SAMPLES_COLLAPSED_NO_HEADER);
    CHECK(strstr(out, "process 200;tid 21;odd:name?x 2\n") != NULL);
    CHECK(strstr(out, "process 100 (python app.py --fast);worker (tid 12);run") != NULL);
    int lines = 0;
    for (char *p = out; *p; p++)
        lines += *p == '\n';
    CHECK_U64(lines, 4);
    free(out);
    sample_set_free(s);
}

static void test_speedscope(void)
{
    sample_set *s = make_set();
    char path[512];
    snprintf(path, sizeof path, "%s/p.speedscope.json", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(samples_write_speedscope(s, f, "test") == 0);
    fclose(f);
    const char *script =
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "assert d['$schema'] == 'https://www.speedscope.app/file-format-schema.json'\n"
        "fr = d['shared']['frames']\n"
        "out = []\n"
        "for p in d['profiles']:\n"
        "    assert p['type'] == 'sampled' and p['unit'] == 'microseconds'\n"
        "    assert len(p['samples']) == len(p['weights'])\n"
        "    assert abs(sum(p['weights']) - p['endValue']) < 1e-6\n"
        "    for st in p['samples']:\n"
        "        out.append('%s|%s|%g' % (p['name'], ';'.join('%s:%s:%s' % (fr[i]['name'],"
        " fr[i].get('file'), fr[i].get('line')) for i in st), p['weights'][p['samples'].index(st)]))\n"
        "print('\\n'.join(sorted(out)))\n";
    char *got = python(script, path);
    CHECK_STR(got, "MainThread (tid 11)|main:app.py:30;Worker.work:app.py:12;leaf:lib/util.py:5|3000\n"
                   "MainThread (tid 11)|main:app.py:30;Worker.work:app.py:12|1000\n"
                   "worker (tid 12)|run:app.py:40;leaf:lib/util.py:5|4000\n");
    sample_set_free(s);
}

/* pstats: one entry per function (frames of other lines merged, the lowest line
 * kept), recursion counted once per sample, stacks without a frame left out, names
 * that are not UTF-8 made readable; python3's pstats reads it. */
static void test_pstats(void)
{
    sample_set *s = make_set();
    uint32_t app = str(s, "app.py"), lib = str(s, "lib/util.py");
    uint32_t f_main = sample_set_frame(s, str(s, "main"), app, 30);
    uint32_t f_work = sample_set_frame(s, str(s, "Worker.work"), app, 12);
    uint32_t f_leaf7 = sample_set_frame(s, str(s, "leaf"), lib, 7);
    uint32_t f_odd = sample_set_frame(s, str(s, "bad\xff"), app, 50);
    sample_key k = {100, 11, str(s, "MainThread"), 0, SAMPLE_RUNNING};
    uint32_t rec[] = {f_main, f_work, f_work, f_leaf7}, odd[] = {f_odd};
    CHECK(sample_set_add(s, &k, rec, 4, 1000000) == 0);
    CHECK(sample_set_add(s, &k, odd, 1, 500000) == 0);
    CHECK(sample_set_add(s, &k, NULL, 0, 5000000) == 0); /* no Python frame */
    char path[512];
    snprintf(path, sizeof path, "%s/p.prof", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(samples_write_pstats(s, f) == 0);
    fclose(f);
    const char *script =
        "import pstats, sys\n"
        "st = pstats.Stats(sys.argv[1])\n"
        "r = lambda v: tuple(round(x, 6) for x in v)\n"
        "for k, v in sorted(st.stats.items()):\n"
        "    print(k, r(v[:4]), sorted((c, r(w)) for c, w in v[4].items()))\n"
        "print(round(st.total_tt, 6), st.total_calls)\n";
    char *got = python(script, path);
    CHECK_STR(got,
              "('app.py', 12, 'Worker.work') (5, 5, 0.001, 0.005) [(('app.py', 12, 'Worker.work'), "
              "(1, 1, 0.0, 0.001)), (('app.py', 30, 'main'), (5, 5, 0.001, 0.005))]\n"
              "('app.py', 30, 'main') (5, 5, 0.0, 0.005) []\n"
              "('app.py', 40, 'run') (2, 2, 0.0, 0.004) []\n"
              "('app.py', 50, 'bad?') (1, 1, 0.0005, 0.0005) []\n"
              "('lib/util.py', 5, 'leaf') (6, 6, 0.008, 0.008) [(('app.py', 12, 'Worker.work'), "
              "(4, 4, 0.004, 0.004)), (('app.py', 40, 'run'), (2, 2, 0.004, 0.004))]\n"
              "0.0095 19\n");
    sample_set_free(s);
    /* nothing but stacks without a frame: nothing to write */
    s = sample_set_new();
    sample_key k0 = {1, 2, 0, 0, SAMPLE_RUNNING};
    CHECK(sample_set_add(s, &k0, NULL, 0, 1000) == 0);
    f = fopen(path, "w");
    CHECK(samples_write_pstats(s, f) == -ENODATA);
    CHECK(ftell(f) == 0);
    fclose(f);
    sample_set_free(s);
}

static const char *svg_check =
    "import sys, xml.etree.ElementTree as ET\n"
    "ns = {'s': 'http://www.w3.org/2000/svg'}\n"
    "root = ET.parse(sys.argv[1]).getroot()\n"
    "assert root.tag == '{http://www.w3.org/2000/svg}svg'\n"
    "script = root.find('s:script', ns).text\n"
    "for fn in ('function zoom', 'function search', 'function reset'):\n"
    "    assert fn in script, fn\n"
    "assert 'href' not in open(sys.argv[1]).read()  # self-contained\n"
    "frames = root.find(\"s:g[@id='frames']\", ns)\n"
    "rows = []\n"
    "for g in frames.findall('s:g', ns):\n"
    "    r = g.find('s:rect', ns)\n"
    "    rows.append((int(g.get('data-d')), g.get('data-label'), float(g.get('data-w')),"
    " float(r.get('width'))))\n"
    "rows.sort()\n"
    "title = root.findall('s:text', ns)[0].text\n"
    "print(title)\n"
    "for d, l, w, px in rows: print(d, l, int(w), round(px))\n";

static void test_flamegraph(void)
{
    sample_set *s = make_set();
    char path[512];
    snprintf(path, sizeof path, "%s/p.svg", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(samples_write_flamegraph(s, f, "t <&> \"x\"") == 0);
    fclose(f);
    /* widths: 1180 px for 8 ms; depth 0 all, 1 threads, 2.. frames */
    char *got = python(svg_check, path);
    CHECK_STR(got, "t <&> \"x\"\n"
                   "0 all 8000000 1180\n"
                   "1 MainThread (tid 11) 4000000 590\n"
                   "1 worker (tid 12) 4000000 590\n"
                   "2 main (app.py:30) 4000000 590\n"
                   "2 run (app.py:40) 4000000 590\n"
                   "3 Worker.work (app.py:12) 4000000 590\n"
                   "3 leaf (lib/util.py:5) 4000000 590\n"
                   "4 leaf (lib/util.py:5) 3000000 442\n");
    /* names that would break XML, and bytes that are not UTF-8, stay well-formed */
    uint32_t bad = sample_set_frame(s, str(s, "]]><x a=\"&amp;\x01\xff\xc3("), 0, 0);
    sample_key k = {300, 31, str(s, "<t>"), 0, 0};
    sample_set_add(s, &k, &bad, 1, 1000);
    f = fopen(path, "w");
    CHECK(samples_write_flamegraph(s, f, "\xfe title") == 0);
    fclose(f);
    got = python("import sys, xml.etree.ElementTree as ET\n"
                 "root = ET.parse(sys.argv[1]).getroot()\n"
                 "print(sum(1 for e in root.iter() if e.get('data-label')))\n",
                 path);
    CHECK_STR(got, "12\n"); /* all, 2 processes, 3 threads, 6 frames */
    sample_set_free(s);
}

/* The flame graph's script, run by node on a small DOM (tests/c/flamegraph_check.js):
 * a click zooms on a frame (its ancestors faded, full width; its subtree scaled; the
 * rest hidden), a search highlights and sums what matches, reset restores. */
static void test_flamegraph_script(void)
{
    if (system("node --version >/dev/null 2>&1") != 0) {
        printf("test_samples: node not found, flame graph script not run\n");
        return;
    }
    sample_set *s = make_set();
    char path[512], js[1024];
    snprintf(path, sizeof path, "%s/script.svg", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(samples_write_flamegraph(s, f, "demo") == 0);
    fclose(f);
    snprintf(js, sizeof js, "%s", __FILE__);
    char *slash = strrchr(js, '/');
    snprintf(slash ? slash + 1 : js, sizeof js - (size_t)(slash ? slash + 1 - js : 0),
             "flamegraph_check.js");
    char script[2048];
    snprintf(script, sizeof script,
             "import json, subprocess, sys, xml.etree.ElementTree as ET\n"
             "def conv(e): return {'tag': e.tag.split('}')[-1], 'attrs': dict(e.attrib),"
             " 'text': e.text or '', 'children': [conv(c) for c in e]}\n"
             "json.dump(conv(ET.parse(sys.argv[1]).getroot()), open(sys.argv[1] + '.json', 'w'))\n"
             "r = subprocess.run(['node', '%s', sys.argv[1] + '.json'], capture_output=True,"
             " text=True)\n"
             "print(r.stdout + r.stderr, end='')\n",
             js);
    char *got = python(script, path);
    CHECK_STR(got,
              "init: all@10+1180 | MainThread (tid 11)@10+590 | main (app.py:30)@10+590 | "
              "Worker.work (app.py:12)@10+590 | leaf (lib/util.py:5)@10+443 | worker (tid "
              "12)@600+590 | run (app.py:40)@600+590 | leaf (lib/util.py:5)@600+590\n"
              "zoom: all@10+1180~ | MainThread (tid 11)@10+1180~ | main (app.py:30)@10+1180~ | "
              "Worker.work (app.py:12)@10+1180 | leaf (lib/util.py:5)@10+885\n"
              "unzoom button: 1\n"
              "search: all@10+1180~ | MainThread (tid 11)@10+1180~ | main "
              "(app.py:30)@10+1180~ | Worker.work (app.py:12)@10+1180 | leaf "
              "(lib/util.py:5)@10+885*\n"
              "matched: Matched: 87.5%\n"
              "reset: all@10+1180 | MainThread (tid 11)@10+590 | main (app.py:30)@10+590 | "
              "Worker.work (app.py:12)@10+590 | leaf (lib/util.py:5)@10+443 | worker (tid "
              "12)@600+590 | run (app.py:40)@600+590 | leaf (lib/util.py:5)@600+590\n"
              "matched: \" \" search button: Search\n");
    sample_set_free(s);
}

static void check_same(const store_samples *a, const store_samples *b)
{
    CHECK_STR(a->mode, b->mode);
    CHECK(a->rate_asked_hz == b->rate_asked_hz && a->rate_achieved_hz == b->rate_achieved_hz);
    CHECK_U64(a->samples, b->samples);
    CHECK_U64(a->late_samples, b->late_samples);
    CHECK_U64(a->read_errors, b->read_errors);
    CHECK_U64(a->start_real_ns, b->start_real_ns);
    CHECK_U64(a->duration_ns, b->duration_ns);
    CHECK_U64(a->string_count, b->string_count);
    CHECK_U64(a->frame_count, b->frame_count);
    CHECK_U64(a->process_count, b->process_count);
    CHECK_U64(a->stack_count, b->stack_count);
    if (a->string_count != b->string_count || a->stack_count != b->stack_count)
        return;
    for (uint32_t i = 0; i < a->string_count; i++)
        CHECK_STR(a->strings[i], b->strings[i]);
    for (uint32_t i = 0; i < a->stack_count; i++) {
        const store_sample_stack *x = &a->stacks[i], *y = &b->stacks[i];
        CHECK(x->pid == y->pid && x->tid == y->tid && x->thread_name == y->thread_name &&
              x->span_path == y->span_path && x->state == y->state && x->depth == y->depth &&
              x->count == y->count && x->weight_ns == y->weight_ns);
        for (uint32_t d = 0; d < x->depth && d < y->depth; d++)
            CHECK(a->frame_ids[x->first + d] == b->frame_ids[y->first + d]);
    }
}

static void test_lapse_file(void)
{
    sample_set *s = make_set();
    char path[512], err[256] = "";
    snprintf(path, sizeof path, "%s/python-100.lapse", tmpdir);
    samples_file_meta meta = {.pid = 100, .ppid = 1, .host = "hostA"};
    CHECK(samples_save_lapse(s, &meta, path, 0, err, sizeof err) == 0);
    store_file f;
    CHECK(store_read_file(path, 0, &f, err, sizeof err) == 0);
    CHECK(f.samples != NULL);
    if (f.samples) {
        check_same(sample_set_view(s), f.samples);
        sample_set *t = sample_set_from_store(f.samples);
        CHECK(t != NULL);
        if (t)
            check_same(sample_set_view(s), sample_set_view(t));
        sample_set_free(t);
    }
    CHECK_STR(f.meta.role, "python");
    CHECK_STR(f.meta.host, "hostA");
    CHECK_U64(f.meta.pid, 100);
    CHECK_U64(f.meta.final, 1);
    CHECK_U64(f.meta.start_real_ns, 1700000000000000000ull);
    CHECK_U64(f.meta.wall_ns, 6000000);
    store_file_free(&f);

    /* a file without samples reads with samples NULL */
    store_file plain;
    memset(&plain, 0, sizeof plain);
    static char *names[] = {""};
    plain.names = names;
    plain.name_count = 1;
    bytes_out buf = {0};
    CHECK(store_encode(&plain, &buf) == 0);
    CHECK(store_decode(buf.data, buf.len, 0, &f, err, sizeof err) == 0);
    CHECK(f.samples == NULL);
    store_file_free(&f);
    bytes_out_free(&buf);

    /* truncated at every length and flipped at every byte of the samples section:
     * one clear error, never a crash (checksums catch flips; see the fuzz target
     * for content that passes them) */
    plain.samples = sample_set_data(s);
    CHECK(store_encode(&plain, &buf) == 0);
    size_t fails = 0;
    for (size_t n = 0; n < buf.len; n++) {
        err[0] = 0;
        int rc = store_decode(buf.data, n, 0, &f, err, sizeof err);
        fails += rc < 0 && err[0] && !strchr(err, '\n');
    }
    CHECK_U64(fails, buf.len);
    bytes_out_free(&buf);
    sample_set_free(s);
}

/* Encodes a file whose samples section holds s as it is (no checks on the way). */
static int decode_samples(const store_samples *s, char *err, size_t errlen)
{
    store_file plain, f;
    memset(&plain, 0, sizeof plain);
    static char *names[] = {""};
    plain.names = names;
    plain.name_count = 1;
    plain.samples = (store_samples *)s;
    bytes_out buf = {0};
    CHECK(store_encode(&plain, &buf) == 0);
    int rc = store_decode(buf.data, buf.len, 0, &f, err, errlen);
    if (rc == 0)
        store_file_free(&f);
    bytes_out_free(&buf);
    return rc;
}

static void test_strict_decoding(void)
{
    static char *strings[] = {"", "f", "file.py"};
    store_sample_frame frames[] = {{1, 2, 3}};
    uint32_t ids[] = {0, 0};
    store_sample_stack stacks[] = {{1, 2, 1, 0, SAMPLE_RUNNING, 2, 0, 1, 100}};
    store_sample_process procs[] = {{1, 0, 1, 0}};
    store_samples s = {"wall", 100, 99, 1, 0, 0, 0, 0, 0, 0, strings, 3, procs, 1,
                       frames, 1, ids, 2, stacks, 1};
    char err[256];
    CHECK(decode_samples(&s, err, sizeof err) == 0);
    ids[1] = 1;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "names a frame that does not exist") != NULL);
    ids[1] = 0;
    stacks[0].state = 8;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "sampled stack 0 is malformed") != NULL);
    stacks[0].state = 0;
    stacks[0].count = 0;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    stacks[0].count = 1;
    stacks[0].thread_name = 3;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    stacks[0].thread_name = 1;
    frames[0].file = 3;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "sampled frame 0 names a string") != NULL);
    frames[0].file = 2;
    procs[0].command = 9;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    procs[0].command = 1;
    strings[0] = "x";
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "must start with the empty string") != NULL);
    strings[0] = "";
    s.rate_achieved_hz = -1;
    CHECK(decode_samples(&s, err, sizeof err) == -EINVAL);
    s.rate_achieved_hz = 99;
    CHECK(decode_samples(&s, err, sizeof err) == 0);
}

static void test_stats(void)
{
    /* recursion counts a function once per stack in its total; self is the innermost */
    sample_set *s = sample_set_new();
    uint32_t file = str(s, "r.py");
    uint32_t f = sample_set_frame(s, str(s, "f"), file, 1);
    uint32_t f2 = sample_set_frame(s, str(s, "f"), file, 2); /* same function, other line */
    uint32_t g = sample_set_frame(s, str(s, "g"), file, 9);
    sample_key k = {1, 1, 0, 0, SAMPLE_RUNNING};
    uint32_t a[] = {f, g, f2}, b[] = {g};
    sample_set_add(s, &k, a, 3, 300);
    sample_set_add(s, &k, b, 1, 100);
    ss_group grp;
    CHECK(ss_group_build(sample_set_view(s), SS_ANY, SS_ANY, SS_ANY_SPAN, &grp) == 0);
    CHECK_U64(grp.func_count, 2);
    CHECK_U64(grp.count, 2);
    CHECK_U64(grp.weight_ns, 400);
    const ss_func *top = &grp.funcs[grp.by_self[0]];
    CHECK_STR(sample_set_view(s)->strings[top->function], "f");
    CHECK_U64(top->self_ns, 300);
    CHECK_U64(top->total_ns, 300);
    CHECK_U64(top->total_count, 1);
    const ss_func *gt = &grp.funcs[grp.by_total[0]];
    CHECK_STR(sample_set_view(s)->strings[gt->function], "g");
    CHECK(ss_total_share(&grp, gt) == 1.0);
    CHECK(ss_self_share(&grp, gt) == 0.25);
    ss_group_free(&grp);
    /* spans: a path counts for itself and its ancestors; "ab" is not under "a" */
    sample_key ka = {1, 1, 0, str(s, "a"), 0}, kab = {1, 1, 0, str(s, "a/b"), 0},
               kx = {1, 1, 0, str(s, "ab"), 0};
    sample_set_add(s, &kab, b, 1, 100);
    sample_set_add(s, &ka, b, 1, 50);
    sample_set_add(s, &kx, a, 3, 30);
    ss_span_total *tot;
    uint32_t nt;
    CHECK(ss_span_totals(sample_set_view(s), &tot, &nt) == 0);
    CHECK_U64(nt, 3);
    if (nt == 3) {
        CHECK_STR(tot[0].path, "a");
        CHECK_U64(tot[0].weight, 150);
        CHECK_U64(tot[0].count, 2);
        CHECK_STR(tot[1].path, "a/b");
        CHECK_U64(tot[1].weight, 100);
        CHECK_STR(tot[2].path, "ab");
        CHECK_U64(tot[2].weight, 30);
    }
    ss_span_totals_free(tot, nt);
    CHECK(ss_group_build_under(sample_set_view(s), "a", &grp) == 0);
    CHECK_U64(grp.count, 2);
    CHECK_U64(grp.weight_ns, 150);
    CHECK_U64(grp.func_count, 1); /* g only */
    ss_group_free(&grp);
    /* a filter that matches nothing: an empty group */
    CHECK(ss_group_build(sample_set_view(s), 2, SS_ANY, SS_ANY_SPAN, &grp) == 0);
    CHECK_U64(grp.count, 0);
    CHECK_U64(grp.func_count, 0);
    ss_group_free(&grp);
    sample_set_free(s);
}

static char *report_of(const char *path, int json)
{
    run_model m;
    report_model r;
    char err[256];
    CHECK(run_model_load(path, NULL, &m, err, sizeof err) == 0);
    report_inputs in = {.top = 10};
    CHECK(report_model_build(&m, &in, &r) == 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_options o = {0};
    CHECK((json ? report_write_json(f, &r, &o) : report_write_text(f, &r, &o)) == 0);
    fclose(f);
    report_model_free(&r);
    run_model_free(&m);
    return buf;
}

static void test_report(void)
{
    sample_set *s = make_set();
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/report.lapse", tmpdir);
    samples_file_meta meta = {.pid = 100, .ppid = 1, .host = "hostA"};
    CHECK(samples_save_lapse(s, &meta, path, 0, err, sizeof err) == 0);
    char *text = report_of(path, 0);
    CHECK(strstr(text, "PYTHON SAMPLES") != NULL);
    CHECK(strstr(text, "estimates from sampling") != NULL);
    CHECK(strstr(text, "mode cpu, asked 1,000.0 Hz, achieved 998.5 Hz, 6 sampling passes") !=
          NULL);
    CHECK(strstr(text, "1 late sample (16.7%), 2 read errors (33.3% of passes)") != NULL);
    CHECK(strstr(text, "process 100  python app.py --fast  (CPython 3.12.1)   6 samples "
                       "standing for ~8.0ms") != NULL);
    /* leaf: 3 ms in MainThread and 4 ms in worker of 8 ms */
    CHECK(strstr(text, "87.5%     7.0ms   87.5%     7.0ms         5  leaf (lib/util.py)\n") !=
          NULL);
    CHECK(strstr(text, "thread MainThread (tid 11)   4 samples standing for ~4.0ms") != NULL);
    CHECK(strstr(text, "FUNCTIONS INSIDE SPANS") != NULL);
    CHECK(strstr(text, "step/load   4 samples standing for ~4.0ms") != NULL);
    CHECK(strstr(text, "no spans recorded") == NULL); /* a samples-only role has no span block */
    CHECK(strstr(text, "  sampling         python pid 100 on hostA: Python stack sampling fell "
                       "short: 1 of 6 samples late (16.7%); 2 read errors (33.3% of passes: stacks "
                       "unreadable or torn, left out): its shares rest on fewer samples, and lean toward "
                       "callers") != NULL);
    free(text);

    char *json = report_of(path, 1);
    char jpath[512];
    snprintf(jpath, sizeof jpath, "%s/report.json", tmpdir);
    FILE *f = fopen(jpath, "w");
    fputs(json, f);
    fclose(f);
    free(json);
    char *got = python(
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "ps = d['python_samples'][0]\n"
        "p = ps['processes'][0]\n"
        "print(ps['estimated'], ps['mode'], ps['late_samples'], ps['read_errors'], p['pid'],"
        " p['python_version'], '%.4f' % ps['read_error_share'], ps['lost_bias_callers'])\n"
        "print(' '.join('%s:%.3f' % (x['function'], x['self_share']) for x in p['top_self']))\n"
        "print(' '.join('%s:%.3f' % (x['function'], x['total_share']) for x in p['top_total']))\n"
        "print([(t['tid'], t['name'], t['samples']) for t in p['threads']])\n"
        "print([(x['path'], x['samples'], x['top_self'][0]['function']) for x in ps['spans']])\n"
        "print([(c['kind'], c['pid']) for c in d['caveats']])\n",
        jpath);
    CHECK_STR(got, "True cpu 1 2 100 3.12.1 0.3333 True\n"
                   "leaf:0.875 Worker.work:0.125\n"
                   "leaf:0.875 main:0.500 Worker.work:0.500 run:0.500\n"
                   "[(11, 'MainThread', 4), (12, 'worker', 2)]\n"
                   "[('step', 4, 'leaf'), ('step/load', 4, 'leaf')]\n"
                   "[('sampling', 100)]\n");
    /* read errors in 1% of passes or fewer: named, but no lean toward callers; over 1%: both */
    sample_set_data(s)->late_samples = 0;
    sample_set_data(s)->samples = 1000;
    sample_set_data(s)->read_errors = 10;
    CHECK(samples_save_lapse(s, &meta, path, 0, err, sizeof err) == 0);
    text = report_of(path, 0);
    CHECK(strstr(text, "10 read errors (1.0% of passes: stacks unreadable or torn, left out): its shares "
                       "rest on fewer samples\n") != NULL);
    CHECK(strstr(text, "lean toward callers") == NULL);
    free(text);
    sample_set_data(s)->read_errors = 11;
    CHECK(samples_save_lapse(s, &meta, path, 0, err, sizeof err) == 0);
    text = report_of(path, 0);
    CHECK(strstr(text, "11 read errors (1.1% of passes: stacks unreadable or torn, left out): its shares "
                       "rest on fewer samples, and lean toward callers: a short call is the likeliest to be "
                       "torn, so the samples lost are its own") != NULL);
    free(text);
    sample_set_data(s)->samples = 6;
    /* sampling on schedule and no read error: no caveat; a slow rate alone is one */
    sample_set_data(s)->late_samples = 0;
    sample_set_data(s)->read_errors = 0;
    CHECK(samples_save_lapse(s, &meta, path, 0, err, sizeof err) == 0);
    text = report_of(path, 0);
    CHECK(strstr(text, "CAVEATS none") != NULL);
    free(text);
    sample_set_data(s)->rate_achieved_hz = 899;
    CHECK(samples_save_lapse(s, &meta, path, 0, err, sizeof err) == 0);
    text = report_of(path, 0);
    CHECK(strstr(text, "fell short: achieved 899.0 Hz of 1,000.0 Hz asked: its shares") != NULL);
    free(text);
    sample_set_free(s);

    /* a file without samples: no block, and an empty array in JSON */
    sample_set *e = sample_set_new();
    store_file plain;
    memset(&plain, 0, sizeof plain);
    static char *names[] = {""};
    plain.names = names;
    plain.name_count = 1;
    plain.meta.role = "main";
    snprintf(path, sizeof path, "%s/plain.lapse", tmpdir);
    CHECK(store_write_file(path, &plain, 0, err, sizeof err) == 0);
    text = report_of(path, 0);
    CHECK(strstr(text, "PYTHON SAMPLES") == NULL);
    CHECK(strstr(text, "sampling ") == NULL);
    free(text);
    json = report_of(path, 1);
    CHECK(strstr(json, "\"python_samples\": []") != NULL);
    free(json);
    sample_set_free(e);
}

/* Two files of one run (two processes) merged into one output. */
static void test_export(void)
{
    char dir[512], path[600], err[256];
    snprintf(dir, sizeof dir, "%s/run1", tmpdir);
    snprintf(path, sizeof path, "%s/hostA", dir);
    CHECK(store_make_dirs(path, 0) == 0);
    sample_set *a = make_set(), *b = make_set();
    /* b: another process, slower and with other figures */
    store_samples *bd = sample_set_data(b);
    for (uint32_t i = 0; i < bd->stack_count; i++)
        bd->stacks[i].pid = 200;
    bd->rate_achieved_hz = 500;
    bd->samples = 4;
    bd->late_samples = 3;
    samples_file_meta ma = {.pid = 100, .ppid = 1, .host = "hostA", .run_id = "run1"};
    samples_file_meta mb = {.pid = 200, .ppid = 1, .host = "hostA", .run_id = "run1"};
    snprintf(path, sizeof path, "%s/hostA/python-100.lapse", dir);
    CHECK(samples_save_lapse(a, &ma, path, 0, err, sizeof err) == 0);
    snprintf(path, sizeof path, "%s/hostA/python-200.lapse", dir);
    CHECK(samples_save_lapse(b, &mb, path, 0, err, sizeof err) == 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    CHECK(samples_export(dir, "collapsed", "t", out, err, sizeof err) == 0);
    fclose(out);
    CHECK(strstr(buf, "achieved 500 Hz, 4 late samples, 4 read errors") != NULL);
    CHECK(strstr(buf, "\nprocess 100 (python app.py --fast);worker (tid 12);run (app.py:40);leaf "
                      "(lib/util.py:5) 2\n") != NULL);
    CHECK(strstr(buf, "\nprocess 200;MainThread (tid 11);main (app.py:30);Worker.work "
                      "(app.py:12);leaf (lib/util.py:5) 3\n") != NULL);
    free(buf);
    /* merging a set into itself doubles every count */
    sample_set *c = make_set();
    CHECK(sample_set_merge(c, sample_set_view(a)) == 0);
    CHECK_U64(sample_set_total_count(c), 2 * sample_set_total_count(a));
    CHECK_U64(sample_set_view(c)->stack_count, sample_set_view(a)->stack_count);
    CHECK_U64(sample_set_view(c)->samples, 12);
    sample_set_free(c);
    /* errors: one line each */
    out = fopen("/dev/null", "w");
    CHECK(samples_export(dir, "svg", "t", out, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "unknown samples format 'svg'") != NULL);
    snprintf(path, sizeof path, "%s/plain.lapse", tmpdir);
    CHECK(samples_export(path, "collapsed", "t", out, err, sizeof err) == -ENOENT);
    CHECK(strstr(err, "holds no Python stack samples") != NULL);
    snprintf(path, sizeof path, "%s/none", tmpdir);
    CHECK(samples_export(path, "collapsed", "t", out, err, sizeof err) < 0);
    CHECK(err[0] && !strchr(err, '\n'));
    fclose(out);
    sample_set_free(a);
    sample_set_free(b);
}

/* Samples added to a run's own file: its spans stay, the samples join (twice: add up). */
static void test_add_to_file(void)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/own.lapse", tmpdir);
    store_file own;
    memset(&own, 0, sizeof own);
    static char *names[] = {"", "train"};
    static store_thread threads[] = {{100, "MainThread"}};
    static store_node nodes[2];
    nodes[0] = (store_node){.parent = -1, .child_ns = 5000};
    nodes[1] = (store_node){.parent = 0, .name = 1, .depth = 1, .calls = 1, .total_ns = 5000,
                            .min_ns = 5000, .max_ns = 5000};
    own.meta.role = "main";
    own.meta.pid = 100;
    own.meta.final = 1;
    own.names = names;
    own.name_count = 2;
    own.threads = threads;
    own.thread_count = 1;
    own.nodes = nodes;
    own.node_count = 2;
    CHECK(store_write_file(path, &own, 0, err, sizeof err) == 0);
    sample_set *s = make_set();
    CHECK(samples_add_to_lapse(s, path, -1, err, sizeof err) == 0);
    CHECK(samples_add_to_lapse(s, path, -1, err, sizeof err) == 0);
    store_file f;
    CHECK(store_read_file(path, 0, &f, err, sizeof err) == 0);
    CHECK_U64(f.node_count, 2);
    CHECK_STR(f.names[1], "train");
    CHECK(f.samples != NULL);
    if (f.samples) {
        uint64_t n = 0;
        for (uint32_t i = 0; i < f.samples->stack_count; i++)
            n += f.samples->stacks[i].count;
        CHECK_U64(n, 2 * sample_set_total_count(s));
        CHECK_U64(f.samples->samples, 12);
    }
    store_file_free(&f);
    snprintf(path, sizeof path, "%s/missing.lapse", tmpdir);
    CHECK(samples_add_to_lapse(s, path, -1, err, sizeof err) < 0);
    CHECK(err[0] && !strchr(err, '\n'));
    sample_set_free(s);
}

/* lapse top's figures: per function, since the start and since the last update,
 * shares of the interval's time; a stack deeper than 512 frames keeps its leaf's self
 * time (top's own table lost it). */
static void test_interval(void)
{
    sample_set *s = sample_set_new();
    uint32_t app = str(s, "app.py");
    uint32_t f_main = sample_set_frame(s, str(s, "main"), app, 1);
    uint32_t f_hot = sample_set_frame(s, str(s, "hot"), app, 2);
    uint32_t f_rec = sample_set_frame(s, str(s, "rec"), app, 3);
    sample_key k = {7, 7, 0, 0, SAMPLE_RUNNING};
    uint32_t a[] = {f_main, f_hot};
    sample_set_add(s, &k, a, 2, 3000000); /* 3 ms in main/hot */
    ss_interval iv;
    memset(&iv, 0, sizeof iv);
    CHECK(ss_interval_update(&iv, sample_set_view(s)) == 0);
    CHECK_U64(iv.kept_delta_ns, 3000000);
    CHECK(iv.count == 2 && iv.rows[0].function == sample_set_view(s)->frames[f_hot].function);
    CHECK(iv.rows[0].self_share == 1.0 && iv.rows[0].total_share == 1.0);
    CHECK(iv.rows[1].self_share == 0.0 && iv.rows[1].total_share == 1.0);

    /* the next interval: 1 ms in a recursion 600 deep under main */
    uint32_t deep[601];
    deep[0] = f_main;
    for (int i = 1; i <= 600; i++)
        deep[i] = f_rec;
    sample_set_add(s, &k, deep, 601, 1000000);
    CHECK(ss_interval_update(&iv, sample_set_view(s)) == 0);
    CHECK_U64(iv.kept_delta_ns, 1000000);
    const ss_interval_row *first = &iv.rows[0];
    CHECK(first->function == sample_set_view(s)->frames[f_rec].function);
    CHECK_U64(first->self_delta_ns, 1000000);     /* the leaf of the deep stack */
    CHECK_U64(first->total_delta_ns, 1000000);    /* once, however deep */
    CHECK(first->self_share == 1.0);
    int seen_hot = 0;
    for (uint32_t i = 0; i < iv.count; i++) {
        const ss_interval_row *r = &iv.rows[i];
        if (r->function == sample_set_view(s)->frames[f_hot].function) {
            seen_hot = 1;
            CHECK_U64(r->self_ns, 3000000);      /* since the start */
            CHECK_U64(r->self_delta_ns, 0);      /* nothing new */
            CHECK(r->self_share == 0.0);
        }
        if (r->function == sample_set_view(s)->frames[f_main].function)
            CHECK_U64(r->total_ns, 4000000);
    }
    CHECK(seen_hot);
    ss_interval_free(&iv);
    sample_set_free(s);
}

/* The flame's top (lapse view's page without script): make_set's stacks merged from
 * the root by "function (file)", shares of the time, the heaviest kid first, frames of
 * less than 1% counted, not shown, and no deeper than FLAME_TOP_DEPTH. */
static void test_flame_top(void)
{
    sample_set *s = make_set();
    flame_top t;
    CHECK(flame_top_init(&t) == 0);
    CHECK(flame_top_add(&t, sample_set_view(s)) == 0);
    flame_top_finish(&t);
    const flame_node *n = t.nodes;
    CHECK_STR(n[0].label, "all");
    CHECK_U64(n[0].weight_ns, 8000000);
    CHECK_U64(n[0].samples, 6);
    const flame_node *a = &n[n[0].first_kid], *b = &n[a->next];
    CHECK_STR(a->label, "main (app.py)"); /* 4 ms */
    CHECK_STR(b->label, "run (app.py)");  /* 4 ms: ties by label */
    CHECK(b->next == UINT32_MAX);
    CHECK(a->share == 0.5 && b->share == 0.5);
    const flame_node *w = &n[a->first_kid];
    CHECK_STR(w->label, "Worker.work (app.py)");
    CHECK_U64(w->samples, 4);
    CHECK_STR(n[w->first_kid].label, "leaf (lib/util.py)");
    CHECK_U64(n[w->first_kid].weight_ns, 3000000);
    flame_top_free(&t);
    sample_set_free(s);

    /* 200 light frames under one root frame: under 1% each, all counted, none shown;
     * a stack 20 deep is kept to FLAME_TOP_DEPTH levels */
    s = sample_set_new();
    uint32_t file = str(s, "m.py"), root = sample_set_frame(s, str(s, "root"), file, 1);
    sample_key k = {1, 1, 0, 0, SAMPLE_RUNNING};
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        uint32_t st[2] = {root, sample_set_frame(s, str(s, name), file, 2)};
        sample_set_add(s, &k, st, 2, 1000);
    }
    uint32_t deep[20];
    for (int d = 0; d < 20; d++) {
        char name[16];
        snprintf(name, sizeof name, "d%d", d);
        deep[d] = sample_set_frame(s, str(s, name), file, 3);
    }
    sample_set_add(s, &k, deep, 20, 800000);
    CHECK(flame_top_init(&t) == 0);
    CHECK(flame_top_add(&t, sample_set_view(s)) == 0);
    flame_top_finish(&t);
    n = t.nodes;
    CHECK_U64(n[0].weight_ns, 1000000);
    const flame_node *d0 = &n[n[0].first_kid], *r = &n[d0->next];
    CHECK_STR(d0->label, "d0 (m.py)"); /* 80% */
    CHECK_STR(r->label, "root (m.py)"); /* 20% */
    CHECK(r->first_kid == UINT32_MAX);
    CHECK_U64(r->hidden, 200);
    unsigned levels = 0;
    for (const flame_node *x = d0; x; x = x->first_kid == UINT32_MAX ? NULL : &n[x->first_kid])
        levels++;
    CHECK_U64(levels, FLAME_TOP_DEPTH - 1); /* frames below the root */
    flame_top_free(&t);
    sample_set_free(s);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_set();
    test_collapsed();
    test_speedscope();
    test_pstats();
    test_flamegraph();
    test_flamegraph_script();
    test_lapse_file();
    test_strict_decoding();
    test_stats();
    test_report();
    test_export();
    test_add_to_file();
    test_interval();
    test_flame_top();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_done("test_samples");
}
