/* The samples of a run's files, merged and written in one of the sample formats. */
#include "store/sample_set.h"
#include "store/samples_file.h"
#include "render/samples_write.h"
#include "export_samples.h"

#include "analyze/run_model.h"
#include "store/codec.h"
#include "store/file_io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int samples_export(const char *path, const char *format, const char *title, FILE *out,
                   char *err, size_t errlen)
{
    int kind = !strcmp(format, "collapsed")    ? 0
               : !strcmp(format, "speedscope") ? 1
               : !strcmp(format, "flamegraph") ? 2
               : !strcmp(format, "pstats")     ? 3
                                               : -1;
    if (kind < 0) {
        snprintf(err, errlen,
                 "unknown samples format '%s' (collapsed, speedscope, flamegraph, pstats)", format);
        return -EINVAL;
    }
    run_model m;
    int rc = run_model_load(path, NULL, &m, err, errlen);
    if (rc)
        return rc;
    sample_set *set = sample_set_new();
    if (!set) {
        run_model_free(&m);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    uint32_t files = 0;
    for (uint32_t i = 0; i < m.worker_count && !rc; i++) {
        if (!m.workers[i].samples)
            continue;
        rc = sample_set_merge(set, sample_set_view(m.workers[i].samples));
        files++;
    }
    if (rc)
        snprintf(err, errlen, "out of memory merging the samples of %s", path);
    else if (!files) {
        snprintf(err, errlen, "%s holds no Python stack samples (record them with lapse record)",
                 path);
        rc = -ENOENT;
    }
    if (!rc) {
        rc = kind == 0   ? samples_write_collapsed(set, out, 0)
             : kind == 1 ? samples_write_speedscope(set, out, title)
             : kind == 2 ? samples_write_flamegraph(set, out, title)
                         : samples_write_pstats(set, out);
        if (rc == -ENODATA)
            snprintf(err, errlen, "the samples of %s hold no Python frame: a pstats file would be "
                                  "empty", path);
        else if (rc)
            snprintf(err, errlen, "cannot write the %s output", format);
    }
    sample_set_free(set);
    run_model_free(&m);
    return rc;
}

int samples_move_to_lapse(const char *samples_path, const char *target, char *err, size_t errlen)
{
    store_file f;
    int rc = store_read_file(samples_path, 0, &f, err, errlen);
    if (rc)
        return rc;
    sample_set *set = f.samples ? sample_set_from_store(f.samples) : NULL;
    if (!f.samples) {
        snprintf(err, errlen, "%s holds no Python stack samples", samples_path);
        rc = -ENOENT;
    } else if (!set) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    } else {
        rc = samples_add_to_lapse(set, target, -1, err, errlen);
    }
    sample_set_free(set);
    store_file_free(&f);
    if (!rc)
        unlink(samples_path);
    return rc;
}
