#include "html_page.h"
#include "format.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if LAPSE_HAVE_ZLIB
#include <zlib.h>
#endif

/* build/generated/view_assets.c (cmake/embed.cmake) */
extern const unsigned char view_js[], view_css[];
extern const unsigned long view_js_len, view_css_len;

int html_page_can_compress(void)
{
    return LAPSE_HAVE_ZLIB;
}

static void put_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* JSON as it is, with "<" as \u003c: "<" stands only inside strings in JSON, where
 * the escape means the same, and no "</script" nor "<!--" is left to end the element. */
static void put_json(FILE *out, const char *data, size_t len)
{
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        if (data[i] != '<')
            continue;
        fwrite(data + from, 1, i - from, out);
        fputs("\\u003c", out);
        from = i + 1;
    }
    fwrite(data + from, 1, len - from, out);
}

static void put_base64(FILE *out, const unsigned char *p, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        buf[k++] = abc[v >> 18 & 63];
        buf[k++] = abc[v >> 12 & 63];
        buf[k++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
        buf[k++] = i + 2 < n ? abc[v & 63] : '=';
        if (k + 4 > sizeof buf) {
            fwrite(buf, 1, k, out);
            k = 0;
        }
    }
    fwrite(buf, 1, k, out);
}

static int put_blob(FILE *out, const html_blob *b, int compress)
{
    fprintf(out, "<script type=\"application/json\" id=\"%s\" data-bytes=\"%zu\"", b->id, b->len);
#if LAPSE_HAVE_ZLIB
    if (compress) {
        uLongf zlen = compressBound((uLong)b->len);
        unsigned char *z = malloc(zlen ? zlen : 1);
        if (!z)
            return -ENOMEM;
        int zrc = compress2(z, &zlen, (const Bytef *)b->data, (uLong)b->len, 6);
        if (zrc != Z_OK) {
            free(z);
            return zrc == Z_MEM_ERROR ? -ENOMEM : -EIO;
        }
        fputs(" data-encoding=\"deflate-base64\">", out);
        put_base64(out, z, zlen);
        free(z);
        fputs("</script>\n", out);
        return 0;
    }
#else
    (void)compress;
#endif
    fputs(" data-encoding=\"json\">", out);
    put_json(out, b->data, b->len);
    fputs("</script>\n", out);
    return 0;
}

/* A shown frame of the flame's top and its shown kids, as nested lists. */
static void put_flame_node(FILE *out, const flame_top *t, uint32_t id)
{
    const flame_node *x = &t->nodes[id];
    char share[32], dur[32], count[32];
    fputs("<li><span class=\"fl-label\">", out);
    put_text(out, x->label);
    fprintf(out, "</span> %s, %s sampled, %s samples", fmt_percent(share, sizeof share, x->share),
            fmt_duration(dur, sizeof dur, (double)x->weight_ns),
            fmt_count(count, sizeof count, x->samples));
    if (x->hidden)
        fprintf(out, " (%u smaller not shown)", x->hidden);
    if (x->first_kid != UINT32_MAX) {
        fputs("<ul>", out);
        for (uint32_t k = x->first_kid; k != UINT32_MAX; k = t->nodes[k].next)
            put_flame_node(out, t, k);
        fputs("</ul>", out);
    }
    fputs("</li>", out);
}

static void put_flame_top(FILE *out, const flame_top *t)
{
    fprintf(out, "<section id=\"fl-static\"><h2>Python samples: the top of the flame graph "
                 "(estimates)</h2><p>Each frame with the share of the samples' time under it "
                 "(%d levels; what stands for less than %.0f%% is counted, not shown).</p><ul>",
            FLAME_TOP_DEPTH, FLAME_TOP_MIN_SHARE * 100);
    put_flame_node(out, t, 0);
    fputs("</ul></section>", out);
}

int html_page_write(FILE *out, const char *title, const html_blob *blobs, size_t n,
                    int compress, const flame_top *flame)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"lapse view\">\n<title>",
          out);
    put_text(out, title);
    fputs("</title>\n<style>\n", out);
    fwrite(view_css, 1, view_css_len, out);
    fputs("</style>\n</head>\n<body>\n<header id=\"top\"><h1>", out);
    put_text(out, title);
    fputs("</h1><nav id=\"tabs\"></nav></header>\n"
          "<main id=\"app\"><p id=\"loading\">Loading the report...</p>"
          "<noscript><p>This page draws the report with JavaScript: turn it on, or read "
          "the same figures with <code>lapse report</code>.</p>",
          out);
    if (flame && flame->count && flame->nodes[0].samples)
        put_flame_top(out, flame);
    fputs("</noscript></main>\n", out);
    for (size_t i = 0; i < n; i++) {
        int rc = put_blob(out, &blobs[i], compress && html_page_can_compress());
        if (rc)
            return rc;
    }
    fputs("<script>\n", out);
    fwrite(view_js, 1, view_js_len, out);
    fputs("</script>\n</body>\n</html>\n", out);
    return ferror(out) ? -EIO : 0;
}
