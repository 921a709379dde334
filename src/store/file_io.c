#include "file_io.h"

#include "codec.h"
#include "crc32.h"
#include "pack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int store_write_file(const char *path, const store_file *f, unsigned flags, char *err, size_t errlen)
{
    bytes_out out = {0};
    int rc = store_encode(f, &out);
    if (rc) {
        snprintf(err, errlen, "out of memory encoding %s", path);
    } else {
        rc = store_write_atomic(path, out.data, out.len, flags, err, errlen);
    }
    bytes_out_free(&out);
    return rc;
}

/* ---- reading ---- */

const char *store_file_kind(unsigned mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "not a plain file";
}

int store_open_regular(const char *path, struct stat *st, char *err, size_t errlen)
{
    /* what is not a regular file is not opened at all (a device's open has effects) */
    if (lstat(path, st) == 0 && !S_ISREG(st->st_mode)) {
        snprintf(err, errlen, "not read: %s, not a regular file", store_file_kind(st->st_mode));
        return S_ISLNK(st->st_mode) ? -ELOOP : -EINVAL;
    }
    /* it may change before the open: O_NONBLOCK, opening a FIFO or a device never
     * waits for a writer; O_NOFOLLOW, a link put in its place is not followed */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            snprintf(err, errlen, "not read: a symbolic link, not a regular file");
        else
            snprintf(err, errlen, "cannot open: %s", strerror(e));
        return -e;
    }
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        snprintf(err, errlen, "cannot stat: %s", strerror(e));
        return -e;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        snprintf(err, errlen, "not read: %s, not a regular file", store_file_kind(st->st_mode));
        return -EINVAL;
    }
    return fd;
}

/* What is read: an open file, or bytes in memory (data, len) that stand for a file
 * of size bytes, those past len a hole (zeros): a file a reader held in part. */
typedef struct source {
    int fd; /* -1 for bytes in memory */
    const uint8_t *data;
    size_t len;
    uint64_t size;
} source;

/* Reads n bytes at off; 0, or -EIO when the file ends first, or -errno. */
static int read_at(const source *src, uint64_t off, void *buf, size_t n)
{
    uint8_t *p = buf;
    if (src->fd < 0) {
        if (off > src->size || n > src->size - off)
            return -EIO;
        size_t have = off < src->len ? src->len - (size_t)off : 0;
        if (have > n)
            have = n;
        if (have)
            memcpy(p, src->data + off, have);
        memset(p + have, 0, n - have);
        return 0;
    }
    int fd = src->fd;
    while (n) {
        ssize_t got = pread(fd, p, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -errno;
        if (got == 0)
            return -EIO;
        p += got;
        off += (uint64_t)got;
        n -= (size_t)got;
    }
    return 0;
}

/* One line for a failed read_at; a file that ends early is a file cut short. */
static int read_failed(int rc, char *err, size_t errlen)
{
    if (rc == -EIO) {
        snprintf(err, errlen, "file is cut short (it changed while it was read)");
        return -EINVAL;
    }
    snprintf(err, errlen, "cannot read: %s", strerror(-rc));
    return rc;
}

#define STREAM_CHUNK (64u * 1024u)

/* One .lapse image at [base, base + len) of an open file, read as its framing says:
 * the header first, then each section header before the payload it announces. A
 * payload the decoder does not want is only run through its checksum, a chunk at a
 * time. *consumed: how far into the file it read (base + the bytes it examined).
 * Memory the file's content needs and cannot get is this file's failure (-EFBIG). */
static int read_image(const source *src, uint64_t base, uint64_t len, unsigned flags, store_file *f,
                      uint64_t *consumed, char *err, size_t errlen)
{
    store_decoder d;
    store_decoder_begin(&d, f, flags, err, errlen);
    *consumed = base;
    uint8_t head[STORE_FILE_HEADER_SIZE];
    size_t hl = len < sizeof head ? (size_t)len : sizeof head;
    int rc = read_at(src, base, head, hl);
    if (rc)
        return read_failed(rc, err, errlen);
    *consumed = base + hl;
    store_header h;
    if ((rc = store_header_check(head, hl, &h, err, errlen)) != 0)
        return rc;
    if (h.total != len) {
        snprintf(err, errlen, "file is truncated: %llu of %llu bytes", (unsigned long long)len,
                 (unsigned long long)h.total);
        return -EINVAL;
    }
    uint8_t *scratch = NULL, *payload = NULL;
    uint64_t pos = STORE_FILE_HEADER_SIZE;
    for (uint32_t i = 0; i < h.sections && rc == 0 && !d.done; i++) {
        uint8_t sh[STORE_SECTION_HEADER_SIZE];
        store_section s;
        if (len - pos < STORE_SECTION_HEADER_SIZE) {
            snprintf(err, errlen, "section %u is cut short", i);
            rc = -EINVAL;
            break;
        }
        if ((rc = read_at(src, base + pos, sh, sizeof sh)) != 0) {
            rc = read_failed(rc, err, errlen);
            break;
        }
        pos += sizeof sh;
        *consumed = base + pos;
        if ((rc = store_section_check(sh, i, &s, err, errlen)) != 0)
            break;
        if (s.len > len - pos) {
            snprintf(err, errlen, "section %u is cut short", i);
            rc = -EINVAL;
            break;
        }
        uint32_t crc = 0;
        if (store_decoder_wants(&d, s.type)) {
            payload = (uint64_t)(size_t)s.len == s.len ? malloc(s.len ? (size_t)s.len : 1u) : NULL;
            if (!payload) {
                snprintf(err, errlen, "out of memory reading section %u (%llu bytes)", i,
                         (unsigned long long)s.len);
                rc = -EFBIG;
                break;
            }
            if ((rc = read_at(src, base + pos, payload, (size_t)s.len)) != 0) {
                rc = read_failed(rc, err, errlen);
                break;
            }
            crc = store_crc32(payload, (size_t)s.len);
        } else {
            if (!scratch && !(scratch = malloc(STREAM_CHUNK))) {
                snprintf(err, errlen, "out of memory");
                rc = -EFBIG;
                break;
            }
            for (uint64_t at = 0; at < s.len && rc == 0; at += STREAM_CHUNK) {
                size_t n = s.len - at < STREAM_CHUNK ? (size_t)(s.len - at) : STREAM_CHUNK;
                if ((rc = read_at(src, base + pos + at, scratch, n)) == 0)
                    crc = store_crc32_update(crc, scratch, n);
            }
            if (rc) {
                rc = read_failed(rc, err, errlen);
                break;
            }
        }
        pos += s.len;
        *consumed = base + pos;
        if (crc != s.crc) {
            snprintf(err, errlen, "section %u checksum mismatch", i);
            rc = -EINVAL;
            break;
        }
        rc = store_decoder_section(&d, &s, payload);
        free(payload);
        payload = NULL;
        if (rc == -ENOMEM)
            rc = -EFBIG; /* "out of memory" is in err */
        uint64_t pad = (8 - (s.len & 7)) & 7;
        if (rc == 0 && pad > len - pos) {
            snprintf(err, errlen, "section %u is cut short", i);
            rc = -EINVAL;
        }
        pos += pad;
        *consumed = base + (pos < len ? pos : len);
    }
    free(payload);
    free(scratch);
    if (rc == 0)
        rc = store_decoder_finish(&d, h.version);
    if (rc)
        store_file_free(f);
    return rc;
}

/* The bytes held for a file (store_held): all of it when read_each accepted it, else
 * the first `upto` bytes, those it examined before it refused it. */
static int hold_bytes(int fd, uint64_t size, uint64_t upto, store_held *held)
{
    const source fsrc = {fd, NULL, 0, size}, *src = &fsrc;
    held->size = size;
    held->len = 0;
    held->data = malloc(upto ? (size_t)upto : 1u);
    if (!held->data)
        return -ENOMEM;
    if (read_at(src, 0, held->data, (size_t)upto) != 0)
        upto = 0; /* it shrank: hold nothing */
    held->len = (size_t)upto;
    return 0;
}

int store_read_file(const char *path, unsigned flags, store_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    int fd = store_open_regular(path, &st, err, errlen);
    if (fd < 0)
        return fd;
    uint64_t consumed;
    const source src = {fd, NULL, 0, (uint64_t)st.st_size};
    int rc = read_image(&src, 0, (uint64_t)st.st_size, flags, f, &consumed, err, errlen);
    close(fd);
    return rc;
}

int store_read_fd(int fd, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return -EINVAL;
    }
    store_held held;
    if (hold_bytes(fd, (uint64_t)st.st_size, (uint64_t)st.st_size, &held) != 0) {
        snprintf(err, errlen, "out of memory reading %llu bytes", (unsigned long long)st.st_size);
        return -ENOMEM;
    }
    *data = held.data;
    *len = held.len;
    return 0;
}

int store_read_bytes(const char *path, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    int fd = store_open_regular(path, &st, err, errlen);
    if (fd < 0) {
        *data = NULL;
        *len = 0;
        return fd;
    }
    int rc = store_read_fd(fd, data, len, err, errlen);
    close(fd);
    return rc;
}

/* Calls fn for an image that was not decoded. */
static int not_read(store_each_fn fn, void *ctx, const char *name, const char *why,
                    const char *same_as)
{
    store_image im = {name, NULL, why, same_as};
    return fn(ctx, &im);
}

static int read_pack(const source *src, const char *path, uint64_t size, unsigned flags, store_each_fn fn,
                     void *ctx, uint64_t *consumed, char *err, size_t errlen)
{
    uint8_t head[STORE_PACK_HEADER_SIZE];
    size_t hl = size < sizeof head ? (size_t)size : sizeof head;
    int rc = read_at(src, 0, head, hl);
    if (rc)
        return read_failed(rc, err, errlen);
    *consumed = hl;
    store_pack_header_info h;
    if ((rc = store_pack_header(head, hl, size, &h, err, errlen)) != 0)
        return rc;
    uint8_t *index = malloc(h.index_len ? h.index_len : 1u);
    if (!index) {
        snprintf(err, errlen, "out of memory reading a pack index of %zu bytes", h.index_len);
        return -EFBIG;
    }
    store_pack_member *members = NULL;
    if ((rc = read_at(src, STORE_PACK_HEADER_SIZE, index, h.index_len)) != 0)
        rc = read_failed(rc, err, errlen);
    else
        rc = store_pack_members(index, &h, size, &members, err, errlen);
    *consumed = STORE_PACK_HEADER_SIZE + h.index_len;
    free(index);
    if (rc)
        return rc == -ENOMEM ? -EFBIG : rc;
    size_t name_len = strlen(path) + 16;
    char *name = malloc(name_len), *kept = malloc(name_len);
    if (!name || !kept) {
        snprintf(err, errlen, "out of memory");
        free(name);
        free(kept);
        free(members);
        return -ENOMEM;
    }
    *consumed = size; /* the index holds: the pack is read as a whole */
    for (uint32_t i = 0; i < h.members && rc == 0; i++) {
        char why[512] = "";
        snprintf(name, name_len, "%s[%u]", path, i);
        if (members[i].overlaps != STORE_PACK_NO_OVERLAP) {
            snprintf(kept, name_len, "%s[%u]", path, members[i].overlaps);
            rc = not_read(fn, ctx, name, "its bytes are those of another member of the pack", kept);
            continue;
        }
        store_file f;
        uint64_t upto;
        if (read_image(src, members[i].offset, members[i].length, flags, &f, &upto, why,
                       sizeof why) != 0) {
            rc = not_read(fn, ctx, name, why, NULL);
            continue;
        }
        store_image im = {name, &f, NULL, NULL};
        rc = fn(ctx, &im);
        store_file_free(&f);
    }
    if (rc)
        snprintf(err, errlen, "stopped reading the pack: %s", strerror(rc < 0 ? -rc : rc));
    free(name);
    free(kept);
    free(members);
    return rc;
}

/* The images of one file read from src (its size bytes), as store_read_each. */
static int read_each(const source *src, const char *path, unsigned flags, store_each_fn fn,
                     void *ctx, uint64_t *consumed, char *err, size_t errlen)
{
    uint64_t size = src->size;
    *consumed = 0;
    uint8_t magic[8];
    int rc;
    if (size >= sizeof magic && read_at(src, 0, magic, sizeof magic) == 0 &&
        store_is_pack(magic, sizeof magic)) {
        rc = read_pack(src, path, size, flags, fn, ctx, consumed, err, errlen);
    } else {
        store_file f;
        rc = read_image(src, 0, size, flags, &f, consumed, err, errlen);
        if (rc == 0) {
            store_image im = {path, &f, NULL, NULL};
            rc = fn(ctx, &im);
            store_file_free(&f);
        }
    }
    return rc;
}

int store_read_each(const char *path, unsigned flags, store_each_fn fn, void *ctx,
                    store_held *held, char *err, size_t errlen)
{
    if (held)
        memset(held, 0, sizeof *held);
    struct stat st;
    int fd = store_open_regular(path, &st, err, errlen);
    if (fd < 0)
        return fd;
    uint64_t size = (uint64_t)st.st_size, consumed = 0;
    const source src = {fd, NULL, 0, size};
    int rc = read_each(&src, path, flags, fn, ctx, &consumed, err, errlen);
    if (held && hold_bytes(fd, size, consumed, held) != 0 && rc == 0) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    close(fd);
    return rc;
}

int store_read_each_mem(const store_buffer *b, unsigned flags, store_each_fn fn, void *ctx,
                        char *err, size_t errlen)
{
    uint64_t consumed;
    const source src = {-1, b->data, b->len, b->size > b->len ? b->size : b->len};
    return read_each(&src, b->name, flags, fn, ctx, &consumed, err, errlen);
}

void store_held_free(store_held *held)
{
    free(held->data);
    memset(held, 0, sizeof *held);
}
