#include "run_dir.h"

#include "file_io.h"
#include "file_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* Entries passed over, and why (the two lists in step). */
typedef struct skip_list {
    path_list paths, whys;
} skip_list;

static int skip(skip_list *l, const char *path, const char *fmt, const char *arg)
{
    char why[4200];
    snprintf(why, sizeof why, fmt, arg);
    int rc = list_push(&l->paths, path);
    if (rc == 0 && (rc = list_push(&l->whys, why)) != 0)
        free(l->paths.items[--l->paths.count]);
    return rc;
}

static void skip_free(skip_list *l)
{
    list_free(&l->paths);
    list_free(&l->whys);
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

/* Where the entries of one directory tree may lead: links are followed only to
 * places inside `real` (the tree's own path with its links resolved), and named
 * there from `shown` (the tree's path as given). */
typedef struct tree {
    const char *shown;
    char real[PATH_MAX];
} tree;

/* For an entry that is a symbolic link: its target inside the tree, as a path from
 * the tree's given path (into out), or 0 with the reason it is not followed, or
 * -ENOMEM. */
static int follow(const tree *t, const char *path, char *out, size_t outlen, char *why,
                  size_t whylen)
{
    char *r = realpath(path, NULL);
    if (!r && errno == ENOMEM)
        return -ENOMEM;
    if (!r) {
        snprintf(why, whylen, errno == ELOOP ? "not read: a symbolic link loop"
                                             : "not read: a symbolic link to nothing");
        return 0;
    }
    size_t n = strlen(t->real);
    int inside = !strncmp(r, t->real, n) && (r[n] == '/' || (n == 1 && t->real[0] == '/'));
    if (!inside) {
        snprintf(why, whylen, "not read: a symbolic link that leaves the run directory (to %s)", r);
        free(r);
        return 0;
    }
    int ok = snprintf(out, outlen, "%s%s", t->shown, r + (n == 1 ? 0 : n)) < (int)outlen;
    free(r);
    if (!ok)
        snprintf(why, whylen, "not read: path too long");
    return ok;
}

/* Collects the .lapse files of dir and, if depth > 0, of its subdirectories, and
 * the entries named like one that are not read (links out of the tree or in a
 * loop, FIFOs, devices, sockets, directories). */
static int collect(const tree *t, const char *dir, int depth, path_list *files,
                   skip_list *skipped, uint64_t *newest)
{
    DIR *d = opendir(dir);
    if (!d) /* gone, or closed to this reader: nothing in it */
        return errno == ENOMEM ? -ENOMEM : 0;
    struct dirent *e;
    int rc = 0;
    char path[4096], target[4096], why[4200];
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        int named = is_lapse_name(e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        const char *at = path;
        if (S_ISLNK(st.st_mode)) {
            struct stat ts;
            int to_dir = stat(path, &ts) == 0 && S_ISDIR(ts.st_mode);
            int followed = follow(t, path, target, sizeof target, why, sizeof why);
            if (followed <= 0) {
                if (followed < 0)
                    rc = followed;
                else if (named || (to_dir && depth > 0))
                    rc = skip(skipped, path, "%s", why);
                continue;
            }
            if (lstat(target, &st) != 0)
                continue;
            at = target;
        }
        if (S_ISREG(st.st_mode) && named) {
            rc = list_push(files, at);
            if (mtime_ns(&st) > *newest)
                *newest = mtime_ns(&st);
        } else if (S_ISDIR(st.st_mode) && named) {
            rc = skip(skipped, path, "%s", "not read: a directory, not a .lapse file");
        } else if (S_ISDIR(st.st_mode) && depth > 0) {
            rc = collect(t, at, depth - 1, files, skipped, newest);
        } else if (named && !S_ISREG(st.st_mode)) {
            rc = skip(skipped, path, "not read: %s, not a regular file", store_file_kind(st.st_mode));
        }
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts l and drops repeats (a link and the file it names). */
static void sort_unique(path_list *l)
{
    if (!l->count)
        return;
    qsort(l->items, l->count, sizeof(char *), cmp_str);
    size_t n = 0;
    for (size_t i = 0; i < l->count; i++) {
        if (n && !strcmp(l->items[n - 1], l->items[i])) {
            free(l->items[i]);
            continue;
        }
        l->items[n++] = l->items[i];
    }
    l->count = n;
}

static int add_skipped(store_attempt *at, skip_list *skipped)
{
    size_t n = skipped->paths.count;
    if (!n)
        return 0;
    store_skipped *s = realloc(at->skipped, (at->skipped_count + n) * sizeof *s);
    if (!s)
        return -ENOMEM;
    at->skipped = s;
    for (size_t i = 0; i < n; i++) {
        s[at->skipped_count].path = skipped->paths.items[i];
        s[at->skipped_count].why = skipped->whys.items[i];
        at->skipped_count++;
    }
    skipped->paths.count = skipped->whys.count = 0;
    skip_free(skipped);
    return 0;
}

static int add_attempt(store_run_listing *out, const char *dir, path_list *files,
                       skip_list *skipped, uint64_t newest)
{
    store_attempt *a = realloc(out->attempts, (out->count + 1) * sizeof *a);
    if (!a)
        return -ENOMEM;
    out->attempts = a;
    sort_unique(files);
    store_attempt *at = &a[out->count++];
    memset(at, 0, sizeof *at);
    at->dir = strdup(dir);
    at->files = files->items;
    at->file_count = files->count;
    at->newest_mtime_ns = newest;
    memset(files, 0, sizeof *files);
    if (!at->dir)
        return -ENOMEM;
    return add_skipped(at, skipped);
}

static int cmp_attempt(const void *a, const void *b)
{
    const store_attempt *x = a, *y = b;
    if (x->newest_mtime_ns != y->newest_mtime_ns)
        return x->newest_mtime_ns < y->newest_mtime_ns ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

/* A directory of runs: each subdirectory holding files (or entries passed over) is
 * an attempt; a link to one already listed is not listed again. */
static int list_attempts(const tree *t, const char *path, store_run_listing *out,
                         skip_list *skipped)
{
    DIR *d = opendir(path);
    if (!d)
        return errno == ENOMEM ? -ENOMEM : 0;
    struct dirent *e;
    int rc = 0;
    char sub[4096], target[4096], why[4200];
    path_list seen = {0};
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub)
            continue;
        struct stat st;
        if (lstat(sub, &st) != 0)
            continue;
        const char *at = sub;
        if (S_ISLNK(st.st_mode)) {
            struct stat ts;
            if (stat(sub, &ts) != 0 || !S_ISDIR(ts.st_mode))
                continue;
            int followed = follow(t, sub, target, sizeof target, why, sizeof why);
            if (followed <= 0) {
                rc = followed < 0 ? followed : skip(skipped, sub, "%s", why);
                continue;
            }
            at = target;
            if (lstat(at, &st) != 0)
                continue;
        }
        if (!S_ISDIR(st.st_mode))
            continue;
        tree inner = {at, ""};
        if (!realpath(at, inner.real)) {
            if (errno == ENOMEM)
                rc = -ENOMEM;
            continue;
        }
        int again = 0;
        for (size_t i = 0; i < seen.count && !again; i++)
            again = !strcmp(seen.items[i], inner.real);
        if (again || (rc = list_push(&seen, inner.real)) != 0)
            continue;
        path_list files = {0};
        skip_list skips = {0};
        uint64_t newest = 0;
        rc = collect(&inner, at, 1, &files, &skips, &newest);
        if (rc == 0 && (files.count || skips.paths.count))
            rc = add_attempt(out, at, &files, &skips, newest);
        list_free(&files);
        skip_free(&skips);
    }
    closedir(d);
    list_free(&seen);
    return rc;
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
    skip_list skipped = {0};
    int rc = 0;
    if (S_ISREG(st.st_mode)) {
        /* the file asked for, through its links: it is read from where they lead */
        char *real = realpath(path, NULL);
        rc = real ? list_push(&files, real) : -errno;
        free(real);
        if (rc == 0)
            rc = add_attempt(out, path, &files, &skipped, mtime_ns(&st));
        if (rc == 0)
            out->attempts[0].single_file = 1;
    } else if (S_ISDIR(st.st_mode)) {
        tree t = {path, ""};
        if (!realpath(path, t.real)) {
            rc = -errno;
        } else {
            uint64_t newest = 0;
            rc = collect(&t, path, 1, &files, &skipped, &newest);
            if (rc == 0 && (files.count || skipped.paths.count))
                rc = add_attempt(out, path, &files, &skipped, newest);
            else if (rc == 0)
                rc = list_attempts(&t, path, out, &skipped);
        }
    } else {
        snprintf(err, errlen, "%s: not a file or directory", path);
        return -EINVAL;
    }
    if (rc == 0 && out->count == 0) {
        list_free(&files);
        skip_free(&skipped);
        snprintf(err, errlen, "%s: no .lapse files here (expected <run>/<host>/*.lapse)", path);
        return -ENOENT;
    }
    if (rc == 0) {
        qsort(out->attempts, out->count, sizeof *out->attempts, cmp_attempt);
        out->newest = out->count - 1;
        rc = add_skipped(&out->attempts[out->newest], &skipped); /* links among the runs */
    }
    list_free(&files);
    skip_free(&skipped);
    if (rc) {
        if (rc == -ENOMEM)
            snprintf(err, errlen, "%s: out of memory listing the run", path);
        else
            snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        store_run_listing_free(out);
        return rc;
    }
    return 0;
}

void store_run_listing_free(store_run_listing *l)
{
    for (size_t i = 0; i < l->count; i++) {
        store_attempt *a = &l->attempts[i];
        for (size_t k = 0; k < a->file_count; k++)
            free(a->files[k]);
        free(a->files);
        for (size_t k = 0; k < a->skipped_count; k++) {
            free(a->skipped[k].path);
            free(a->skipped[k].why);
        }
        free(a->skipped);
        free(a->dir);
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
        return errno == ENOMEM ? -ENOMEM : 0;
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
