/* scope_profiler's HDF5 layout (its schema 1, which its reader still reads) from
 * per-rank regions (analyze/span_regions.h):
 *
 *   /metadata                       attributes: mpi_size, profiler, lapse_version,
 *                                   run_id, time_unit, timestamp, time_origin_ns
 *   /rank<r>                        attributes: lapse_file, role, host, pid,
 *                                   lapse_rank, threads, timeline_dropped
 *   /rank<r>/regions/<name>/start_times, end_times   int64 ns from time_origin_ns
 *
 * The file is built in memory (HDF5's core driver) and handed back as bytes, so
 * that the caller writes it like every other output (store_write_atomic). Render
 * never reads files. Built without HDF5, hdf5_available() is 0 and hdf5_open
 * refuses. */
#ifndef LAPSE_RENDER_HDF5_REGIONS_H
#define LAPSE_RENDER_HDF5_REGIONS_H

#include "analyze/span_regions.h"

#include <stddef.h>
#include <stdint.h>

typedef struct hdf5_writer hdf5_writer;

/* What the group of one rank records beside its regions. */
typedef struct hdf5_rank_info {
    const char *file;  /* the .lapse file (or pack member) it comes from */
    const char *role, *host;
    int64_t pid;
    int64_t lapse_rank; /* the rank the file recorded; -1 unknown */
    uint64_t threads, timeline_dropped;
} hdf5_rank_info;

/* The /metadata group. */
typedef struct hdf5_run_info {
    int64_t mpi_size;
    const char *lapse_version, *run_id;
    uint64_t origin_ns; /* CLOCK_REALTIME ns of time 0 */
} hdf5_run_info;

/* 1 when lapse was built with HDF5. */
int hdf5_available(void);
/* The HDF5 library's version ("1.10.8"), or what is missing. */
const char *hdf5_library(void);

/* Starts a file in memory. NULL with one line in err (built without HDF5, or the
 * library refused). */
hdf5_writer *hdf5_open(char *err, size_t errlen);

/* Writes /rank<rank> with its regions. A region name HDF5 cannot hold as it is
 * ("/" in it, ".", or empty) is written percent-encoded ('/' %2F, '%' %25, "."
 * %2E, "" %00); *renamed (may be NULL) counts them. 0, or -EIO with err. */
int hdf5_add_rank(hdf5_writer *w, int64_t rank, const hdf5_rank_info *info,
                  const span_regions *regions, uint32_t *renamed, char *err, size_t errlen);

/* Writes /metadata, closes the file and hands over its bytes (*image, to free()).
 * Frees w either way. 0, or -EIO / -ENOMEM with err. */
int hdf5_finish(hdf5_writer *w, const hdf5_run_info *run, void **image, size_t *len, char *err,
                size_t errlen);
/* Drops w and what it held. */
void hdf5_abort(hdf5_writer *w);

#endif
