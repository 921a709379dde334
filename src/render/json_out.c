#include "json_out.h"

#include <math.h>
#include <string.h>

void json_init(json_out *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
}

static void newline(json_out *j)
{
    if (j->compact)
        return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Separator, indentation and key before a value. */
static void prefix(json_out *j, const char *key)
{
    int level = j->depth < JSON_MAX_DEPTH ? j->depth : JSON_MAX_DEPTH - 1;
    if (j->depth > 0) {
        if (j->count[level]++)
            fputc(',', j->f);
        newline(j);
    }
    if (key) {
        json_write_string(j->f, key);
        fputs(j->compact ? ":" : ": ", j->f);
    }
}

static void open_(json_out *j, const char *key, char c)
{
    prefix(j, key);
    fputc(c, j->f);
    j->depth++;
    if (j->depth < JSON_MAX_DEPTH)
        j->count[j->depth] = 0;
}

static void close_(json_out *j, char c)
{
    int had = j->depth < JSON_MAX_DEPTH ? j->count[j->depth] : 1;
    j->depth--;
    if (had)
        newline(j);
    fputc(c, j->f);
}

void json_begin_object(json_out *j, const char *key) { open_(j, key, '{'); }
void json_end_object(json_out *j) { close_(j, '}'); }
void json_begin_array(json_out *j, const char *key) { open_(j, key, '['); }
void json_end_array(json_out *j) { close_(j, ']'); }

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the bytes there are not one. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    unsigned cp = c & (0x7fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void json_write_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            s++;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            s++;
        } else if (c < 0x80) {
            fputc((int)c, f);
            s++;
        } else {
            int n = utf8_len(s);
            if (n == 0) {
                fputs("\\ufffd", f);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, f);
                s += n;
            }
        }
    }
    fputc('"', f);
}

void json_str(json_out *j, const char *key, const char *v)
{
    prefix(j, key);
    if (v)
        json_write_string(j->f, v);
    else
        fputs("null", j->f);
}

void json_u64(json_out *j, const char *key, uint64_t v)
{
    prefix(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(json_out *j, const char *key, int64_t v)
{
    prefix(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void json_double(json_out *j, const char *key, double v, int digits)
{
    prefix(j, key);
    if (!isfinite(v))
        fputs("null", j->f);
    else if (v == 0.0)
        fputs("0", j->f); /* no "-0" */
    else
        fprintf(j->f, "%.*g", digits, v);
}

void json_ns(json_out *j, const char *key, double ns)
{
    prefix(j, key);
    if (!isfinite(ns) || ns < 0.0)
        fputs("null", j->f);
    else if (ns >= 9.2e18)
        fprintf(j->f, "%.0f", ns);
    else
        fprintf(j->f, "%lld", llround(ns));
}

void json_bool(json_out *j, const char *key, int v)
{
    prefix(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json_out *j, const char *key)
{
    prefix(j, key);
    fputs("null", j->f);
}

void json_finish(json_out *j)
{
    fputc('\n', j->f);
}
