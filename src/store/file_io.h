/* Reading and atomically writing whole .lapse files. */
#ifndef LAPSE_STORE_FILE_IO_H
#define LAPSE_STORE_FILE_IO_H

#include "file_write.h"
#include "model.h"

#include <stddef.h>
#include <stdint.h>

/* Encodes f and writes it atomically (store_write_atomic; flags: STORE_SHARE). */
int store_write_file(const char *path, const store_file *f, unsigned flags, char *err, size_t errlen);

/* Opens path to read it, as every reader of a run opens a file: without waiting
 * (O_NONBLOCK: a FIFO or a device put there never blocks), without following a
 * symbolic link at its end (O_NOFOLLOW), and only a regular file (fstat, into *st).
 * Returns the descriptor, or a negative code with one line in err. */
struct stat;
int store_open_regular(const char *path, struct stat *st, char *err, size_t errlen);
/* "a FIFO", "a character device", ...: what a st_mode that is not a regular file is. */
const char *store_file_kind(unsigned mode);

/* Reads and decodes a file (flags: STORE_READ_*): its header first, then each
 * section after its header says how long it is, never more than that. On failure
 * err holds one line that names the problem. */
int store_read_file(const char *path, unsigned flags, store_file *f, char *err, size_t errlen);

/* Reads a whole regular file into a malloc'd buffer (free it). 0, or -errno with err. */
int store_read_bytes(const char *path, uint8_t **data, size_t *len, char *err, size_t errlen);
/* The same from an open file (a regular file, else -EINVAL). */
int store_read_fd(int fd, uint8_t **data, size_t *len, char *err, size_t errlen);

/* What store_read_each passes for each process image of a file. */
typedef struct store_image {
    const char *name;    /* the path, or "PATH[i]" for member i of a pack */
    const store_file *f; /* its content; NULL when it was not decoded */
    const char *why;     /* f NULL: why not, one line */
    const char *same_as; /* f NULL and not NULL: not decoded because it is the same process
                            as that image (a copy, or a pack member overlapping it) */
} store_image;
/* A non-zero return stops the reading and is returned. */
typedef int (*store_each_fn)(void *ctx, const store_image *im);

/* The bytes of a file a reader read: all of it when it took the file, else the
 * first `len` bytes, those it examined before it refused it (the rest was never
 * read, and a copy of it never holds it). `size` is the file's size. */
typedef struct store_held {
    uint8_t *data;
    size_t len;
    uint64_t size;
} store_held;
void store_held_free(store_held *held);

/* Reads a .lapse file (one image) or a pack of them (docs/format.md) and calls fn
 * for each image; a pack member that shares bytes with another is passed with
 * same_as and not decoded. Returns 0, fn's non-zero return, or a negative code
 * when the file itself cannot be opened, read, decoded or indexed (err says why;
 * fn is then not called for a plain file, nor for any member of a pack whose index
 * is bad); -EFBIG when its content needs more memory than there is. With held,
 * the bytes read are kept there (store_held_free). */
int store_read_each(const char *path, unsigned flags, store_each_fn fn, void *ctx,
                    store_held *held, char *err, size_t errlen);

/* A file given as bytes in memory: what a reader held of it (store_held). */
typedef struct store_buffer {
    const char *name;    /* its path, as reports name it */
    const uint8_t *data;
    size_t len;
    uint64_t size;       /* the file's size: past len a hole (zeros); len when smaller */
} store_buffer;

/* store_read_each of a file given as bytes (nothing is opened). */
int store_read_each_mem(const store_buffer *b, unsigned flags, store_each_fn fn, void *ctx,
                        char *err, size_t errlen);

#endif
