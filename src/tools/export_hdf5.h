/* `lapse export --hdf5`: a run's timeline spans in scope_profiler's HDF5 layout
 * (render/hdf5_regions.h): one group per process, /rank<r>, holding its spans
 * grouped by name with their start and end times. */
#ifndef LAPSE_TOOLS_EXPORT_HDF5_H
#define LAPSE_TOOLS_EXPORT_HDF5_H

#include <stddef.h>
#include <stdint.h>

typedef struct export_hdf5_result {
    int rc;        /* 0, or a negative code; err says why */
    int no_files;  /* nothing readable: the run holds no usable file */
    int no_hdf5;   /* refused: this lapse was built without HDF5 */
    size_t ranks;  /* rank groups written: one per process */
    uint64_t regions, calls; /* (rank, name) groups, and the spans in them */
    char err[1024];
} export_hdf5_result;

/* Writes the run at path (its newest attempt, as lapse export) to out_path ("-":
 * standard output), atomically (store_write_atomic; flags: STORE_SHARE). A process
 * whose file records its rank is /rank<its rank>; the others (no rank, or a rank
 * taken already) get the numbers after the largest rank, in the order of the
 * files, and note() says so. Times are ns from the earliest session start of the
 * run, on the clock the files' CLOCK_REALTIME anchors give. note(ctx, line), when
 * given, receives one line per file left out and per process whose timeline
 * dropped spans. */
void export_run_hdf5(const char *path, const char *out_path, unsigned flags,
                     export_hdf5_result *r, void (*note)(void *ctx, const char *line),
                     void *ctx);

#endif
