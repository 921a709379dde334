/* Temporaries that writers which died left in a run's directories. */
#include "run_model.h"

#include "store/run_dir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The directory part of path ("." when it has none), into buf. */
static const char *dir_of(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (!slash || n >= len)
        return slash ? NULL : ".";
    if (n == 0)
        return "/";
    memcpy(buf, path, n);
    buf[n] = 0;
    return buf;
}

/* Whether the files of dir were written on the reader's host: the host of the
 * worker whose file the temporary was to replace, else of any worker there, else
 * the directory's name (<run>/<host>/). */
static int dir_on_this_host(const run_model *m, const rm_host_view *view, const char *dir,
                            const store_temp *t, uint32_t *worker)
{
    *worker = RM_NONE;
    const char *host = NULL;
    char buf[4096];
    for (uint32_t i = 0; i < m->worker_count && *worker == RM_NONE; i++) {
        const char *wd = dir_of(m->workers[i].file, buf, sizeof buf);
        if (!strcmp(m->workers[i].file, t->file))
            *worker = i;
        if ((*worker == i || !host) && wd && !strcmp(wd, dir))
            host = m->workers[i].host;
    }
    if (!host) {
        const char *slash = strrchr(dir, '/');
        host = slash ? slash + 1 : dir;
    }
    return rm_on_this_host(view, host);
}

static int add_dir(run_model *m, const rm_host_view *view, const char *dir, uint32_t *cap)
{
    store_temp *t;
    size_t n;
    int rc = store_list_temps(dir, &t, &n);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint32_t worker;
        if (!dir_on_this_host(m, view, dir, &t[i], &worker) || !rm_pid_gone(view, t[i].pid))
            continue; /* a write in progress, or a writer this reader cannot check */
        if (m->leftover_count == *cap) {
            uint32_t c = *cap ? *cap * 2 : 4;
            rm_leftover *l = realloc(m->leftovers, c * sizeof *l);
            if (!l) {
                rc = -ENOMEM;
                break;
            }
            m->leftovers = l;
            *cap = c;
        }
        rm_leftover *l = &m->leftovers[m->leftover_count++];
        l->temp = t[i].path;
        l->file = t[i].file;
        t[i].path = t[i].file = NULL; /* the model's now */
        l->pid = t[i].pid;
        l->mtime_ns = t[i].mtime_ns;
        l->worker = worker;
    }
    store_temps_free(t, n);
    return rc;
}

int rm_find_leftovers(run_model *m, const rm_host_view *view, char *const *files, size_t count)
{
    uint32_t cap = m->leftover_count;
    char **dirs = calloc(count ? count : 1, sizeof *dirs); /* distinct, in order seen */
    size_t n = 0;
    int rc = dirs ? 0 : -ENOMEM;
    char buf[4096];
    for (size_t i = 0; i < count && rc == 0; i++) {
        const char *dir = dir_of(files[i], buf, sizeof buf);
        int seen = !dir;
        for (size_t k = n; k > 0 && !seen; k--) /* a run has few directories */
            seen = !strcmp(dirs[k - 1], dir);
        if (seen)
            continue;
        if (!(dirs[n] = strdup(dir)))
            rc = -ENOMEM;
        else
            rc = add_dir(m, view, dirs[n++], &cap);
    }
    for (size_t k = 0; k < n; k++)
        free(dirs[k]);
    free(dirs);
    return rc;
}
