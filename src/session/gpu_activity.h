/* The ACTIVITY collector's records into a process's file (section GPU_ACTIVITY). */
#ifndef LAPSE_SESSION_GPU_ACTIVITY_H
#define LAPSE_SESSION_GPU_ACTIVITY_H

#include "../store/model.h"

/* After snapshot_take (f's threads and nodes in place): f->activity from what the
 * collector holds, each record's (thread, node) made the file's node index. 0 or
 * -ENOMEM. Free with gpu_activity_free. */
int gpu_activity_take(store_file *f);
void gpu_activity_free(store_file *f);

#endif
