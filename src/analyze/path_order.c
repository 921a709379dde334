#include "path_order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Why the tree gives the order. A path's string is its parent's, "/", its name (a
 * top-level path: its name). Two paths x and y part at children x1 and y1 of one
 * path; their strings differ first inside "x1..." and "y1...". Where neither name
 * is a prefix of the other, the first difference lies inside both names: every
 * string under x1 compares with every string under y1 as x1 with y1. Where x1 is a
 * prefix of y1 and the next byte c of y1 comes after '/', the strings under x1 go
 * on with "/" or end, both before c: x1's subtree comes first, again as the names
 * compare. So siblings sorted by name, walked depth first, are in string order,
 * unless a name holds "/", a sibling's name is a prefix followed by a byte before
 * '/' ("step" and "step.1"), or a string was cut to RM_PATH_SHOWN ("..." first):
 * then the strings are sorted as they are. */

typedef struct path_key {
    const char *path;
    uint32_t index;
} path_key;

static int cmp_path_key(const void *a, const void *b)
{
    const path_key *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
    const run_model *m = ctx;
    return strcmp(rm_str(m, m->paths[*(const uint32_t *)a].name),
                  rm_str(m, m->paths[*(const uint32_t *)b].name));
}

/* The paths' strings made once into one buffer, sorted, freed: only for a tree whose
 * walk is not the strings' order. */
static int by_strings(const run_model *m, uint32_t r, uint32_t *out, uint32_t n)
{
    path_key *keys = malloc((n ? n : 1u) * sizeof *keys);
    size_t *at = malloc((n ? n : 1u) * sizeof *at);
    char buf[RM_PATH_BUF];
    size_t used = 0, cap = 0;
    char *text = NULL;
    int rc = -ENOMEM;
    if (!keys || !at)
        goto out;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->path_count && k < n; i++) {
        if (m->paths[i].role != r || i == m->roles[r].root)
            continue;
        const char *s = rm_path_str(m, i, buf);
        size_t len = strlen(s) + 1;
        if (cap - used < len) {
            size_t ncap = cap ? cap * 2 : 1u << 16;
            while (ncap - used < len)
                ncap *= 2;
            char *t = realloc(text, ncap);
            if (!t)
                goto out;
            text = t;
            cap = ncap;
        }
        memcpy(text + used, s, len);
        at[k] = used;
        keys[k++].index = i;
        used += len;
    }
    for (uint32_t i = 0; i < k; i++)
        keys[i].path = text + at[i];
    qsort(keys, k, sizeof *keys, cmp_path_key);
    for (uint32_t i = 0; i < k; i++)
        out[i] = keys[i].index;
    rc = 0;
out:
    free(keys);
    free(at);
    free(text);
    return rc;
}

/* Whether a sorted group of siblings is in string order as the tree walks it. */
static int tree_order_holds(const run_model *m, const uint32_t *kids, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        const char *a = rm_str(m, m->paths[kids[i]].name);
        if (strchr(a, '/') || rm_path_cut(m, kids[i]) ||
            (m->paths[kids[i]].depth == 1 && !strncmp(a, "...", 3)))
            return 0;
        if (i + 1 == count)
            break;
        const char *b = rm_str(m, m->paths[kids[i + 1]].name);
        size_t la = strlen(a);
        if (!strncmp(a, b, la) && (unsigned char)b[la] < '/')
            return 0;
    }
    return 1;
}

int path_order(const run_model *m, uint32_t r, uint32_t *out, uint32_t n)
{
    uint32_t root = m->roles[r].root;
    /* children by parent: kids[start[p] .. start[p + 1]) */
    uint32_t *start = calloc((size_t)m->path_count + 1u, sizeof *start);
    uint32_t *kids = malloc((n ? n : 1u) * sizeof *kids);
    if (!start || !kids) {
        free(start);
        free(kids);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < m->path_count; i++)
        if (m->paths[i].role == r && i != root)
            start[m->paths[i].parent + 1]++;
    for (uint32_t i = 0; i < m->path_count; i++)
        start[i + 1] += start[i];
    for (uint32_t i = 0; i < m->path_count; i++) /* start[p] moves up as p's kids go in */
        if (m->paths[i].role == r && i != root)
            kids[start[m->paths[i].parent]++] = i;
    for (uint32_t i = m->path_count; i > 0; i--) /* and back */
        start[i] = start[i - 1];
    start[0] = 0;
    int holds = 1;
    for (uint32_t p = 0; p < m->path_count && holds; p++) {
        uint32_t count = start[p + 1] - start[p];
        if (count > 1)
            qsort_r(kids + start[p], count, sizeof *kids, cmp_name, (void *)m);
        holds = tree_order_holds(m, kids + start[p], count);
    }
    uint32_t k = 0;
    if (holds) { /* depth first, each path's children in name order */
        uint32_t *stack = out; /* out fills from the front; the stack lives at its end */
        uint32_t top = n;
        for (uint32_t i = start[root + 1]; i-- > start[root];)
            stack[--top] = kids[i];
        while (top < n) {
            uint32_t p = stack[top++];
            out[k++] = p;
            for (uint32_t i = start[p + 1]; i-- > start[p];)
                stack[--top] = kids[i];
        }
    }
    free(start);
    free(kids);
    return holds ? 0 : by_strings(m, r, out, n);
}
