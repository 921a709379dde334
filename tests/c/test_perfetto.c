/* Chrome trace JSON export: the renderer on a small two-host run written with
 * store_write_file (slices, clock alignment, escaping, pid and tid collisions,
 * dropped spans, a large streamed file), then `lapse export` itself when the
 * binary sits next to this test (exit codes, unreadable files, JSON validity). */
#include "render/perfetto.h"
#include "store/sample_set.h"
#include "store/codec.h"
#include "store/file_io.h"

#include "check.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a minimal JSON syntax checker (RFC 8259 grammar, no semantics) ---- */

typedef struct jp {
    const char *p, *end;
    int depth;
} jp;

static void ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static int value(jp *j);

static int string(jp *j)
{
    if (j->p >= j->end || *j->p != '"')
        return 0;
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p;
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            j->p++;
            if (j->p >= j->end)
                return 0;
            if (*j->p == 'u') {
                for (int i = 0; i < 4; i++)
                    if (++j->p >= j->end || !isxdigit((unsigned char)*j->p))
                        return 0;
            } else if (!strchr("\"\\/bfnrt", *j->p)) {
                return 0;
            }
        }
        j->p++;
    }
    if (j->p >= j->end)
        return 0;
    j->p++;
    return 1;
}

static int number(jp *j)
{
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || !isdigit((unsigned char)*j->p))
        return 0;
    if (*j->p == '0' && j->p + 1 < j->end && isdigit((unsigned char)j->p[1]))
        return 0;
    while (j->p < j->end && isdigit((unsigned char)*j->p))
        j->p++;
    if (j->p < j->end && *j->p == '.') {
        j->p++;
        if (j->p >= j->end || !isdigit((unsigned char)*j->p))
            return 0;
        while (j->p < j->end && isdigit((unsigned char)*j->p))
            j->p++;
    }
    return j->p > s;
}

static int value(jp *j)
{
    ws(j);
    if (j->p >= j->end || ++j->depth > 64)
        return 0;
    int ok = 1;
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';
        int obj = *j->p == '{';
        j->p++;
        ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
        } else {
            for (;;) {
                ws(j);
                if (obj) {
                    if (!string(j))
                        return 0;
                    ws(j);
                    if (j->p >= j->end || *j->p++ != ':')
                        return 0;
                }
                if (!value(j))
                    return 0;
                ws(j);
                if (j->p >= j->end)
                    return 0;
                if (*j->p == ',') {
                    j->p++;
                    continue;
                }
                if (*j->p++ != close)
                    return 0;
                break;
            }
        }
    } else if (*j->p == '"') {
        ok = string(j);
    } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
        j->p += 4;
    } else if (!strncmp(j->p, "false", 5)) {
        j->p += 5;
    } else {
        ok = number(j);
    }
    j->depth--;
    return ok;
}

static int json_valid(const char *s, size_t n)
{
    jp j = {s, s + n, 0};
    if (!value(&j))
        return 0;
    ws(&j);
    return j.p == j.end;
}

/* Occurrences of needle in hay. (Not strstr in a loop: under ASan each strstr
 * measures the whole rest of the haystack, which is quadratic on a large trace.) */
static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (*p == needle[0] && !strncmp(p, needle, k)) {
            n++;
            p += k - 1;
        }
    return n;
}

/* Whether needle is in the event that at points into (before its closing brace). */
static int event_has(const char *at, const char *needle)
{
    const char *end = strchr(at, '}');
    const char *found = strstr(at, needle);
    return end && found && found < end;
}

/* ---- building files ---- */

typedef struct builder {
    store_file f;
    char *names[16];
    store_thread threads[4];
    store_node nodes[8];
    store_span *spans;
} builder;

static void build(builder *b, const char *host, int64_t pid, int64_t rank,
                  const char *const *names, uint32_t name_count, const store_thread *threads,
                  uint32_t thread_count)
{
    memset(b, 0, sizeof *b);
    store_meta *m = &b->f.meta;
    m->format_version = STORE_FORMAT_VERSION;
    m->lapse_version = "0.1.0";
    m->host = (char *)host;
    m->role = "trainer";
    m->run_id = "run1";
    m->job_id = "";
    m->end_reason = "exit";
    m->clock_source = "tsc";
    m->pid = pid;
    m->ppid = 1;
    m->rank = rank;
    m->world_size = 2;
    m->final = 1;
    m->max_spans = 100000;
    for (uint32_t i = 0; i < name_count; i++)
        b->names[i] = (char *)names[i];
    b->f.names = b->names;
    b->f.name_count = name_count;
    for (uint32_t i = 0; i < thread_count; i++) {
        b->threads[i] = threads[i];
        /* a root node per thread: parent -1, depth 0, name 0 */
        b->nodes[i] = (store_node){.parent = -1, .thread = i};
    }
    b->f.threads = b->threads;
    b->f.thread_count = thread_count;
    b->f.nodes = b->nodes;
    b->f.node_count = thread_count;
}

static void write_or_die(const char *path, const store_file *f)
{
    char err[512];
    if (store_write_file(path, f, 0, err, sizeof err) != 0) {
        fprintf(stderr, "store_write_file %s: %s\n", path, err);
        exit(1);
    }
}

static void read_or_die(const char *path, store_file *f)
{
    char err[512];
    if (store_read_file(path, STORE_READ_SKIP_HIST, f, err, sizeof err) != 0) {
        fprintf(stderr, "store_read_file %s: %s\n", path, err);
        exit(1);
    }
}

static char dir[PATH_MAX];

/* Writes <dir>/run/hostA/trainer-100.lapse and <dir>/run/hostB/trainer-100.lapse. */
static void write_run(char *path_a, char *path_b)
{
    char sub[PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/run/hostA", dir);
    CHECK(store_make_dirs(sub, 0) == 0);
    snprintf(sub, sizeof sub, "%s/run/hostB", dir);
    CHECK(store_make_dirs(sub, 0) == 0);

    /* host A: its spans start the run (common time 1.7e18 + 1e9 ns) */
    static const char *const names_a[] = {"", "step", "fwd \"q\"\\", "bwd"};
    static const store_thread threads_a[] = {{100, "main"}, {101, "loader"}};
    builder a;
    build(&a, "hostA", 100, 0, names_a, 4, threads_a, 2);
    a.f.meta.anchor_real_ns = 1700000000000000000ull;
    a.f.meta.anchor_mono_ns = 1000000000ull;
    store_span spans_a[] = {
        {0, 2, 2, 2000001000ull, 2000004001ull}, /* fwd, inside step */
        {0, 1, 1, 2000000000ull, 2000010500ull}, /* step */
        {1, 3, 1, 2000005000ull, 2000006000ull}, /* bwd on the loader thread */
    };
    a.f.spans = spans_a;
    a.f.span_count = 3;
    snprintf(path_a, PATH_MAX + 64, "%s/run/hostA/trainer-100.lapse", dir);
    write_or_die(path_a, &a.f);

    /* host B: the same pid, another monotonic clock, a reused tid, a name that is
     * not UTF-8, and a full timeline */
    static const char *const names_b[] = {"", "b\xff\xfe", "io"};
    static const store_thread threads_b[] = {{100, ""}, {100, "io"}};
    builder b;
    build(&b, "hostB", 100, 1, names_b, 3, threads_b, 2);
    b.f.meta.anchor_real_ns = 1700000000000000500ull;
    b.f.meta.anchor_mono_ns = 7000000000ull;
    b.f.meta.timeline_dropped = 7;
    b.f.meta.max_spans = 2;
    store_span spans_b[] = {
        {0, 1, 1, 8000000000ull, 10000000123ull}, /* common 1.7e18 + 1e9 + 500 */
        {1, 2, 1, 8000001000ull, 8000001000ull},  /* zero length */
    };
    b.f.spans = spans_b;
    b.f.span_count = 2;
    snprintf(path_b, PATH_MAX + 64, "%s/run/hostB/trainer-100.lapse", dir);
    write_or_die(path_b, &b.f);
}

/* Renders files (read back from disk) into a string the caller frees. */
static char *render(const char *const *paths, int n, size_t *len)
{
    store_file f[4];
    uint64_t base = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        read_or_die(paths[i], &f[i]);
        uint64_t first;
        if (perfetto_first_ns(&f[i], &first) == 0 && first < base)
            base = first;
    }
    char *text = NULL;
    FILE *mem = open_memstream(&text, len);
    perfetto_writer *w = perfetto_open(mem);
    CHECK(w != NULL);
    for (int i = 0; i < n; i++) {
        perfetto_file_stats st;
        CHECK(perfetto_add_file(w, &f[i], base, &st) == 0);
        store_file_free(&f[i]);
    }
    CHECK(perfetto_finish(w) == 0);
    fclose(mem);
    return text;
}


static void test_render(const char *path_a, const char *path_b)
{
    const char *paths[] = {path_a, path_b};
    size_t len = 0;
    char *t = render(paths, 2, &len);
    CHECK(t && len == strlen(t));
    if (!t)
        return;
    CHECK(json_valid(t, len));
    CHECK(!strncmp(t, "{", 1) && strstr(t, "\"traceEvents\":[") != NULL);
    CHECK(strstr(t, "\"displayTimeUnit\":\"ns\"") != NULL);
    CHECK_EQ_U64(count_of(t, "\"ph\":\"X\""), 5);
    CHECK_EQ_U64(count_of(t, "\"ph\":\"M\",\"name\":\"process_name\""), 2);
    CHECK_EQ_U64(count_of(t, "\"ph\":\"M\",\"name\":\"thread_name\""), 4);
    CHECK_EQ_U64(count_of(t, "\"ph\":\"i\""), 1);

    /* host A: the run starts at its first span */
    CHECK(strstr(t, "{\"ph\":\"X\",\"name\":\"step\",\"pid\":100,\"tid\":100,\"ts\":0.000,"
                    "\"dur\":10.500}") != NULL);
    CHECK(strstr(t, "{\"ph\":\"X\",\"name\":\"fwd \\\"q\\\"\\\\\",\"pid\":100,\"tid\":100,"
                    "\"ts\":1.000,\"dur\":3.001}") != NULL);
    CHECK(strstr(t, "{\"ph\":\"X\",\"name\":\"bwd\",\"pid\":100,\"tid\":101,\"ts\":5.000,"
                    "\"dur\":1.000}") != NULL);
    CHECK(strstr(t, "\"name\":\"process_name\",\"pid\":100,\"tid\":100,"
                    "\"args\":{\"name\":\"trainer 100@hostA\"}") != NULL);
    CHECK(strstr(t, "\"name\":\"process_sort_index\",\"pid\":100,\"tid\":100,"
                    "\"args\":{\"sort_index\":0}") != NULL);
    CHECK(strstr(t, "\"name\":\"thread_name\",\"pid\":100,\"tid\":101,"
                    "\"args\":{\"name\":\"loader\"}") != NULL);

    /* host B: the same pid gets its own track; its clock is aligned by its anchor;
     * the reused tid gets its own thread; the bad bytes became U+FFFD */
    CHECK(strstr(t, "\"name\":\"process_name\",\"pid\":1073741824,\"tid\":1073741824,"
                    "\"args\":{\"name\":\"trainer 100@hostB\"}") != NULL);
    CHECK(strstr(t, "\"args\":{\"sort_index\":1}") != NULL);
    CHECK(strstr(t, "{\"ph\":\"X\",\"name\":\"b\\ufffd\\ufffd\",\"pid\":1073741824,"
                    "\"tid\":100,\"ts\":0.500,\"dur\":2000000.123}") != NULL);
    CHECK(strstr(t, "{\"ph\":\"X\",\"name\":\"io\",\"pid\":1073741824,\"tid\":1073741824,"
                    "\"ts\":1.500,\"dur\":0.000}") != NULL);
    CHECK(strstr(t, "\"tid\":100,\"args\":{\"name\":\"thread 0\"}") != NULL);
    CHECK(strstr(t, "depth") == NULL); /* speedscope would take it as part of each name */
    /* step before fwd, which it holds: in order of start */
    CHECK(strstr(t, "\"name\":\"step\"") < strstr(t, "\"name\":\"fwd "));
    CHECK(strstr(t, "\"args\":{\"name\":\"io (tid 100)\"}") != NULL);

    /* host B recorded more than its timeline held */
    CHECK(strstr(t, "\"name\":\"process_labels\",\"pid\":1073741824") != NULL);
    CHECK(strstr(t, "timeline incomplete: 7 spans not recorded (max_spans 2)") != NULL);
    CHECK(strstr(t, "\"ts\":2000000.623,\"args\":{\"dropped\":7,\"max_spans\":2}") != NULL);
    free(t);
}

/* Spans as the core writes them (at their end: a child before its parent) with
 * start times that tie: the parent must come first in the trace, or viewers nest
 * both at the top level. */
static void test_tie_order(void)
{
    static const char *const names[] = {"", "outer", "inner", "leaf"};
    static const store_thread threads[] = {{7, "main"}};
    builder b;
    build(&b, "tie", 7, -1, names, 4, threads, 1);
    b.f.meta.anchor_real_ns = 1000;
    b.f.meta.anchor_mono_ns = 1000;
    store_span spans[] = {
        {0, 3, 3, 5000, 5000}, /* leaf, zero length, at the same instant */
        {0, 2, 2, 5000, 6000}, /* inner */
        {0, 1, 1, 5000, 9000}, /* outer */
    };
    b.f.spans = spans;
    b.f.span_count = 3;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/tie.lapse", dir);
    write_or_die(path, &b.f);
    const char *paths[] = {path};
    size_t len = 0;
    char *t = render(paths, 1, &len);
    CHECK(t && json_valid(t, len));
    if (!t)
        return;
    const char *o = strstr(t, "\"name\":\"outer\""), *i = strstr(t, "\"name\":\"inner\"");
    const char *l = strstr(t, "\"name\":\"leaf\"");
    CHECK(o && i && l && o < i && i < l);
    free(t);
}

/* A file of Python samples (as lapse record writes it): one merged track per thread,
 * stacks side by side from the recording's start, common frames merged, a parent
 * before its children. */
static void test_samples_tracks(void)
{
    sample_set *set = sample_set_new();
    uint32_t file = sample_set_string(set, "app.py", 6);
    uint32_t fn_main = sample_set_frame(set, sample_set_string(set, "main", 4), file, 1);
    uint32_t fn_a = sample_set_frame(set, sample_set_string(set, "a", 1), file, 2);
    uint32_t fn_b = sample_set_frame(set, sample_set_string(set, "b", 1), file, 3);
    CHECK(sample_set_process(set, 55, 1, sample_set_string(set, "python app.py", 13),
                             sample_set_string(set, "3.12.1", 6)) == 0);
    sample_key k = {55, 56, sample_set_string(set, "MainThread", 10), 0, SAMPLE_RUNNING};
    uint32_t main_a[] = {fn_main, fn_a}, main_b[] = {fn_main, fn_b}, main_only[] = {fn_main};
    for (int i = 0; i < 3; i++)
        CHECK(sample_set_add(set, &k, main_a, 2, 1000000) == 0); /* 3 ms in main/a */
    CHECK(sample_set_add(set, &k, main_b, 2, 1000000) == 0);     /* 1 ms in main/b */
    CHECK(sample_set_add(set, &k, main_only, 1, 1000000) == 0);  /* 1 ms in main itself */
    store_samples *d = sample_set_data(set);
    d->start_real_ns = 2000000000ull;
    d->end_real_ns = 2005000000ull;
    d->rate_asked_hz = d->rate_achieved_hz = 1000;
    CHECK(sample_set_set_mode(set, "wall") == 0);

    builder b;
    static const char *const names[] = {""};
    static const store_thread threads[] = {{55, ""}};
    build(&b, "rec", 55, -1, names, 1, threads, 1);
    b.f.meta.start_mono_ns = 1999000000ull; /* the trace starts at the samples */
    b.f.meta.anchor_real_ns = 1000;
    b.f.meta.anchor_mono_ns = 1000;
    b.f.samples = d;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/rec.lapse", dir);
    write_or_die(path, &b.f);
    sample_set_free(set);

    const char *paths[] = {path};
    size_t len = 0;
    char *t = render(paths, 1, &len);
    CHECK(t && json_valid(t, len));
    if (!t)
        return;
    CHECK_EQ_U64(count_of(t, "\"ph\":\"X\""), 3); /* main (merged), a, b */
    CHECK(strstr(t, "MainThread (tid 56): Python samples, merged") != NULL);
    /* main spans all 5 ms from the recording's start; a and b inside it */
    const char *m = strstr(t, "\"name\":\"main (app.py:1)\"");
    CHECK(m && event_has(m, "\"ts\":0.000,\"dur\":5000.000"));
    const char *a = strstr(t, "\"name\":\"a (app.py:2)\""), *bb = strstr(t, "\"name\":\"b (app.py:3)\"");
    CHECK(a && bb && m < a && m < bb);
    CHECK(a && event_has(a, "\"dur\":3000.000"));
    CHECK(bb && event_has(bb, "\"dur\":1000.000"));
    free(t);
}

/* Many spans: the output streams through its buffer many times over. */
static void test_large(void)
{
    enum { N = 200000 };
    static const char *const names[] = {"", "tick", "a name long enough to need some bytes"};
    static const store_thread threads[] = {{42, "w"}};
    builder b;
    build(&b, "big", 42, -1, names, 3, threads, 1);
    b.f.meta.anchor_real_ns = 5000;
    b.f.meta.anchor_mono_ns = 5000;
    store_span *s = calloc(N, sizeof *s);
    for (uint32_t i = 0; i < N; i++)
        s[i] = (store_span){0, 1 + (i & 1), 1, 1000000ull + i * 10ull, 1000000ull + i * 10ull + 7};
    b.f.spans = s;
    b.f.span_count = N;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/big.lapse", dir);
    write_or_die(path, &b.f);
    free(s);
    const char *paths[] = {path};
    size_t len = 0;
    char *t = render(paths, 1, &len);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(json_valid(t, len));
    CHECK_EQ_U64(count_of(t, "\"ph\":\"X\""), N);
    CHECK(strstr(t, "\"ts\":0.000,\"dur\":0.007") != NULL);
    CHECK(strstr(t, "\"ts\":1999.990,\"dur\":0.007") != NULL); /* the last one */
    CHECK(strstr(t, "process_sort_index") == NULL);            /* rank unknown */
    free(t);
}

/* ---- the command ---- */

static char lapse_bin[PATH_MAX];

static int run_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_cmd(const char *fmt, ...)
{
    char cmd[4 * PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, fp) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(fp);
    if (s)
        s[n] = 0;
    if (len)
        *len = (size_t)n;
    return s;
}

static size_t lines_of(const char *path)
{
    char *s = slurp(path, NULL);
    size_t n = s ? count_of(s, "\n") : 0;
    free(s);
    return n;
}

static void test_command(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    *slash = 0;
    snprintf(lapse_bin, sizeof lapse_bin, "%.4000s/lapse", self);
    if (access(lapse_bin, X_OK) != 0) {
        printf("test_perfetto: no %s, command checks skipped\n", lapse_bin);
        return;
    }
    char out[PATH_MAX + 32], errf[PATH_MAX + 32], bad[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/out.json", dir);
    snprintf(errf, sizeof errf, "%s/stderr.txt", dir);

    /* usage */
    CHECK(run_cmd("'%s' export --help >/dev/null", lapse_bin) == 0);
    CHECK(run_cmd("'%s' export '%s/run' 2>/dev/null", lapse_bin, dir) == 2);
    CHECK(run_cmd("'%s' export --perfetto '%s' 2>/dev/null", lapse_bin, out) == 2);
    CHECK(run_cmd("'%s' export '%s/run' --perfetto 2>/dev/null", lapse_bin, dir) == 2);
    CHECK(run_cmd("'%s' export '%s/run' --bogus --perfetto '%s' 2>/dev/null", lapse_bin, dir,
                  out) == 2);
    /* a bad path: one line, exit 1 */
    CHECK(run_cmd("'%s' export '%s/nope' --perfetto '%s' 2>'%s'", lapse_bin, dir, out, errf) == 1);
    CHECK_EQ_U64(lines_of(errf), 1);
    CHECK(access(out, F_OK) != 0);

    /* an unreadable file among good ones: named, left out, exit 0 */
    snprintf(bad, sizeof bad, "%s/run/hostB/broken-7.lapse", dir);
    FILE *fp = fopen(bad, "w");
    fputs("this is not a lapse file", fp);
    fclose(fp);
    CHECK(run_cmd("'%s' export '%s/run' --perfetto '%s' 2>'%s'", lapse_bin, dir, out, errf) == 0);
    char *e = slurp(errf, NULL);
    CHECK(e && strstr(e, "broken-7.lapse") && strstr(e, "bad magic"));
    CHECK(e && strstr(e, "timeline full, 7 spans not recorded"));
    CHECK_EQ_U64(lines_of(errf), 3); /* broken, dropped, summary */
    free(e);
    size_t len = 0;
    char *t = slurp(out, &len);
    CHECK(t && json_valid(t, len));
    CHECK(t && count_of(t, "\"ph\":\"X\"") == 5);
    CHECK(t && strstr(t, "\"ts\":0.500,\"dur\":2000000.123"));
    free(t);
    if (run_cmd("command -v python3 >/dev/null 2>&1") == 0)
        CHECK(run_cmd("python3 -m json.tool '%s' >/dev/null", out) == 0);
    else
        printf("test_perfetto: no python3, json.tool check skipped\n");

    /* a single file; standard output */
    CHECK(run_cmd("'%s' export '%s/run/hostA/trainer-100.lapse' --perfetto=- 2>/dev/null >'%s'",
                  lapse_bin, dir, out) == 0);
    t = slurp(out, &len);
    CHECK(t && json_valid(t, len) && count_of(t, "\"ph\":\"X\"") == 3);
    free(t);

    /* nothing readable: exit 1, no output */
    char only_bad[PATH_MAX + 32];
    snprintf(only_bad, sizeof only_bad, "%s/badrun/h", dir);
    CHECK(store_make_dirs(only_bad, 0) == 0);
    CHECK(run_cmd("cp '%s' '%s/x.lapse'", bad, only_bad) == 0);
    unlink(out);
    CHECK(run_cmd("'%s' export '%s/badrun' --perfetto '%s' 2>/dev/null", lapse_bin, dir, out) == 1);
    CHECK(access(out, F_OK) != 0);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/lapse-test-perfetto-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path_a[PATH_MAX + 64], path_b[PATH_MAX + 64];
    write_run(path_a, path_b);
    test_render(path_a, path_b);
    test_tie_order();
    test_samples_tracks();
    test_large();
    test_command();
    if (!check_failed)
        run_cmd("rm -rf '%s'", dir);
    else
        fprintf(stderr, "test_perfetto: files kept in %s\n", dir);
    return check_done("test_perfetto");
}
