#include "file_write.h"

#include "../core/hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

unsigned store_share_from_env(void)
{
    const char *v = getenv("LAPSE_SHARE");
    return v && *v && strtol(v, NULL, 10) != 0 ? STORE_SHARE : 0;
}

uint32_t store_random_u32(void)
{
    uint32_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
        return v;
    static uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
                 ((uint64_t)getpid() << 40) +
                 __atomic_add_fetch(&counter, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
    return (uint32_t)hash_mix(x);
}

static void close_out(store_out *o)
{
    if (o->stream)
        fclose(o->stream);
    else if (o->fd >= 0)
        close(o->fd);
    o->stream = NULL;
    o->fd = -1;
    if (o->dir_fd >= 0)
        close(o->dir_fd);
    o->dir_fd = -1;
}

int store_out_open_at(store_out *o, int dir_fd, const char *name, const char *path, mode_t mode,
                      char *err, size_t errlen)
{
    o->dir_fd = dir_fd;
    o->fd = -1;
    o->stream = NULL;
    o->tmp[0] = 0;
    snprintf(o->path, sizeof o->path, "%s", path);
    if (snprintf(o->name, sizeof o->name, "%s", name) >= (int)sizeof o->name ||
        strlen(name) + 32 > sizeof o->tmp) {
        snprintf(err, errlen, "cannot create %s: file name too long", path);
        close_out(o);
        return -ENAMETOOLONG;
    }
    /* a name of its own each time: a file planted at one is never opened, another
     * name is drawn */
    int e = EEXIST;
    for (int tries = 0; tries < 64 && e == EEXIST; tries++) {
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%08x", name, (long)getpid(), store_random_u32());
        o->fd = openat(dir_fd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        e = o->fd < 0 ? errno : 0;
    }
    if (e) {
        snprintf(err, errlen, "cannot create %s.tmp.*: %s", path, strerror(e));
        o->tmp[0] = 0;
        close_out(o);
        return -e;
    }
    return 0;
}

int store_out_open(store_out *o, const char *path, unsigned flags, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char dir[4096];
    if (!*name) {
        snprintf(err, errlen, "cannot create %s: not a file name", path);
        return -EISDIR;
    }
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) >= sizeof dir) {
        snprintf(err, errlen, "cannot create %s: path too long", path);
        return -ENAMETOOLONG;
    } else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
    }
    int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(e));
        return -e;
    }
    return store_out_open_at(o, dir_fd, name, path, flags & STORE_SHARE ? 0640 : 0600, err, errlen);
}

int store_out_write(store_out *o, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(o->fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

FILE *store_out_stream(store_out *o)
{
    if (!o->stream)
        o->stream = fdopen(o->fd, "w");
    return o->stream;
}

void store_out_abort(store_out *o)
{
    if (o->tmp[0] && o->dir_fd >= 0)
        unlinkat(o->dir_fd, o->tmp, 0);
    close_out(o);
}

int store_out_commit(store_out *o, char *err, size_t errlen)
{
    int rc = 0;
    if (o->stream && (fflush(o->stream) != 0 || ferror(o->stream)))
        rc = -(errno ? errno : EIO);
    if (rc == 0 && fsync(o->fd) != 0)
        rc = -errno;
    int closed = o->stream ? fclose(o->stream) : close(o->fd);
    if (closed != 0 && rc == 0)
        rc = -errno;
    o->stream = NULL;
    o->fd = -1;
    if (rc == 0 && renameat(o->dir_fd, o->tmp, o->dir_fd, o->name) != 0)
        rc = -errno;
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(-rc));
        store_out_abort(o);
        return rc;
    }
    store_remove_dead_temps(o->dir_fd, o->name);
    close_out(o);
    return 0;
}

int store_write_atomic(const char *path, const void *data, size_t len, unsigned flags, char *err,
                       size_t errlen)
{
    store_out o;
    int rc = store_out_open(&o, path, flags, err, errlen);
    if (rc)
        return rc;
    rc = store_out_write(&o, data, len);
    if (rc) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
        store_out_abort(&o);
        return rc;
    }
    return store_out_commit(&o, err, errlen);
}

int store_make_dirs(const char *path, unsigned flags)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return -ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    mode_t mode = flags & STORE_SHARE ? 0750 : 0700;
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, mode) != 0 && errno != EEXIST)
                return -errno;
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int store_temp_pid(const char *entry, size_t base_len, long *pid)
{
    if (strncmp(entry + base_len, ".tmp.", 5) != 0)
        return 0;
    const char *p = entry + base_len + 5;
    long v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
        v = v * 10 + (*p - '0');
    if (!digits || v <= 0 || (*p && *p != '.'))
        return 0;
    *pid = v;
    return 1;
}

/* The length of the destination's name in entry when entry is a temporary that
 * store_remove_dead_temps may remove for a writer of name: one of name itself, or,
 * when name is a ".lapse" file, of any ".lapse" file in its directory (a killed
 * process's file is never written again, so its temporary would stay for good). */
static size_t temp_base_len(const char *entry, const char *name, size_t len)
{
    static const char lapse_ext[] = ".lapse";
    size_t ext = sizeof lapse_ext - 1;
    if (!strncmp(entry, name, len))
        return len;
    if (len < ext || strcmp(name + len - ext, lapse_ext) != 0)
        return 0;
    const char *at = strstr(entry, ".lapse.tmp.");
    return at && at != entry ? (size_t)(at - entry) + ext : 0;
}

int store_remove_dead_temps(int dir_fd, const char *name)
{
    int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    size_t len = strlen(name);
    long self = (long)getpid();
    uid_t uid = geteuid();
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid;
        size_t base = temp_base_len(e->d_name, name, len);
        if (!base || !store_temp_pid(e->d_name, base, &pid) || pid == self)
            continue;
        struct stat st;
        if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != uid)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its writer lives (or is another user's process) */
        removed += unlinkat(dir_fd, e->d_name, 0) == 0;
    }
    closedir(d);
    return removed;
}
