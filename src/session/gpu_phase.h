/* Phases with GPU time (gpu_phase.c): what the session's file says of them. */
#ifndef LAPSE_SESSION_GPU_PHASE_H
#define LAPSE_SESSION_GPU_PHASE_H

#pragma GCC visibility push(hidden)

/* The first reason a phase's GPU time was missing in this session; "" when none. */
const char *session_gpu_time_missing(void);
/* Forgets it (a new session). */
void session_gpu_time_reset(void);

#pragma GCC visibility pop

#endif
