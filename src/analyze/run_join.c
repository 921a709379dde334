#include "run_join.h"

#include "store/codec.h"
#include "store/file_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct times {
    uint64_t start, end;
    int seen;
} times;

static int take_meta(void *ctx, const store_image *im)
{
    times *t = ctx;
    if (!im->f)
        return 0;
    const store_meta *m = &im->f->meta;
    uint64_t end = m->write_real_ns;
    if (!m->final)
        end += 2ull * m->snapshot_interval_ms * 1000000ull + 1000000000ull;
    if (!t->seen || m->start_real_ns < t->start)
        t->start = m->start_real_ns;
    if (!t->seen || end > t->end)
        t->end = end;
    t->seen = 1;
    return 0;
}

static int attempt_times(const store_attempt *a, rj_attempt *out)
{
    times t = {0, 0, 0};
    for (size_t i = 0; i < a->file_count; i++) {
        char why[512];
        if (store_read_each(a->files[i], STORE_READ_META_ONLY, take_meta, &t, NULL, why,
                            sizeof why) == -ENOMEM)
            return -ENOMEM;
    }
    out->start_real_ns = t.seen ? t.start : a->newest_mtime_ns;
    out->end_real_ns = t.seen ? t.end : a->newest_mtime_ns;
    return 0;
}

int run_join_build(const store_run_listing *l, const char *path, run_join *j)
{
    memset(j, 0, sizeof *j);
    if (!(j->attempts = calloc(l->count, sizeof *j->attempts)))
        return -ENOMEM;
    size_t files = 0, skipped = 0;
    for (size_t i = 0; i < l->count; i++) {
        if (attempt_times(&l->attempts[i], &j->attempts[i]))
            goto fail;
        const rj_attempt *a = &j->attempts[i], *last = &j->attempts[j->last];
        if (a->start_real_ns > last->start_real_ns ||
            (a->start_real_ns == last->start_real_ns && i == l->newest))
            j->last = i;
    }
    uint64_t began = j->attempts[j->last].start_real_ns;
    for (size_t i = 0; i < l->count; i++) {
        rj_attempt *a = &j->attempts[i];
        a->joined = i == j->last || a->end_real_ns >= began;
        if (!a->joined)
            continue;
        j->joined++;
        files += l->attempts[i].file_count;
        skipped += l->attempts[i].skipped_count;
    }
    store_attempt *r = &j->run;
    if (j->joined == 1) {
        *r = l->attempts[j->last];
        r->files = NULL;
        r->skipped = NULL;
    } else {
        r->dir = (char *)path;
    }
    r->files = calloc(files ? files : 1, sizeof *r->files);
    r->skipped = calloc(skipped ? skipped : 1, sizeof *r->skipped);
    if (!r->files || !r->skipped)
        goto fail;
    r->file_count = r->skipped_count = 0;
    for (size_t i = 0; i < l->count; i++) {
        const store_attempt *a = &l->attempts[i];
        if (!j->attempts[i].joined)
            continue;
        if (a->file_count)
            memcpy(r->files + r->file_count, a->files, a->file_count * sizeof *a->files);
        r->file_count += a->file_count;
        if (a->skipped_count)
            memcpy(r->skipped + r->skipped_count, a->skipped, a->skipped_count * sizeof *a->skipped);
        r->skipped_count += a->skipped_count;
        if (a->newest_mtime_ns > r->newest_mtime_ns)
            r->newest_mtime_ns = a->newest_mtime_ns;
    }
    return 0;
fail:
    run_join_free(j);
    return -ENOMEM;
}

void run_join_free(run_join *j)
{
    free(j->attempts);
    free(j->run.files);
    free(j->run.skipped);
    memset(j, 0, sizeof *j);
}
