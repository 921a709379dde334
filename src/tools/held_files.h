/* The bytes a reader held of each file of an attempt (rm_options.hold,
 * store_read_attempt's hold): collected in reading order, then given back as the
 * attempt's files in memory (store_buffer), so that a second pass reads the same
 * bytes as the first and opens nothing. */
#ifndef LAPSE_TOOLS_HELD_FILES_H
#define LAPSE_TOOLS_HELD_FILES_H

#include "store/file_io.h"

#include <stddef.h>

typedef struct held_file {
    char *file; /* the path as listed */
    store_held held;
} held_file;

typedef struct held_files {
    held_file *items;
    size_t count, cap;
    int failed; /* out of memory: a file is missing */
} held_files;

/* The hold callback: ctx is a held_files (zeroed before the first call); takes held. */
void held_files_add(void *ctx, const char *file, store_held *held);
/* The files as buffers (items' names and bytes, not copied): an array of count, to
 * free(), or NULL when out of memory. */
store_buffer *held_files_buffers(const held_files *l);
void held_files_free(held_files *l);

#endif
