/* The one UTF-8 check of the renderers: what JSON, XML and text outputs keep of a
 * name's bytes, and what they replace. */
#ifndef LAPSE_RENDER_UTF8_H
#define LAPSE_RENDER_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one:
 * no overlong forms, no surrogates, nothing above U+10FFFF. Reads no byte past a
 * NUL (a continuation byte is never 0). */
size_t utf8_seq_len(const unsigned char *s);

#endif
