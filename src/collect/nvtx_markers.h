/* MARKERS: every span is also an NVTX range (start/end in the "lapse" domain, so
 * that spans which overlap on one thread, asyncio tasks, stay correct), for the NVTX
 * tool that captures the process (nsys, Kineto: an injection library named by
 * NVTX_INJECTION64_PATH). */
#ifndef LAPSE_COLLECT_NVTX_MARKERS_H
#define LAPSE_COLLECT_NVTX_MARKERS_H

#include "../core/core.h"

#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Attaches to the process's NVTX tool and fills *hook with the span hook that opens
 * and ends the ranges. 0; or -ENOENT with why (one line) when there is no tool to
 * receive them: then MARKERS would cost every span and record nothing. */
int nvtx_markers_start(core_span_hook *hook, char *why, size_t why_len);

#pragma GCC visibility pop

#endif
