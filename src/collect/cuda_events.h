/* GPU time of phases: CUDA events through the CUDA runtime the program already
 * loaded (dlopen RTLD_NOLOAD of libcudart.so.13, then .12; our own declarations of
 * the few calls used), and only on a thread that has a CUDA context (the driver's
 * cuCtxGetCurrent, libcuda.so.1, also never loaded by lapse): lapse never loads
 * CUDA and never creates a context in a process that has not used it. */
#ifndef LAPSE_COLLECT_CUDA_EVENTS_H
#define LAPSE_COLLECT_CUDA_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct cuda_events {
    void *start, *stop; /* cudaEvent_t */
} cuda_events;

/* Creates two events and records the first on the default stream. 0; or -ENOENT
 * with why (one line): no runtime loaded, no context on this thread, a call that
 * failed (then nothing is held). */
int cuda_events_begin(cuda_events *e, char *why, size_t why_len);
/* Records the second event, waits for it and gives the elapsed time between the two
 * in ns; destroys both. 0, or -EIO with why. */
int cuda_events_end(cuda_events *e, uint64_t *ns, char *why, size_t why_len);
/* cudaDeviceSynchronize when this thread has a CUDA context; 0, or -ENOENT / -EIO
 * with why (nothing done). */
int cuda_device_sync(char *why, size_t why_len);

#pragma GCC visibility pop

#endif
