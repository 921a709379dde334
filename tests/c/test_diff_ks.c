/* The diff rule: a KS test on binned histograms AND a p50 move of >= 5%. */
#include "analyze/diff.h"
#include "analyze/run_model.h"
#include "core/hist.h"
#include "render/diff_render.h"
#include "store/model.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Deterministic pseudo-random durations around `center` ns (+-spread). */
static uint64_t lcg = 12345;
static uint64_t draw(uint64_t center, uint64_t spread)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return center - spread + (lcg >> 33) % (2 * spread + 1);
}

static void fill(uint64_t *h, uint64_t n, uint64_t center, uint64_t spread)
{
    memset(h, 0, HIST_BUCKETS * sizeof *h);
    for (uint64_t i = 0; i < n; i++)
        h[hist_bucket(draw(center, spread))]++;
}

static void test_statistic(void)
{
    static uint64_t a[HIST_BUCKETS], b[HIST_BUCKETS];
    /* 1000 calls near 1.0 ms against 1000 near 1.3 ms: D near 1, far above the threshold */
    fill(a, 1000, 1000000, 100000);
    fill(b, 1000, 1300000, 100000);
    double d = diff_ks_statistic(a, b);
    double t = diff_ks_threshold(1000, 1000);
    CHECK(fabs(t - 1.628 * sqrt(2000.0 / 1e6)) < 1e-12);
    CHECK(d > 0.8);
    CHECK(d > t);

    /* two samples of the same distribution: D stays below the threshold */
    fill(a, 2000, 1000000, 100000);
    fill(b, 3000, 1000000, 100000);
    d = diff_ks_statistic(a, b);
    t = diff_ks_threshold(2000, 3000);
    CHECK(d < t);

    /* identical histograms: D = 0; an empty side: 0 and no threshold */
    CHECK(diff_ks_statistic(a, a) == 0.0);
    static uint64_t empty[HIST_BUCKETS];
    CHECK(diff_ks_statistic(a, empty) == 0.0);
    CHECK(diff_ks_threshold(0, 10) == 0.0);

    /* exact D on a hand-made pair: A = {b10: 2, b20: 2}, B = {b10: 1, b20: 3} -> 0.25 */
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    a[10] = 2;
    a[20] = 2;
    b[10] = 1;
    b[20] = 3;
    CHECK(fabs(diff_ks_statistic(a, b) - 0.25) < 1e-12);
}

/* ---- two models from memory ---- */

typedef struct one_file {
    store_file f;
    char *names[8];
    store_thread thread;
    store_node nodes[8];
    uint64_t hist[8][HIST_BUCKETS];
} one_file;

static void file_init(one_file *o, const char *role)
{
    memset(o, 0, sizeof *o);
    store_meta *m = &o->f.meta;
    m->host = "h";
    m->role = (char *)role;
    m->run_id = "r";
    m->end_reason = "exit";
    m->final = 1;
    m->pid = 1;
    m->rank = m->world_size = -1;
    m->start_real_ns = 1;
    m->write_real_ns = 2;
    o->names[0] = "";
    o->f.names = o->names;
    o->f.name_count = 1;
    o->f.threads = &o->thread;
    o->f.thread_count = 1;
    o->f.nodes = o->nodes;
    o->nodes[0].parent = -1;
    o->f.node_count = 1;
}

static void file_path(one_file *o, const char *name, uint64_t n, uint64_t center, uint64_t spread)
{
    uint32_t i = o->f.node_count++;
    store_node *nd = &o->nodes[i];
    nd->parent = 0;
    nd->depth = 1;
    o->names[o->f.name_count] = (char *)name;
    nd->name = o->f.name_count++;
    nd->hist = o->hist[i];
    for (uint64_t k = 0; k < n; k++) {
        uint64_t v = draw(center, spread);
        nd->hist[hist_bucket(v)]++;
        nd->total_ns += v;
        if (!nd->calls || v < nd->min_ns)
            nd->min_ns = v;
        if (v > nd->max_ns)
            nd->max_ns = v;
        nd->calls++;
    }
    o->nodes[0].child_ns += nd->total_ns;
}

static const diff_row *row(const diff_result *d, const char *key)
{
    for (size_t i = 0; i < d->count; i++)
        if (!strcmp(d->rows[i].key, key))
            return &d->rows[i];
    return NULL;
}

static void test_runs(void)
{
    one_file *o = calloc(1, sizeof *o);
    run_model a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.input = strdup("A");
    a.dir = strdup("A");
    b.input = strdup("B");
    b.dir = strdup("B");

    file_init(o, "worker");
    file_path(o, "slower", 2000, 1000000, 100000); /* becomes 1.3 ms: changed */
    file_path(o, "same", 2000, 500000, 50000);     /* same distribution: unchanged */
    file_path(o, "tail", 2000, 200000, 10000);     /* p50 the same, tail moves */
    file_path(o, "rare", 5, 100000, 1000);         /* few calls, moves a lot */
    file_path(o, "gone", 10, 1000, 10);            /* only in A */
    CHECK(run_model_add(&a, "A/h/w.lapse", &o->f) == 0);

    file_init(o, "worker");
    file_path(o, "slower", 2000, 1300000, 100000);
    file_path(o, "same", 3000, 500000, 50000);
    file_path(o, "tail", 1900, 200000, 10000);
    file_path(o, "rare", 5, 200000, 1000);
    file_path(o, "new", 10, 1000, 10); /* only in B */
    CHECK(run_model_add(&b, "B/h/w.lapse", &o->f) == 0);
    /* the tail: 100 slow calls (8 ms) on top */
    file_init(o, "worker");
    file_path(o, "tail", 100, 8000000, 1000);
    o->f.meta.pid = 2;
    CHECK(run_model_add(&b, "B/h/w2.lapse", &o->f) == 0);
    free(o);
    CHECK(run_model_finish(&a, NULL) == 0);
    CHECK(run_model_finish(&b, NULL) == 0);

    diff_result d;
    CHECK(diff_runs(&a, &b, 0, &d) == 0);
    CHECK(d.count == 6);
    CHECK(d.roles_in_common);
    /* one side only first: A-only, then B-only */
    CHECK(d.count >= 2 && d.rows[0].presence == DIFF_ONLY_A && !strcmp(d.rows[0].key, "worker:gone"));
    CHECK(d.count >= 2 && d.rows[1].presence == DIFF_ONLY_B && !strcmp(d.rows[1].key, "worker:new"));
    /* then by |change in total time|: tail (+100 x 8 ms) before slower (+600 ms) */
    CHECK(d.count >= 4 && !strcmp(d.rows[2].key, "worker:tail"));
    CHECK(d.count >= 4 && !strcmp(d.rows[3].key, "worker:slower"));

    const diff_row *r = row(&d, "worker:slower");
    CHECK(r && r->ks_significant && r->changed && !r->few_calls);
    CHECK(r && fabs(r->p50_ratio - 1.3) < 0.05);
    CHECK(r && fabs(r->ks_threshold - 1.628 * sqrt(4000.0 / 4e6)) < 1e-12);

    r = row(&d, "worker:same");
    CHECK(r && !r->ks_significant && !r->changed);
    CHECK(r && r->a.calls == 2000 && r->b.calls == 3000);

    r = row(&d, "worker:tail");
    CHECK(r && r->tail_moved);
    CHECK(r && fabs(r->p50_ratio - 1.0) < 0.05);
    CHECK(r && !r->changed); /* the p50 did not move by 5% */

    r = row(&d, "worker:rare");
    CHECK(r && r->few_calls);
    /* 5 calls against 5: D = 1 but the threshold is 1.628 * sqrt(10 / 25) = 1.03, so even
     * a doubled p50 is not called a change on so little evidence */
    CHECK(r && r->ks_d == 1.0 && r->ks_threshold > 1.0);
    CHECK(r && fabs(r->p50_ratio - 2.0) < 0.2);
    CHECK(r && !r->ks_significant && !r->changed);
    diff_result_free(&d);

    /* by path: the same rows without the role */
    CHECK(diff_runs(&a, &b, DIFF_BY_PATH, &d) == 0);
    CHECK(row(&d, "slower") != NULL && row(&d, "slower")->changed);
    diff_result_free(&d);

    /* the JSON carries the rule */
    CHECK(diff_runs(&a, &b, 0, &d) == 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    diff_options opt = {30};
    CHECK(diff_write_json(f, &a, &b, &d, &opt) == 0);
    fclose(f);
    CHECK(strstr(buf, "\"schema\": \"lapse.diff\"") != NULL);
    CHECK(strstr(buf, "\"c_alpha\": 1.628") != NULL);
    CHECK(strstr(buf, "\"alpha\": 0.01") != NULL);
    CHECK(strstr(buf, "\"min_p50_change\": 0.05") != NULL);
    CHECK(strstr(buf, "\"presence\": \"only_a\"") != NULL);
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK(diff_write_text(f, &a, &b, &d, &opt) == 0);
    fclose(f);
    CHECK(strstr(buf, "Kolmogorov-Smirnov") != NULL);
    CHECK(strstr(buf, "worker:slower   CHANGED, slower") != NULL);
    CHECK(strstr(buf, "ONLY IN A") != NULL);
    free(buf);
    diff_result_free(&d);
    run_model_free(&a);
    run_model_free(&b);
}

int main(void)
{
    test_statistic();
    test_runs();
    return check_done("test_diff_ks");
}
