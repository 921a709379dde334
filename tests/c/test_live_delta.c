/* Live export's interval (analyze/live_delta.h): the state merged over threads by name
 * path, differences, quantiles of the difference of histograms, idle paths left out,
 * a new session seen as a restart. */
#include "analyze/live_delta.h"
#include "core/hist.h"
#include "store/model.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

#define MAXN 16

/* A snapshot of two threads, built by hand. */
typedef struct snap {
    store_file f;
    char *names[MAXN];
    store_thread threads[2];
    store_node nodes[MAXN];
    uint64_t hist[MAXN][HIST_BUCKETS];
    store_counter counters[MAXN];
} snap;

static uint32_t name_id(snap *s, const char *name)
{
    for (uint32_t i = 0; i < s->f.name_count; i++)
        if (!strcmp(s->names[i], name))
            return i;
    s->names[s->f.name_count] = (char *)name;
    return s->f.name_count++;
}

static void s_init(snap *s)
{
    memset(s, 0, sizeof *s);
    s->names[0] = "";
    s->f.names = s->names;
    s->f.name_count = 1;
    s->f.threads = s->threads;
    s->f.thread_count = 2;
    s->f.nodes = s->nodes;
    s->f.counters = s->counters;
    for (int t = 0; t < 2; t++) { /* each thread's root */
        s->nodes[t].parent = -1;
        s->nodes[t].thread = (uint32_t)t;
    }
    s->f.node_count = 2;
}

/* A node under parent: `calls` calls of `each` ns (dense histogram). */
static int32_t s_node(snap *s, int32_t parent, const char *name, uint64_t each, uint64_t calls)
{
    uint32_t i = s->f.node_count++;
    store_node *n = &s->nodes[i];
    n->parent = parent;
    n->thread = s->nodes[parent].thread;
    n->name = name_id(s, name);
    n->calls = calls;
    n->total_ns = each * calls;
    n->hist = s->hist[i];
    n->hist[hist_bucket(each)] = calls;
    return (int32_t)i;
}

static void s_count(snap *s, int32_t node, const char *name, int64_t sum)
{
    s->counters[s->f.counter_count++] = (store_counter){(uint32_t)node, name_id(s, name), sum, 1};
}

static void take(live_state *st, const snap *s)
{
    CHECK(live_state_init(st) == 0);
    CHECK(live_state_add(st, &s->f) == 0);
}

/* The delta of the path named by names (NULL-terminated), or NULL when absent. */
static const live_delta_path *find(const live_state *now, const live_interval *iv, const char *a,
                                   const char *b)
{
    for (uint32_t i = 0; i < iv->path_count; i++) {
        const live_path *p = &now->paths[iv->paths[i].path];
        const char *leaf = b ? b : a;
        if (strcmp(p->name, leaf))
            continue;
        const live_path *up = &now->paths[p->parent];
        if (b ? (p->parent != 0 && !strcmp(up->name, a)) : p->parent == 0)
            return &iv->paths[i];
    }
    return NULL;
}

static int64_t counter(const live_state *now, const live_interval *iv, uint32_t first,
                       uint32_t count, const char *name)
{
    for (uint32_t i = 0; i < count; i++)
        if (!strcmp(now->counters[iv->counters[first + i].counter].name, name))
            return iv->counters[first + i].delta;
    return 0;
}

static void test_merge_and_delta(void)
{
    snap *s = calloc(1, sizeof *s);
    live_state empty, a, b;
    CHECK(live_state_init(&empty) == 0);

    /* first: step on both threads (41 fast calls in all), step > load on thread 1 */
    s_init(s);
    int32_t st0 = s_node(s, 0, "step", 1000, 20);
    int32_t st1 = s_node(s, 1, "step", 1000, 21);
    s_node(s, st1, "load", 500, 21);
    s_count(s, st0, "items", 3);
    s_count(s, st1, "items", 4);
    s_count(s, 0, "outside", 2);
    take(&a, s);
    CHECK(a.path_count == 3); /* outside, step, step > load: merged over threads */

    live_interval iv;
    CHECK(live_interval_build(&empty, &a, &iv) == 0);
    CHECK(!iv.restarted && iv.path_count == 2);
    const live_delta_path *step = find(&a, &iv, "step", NULL);
    CHECK(step && step->calls == 41 && step->total_ns == 41000 && step->mean_ns == 1000);
    CHECK(step && step->has_quantiles && step->quantile_ns[0] >= 875 && step->quantile_ns[0] <= 1125);
    CHECK(step && counter(&a, &iv, step->counters_first, step->counter_count, "items") == 7);
    CHECK(counter(&a, &iv, iv.outside_first, iv.outside_count, "outside") == 2);
    CHECK(find(&a, &iv, "step", "load") != NULL);
    live_interval_free(&iv);

    /* second: 5 slow calls more of step on thread 0; load idle; a counter only on
     * "queue" (no call); step's items unchanged */
    s_init(s);
    st0 = s_node(s, 0, "step", 1000, 20);
    s->nodes[st0].calls += 5;
    s->nodes[st0].total_ns += 5 * 4000000;
    s->nodes[st0].hist[hist_bucket(4000000)] += 5;
    st1 = s_node(s, 1, "step", 1000, 21);
    s_node(s, st1, "load", 500, 21);
    int32_t q = s_node(s, 1, "queue", 0, 0);
    s_count(s, st0, "items", 3);
    s_count(s, st1, "items", 4);
    s_count(s, q, "waiting", -6);
    s_count(s, 0, "outside", 2);
    take(&b, s);
    CHECK(live_interval_build(&a, &b, &iv) == 0);
    CHECK(!iv.restarted && iv.path_count == 2); /* step and queue; load idle: absent */
    step = find(&b, &iv, "step", NULL);
    CHECK(step && step->calls == 5 && step->total_ns == 20000000 && step->mean_ns == 4000000);
    /* the quantiles of the interval's own 5 calls, not the cumulative p50 */
    CHECK(step && step->has_quantiles && step->quantile_ns[0] >= 3500000 && step->quantile_ns[2] <= 4500000);
    CHECK(step && step->counter_count == 0);
    CHECK(find(&b, &iv, "step", "load") == NULL);
    const live_delta_path *queue = find(&b, &iv, "queue", NULL);
    CHECK(queue && queue->calls == 0 && !queue->has_quantiles);
    CHECK(queue && counter(&b, &iv, queue->counters_first, queue->counter_count, "waiting") == -6);
    CHECK(iv.outside_count == 0);
    live_interval_free(&iv);

    /* back from b to a: fewer calls, a new session; figures since its start */
    CHECK(live_interval_build(&b, &a, &iv) == 0);
    CHECK(iv.restarted);
    step = find(&a, &iv, "step", NULL);
    CHECK(step && step->calls == 41);
    live_interval_free(&iv);

    live_state_free(&a);
    live_state_free(&b);
    live_state_free(&empty);
    free(s);
}

static void test_histogram_not_contained_and_rounding(void)
{
    snap *s = calloc(1, sizeof *s);
    live_state a, b;
    s_init(s);
    s_node(s, 0, "x", 1000, 2);
    take(&a, s);
    /* more calls and more time, but the old bucket emptied: not the same session */
    s_init(s);
    int32_t x = s_node(s, 0, "x", 3000, 4);
    s->nodes[x].total_ns = 12001; /* 2 more calls, 10001 ns more: 5000.5 -> 5001 */
    take(&b, s);
    live_interval iv;
    CHECK(live_interval_build(&a, &b, &iv) == 0);
    CHECK(iv.restarted && iv.path_count == 1);
    CHECK(iv.paths[0].calls == 2 && iv.paths[0].mean_ns == 5001);
    CHECK(iv.paths[0].has_quantiles && iv.paths[0].quantile_ns[0] > 2000); /* since the start: 4 x 3 us */
    live_interval_free(&iv);
    live_state_free(&a);
    live_state_free(&b);

    s_init(s);
    take(&a, s);
    s_node(s, 0, "y", 0, 2);
    s->nodes[s->f.node_count - 1].total_ns = 5; /* 2.5 -> 3, as the report's mean */
    take(&b, s);
    CHECK(live_interval_build(&a, &b, &iv) == 0);
    CHECK(iv.path_count == 1 && iv.paths[0].mean_ns == 3);
    live_interval_free(&iv);
    live_state_free(&a);
    live_state_free(&b);
    free(s);
}

static void test_many_paths(void)
{
    /* more paths than the index starts with: every one found again */
    enum { N = 3000 };
    store_file f;
    memset(&f, 0, sizeof f);
    char **names = calloc(N + 1, sizeof *names);
    store_node *nodes = calloc(N + 1, sizeof *nodes);
    names[0] = "";
    nodes[0].parent = -1;
    for (uint32_t i = 1; i <= N; i++) {
        names[i] = malloc(16);
        snprintf(names[i], 16, "p%u", i);
        nodes[i] = (store_node){.parent = (int32_t)(i % 2 ? 0 : i - 1), .name = i, .calls = i, .total_ns = i};
    }
    f.names = names;
    f.name_count = N + 1;
    f.nodes = nodes;
    f.node_count = N + 1;
    live_state a, b;
    CHECK(live_state_init(&a) == 0 && live_state_add(&a, &f) == 0);
    for (uint32_t i = 1; i <= N; i++)
        nodes[i].calls += 1;
    CHECK(live_state_init(&b) == 0 && live_state_add(&b, &f) == 0);
    CHECK(a.path_count == N + 1 && b.path_count == N + 1);
    live_interval iv;
    CHECK(live_interval_build(&a, &b, &iv) == 0);
    CHECK(!iv.restarted && iv.path_count == N);
    int all_one = 1;
    for (uint32_t i = 0; i < iv.path_count; i++)
        all_one &= iv.paths[i].calls == 1 && iv.paths[i].total_ns == 0;
    CHECK(all_one);
    live_interval_free(&iv);
    live_state_free(&a);
    live_state_free(&b);
    for (uint32_t i = 1; i <= N; i++)
        free(names[i]);
    free(names);
    free(nodes);
}

int main(void)
{
    test_merge_and_delta();
    test_histogram_not_contained_and_rounding();
    test_many_paths();
    return check_done("test_live_delta");
}
