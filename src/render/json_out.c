#include "json_out.h"

#include "utf8.h"

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

/* The JSON form of the character at s, into out (at most 6 bytes, their count in
 * *n); returns how many bytes of s it stands for. */
static size_t escape_one(const unsigned char *s, char out[6], size_t *n)
{
    static const char hex[] = "0123456789abcdef";
    unsigned c = *s;
    const char *two = NULL;
    switch (c) {
    case '"': two = "\\\""; break;
    case '\\': two = "\\\\"; break;
    case '\n': two = "\\n"; break;
    case '\r': two = "\\r"; break;
    case '\t': two = "\\t"; break;
    case '\b': two = "\\b"; break;
    case '\f': two = "\\f"; break;
    default: break;
    }
    if (two) {
        memcpy(out, two, 2);
        *n = 2;
        return 1;
    }
    if (c < 0x20 || c == 0x7f) {
        memcpy(out, "\\u00", 4);
        out[4] = hex[c >> 4];
        out[5] = hex[c & 15];
        *n = 6;
        return 1;
    }
    size_t k = utf8_seq_len(s);
    if (!k) {
        memcpy(out, "\\ufffd", 6);
        *n = 6;
        return 1;
    }
    memcpy(out, s, k);
    *n = k;
    return k;
}

/* Bytes at s that JSON keeps as they are. */
static size_t plain_run(const unsigned char *s)
{
    size_t i = 0;
    while (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

size_t json_escape(char *buf, size_t cap, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = 0;
    while (*s) {
        size_t run = plain_run(s), k;
        char e[6];
        const char *from = (const char *)s;
        if (run) {
            k = run;
            s += run;
        } else {
            s += escape_one(s, e, &k);
            from = e;
        }
        if (n < cap)
            memcpy(buf + n, from, k < cap - n ? k : cap - n);
        n += k;
    }
    if (cap)
        buf[n < cap ? n : cap - 1] = 0;
    return n;
}

void json_write_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        size_t run = plain_run(s);
        if (run) {
            fwrite(s, 1, run, f);
            s += run;
        } else {
            char e[6];
            size_t k;
            s += escape_one(s, e, &k);
            fwrite(e, 1, k, f);
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
