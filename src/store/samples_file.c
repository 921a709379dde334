/* A .lapse file of samples: the meta of the target process, an empty span tree and
 * the SAMPLES section. */
#include "sample_set.h"
#include "samples_file.h"
#include "store/codec.h"
#include "store/file_io.h"
#include "store/file_update.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int samples_save_lapse(const sample_set *set, const samples_file_meta *meta, const char *path,
                       unsigned flags, char *err, size_t errlen)
{
    const store_samples *s = sample_set_view(set);
    char host[256] = "";
    if (meta->host)
        snprintf(host, sizeof host, "%s", meta->host);
    else if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    uint64_t now_real = clock_ns(CLOCK_REALTIME), now_mono = clock_ns(CLOCK_MONOTONIC);
    uint64_t start = meta->start_real_ns ? meta->start_real_ns : s->start_real_ns;
    uint64_t end = meta->end_real_ns ? meta->end_real_ns : s->end_real_ns;
    if (!start)
        start = now_real;
    if (!end || end < start)
        end = start + s->duration_ns;
    char run_id[64];
    if (meta->run_id)
        snprintf(run_id, sizeof run_id, "%s", meta->run_id);
    else
        snprintf(run_id, sizeof run_id, "py-%lld-%llx", (long long)meta->pid,
                 (unsigned long long)(start / 1000000ull));

    store_file f;
    memset(&f, 0, sizeof f);
    store_meta *m = &f.meta;
    m->format_version = STORE_FORMAT_VERSION;
    m->lapse_version = "0.1.0";
    m->host = host;
    m->role = (char *)(meta->role ? meta->role : "python");
    m->run_id = run_id;
    m->job_id = "";
    m->end_reason = (char *)(meta->end_reason ? meta->end_reason : "exit");
    m->clock_source = "monotonic";
    m->pid = meta->pid;
    m->ppid = meta->ppid;
    m->rank = -1;
    m->world_size = -1;
    /* the monotonic clock of this process: where the recording started and ended */
    uint64_t back = now_real > start ? now_real - start : 0;
    m->start_real_ns = start;
    m->start_mono_ns = now_mono > back ? now_mono - back : 0;
    m->write_real_ns = end;
    m->write_mono_ns = m->start_mono_ns + (end - start);
    m->anchor_real_ns = now_real;
    m->anchor_mono_ns = now_mono;
    m->wall_ns = end - start;
    m->cpu_unknown = !meta->has_cpu;
    if (meta->has_cpu) {
        m->cpu_user_ns = meta->cpu_user_ns;
        m->cpu_sys_ns = meta->cpu_sys_ns;
        m->max_rss_kb = meta->max_rss_kb;
    }
    m->ctx_voluntary = meta->has_ctx ? meta->ctx_voluntary : -1;
    m->ctx_involuntary = meta->has_ctx ? meta->ctx_involuntary : -1;
    m->write_seq = 1;
    m->final = 1;
    static char *empty_names[] = {""};
    f.names = empty_names;
    f.name_count = 1;
    f.samples = (store_samples *)s;
    int rc = store_write_file(path, &f, flags, err, errlen);
    if (rc == 0)
        return 0;
    if (!err[0])
        snprintf(err, errlen, "cannot write %s", path);
    return rc;
}

int samples_add_to_lapse(const sample_set *set, const char *path, int64_t owner, char *err,
                         size_t errlen)
{
    store_update u;
    store_file f;
    int rc = store_update_open(&u, path, owner, &f, err, errlen);
    if (rc)
        return rc;
    sample_set *merged = NULL;
    if (f.samples) {
        merged = sample_set_from_store(f.samples);
        if (!merged || sample_set_merge(merged, sample_set_view(set))) {
            snprintf(err, errlen, "out of memory adding samples to %s", path);
            sample_set_free(merged);
            store_file_free(&f);
            store_update_close(&u);
            return -ENOMEM;
        }
    }
    f.samples = merged ? sample_set_data(merged) : (store_samples *)sample_set_view(set);
    rc = store_update_write(&u, &f, err, errlen);
    f.samples = NULL; /* not the decoder's: store_file_free must not see it */
    sample_set_free(merged);
    store_file_free(&f);
    return rc;
}
