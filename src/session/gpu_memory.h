/* VRAM from torch: the Python side reads torch.cuda's caching allocator (its peaks,
 * per device) at each snapshot and at stop, and hands the readings here; every write
 * of the session carries the largest peaks read so far (section GPU_MEMORY). C
 * programs never hand any: no section. */
#ifndef LAPSE_SESSION_GPU_MEMORY_H
#define LAPSE_SESSION_GPU_MEMORY_H

#include "lapse.h"
#include "../store/model.h"

#include <stdint.h>

/* One reading: devices[0 .. count) as torch gave them (index, uuid, name and the
 * peaks it reports now: max_memory_allocated/reserved), or count 0 and error ("call:
 * why") when the reading failed. Each device keeps the largest peak read; a peak
 * below the one read before counts as a reset. -EINVAL without an active session. */
LAPSE_API int lapse_session_gpu_memory_reading(const store_gpu_memory_device *devices,
                                               uint32_t count, const char *error);
/* At session start (forked 0) and in a forked child (1): nothing read. */
void gpu_memory_reset(int forked);
/* Into f (under the session's write lock): f->gpu_memory points at this module's copy
 * until the next take; NULL when nothing was read nor failed. */
void gpu_memory_take(store_file *f);

#endif
