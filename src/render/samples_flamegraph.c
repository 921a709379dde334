/* A self-contained interactive flame graph: an SVG whose inline script zooms on a
 * click, highlights what a search matches and resets. The tree is built here from
 * the stacks: all -> process (when more than one) -> thread -> frames, root first;
 * widths by the time the samples stand for (by sample counts when no sample carries
 * a time); frames narrower than MIN_WIDTH_PX are left out. */
#include "core/hash.h"
#include "store/sample_set.h"
#include "samples_write.h"
#include "samples_labels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_WIDTH 1200.0
#define SIDE_PAD 10.0
#define FRAME_HEIGHT 16
#define TOP_PAD 64
#define BOTTOM_PAD 34
#define MIN_WIDTH_PX 0.1
#define FONT_SIZE 12
#define CHAR_WIDTH 7.2 /* of the font at FONT_SIZE, roughly */

enum node_kind { NODE_ALL, NODE_PROCESS, NODE_THREAD, NODE_FRAME };

typedef struct node {
    uint32_t parent, first_child, next_sibling;
    uint32_t depth;
    int kind;
    uint64_t key; /* pid, thread index or frame id */
    uint64_t value, count;
    double x; /* left edge, in value units */
} node;

typedef struct tree {
    node *nodes;
    uint32_t count, cap;
    const store_samples *s;
    const samples_thread *threads;
} tree;

#define NO_NODE UINT32_MAX

static uint32_t child_of(tree *t, uint32_t parent, int kind, uint64_t key)
{
    for (uint32_t c = t->nodes[parent].first_child; c != NO_NODE; c = t->nodes[c].next_sibling)
        if (t->nodes[c].kind == kind && t->nodes[c].key == key)
            return c;
    if (t->count == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        node *n = realloc(t->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return NO_NODE;
        t->nodes = n;
        t->cap = cap;
    }
    uint32_t id = t->count++;
    t->nodes[id] = (node){parent, NO_NODE, t->nodes[parent].first_child,
                          t->nodes[parent].depth + 1, kind, key, 0, 0, 0};
    t->nodes[parent].first_child = id;
    return id;
}

static void add_to(tree *t, uint32_t n, uint64_t value, uint64_t count)
{
    t->nodes[n].value += value;
    t->nodes[n].count += count;
}

static char *node_label(const tree *t, const node *n, char *buf, size_t len)
{
    switch (n->kind) {
    case NODE_ALL: snprintf(buf, len, "all"); break;
    case NODE_PROCESS: samples_process_label(t->s, (int64_t)n->key, buf, len); break;
    case NODE_THREAD: samples_thread_label(t->s, &t->threads[n->key], buf, len); break;
    default: samples_frame_label(t->s, (uint32_t)n->key, buf, len); break;
    }
    return buf;
}

/* The name that picks a frame's colour: its function, so that a function keeps its
 * colour wherever it appears. */
static const char *colour_key(const tree *t, const node *n)
{
    if (n->kind != NODE_FRAME || n->key >= t->s->frame_count)
        return "";
    return t->s->strings[t->s->frames[n->key].function];
}

typedef struct sort_item {
    uint32_t id;
    char label[256];
} sort_item;

static int cmp_item(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

/* Orders each node's children by label and places them left to right. */
static int layout(tree *t)
{
    sort_item *items = NULL;
    size_t items_cap = 0;
    /* parents come before children in nodes[], so one pass in order places all */
    for (uint32_t p = 0; p < t->count; p++) {
        size_t n = 0;
        for (uint32_t c = t->nodes[p].first_child; c != NO_NODE; c = t->nodes[c].next_sibling)
            n++;
        if (n == 0)
            continue;
        if (n > items_cap) {
            sort_item *it = realloc(items, n * sizeof *it);
            if (!it) {
                free(items);
                return -ENOMEM;
            }
            items = it;
            items_cap = n;
        }
        size_t k = 0;
        for (uint32_t c = t->nodes[p].first_child; c != NO_NODE; c = t->nodes[c].next_sibling) {
            items[k].id = c;
            node_label(t, &t->nodes[c], items[k].label, sizeof items[k].label);
            k++;
        }
        qsort(items, n, sizeof *items, cmp_item);
        double x = t->nodes[p].x;
        for (size_t i = 0; i < n; i++) {
            t->nodes[items[i].id].x = x;
            x += (double)t->nodes[items[i].id].value;
        }
    }
    free(items);
    return 0;
}

static void fill_colour(const tree *t, const node *n, char *buf, size_t len)
{
    if (n->kind != NODE_FRAME) {
        snprintf(buf, len, "rgb(%d,%d,%d)", 190, 190, 200);
        return;
    }
    uint32_t h = (uint32_t)hash_mix(hash_str(colour_key(t, n)));
    /* flamegraph.pl's "hot" palette */
    int r = 205 + (int)(h % 51);
    int g = (int)((h >> 8) % 231);
    int b = (int)((h >> 16) % 56);
    snprintf(buf, len, "rgb(%d,%d,%d)", r, g, b);
}

static const char *script =
    "var svg, details, matchedtxt, searchbtn, unzoombtn, frames, searching = null;\n"
    "var W = %g, PAD = %g, CW = %g;\n"
    "function init(evt) {\n"
    "  svg = document.documentElement;\n"
    "  details = document.getElementById('details').firstChild;\n"
    "  matchedtxt = document.getElementById('matched');\n"
    "  searchbtn = document.getElementById('search');\n"
    "  unzoombtn = document.getElementById('unzoom');\n"
    "  frames = document.getElementById('frames').getElementsByTagName('g');\n"
    "  for (var i = 0; i < frames.length; i++) fit_text(frames[i]);\n"
    "  svg.addEventListener('click', on_click);\n"
    "  svg.addEventListener('mouseover', function(e) { var g = frame_of(e.target);\n"
    "    if (g) details.nodeValue = title_of(g); });\n"
    "  svg.addEventListener('mouseout', function(e) { if (frame_of(e.target)) details.nodeValue = ' '; });\n"
    "  window.addEventListener('keydown', function(e) {\n"
    "    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) { e.preventDefault(); search_prompt(); }\n"
    "    else if (e.keyCode === 27) { reset(); } });\n"
    "}\n"
    "function frame_of(el) { while (el && el.parentNode) {\n"
    "  if (el.tagName === 'g' && el.parentNode.id === 'frames') return el; el = el.parentNode; }\n"
    "  return null; }\n"
    "function title_of(g) { return g.getElementsByTagName('title')[0].textContent; }\n"
    "function label_of(g) { return g.getAttribute('data-label'); }\n"
    "function fit_text(g) {\n"
    "  var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
    "  var w = parseFloat(r.getAttribute('width')), x = parseFloat(r.getAttribute('x'));\n"
    "  t.setAttribute('x', x + 3);\n"
    "  var n = Math.floor((w - 6) / CW), s = label_of(g);\n"
    "  if (n < 3 || g.style.display === 'none') { t.textContent = ''; return; }\n"
    "  t.textContent = s.length <= n ? s : s.substring(0, n - 2) + '..';\n"
    "}\n"
    "function on_click(e) {\n"
    "  var el = e.target;\n"
    "  if (el.id === 'unzoom' || el.parentNode.id === 'unzoom') { reset_zoom(); return; }\n"
    "  if (el.id === 'search' || el.parentNode.id === 'search') { if (searching) reset_search(); else search_prompt(); return; }\n"
    "  var g = frame_of(el); if (g) zoom(g);\n"
    "}\n"
    "function zoom(node) {\n"
    "  var ox = parseFloat(node.getAttribute('data-x')), ow = parseFloat(node.getAttribute('data-w'));\n"
    "  var od = parseInt(node.getAttribute('data-d')), ratio = (W - 2 * PAD) / ow;\n"
    "  unzoombtn.style.opacity = '1';\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var g = frames[i], r = g.getElementsByTagName('rect')[0];\n"
    "    var x = parseFloat(g.getAttribute('data-x')), w = parseFloat(g.getAttribute('data-w'));\n"
    "    var d = parseInt(g.getAttribute('data-d'));\n"
    "    var eps = 1e-9 * ow;\n"
    "    if (d < od && x <= ox + eps && x + w >= ox + ow - eps) {\n"
    "      g.style.display = ''; g.style.opacity = '0.5';\n"
    "      r.setAttribute('x', PAD); r.setAttribute('width', W - 2 * PAD);\n"
    "    } else if (d >= od && x >= ox - eps && x + w <= ox + ow + eps) {\n"
    "      g.style.display = ''; g.style.opacity = '1';\n"
    "      r.setAttribute('x', PAD + (x - ox) * ratio); r.setAttribute('width', w * ratio);\n"
    "    } else { g.style.display = 'none'; }\n"
    "    fit_text(g);\n"
    "  }\n"
    "  if (searching) search(searching);\n"
    "}\n"
    "function reset_zoom() {\n"
    "  unzoombtn.style.opacity = '0';\n"
    "  var scale = (W - 2 * PAD) / parseFloat(frames[0].getAttribute('data-w'));\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var g = frames[i], r = g.getElementsByTagName('rect')[0];\n"
    "    g.style.display = ''; g.style.opacity = '1';\n"
    "    r.setAttribute('x', PAD + parseFloat(g.getAttribute('data-x')) * scale);\n"
    "    r.setAttribute('width', parseFloat(g.getAttribute('data-w')) * scale);\n"
    "    fit_text(g);\n"
    "  }\n"
    "  if (searching) search(searching);\n"
    "}\n"
    "function search_prompt() {\n"
    "  var term = prompt('Search for (a regular expression):', searching || '');\n"
    "  if (term) search(term);\n"
    "}\n"
    "function search(term) {\n"
    "  var re; try { re = new RegExp(term); } catch (err) { return; }\n"
    "  searching = term;\n"
    "  var total = parseFloat(frames[0].getAttribute('data-w')), spans = [];\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var g = frames[i], r = g.getElementsByTagName('rect')[0];\n"
    "    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
    "    if (re.test(label_of(g))) {\n"
    "      r.setAttribute('fill', 'rgb(230,0,230)');\n"
    "      spans.push([parseFloat(g.getAttribute('data-x')), parseFloat(g.getAttribute('data-w'))]);\n"
    "    } else { r.setAttribute('fill', r.getAttribute('data-fill')); }\n"
    "  }\n"
    "  spans.sort(function(a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
    "  var covered = 0, end = -1;\n"
    "  for (var k = 0; k < spans.length; k++) {\n"
    "    var a = spans[k][0], b = a + spans[k][1];\n"
    "    if (b <= end) continue; covered += b - Math.max(a, end); end = b;\n"
    "  }\n"
    "  searchbtn.firstChild.nodeValue = 'Reset search';\n"
    "  matchedtxt.firstChild.nodeValue = 'Matched: ' + (100 * covered / total).toFixed(1) + '%%';\n"
    "}\n"
    "function reset_search() {\n"
    "  searching = null;\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var r = frames[i].getElementsByTagName('rect')[0];\n"
    "    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill'));\n"
    "  }\n"
    "  searchbtn.firstChild.nodeValue = 'Search';\n"
    "  matchedtxt.firstChild.nodeValue = ' ';\n"
    "}\n"
    "function reset() { reset_zoom(); reset_search(); }\n";

int samples_write_flamegraph(const sample_set *set, FILE *out, const char *title)
{
    const store_samples *s = sample_set_view(set);
    samples_thread *threads;
    uint32_t thread_count, *thread_of;
    if (samples_threads(s, &threads, &thread_count, &thread_of))
        return -ENOMEM;
    uint32_t processes = samples_process_count(threads, thread_count);
    int by_weight = sample_set_total_weight_ns(set) > 0;

    tree t = {NULL, 0, 0, s, threads};
    int rc = 0;
    t.nodes = malloc(256 * sizeof *t.nodes);
    if (!t.nodes)
        rc = -ENOMEM;
    else {
        t.cap = 256;
        t.count = 1;
        t.nodes[0] = (node){NO_NODE, NO_NODE, NO_NODE, 0, NODE_ALL, 0, 0, 0, 0};
    }
    uint32_t max_depth = 0;
    for (uint32_t i = 0; i < s->stack_count && !rc; i++) {
        const store_sample_stack *st = &s->stacks[i];
        uint64_t v = by_weight ? st->weight_ns : st->count;
        if (!v)
            continue;
        uint32_t n = 0;
        add_to(&t, n, v, st->count);
        if (processes > 1) {
            n = child_of(&t, n, NODE_PROCESS, (uint64_t)st->pid);
            if (n == NO_NODE) {
                rc = -ENOMEM;
                break;
            }
            add_to(&t, n, v, st->count);
        }
        n = child_of(&t, n, NODE_THREAD, thread_of[i]);
        if (n != NO_NODE)
            add_to(&t, n, v, st->count);
        for (uint32_t d = 0; d < st->depth && n != NO_NODE; d++) {
            n = child_of(&t, n, NODE_FRAME, s->frame_ids[st->first + d]);
            if (n != NO_NODE)
                add_to(&t, n, v, st->count);
        }
        if (n == NO_NODE) {
            rc = -ENOMEM;
            break;
        }
        if (t.nodes[n].depth > max_depth)
            max_depth = t.nodes[n].depth;
    }
    if (!rc)
        rc = layout(&t);
    if (rc) {
        free(t.nodes);
        free(threads);
        free(thread_of);
        return rc;
    }
    double total = t.nodes[0].value ? (double)t.nodes[0].value : 1.0;
    double scale = (IMAGE_WIDTH - 2 * SIDE_PAD) / total;
    int height = TOP_PAD + BOTTOM_PAD + (int)(max_depth + 1) * FRAME_HEIGHT;
    char label[1024], colour[32];

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
    fprintf(out, "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
                 "height=\"%d\" viewBox=\"0 0 %g %d\" onload=\"init(evt)\">\n",
            IMAGE_WIDTH, height, IMAGE_WIDTH, height);
    fprintf(out, "<style type=\"text/css\">\n"
                 "text { font-family: monospace; font-size: %dpx; fill: rgb(0,0,0); }\n"
                 "#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
                 "#frames text { pointer-events: none; }\n"
                 ".button { cursor: pointer; fill: rgb(0,0,160); }\n"
                 "</style>\n",
            FONT_SIZE);
    fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n");
    fprintf(out, script, IMAGE_WIDTH, SIDE_PAD, CHAR_WIDTH);
    fprintf(out, "]]></script>\n");
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%g\" height=\"%d\" fill=\"rgb(248,248,240)\"/>\n",
            IMAGE_WIDTH, height);
    fprintf(out, "<text x=\"%g\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\">",
            IMAGE_WIDTH / 2);
    samples_xml_text(out, title ? title : "Python samples");
    fprintf(out, "</text>\n");
    fprintf(out, "<text x=\"%g\" y=\"44\" text-anchor=\"middle\">", IMAGE_WIDTH / 2);
    char sub[512];
    snprintf(sub, sizeof sub,
             "mode %s, %llu samples, asked %.6g Hz, achieved %.6g Hz, %llu late, %llu read "
             "errors; widths: %s (estimates from sampling)",
             s->mode ? s->mode : "", (unsigned long long)sample_set_total_count(set),
             s->rate_asked_hz, s->rate_achieved_hz, (unsigned long long)s->late_samples,
             (unsigned long long)s->read_errors,
             by_weight ? "time the samples stand for" : "sample counts");
    samples_xml_text(out, sub);
    fprintf(out, "</text>\n");
    fprintf(out, "<text id=\"unzoom\" class=\"button\" x=\"%g\" y=\"24\" style=\"opacity:0\">"
                 "Reset zoom</text>\n",
            SIDE_PAD);
    fprintf(out, "<text id=\"search\" class=\"button\" x=\"%g\" y=\"24\" text-anchor=\"end\">"
                 "Search</text>\n",
            IMAGE_WIDTH - SIDE_PAD);
    fprintf(out, "<text id=\"matched\" x=\"%g\" y=\"%d\" text-anchor=\"end\"> </text>\n",
            IMAGE_WIDTH - SIDE_PAD, height - 12);
    fprintf(out, "<text id=\"details\" x=\"%g\" y=\"%d\"> </text>\n", SIDE_PAD, height - 12);
    fprintf(out, "<g id=\"frames\">\n");
    uint64_t total_count = t.nodes[0].count;
    for (uint32_t i = 0; i < t.count; i++) {
        const node *n = &t.nodes[i];
        double w = (double)n->value * scale;
        if (i && w < MIN_WIDTH_PX)
            continue;
        double x = SIDE_PAD + n->x * scale;
        int y = height - BOTTOM_PAD - (int)(n->depth + 1) * FRAME_HEIGHT;
        node_label(&t, n, label, sizeof label);
        fill_colour(&t, n, colour, sizeof colour);
        char share[32];
        snprintf(share, sizeof share, "%.2f%%", 100.0 * (double)n->value / total);
        fprintf(out, "<g data-x=\"%.17g\" data-w=\"%.17g\" data-d=\"%u\" data-label=\"", n->x,
                (double)n->value, n->depth);
        samples_xml_text(out, label);
        fprintf(out, "\"><title>");
        samples_xml_text(out, label);
        if (by_weight)
            fprintf(out, " (%llu of %llu samples, about %.3f ms, %s)",
                    (unsigned long long)n->count, (unsigned long long)total_count,
                    (double)n->value / 1e6, share);
        else
            fprintf(out, " (%llu of %llu samples, %s)", (unsigned long long)n->count,
                    (unsigned long long)total_count, share);
        fprintf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
                     "fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\"></text></g>\n",
                x, y, w, FRAME_HEIGHT - 1, colour, x + 3, y + FRAME_HEIGHT - 4);
    }
    fprintf(out, "</g>\n</svg>\n");
    free(t.nodes);
    free(threads);
    free(thread_of);
    return ferror(out) ? -EIO : 0;
}
