/* Reading and atomically writing whole .lapse files. */
#ifndef LAPSE_STORE_FILE_IO_H
#define LAPSE_STORE_FILE_IO_H

#include "model.h"

#include <stddef.h>

/* Writes data to path through a temporary file, fsync and rename, so a reader sees
 * the old file or the new one, never a mix. Returns 0 or -errno; err says why. */
int store_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Encodes f and writes it atomically. */
int store_write_file(const char *path, const store_file *f, char *err, size_t errlen);

/* Reads and decodes a whole file (flags: STORE_READ_*). On failure err holds one
 * line that names the problem. */
int store_read_file(const char *path, unsigned flags, store_file *f, char *err, size_t errlen);

/* mkdir -p; returns 0 or -errno. */
int store_make_dirs(const char *path);

#endif
