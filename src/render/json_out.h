/* A small streaming JSON writer: objects, arrays, escaped strings, numbers. Output
 * is pretty-printed with two-space indentation. Strings are written as valid UTF-8
 * JSON whatever bytes they hold: control characters, quotes and backslashes are
 * escaped, and each byte that is not part of valid UTF-8 becomes U+FFFD. */
#ifndef LAPSE_RENDER_JSON_OUT_H
#define LAPSE_RENDER_JSON_OUT_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct json_out {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH]; /* values written so far at each level */
    int compact;               /* nonzero: one line, no indentation */
} json_out;

void json_init(json_out *j, FILE *f);

/* key is NULL inside arrays and for the top-level value. */
void json_begin_object(json_out *j, const char *key);
void json_end_object(json_out *j);
void json_begin_array(json_out *j, const char *key);
void json_end_array(json_out *j);

void json_str(json_out *j, const char *key, const char *v); /* NULL -> null */
void json_u64(json_out *j, const char *key, uint64_t v);
void json_i64(json_out *j, const char *key, int64_t v);
/* Non-finite -> null. Written with up to `digits` significant digits (%.*g). */
void json_double(json_out *j, const char *key, double v, int digits);
/* Rounded to the nearest integer; non-finite or negative -> null. */
void json_ns(json_out *j, const char *key, double ns);
void json_bool(json_out *j, const char *key, int v);
void json_null(json_out *j, const char *key);
/* Ends the document with a newline. */
void json_finish(json_out *j);

/* Writes s as a JSON string literal (with quotes) to f. */
void json_write_string(FILE *f, const char *s);

/* The body of s's JSON string literal (no quotes), escaped as json_write_string
 * does, into buf: at most cap-1 bytes and a NUL; returns the length the whole escape
 * needs (without the NUL), like snprintf. For writers that escape a name once and
 * write it many times (perfetto.c). */
size_t json_escape(char *buf, size_t cap, const char *s);

#endif
