#include "file_update.h"

#include "codec.h"
#include "file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line when what was opened is not owner's; 0 when it is. */
static int check_owner(const char *what, const char *path, const struct stat *st, int64_t owner,
                       char *err, size_t errlen)
{
    if (owner < 0 || (int64_t)st->st_uid == owner)
        return 0;
    snprintf(err, errlen, "%s%s belongs to uid %lld, not to the target's uid %lld", what, path,
             (long long)st->st_uid, (long long)owner);
    return -EPERM;
}

int store_update_open(store_update *u, const char *path, int64_t owner, store_file *f, char *err,
                      size_t errlen)
{
    memset(f, 0, sizeof *f);
    u->dir_fd = -1;
    snprintf(u->path, sizeof u->path, "%s", path);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char dir[4096];
    size_t dir_len = slash ? (size_t)(slash - path) : 0;
    if (!*name || dir_len >= sizeof dir ||
        snprintf(u->name, sizeof u->name, "%s", name) >= (int)sizeof u->name) {
        snprintf(err, errlen, "%s: not a file name lapse writes", path);
        return -EINVAL;
    }
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (!dir_len)
        snprintf(dir, sizeof dir, "/");
    else {
        memcpy(dir, path, dir_len);
        dir[dir_len] = 0;
    }
    u->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (u->dir_fd < 0) {
        int e = errno;
        snprintf(err, errlen, "its directory %s: %s", dir,
                 e == ENOTDIR || e == ELOOP ? "a link, not a directory" : strerror(e));
        return -e;
    }
    struct stat dst;
    int rc = fstat(u->dir_fd, &dst) != 0 ? -errno : 0;
    if (rc == 0)
        rc = check_owner("its directory ", dir, &dst, owner, err, errlen);
    int fd = -1;
    if (rc == 0) {
        /* O_NONBLOCK: a FIFO planted at the name never blocks the open */
        fd = openat(u->dir_fd, u->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            rc = -errno;
            snprintf(err, errlen, "%s", rc == -ELOOP ? "a link, not the target's file" : strerror(-rc));
        }
    }
    if (rc == 0 && fstat(fd, &u->st) != 0) {
        rc = -errno;
        snprintf(err, errlen, "%s", strerror(-rc));
    }
    if (rc == 0 && !S_ISREG(u->st.st_mode)) {
        rc = -EINVAL;
        snprintf(err, errlen, "not a regular file");
    }
    if (rc == 0)
        rc = check_owner("", path, &u->st, owner, err, errlen);
    uint8_t *data = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = store_read_fd(fd, &data, &len, err, errlen);
    if (fd >= 0)
        close(fd);
    if (rc == 0) {
        rc = store_decode(data, len, 0, f, err, errlen);
        free(data);
    }
    if (rc)
        store_update_close(u);
    return rc;
}

int store_update_write(store_update *u, const store_file *f, char *err, size_t errlen)
{
    bytes_out out = {0};
    int rc = store_encode(f, &out);
    if (rc) {
        snprintf(err, errlen, "out of memory encoding %s", u->path);
        bytes_out_free(&out);
        store_update_close(u);
        return rc;
    }
    store_out o;
    rc = store_out_open_at(&o, u->dir_fd, u->name, u->path, 0600, err, errlen);
    u->dir_fd = -1; /* o's now */
    if (rc) {
        bytes_out_free(&out);
        return rc;
    }
    /* the file stays its owner's, as readable as it was */
    if ((u->st.st_uid != geteuid() || u->st.st_gid != getegid()) &&
        fchown(o.fd, u->st.st_uid, u->st.st_gid) != 0)
        rc = -errno;
    else if (fchmod(o.fd, u->st.st_mode & 0777) != 0)
        rc = -errno;
    if (rc == 0)
        rc = store_out_write(&o, out.data, out.len);
    bytes_out_free(&out);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", u->path, strerror(-rc));
        store_out_abort(&o);
        return rc;
    }
    return store_out_commit(&o, err, errlen);
}

void store_update_close(store_update *u)
{
    if (u->dir_fd >= 0)
        close(u->dir_fd);
    u->dir_fd = -1;
}
