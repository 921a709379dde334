#include "file_io.h"

#include "codec.h"
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

int store_read_fd(int fd, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return -EINVAL;
    }
    size_t want = (size_t)st.st_size;
    uint8_t *buf = malloc(want ? want : 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory reading %zu bytes", want);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    *data = buf;
    *len = got;
    return 0;
}

int store_read_bytes(const char *path, uint8_t **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open: %s", strerror(e));
        return -e;
    }
    int rc = store_read_fd(fd, data, len, err, errlen);
    close(fd);
    return rc;
}

int store_read_file(const char *path, unsigned flags, store_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    uint8_t *data;
    size_t len;
    int rc = store_read_bytes(path, &data, &len, err, errlen);
    if (rc)
        return rc;
    rc = store_decode(data, len, flags, f, err, errlen);
    free(data);
    return rc;
}

int store_read_each(const char *path, unsigned flags, store_each_fn fn, void *ctx, char *err,
                    size_t errlen)
{
    uint8_t *data;
    size_t len;
    int rc = store_read_bytes(path, &data, &len, err, errlen);
    if (rc)
        return rc;
    store_file f;
    if (!store_is_pack(data, len)) {
        rc = store_decode(data, len, flags, &f, err, errlen);
        free(data);
        if (rc)
            return rc;
        rc = fn(ctx, path, &f, NULL);
        store_file_free(&f);
        return rc;
    }
    store_pack_member *members;
    uint32_t count;
    rc = store_pack_index(data, len, &members, &count, err, errlen);
    if (rc) {
        free(data);
        return rc;
    }
    size_t name_len = strlen(path) + 16;
    char *name = malloc(name_len);
    if (!name) {
        snprintf(err, errlen, "out of memory");
        free(members);
        free(data);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < count && rc == 0; i++) {
        char why[512] = "";
        snprintf(name, name_len, "%s[%u]", path, i);
        if (store_decode(data + members[i].offset, (size_t)members[i].length, flags, &f, why,
                         sizeof why) != 0) {
            rc = fn(ctx, name, NULL, why);
            continue;
        }
        rc = fn(ctx, name, &f, NULL);
        store_file_free(&f);
    }
    if (rc)
        snprintf(err, errlen, "stopped reading the pack: %s", strerror(rc < 0 ? -rc : rc));
    free(name);
    free(members);
    free(data);
    return rc;
}
