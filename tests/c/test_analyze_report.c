/* The report as rendered: text blocks, JSON validity and keys, escaping, formats. */
#include "analyze/report_model.h"
#include "analyze/run_model.h"
#include "analyze/run_stats.h"
#include "core/hist.h"
#include "render/format.h"
#include "render/json_out.h"
#include "render/report_render.h"
#include "store/model.h"

#include "check.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- a minimal JSON validator (RFC 8259 syntax) ---- */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p != '"'; p++) {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)p[i]))
                        return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                return NULL;
            }
        }
    }
    return p + 1;
}

static const char *number(const char *p)
{
    const char *s = p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (isdigit((unsigned char)*p))
        while (isdigit((unsigned char)*p))
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return NULL;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return p > s ? p : NULL;
}

static const char *value(const char *p, int depth)
{
    if (depth > 64)
        return NULL;
    p = ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = string(ws(p));
                if (!p)
                    return NULL;
                p = ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = value(p, depth + 1);
            if (!p)
                return NULL;
            p = ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == close)
                return p + 1;
            return NULL;
        }
    }
    if (*p == '"')
        return string(p);
    if (!strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    if (!strncmp(p, "null", 4))
        return p + 4;
    return number(p);
}

static int json_valid(const char *doc)
{
    const char *end = value(doc, 0);
    return end && *ws(end) == 0;
}

/* ---- a model from memory ---- */

#define MAXN 16
typedef struct builder {
    store_file f;
    char *names[MAXN];
    store_thread thread;
    store_node nodes[MAXN];
    uint64_t hist[MAXN][HIST_BUCKETS];
    store_counter counters[MAXN];
} builder;

static const uint64_t T0 = 1700000000000000000ull;

static void b_init(builder *b, const char *role, const char *host, int64_t pid, int final,
                   uint64_t written)
{
    memset(b, 0, sizeof *b);
    store_meta *m = &b->f.meta;
    m->lapse_version = "test";
    m->host = (char *)host;
    m->role = (char *)role;
    m->run_id = "run \"quoted\"";
    m->job_id = "";
    m->end_reason = final ? "exit" : "";
    m->clock_source = "monotonic";
    m->pid = pid;
    m->rank = -1;
    m->world_size = -1;
    m->start_real_ns = T0;
    m->write_real_ns = written;
    m->final = (uint32_t)final;
    m->snapshot_interval_ms = 1000;
    b->names[0] = "";
    b->f.names = b->names;
    b->f.name_count = 1;
    b->f.threads = &b->thread;
    b->f.thread_count = 1;
    b->f.nodes = b->nodes;
    b->f.counters = b->counters;
    b->nodes[0].parent = -1;
    b->f.node_count = 1;
}

static int32_t b_node(builder *b, int32_t parent, const char *name, uint64_t each, uint64_t calls)
{
    uint32_t i = b->f.node_count++;
    store_node *n = &b->nodes[i];
    n->parent = parent;
    n->depth = b->nodes[parent].depth + 1;
    b->names[b->f.name_count] = (char *)name;
    n->name = b->f.name_count++;
    n->hist = b->hist[i];
    n->calls = calls;
    n->total_ns = each * calls;
    n->min_ns = n->max_ns = each;
    n->hist[hist_bucket(each)] = calls;
    b->nodes[parent].child_ns += n->total_ns;
    return (int32_t)i;
}

static char *render(const run_model *m, int json, unsigned top)
{
    report_model r;
    report_inputs in = {top};
    CHECK(report_model_build(m, &in, &r) == 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_options o = {0};
    CHECK((json ? report_write_json(f, &r, &o) : report_write_text(f, &r, &o)) == 0);
    fclose(f);
    report_model_free(&r);
    return buf;
}

static void test_clean_run(void)
{
    run_model m;
    memset(&m, 0, sizeof m);
    m.input = strdup("in");
    m.dir = strdup("dir/run");
    builder *b = calloc(1, sizeof *b);
    for (int p = 0; p < 2; p++) {
        b_init(b, "worker", "node\"7\"", 10 + p, 1, T0 + 5000000000ull);
        int32_t it = b_node(b, 0, "iteration", 2000000, 100);
        int32_t mc = b_node(b, it, "mc\xff\x01ts", 150000, 800); /* odd bytes in a name */
        b->counters[0] = (store_counter){(uint32_t)mc, 0, 0, 0};
        b->names[b->f.name_count] = "sims";
        b->counters[0].name = b->f.name_count++;
        b->counters[0].sum = 6400;
        b->counters[0].updates = 800;
        b->f.counter_count = 1;
        CHECK(run_model_add(&m, "dir/run/h/worker.lapse", &b->f) == 0);
    }
    free(b);
    CHECK(run_model_finish(&m, NULL) == 0);

    char *text = render(&m, 0, 10);
    CHECK(strstr(text, "Runtime 5.00s") != NULL);
    CHECK(strstr(text, "Processes 2") != NULL);
    CHECK(strstr(text, "Roles worker x2") != NULL);
    CHECK(strstr(text, "WORKER  (2 processes, imbalance 1.00*)") != NULL);
    CHECK(strstr(text, "share of worker busy time (sum of top-level spans, 2 processes): 400.0ms") != NULL);
    CHECK(strstr(text, "DOMINANT PHASES by self time") != NULL);
    CHECK(strstr(text, "MOST-CALLED LOOP  iteration  (200 calls in 2 processes)") != NULL);
    CHECK(strstr(text, "+ sims") != NULL);
    CHECK(strstr(text, "12,800 total") != NULL);
    CHECK(strstr(text, "CAVEATS none") != NULL);
    free(text);

    char *json = render(&m, 1, 10);
    CHECK(json_valid(json));
    if (!json_valid(json))
        fputs(json, stderr);
    CHECK(strstr(json, "\"schema\": \"lapse.report\"") != NULL);
    CHECK(strstr(json, "\"schema_version\": 2") != NULL);
    CHECK(strstr(json, "\"id\": \"run \\\"quoted\\\"\"") != NULL);
    CHECK(strstr(json, "\"mc\\ufffd?ts\"") != NULL || strstr(json, "\"mc\\ufffd\\u0001ts\"") != NULL);
    CHECK(strstr(json, "\"caveats\": []") != NULL);
    CHECK(strstr(json, "\"rank\": null") != NULL);
    CHECK(strstr(json, "\"loop\": {") != NULL);
    CHECK(strstr(json, "\"share_of_busy\": 1") != NULL);
    static const char *keys[] = {"\"run\"", "\"roles\"", "\"workers\"", "\"unreadable\"",
                                 "\"superseded\"", "\"caveats\"", "\"phases\"", "\"dominant\"",
                                 "\"no_span_counters\"", "\"per_second\"", "\"ns_per_unit\"",
                                 "\"stale_by_ns\"", "\"busy_ns\"", "\"imbalance\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK(strstr(json, keys[i]) != NULL);
    free(json);
    run_model_free(&m);
}

static void test_caveats(void)
{
    run_model m;
    memset(&m, 0, sizeof m);
    m.input = strdup("in");
    m.dir = strdup("d");
    builder *b = calloc(1, sizeof *b);
    b_init(b, "worker", "n1", 1, 1, T0 + 60000000000ull);
    b_node(b, 0, "step", 1000, 10);
    CHECK(run_model_add(&m, "d/n1/w1.lapse", &b->f) == 0);
    b_init(b, "worker", "n2", 2, 0, T0 + 20000000000ull); /* 40 s before the end */
    b_node(b, 0, "step", 1000, 10);
    b->f.meta.timeline_dropped = 1234;
    CHECK(run_model_add(&m, "d/n2/w2.lapse", &b->f) == 0);
    free(b);
    CHECK(run_model_add_unreadable(&m, "d/n3/w3.lapse", "file is truncated: 10 of 99 bytes") == 0);
    rm_options o = {.now_real_ns = T0 + 61000000000ull};
    CHECK(run_model_finish(&m, &o) == 0);

    char *text = render(&m, 0, 10);
    CHECK(strstr(text, "\nCAVEATS\n") != NULL);
    CHECK(strstr(text, "unreadable       d/n3/w3.lapse: file is truncated: 10 of 99 bytes") != NULL);
    CHECK(strstr(text, "stale            worker pid 2 on n2 stopped writing 40.0s before the run's end") != NULL);
    CHECK(strstr(text, "dropped_spans") != NULL);
    CHECK(strstr(text, "1,234") != NULL);
    free(text);
    char *json = render(&m, 1, 10);
    CHECK(json_valid(json));
    CHECK(strstr(json, "\"kind\": \"stale\"") != NULL);
    CHECK(strstr(json, "\"kind\": \"unreadable\"") != NULL);
    CHECK(strstr(json, "\"kind\": \"dropped_spans\"") != NULL);
    CHECK(strstr(json, "\"stale\": true") != NULL);
    CHECK(strstr(json, "\"stale_by_ns\": 40000000000") != NULL);
    CHECK(strstr(json, "\"state\": \"stopped_early\"") != NULL);
    CHECK(strstr(json, "\"reason\": \"file is truncated: 10 of 99 bytes\"") != NULL);
    free(json);
    run_model_free(&m);

    /* nothing readable: CAVEATS still there */
    memset(&m, 0, sizeof m);
    m.input = strdup("in");
    m.dir = strdup("d");
    CHECK(run_model_add_unreadable(&m, "d/x.lapse", "not a .lapse file (bad magic)") == 0);
    CHECK(run_model_finish(&m, NULL) == 0);
    text = render(&m, 0, 10);
    CHECK(strstr(text, "CAVEATS\n  unreadable       d/x.lapse: not a .lapse file (bad magic)") != NULL);
    free(text);
    json = render(&m, 1, 10);
    CHECK(json_valid(json));
    CHECK(strstr(json, "\"roles\": []") != NULL);
    free(json);
    run_model_free(&m);
}

static void test_escaping(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_write_string(f, "a\"b\\c\n\t\x01\x7f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xc3|\xed\xa0\x80|\xc0\xaf");
    fclose(f);
    CHECK_STR(buf, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\ufffd|"
                   "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"");
    CHECK(json_valid(buf));
    free(buf);

    /* json_escape, which perfetto.c writes its names with: the same bytes as
     * json_write_string, without the quotes, and cut short like snprintf */
    char e[128];
    CHECK(json_escape(e, sizeof e, "a\"b\\c\n\t\x01\x7f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\xc3|"
                                    "\xed\xa0\x80|\xc0\xaf") == 72);
    CHECK_STR(e, "a\\\"b\\\\c\\n\\t\\u0001\\u007f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\\ufffd|"
                 "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd");
    /* overlong, beyond U+10FFFF, truncated at the end, lone continuation */
    json_escape(e, sizeof e, "\xe0\x80\x80|\xf4\x90\x80\x80|\x80|\xe2\x82");
    CHECK_STR(e, "\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd|\\ufffd\\ufffd");
    CHECK(json_escape(e, 4, "ab\ncd") == 6);
    CHECK_STR(e, "ab\\");
    CHECK(json_escape(NULL, 0, "\x01") == 6);
}

static void test_formats(void)
{
    char b[FMT_BUF];
    CHECK_STR(fmt_duration(b, sizeof b, 812), "812ns");
    CHECK_STR(fmt_duration(b, sizeof b, 156800), "156.8us");
    CHECK_STR(fmt_duration(b, sizeof b, 9.4e6), "9.4ms");
    CHECK_STR(fmt_duration(b, sizeof b, 999.96e3), "1.0ms");
    CHECK_STR(fmt_duration(b, sizeof b, 1.234e9), "1.23s");
    CHECK_STR(fmt_duration(b, sizeof b, 27 * 60e9), "27m 0s");
    CHECK_STR(fmt_duration(b, sizeof b, (2 * 3600 + 31 * 60 + 10) * 1e9), "2h 31m");
    CHECK_STR(fmt_count(b, sizeof b, 4800), "4,800");
    CHECK_STR(fmt_count(b, sizeof b, 1234567), "1,234,567");
    CHECK_STR(fmt_count(b, sizeof b, 999), "999");
    CHECK_STR(fmt_int(b, sizeof b, -1234), "-1,234");
    CHECK_STR(fmt_rate(b, sizeof b, 6377.04), "6,377.0/s");
    CHECK_STR(fmt_percent(b, sizeof b, 0.829), "82.9%");
    CHECK_STR(fmt_ratio(b, sizeof b, 1.3149), "x1.31");
    CHECK_STR(fmt_ratio(b, sizeof b, -1), "n/a");
}

/* The run's paths: one per chain of names, over every role (names, not "/" strings). */
static uint32_t run_path_named(const report_model *r, uint32_t parent, const char *name)
{
    for (uint32_t i = 0; i < r->run_path_count; i++)
        if (r->run_paths[i].parent == parent && !strcmp(rm_str(r->m, r->run_paths[i].name), name))
            return i;
    return RM_NONE;
}

static void add_counter(builder *b, int32_t node, const char *name, int64_t sum)
{
    store_counter *c = &b->counters[b->f.counter_count++];
    *c = (store_counter){(uint32_t)node, 0, sum, 1};
    b->names[b->f.name_count] = (char *)name;
    c->name = b->f.name_count++;
}

static void test_run_paths(void)
{
    run_model m;
    memset(&m, 0, sizeof m);
    m.input = strdup("in");
    m.dir = strdup("dir/run");
    builder *b = calloc(1, sizeof *b);
    /* actor: step > act (counted), and one span named "step/act" */
    b_init(b, "actor", "h", 1, 1, T0 + 1000000000ull);
    int32_t st = b_node(b, 0, "step", 1000, 10);
    int32_t act = b_node(b, st, "act", 300, 10);
    b_node(b, 0, "step/act", 50, 2);
    add_counter(b, act, "frames", 40);
    add_counter(b, act, "big", INT64_MAX - 5);
    CHECK(run_model_add(&m, "dir/run/h/actor.lapse", &b->f) == 0);
    /* learner: step > act (sampled: an estimate), step > learn */
    b_init(b, "learner", "h", 2, 1, T0 + 1000000000ull);
    st = b_node(b, 0, "step", 5000, 4);
    act = b_node(b, st, "act", 200, 4);
    b->nodes[act].sample_stride = 8;
    b_node(b, st, "learn", 4000, 4);
    add_counter(b, act, "frames", 2);
    add_counter(b, act, "big", 10);
    CHECK(run_model_add(&m, "dir/run/h/learner.lapse", &b->f) == 0);
    free(b);
    CHECK(run_model_finish(&m, NULL) == 0);

    report_model r;
    CHECK(report_model_build(&m, NULL, &r) == 0);
    CHECK(r.run_path_count == 4);
    uint32_t step = run_path_named(&r, RM_NONE, "step");
    uint32_t act_p = run_path_named(&r, step, "act");
    uint32_t slash = run_path_named(&r, RM_NONE, "step/act");
    uint32_t learn = run_path_named(&r, step, "learn");
    CHECK(step != RM_NONE && act_p != RM_NONE && slash != RM_NONE && learn != RM_NONE);
    CHECK(step < act_p && step < learn); /* a parent before its children */
    const report_run_path *s = &r.run_paths[step], *a = &r.run_paths[act_p];
    CHECK(s->calls == 14 && s->total_ns == 10 * 1000 + 4 * 5000);
    CHECK(s->self_ns == (10 * 1000 - 10 * 300) + (4 * 5000 - 4 * 200 - 4 * 4000));
    CHECK(s->role_count == 2 && !s->estimated);
    CHECK(r.run_path_roles[s->roles_first] == 0 && r.run_path_roles[s->roles_first + 1] == 1);
    CHECK(a->calls == 14 && a->total_ns == 3000 + 800 && a->estimated);
    CHECK(r.run_paths[slash].calls == 2 && r.run_paths[slash].role_count == 1);
    CHECK(r.run_paths[learn].role_count == 1 && r.run_path_roles[r.run_paths[learn].roles_first] == 1);
    CHECK(r.run_paths[slash].counter_count == 0);
    CHECK(a->counter_count == 2); /* by name: big, frames */
    const report_run_counter *big = &r.run_counters[a->counters_first];
    const report_run_counter *frames = &r.run_counters[a->counters_first + 1];
    CHECK(!strcmp(rm_str(&m, big->name), "big") && big->overflowed && big->sum == INT64_MAX);
    CHECK(!strcmp(rm_str(&m, frames->name), "frames") && frames->sum == 42 && !frames->overflowed);
    report_model_free(&r);

    char *json = render(&m, 1, 10);
    CHECK(json_valid(json));
    const char *rp = strstr(json, "\"run_paths\": [");
    CHECK(rp != NULL && strstr(rp, "\"name\": \"step/act\"") != NULL);
    free(json);
    run_model_free(&m);
}

int main(void)
{
    test_run_paths();
    test_clean_run();
    test_caveats();
    test_escaping();
    test_formats();
    return check_done("test_analyze_report");
}
