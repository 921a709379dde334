/* Reading and atomically writing whole .lapse files. */
#ifndef LAPSE_STORE_FILE_IO_H
#define LAPSE_STORE_FILE_IO_H

#include "file_write.h"
#include "model.h"

#include <stddef.h>
#include <stdint.h>

/* Encodes f and writes it atomically (store_write_atomic; flags: STORE_SHARE). */
int store_write_file(const char *path, const store_file *f, unsigned flags, char *err, size_t errlen);

/* Reads and decodes a whole file (flags: STORE_READ_*). On failure err holds one
 * line that names the problem. */
int store_read_file(const char *path, unsigned flags, store_file *f, char *err, size_t errlen);

/* Reads a whole file into a malloc'd buffer (free it). 0, or -errno with err. */
int store_read_bytes(const char *path, uint8_t **data, size_t *len, char *err, size_t errlen);
/* The same from an open file (a regular file, else -EINVAL). */
int store_read_fd(int fd, uint8_t **data, size_t *len, char *err, size_t errlen);

/* What store_read_each passes for each process image of a file: its name (the path,
 * or "PATH[i]" for member i of a pack) and its content, or NULL and why it could not
 * be decoded. A non-zero return stops the reading and is returned. */
typedef int (*store_each_fn)(void *ctx, const char *name, const store_file *f, const char *why);

/* Reads a .lapse file (one image) or a pack of them (docs/format.md) and calls fn
 * for each image. Returns 0, fn's non-zero return, or a negative code when the file
 * itself cannot be read, decoded or indexed (err says why; fn is then not called
 * for a plain file, nor for any member of a pack whose index is bad). */
int store_read_each(const char *path, unsigned flags, store_each_fn fn, void *ctx, char *err,
                    size_t errlen);

#endif
