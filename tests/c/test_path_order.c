/* The phases of a role come in the order of their path strings (strcmp), whether
 * the tree gives that order (siblings by name, depth first) or the strings must be
 * sorted as they are: names with "/", or a sibling's name that is a prefix followed
 * by a byte before '/' ("a" and "a.b"). */
#include "../../src/analyze/run_stats.h"
#include "../../src/store/model.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#define NODES 400

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A random tree over names; some paths come twice (merged), some from a second
 * thread. */
static void one_run(const char *const *names, uint32_t name_count)
{
    store_file f;
    memset(&f, 0, sizeof f);
    store_meta *mt = &f.meta;
    mt->lapse_version = "test";
    mt->host = "h";
    mt->role = "worker";
    mt->run_id = "r";
    mt->job_id = "";
    mt->end_reason = "exit";
    mt->clock_source = "monotonic";
    mt->pid = 7;
    mt->rank = -1;
    mt->world_size = -1;
    mt->final = 1;
    mt->wall_ns = 1000000000ull;
    static store_node nodes[NODES];
    static store_thread threads[2] = {{1, "main"}, {2, "other"}};
    memset(nodes, 0, sizeof nodes);
    f.names = (char **)names;
    f.name_count = name_count;
    f.threads = threads;
    f.thread_count = 2;
    f.nodes = nodes;
    nodes[0] = (store_node){.parent = -1, .thread = 0};
    nodes[1] = (store_node){.parent = -1, .thread = 1};
    for (uint32_t i = 2; i < NODES; i++) {
        uint32_t p = (uint32_t)(rng() % i);
        nodes[i].parent = (int32_t)p;
        nodes[i].thread = nodes[p].thread;
        nodes[i].depth = nodes[p].depth + 1;
        nodes[i].name = 1 + (uint32_t)(rng() % (name_count - 1));
    }
    f.node_count = NODES;
    run_model m;
    memset(&m, 0, sizeof m);
    CHECK(run_model_add(&m, "a.lapse", &f) == 0);
    CHECK(run_model_finish(&m, NULL) == 0);
    run_stats s;
    CHECK(run_stats_build(&m, 0, &s) == 0);
    CHECK_EQ_U64(s.role_count, 1);
    CHECK_EQ_U64(s.roles[0].phase_count, m.path_count - 1);
    uint8_t *seen = calloc(m.path_count, 1);
    int sorted = 1, each_once = 1;
    for (uint32_t i = 0; i < s.roles[0].phase_count; i++) {
        uint32_t p = s.roles[0].phases[i];
        each_once &= p < m.path_count && !seen[p];
        if (p < m.path_count)
            seen[p] = 1;
        if (i) {
            uint32_t q = s.roles[0].phases[i - 1];
            char a[RM_PATH_BUF], b[RM_PATH_BUF];
            int c = strcmp(rm_path_str(&m, q, a), rm_path_str(&m, p, b));
            sorted &= c < 0 || (c == 0 && q < p);
        }
    }
    CHECK(sorted);
    CHECK(each_once);
    free(seen);
    run_stats_free(&s);
    run_model_free(&m);
}

int main(void)
{
    /* prefixes followed by bytes after '/': the tree's order */
    static const char *const tree[] = {"", "a", "b", "ab", "a0", "b_1", "ba", "abc", "B", "a~"};
    /* "a." and "a-" sort before "a/...": the strings' order; and names with "/" */
    static const char *const strings[] = {"", "a", "a.", "a-", "a.b", "b", "a/b", "ab", "x/"};
    static const char *const slash[] = {"", "a", "b", "a/b", "c"};
    for (int round = 0; round < 30; round++) {
        one_run(tree, sizeof tree / sizeof *tree);
        one_run(strings, sizeof strings / sizeof *strings);
        one_run(slash, sizeof slash / sizeof *slash);
    }
    return check_done("test_path_order");
}
