#include "run_dir.h"

#include "file_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct path_list {
    char **items;
    size_t count, cap;
} path_list;

static int list_push(path_list *l, const char *s)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        l->items = p;
        l->cap = cap;
    }
    l->items[l->count] = strdup(s);
    if (!l->items[l->count])
        return -ENOMEM;
    l->count++;
    return 0;
}

static void list_free(path_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int is_lapse_name(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strcmp(name + n - 6, ".lapse") == 0 && name[0] != '.';
}

static uint64_t mtime_ns(const struct stat *st)
{
    return (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

/* Collects .lapse files in dir and, if depth > 0, in its subdirectories. */
static int collect(const char *dir, int depth, path_list *files, uint64_t *newest)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    char path[4096];
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISREG(st.st_mode) && is_lapse_name(e->d_name)) {
            rc = list_push(files, path);
            if (mtime_ns(&st) > *newest)
                *newest = mtime_ns(&st);
        } else if (S_ISDIR(st.st_mode) && depth > 0) {
            rc = collect(path, depth - 1, files, newest);
        }
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_attempt(store_run_listing *out, const char *dir, path_list *files, uint64_t newest)
{
    store_attempt *a = realloc(out->attempts, (out->count + 1) * sizeof *a);
    if (!a)
        return -ENOMEM;
    out->attempts = a;
    qsort(files->items, files->count, sizeof(char *), cmp_str);
    store_attempt *at = &a[out->count++];
    at->dir = strdup(dir);
    at->files = files->items;
    at->file_count = files->count;
    at->newest_mtime_ns = newest;
    memset(files, 0, sizeof *files);
    return at->dir ? 0 : -ENOMEM;
}

static int cmp_attempt(const void *a, const void *b)
{
    const store_attempt *x = a, *y = b;
    if (x->newest_mtime_ns != y->newest_mtime_ns)
        return x->newest_mtime_ns < y->newest_mtime_ns ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

int store_list_run(const char *path, store_run_listing *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    path_list files = {0};
    int rc = 0;
    if (S_ISREG(st.st_mode)) {
        rc = list_push(&files, path);
        if (rc == 0)
            rc = add_attempt(out, path, &files, mtime_ns(&st));
    } else if (S_ISDIR(st.st_mode)) {
        uint64_t newest = 0;
        rc = collect(path, 1, &files, &newest);
        if (rc == 0 && files.count) {
            rc = add_attempt(out, path, &files, newest);
        } else if (rc == 0) {
            /* a directory of runs: each subdirectory holding files is an attempt */
            DIR *d = opendir(path);
            struct dirent *e;
            char sub[4096];
            while (rc == 0 && d && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                    continue;
                if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub)
                    continue;
                struct stat sst;
                if (stat(sub, &sst) != 0 || !S_ISDIR(sst.st_mode))
                    continue;
                newest = 0;
                rc = collect(sub, 1, &files, &newest);
                if (rc == 0 && files.count)
                    rc = add_attempt(out, sub, &files, newest);
            }
            if (d)
                closedir(d);
        }
    } else {
        snprintf(err, errlen, "%s: not a file or directory", path);
        return -EINVAL;
    }
    list_free(&files);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        store_run_listing_free(out);
        return rc;
    }
    if (out->count == 0) {
        snprintf(err, errlen, "%s: no .lapse files here (expected <run>/<host>/*.lapse)", path);
        return -ENOENT;
    }
    qsort(out->attempts, out->count, sizeof *out->attempts, cmp_attempt);
    out->newest = out->count - 1;
    return 0;
}

void store_run_listing_free(store_run_listing *l)
{
    for (size_t i = 0; i < l->count; i++) {
        for (size_t k = 0; k < l->attempts[i].file_count; k++)
            free(l->attempts[i].files[k]);
        free(l->attempts[i].files);
        free(l->attempts[i].dir);
    }
    free(l->attempts);
    memset(l, 0, sizeof *l);
}

static int cmp_temp(const void *a, const void *b)
{
    return strcmp(((const store_temp *)a)->path, ((const store_temp *)b)->path);
}

int store_list_temps(const char *dir, store_temp **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t cap = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        const char *at = strstr(e->d_name, ".lapse.tmp.");
        long pid;
        size_t base = at ? (size_t)(at - e->d_name) + 6 : 0;
        struct stat st;
        if (!at || !store_temp_pid(e->d_name, base, &pid) ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 4;
            store_temp *t = realloc(*out, cap * sizeof *t);
            if (!t) {
                rc = -ENOMEM;
                break;
            }
            *out = t;
        }
        store_temp *t = &(*out)[*count];
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        t->path = malloc(n);
        t->file = malloc(n);
        if (!t->path || !t->file) {
            free(t->path);
            free(t->file);
            rc = -ENOMEM;
            break;
        }
        snprintf(t->path, n, "%s/%s", dir, e->d_name);
        snprintf(t->file, n, "%s/%.*s", dir, (int)base, e->d_name);
        t->pid = pid;
        t->uid = (uint32_t)st.st_uid;
        t->mtime_ns = mtime_ns(&st);
        (*count)++;
    }
    closedir(d);
    if (rc) {
        store_temps_free(*out, *count);
        *out = NULL;
        *count = 0;
        return rc;
    }
    if (*count)
        qsort(*out, *count, sizeof **out, cmp_temp);
    return 0;
}

void store_temps_free(store_temp *t, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(t[i].path);
        free(t[i].file);
    }
    free(t);
}
