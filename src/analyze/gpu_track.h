/* The GPU tracks of one file as `lapse view` draws them: its GPU activity (section
 * GPU_ACTIVITY) per (device, stream), each kernel, copy and set at its device time on
 * the run's clock, laid in rows, with its launching thread, span (path and bar) and
 * the time from launch to start. Part of timeline_build (timeline.h). */
#ifndef LAPSE_ANALYZE_GPU_TRACK_H
#define LAPSE_ANALYZE_GPU_TRACK_H

#include "timeline.h"

/* A memcpy's direction by CUPTI's CUpti_ActivityMemcpyKind: "HtoD", "DtoH", ...; "?"
 * for one lapse does not know (the Perfetto export's slice names use it too). */
const char *gpu_copy_kind_name(uint32_t copy_kind);

/* Fills t->gpu_* from f->activity; t->index is the timeline's path index (building).
 * 0, or -ENOMEM. */
int gpu_track_build(const store_file *f, uint64_t base_real_ns, timeline_file *t);

#endif
