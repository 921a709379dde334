/* Our own declarations of the few CUDA runtime and driver calls lapse makes through
 * dlsym (collect/cuda_events.c): handles as void *, errors as int (0: success), the
 * elapsed time as float milliseconds. tests/c/test_cuda_decls.c checks them against
 * the toolkit's headers where those are installed. */
#ifndef LAPSE_COLLECT_CUDA_DECLS_H
#define LAPSE_COLLECT_CUDA_DECLS_H

typedef int (*cuda_event_create_fn)(void **event);                 /* cudaEventCreate */
typedef int (*cuda_event_record_fn)(void *event, void *stream);    /* cudaEventRecord */
typedef int (*cuda_event_sync_fn)(void *event);                    /* cudaEventSynchronize */
typedef int (*cuda_event_elapsed_fn)(float *ms, void *start, void *stop); /* cudaEventElapsedTime */
typedef int (*cuda_event_destroy_fn)(void *event);                 /* cudaEventDestroy */
typedef int (*cuda_device_sync_fn)(void);                          /* cudaDeviceSynchronize */
typedef int (*cu_ctx_get_current_fn)(void **ctx);                  /* cuCtxGetCurrent (driver) */

#endif
