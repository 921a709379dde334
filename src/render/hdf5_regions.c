#include "hdf5_regions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if LAPSE_HAVE_HDF5
#include <hdf5.h>

struct hdf5_writer {
    hid_t file;
    hid_t lcpl; /* link names in UTF-8 */
};

int hdf5_available(void)
{
    return 1;
}

const char *hdf5_library(void)
{
    static char v[32];
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(v, sizeof v, "%u.%u.%u", maj, min, rel);
    return v;
}

static void close_all(hdf5_writer *w)
{
    if (w->lcpl >= 0)
        H5Pclose(w->lcpl);
    if (w->file >= 0)
        H5Fclose(w->file);
    free(w);
}

hdf5_writer *hdf5_open(char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* its errors become our one line, not a dump */
    hdf5_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    w->file = w->lcpl = -1;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) >= 0)
        w->file = H5Fcreate("lapse-export.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    w->lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (w->file < 0 || w->lcpl < 0 || H5Pset_char_encoding(w->lcpl, H5T_CSET_UTF8) < 0) {
        snprintf(err, errlen, "the HDF5 library (%s) could not start a file in memory",
                 hdf5_library());
        close_all(w);
        return NULL;
    }
    return w;
}

static int attr_write(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                      const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = space < 0 ? -1 : H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, mem_type, value) < 0 ? -1 : 0;
    if (a >= 0)
        H5Aclose(a);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

static int attr_i64(hid_t obj, const char *name, int64_t v)
{
    return attr_write(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

static int attr_str(hid_t obj, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    int rc = t < 0 || H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0
                 ? -1
                 : 0;
    if (!v)
        v = "";
    if (rc == 0)
        rc = attr_write(obj, name, t, t, &v);
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

static int write_i64s(hdf5_writer *w, hid_t group, const char *name, const int64_t *v, uint64_t n)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t d = space < 0 ? -1
                        : H5Dcreate2(group, name, H5T_STD_I64LE, space, w->lcpl, H5P_DEFAULT,
                                     H5P_DEFAULT);
    int rc = d < 0 || H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ? -1 : 0;
    if (d >= 0)
        H5Dclose(d);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* The link name of a region: name itself, or percent-encoded when HDF5 cannot hold it.
 * Returns 1 when it was encoded, 0 when not, -1 when out of memory. */
static int link_name(const char *name, char **out)
{
    *out = NULL;
    if (*name && strcmp(name, ".") && !strchr(name, '/'))
        return 0;
    if (!*name || !strcmp(name, ".")) {
        *out = strdup(*name ? "%2E" : "%00");
        return *out ? 1 : -1;
    }
    size_t n = strlen(name);
    char *p = malloc(3 * n + 1);
    if (!(*out = p))
        return -1;
    for (const char *s = name; *s; s++) {
        if (*s == '/' || *s == '%')
            p += sprintf(p, "%%%02X", (unsigned char)*s);
        else
            *p++ = *s;
    }
    *p = 0;
    return 1;
}

int hdf5_add_rank(hdf5_writer *w, int64_t rank, const hdf5_rank_info *info,
                  const span_regions *regions, uint32_t *renamed, char *err, size_t errlen)
{
    char group_name[32];
    snprintf(group_name, sizeof group_name, "rank%lld", (long long)rank);
    hid_t g = H5Gcreate2(w->file, group_name, w->lcpl, H5P_DEFAULT, H5P_DEFAULT);
    hid_t rg = g < 0 ? -1 : H5Gcreate2(g, "regions", w->lcpl, H5P_DEFAULT, H5P_DEFAULT);
    int rc = rg < 0 ? -1 : 0;
    if (rc == 0)
        rc = attr_str(g, "lapse_file", info->file) | attr_str(g, "role", info->role) |
             attr_str(g, "host", info->host) | attr_i64(g, "pid", info->pid) |
             attr_i64(g, "lapse_rank", info->lapse_rank) |
             attr_i64(g, "threads", (int64_t)info->threads) |
             attr_i64(g, "timeline_dropped", (int64_t)info->timeline_dropped);
    for (uint32_t i = 0; rc == 0 && i < regions->count; i++) {
        const span_region *r = &regions->regions[i];
        char *encoded;
        int e = link_name(r->name, &encoded);
        if (e < 0) {
            rc = -ENOMEM;
            break;
        }
        if (e && renamed)
            (*renamed)++;
        hid_t reg = H5Gcreate2(rg, encoded ? encoded : r->name, w->lcpl, H5P_DEFAULT, H5P_DEFAULT);
        free(encoded);
        rc = reg < 0 ? -1 : 0;
        if (rc == 0)
            rc = write_i64s(w, reg, "start_times", r->start_ns, r->count) |
                 write_i64s(w, reg, "end_times", r->end_ns, r->count);
        if (reg >= 0)
            H5Gclose(reg);
    }
    if (rg >= 0)
        H5Gclose(rg);
    if (g >= 0)
        H5Gclose(g);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if (rc) {
        snprintf(err, errlen, "the HDF5 library (%s) failed to write group /%s", hdf5_library(),
                 group_name);
        return -EIO;
    }
    return 0;
}

void hdf5_abort(hdf5_writer *w)
{
    if (w)
        close_all(w);
}

int hdf5_finish(hdf5_writer *w, const hdf5_run_info *run, void **image, size_t *len, char *err,
                size_t errlen)
{
    *image = NULL;
    *len = 0;
    char stamp[40] = "";
    time_t secs = (time_t)(run->origin_ns / 1000000000u);
    struct tm tm;
    if (gmtime_r(&secs, &tm)) {
        size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(stamp + n, sizeof stamp - n, ".%06u+00:00",
                 (unsigned)(run->origin_ns % 1000000000u / 1000));
    }
    hid_t m = H5Gcreate2(w->file, "metadata", w->lcpl, H5P_DEFAULT, H5P_DEFAULT);
    int rc = m < 0 ? -1 : 0;
    if (rc == 0)
        rc = attr_i64(m, "mpi_size", run->mpi_size) | attr_str(m, "profiler", "lapse") |
             attr_str(m, "lapse_version", run->lapse_version) | attr_str(m, "run_id", run->run_id) |
             attr_str(m, "time_unit", "ns") | attr_str(m, "timestamp", stamp) |
             attr_i64(m, "time_origin_ns", (int64_t)run->origin_ns);
    if (m >= 0)
        H5Gclose(m);
    /* the schema is stated, not left to its absence (which its reader also takes as 1) */
    if (rc == 0)
        rc = attr_i64(w->file, "scope_profiler_schema", 1);
    ssize_t size = rc == 0 && H5Fflush(w->file, H5F_SCOPE_GLOBAL) >= 0
                       ? H5Fget_file_image(w->file, NULL, 0)
                       : -1;
    void *buf = size > 0 ? malloc((size_t)size) : NULL;
    if (size > 0 && !buf) {
        close_all(w);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (!buf || H5Fget_file_image(w->file, buf, (size_t)size) != size) {
        free(buf);
        close_all(w);
        snprintf(err, errlen, "the HDF5 library (%s) failed to finish the file", hdf5_library());
        return -EIO;
    }
    close_all(w);
    *image = buf;
    *len = (size_t)size;
    return 0;
}

#else /* built without HDF5 */

int hdf5_available(void)
{
    return 0;
}

const char *hdf5_library(void)
{
    return "none: this lapse was built without HDF5";
}

hdf5_writer *hdf5_open(char *err, size_t errlen)
{
    snprintf(err, errlen,
             "this lapse was built without HDF5 and cannot write .h5 (install libhdf5-dev "
             "and rebuild: make)");
    return NULL;
}

int hdf5_add_rank(hdf5_writer *w, int64_t rank, const hdf5_rank_info *info,
                  const span_regions *regions, uint32_t *renamed, char *err, size_t errlen)
{
    (void)w, (void)rank, (void)info, (void)regions, (void)renamed;
    snprintf(err, errlen, "built without HDF5");
    return -ENOTSUP;
}

int hdf5_finish(hdf5_writer *w, const hdf5_run_info *run, void **image, size_t *len, char *err,
                size_t errlen)
{
    (void)w, (void)run;
    *image = NULL;
    *len = 0;
    snprintf(err, errlen, "built without HDF5");
    return -ENOTSUP;
}

void hdf5_abort(hdf5_writer *w)
{
    (void)w;
}

#endif
