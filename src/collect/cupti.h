/* The ACTIVITY collector: GPU kernels, copies and sets from CUPTI's activity API,
 * each attributed to the innermost span open on the thread that launched it
 * (docs/format.md, section GPU_ACTIVITY). libcupti is loaded with dlopen
 * ($LAPSE_CUPTI_PATH, else libcupti.so, .so.13, .so.12); nothing links against CUDA. */
#ifndef LAPSE_COLLECT_CUPTI_H
#define LAPSE_COLLECT_CUPTI_H

#include <stdint.h>

#define CUPTI_MAX_RECORDS_DEFAULT 262144u /* records kept; $LAPSE_MAX_ACTIVITIES */
#define CUPTI_NO_NODE UINT32_MAX          /* a record whose launch was not seen */

/* CUPTI_NO_DEVICE: no NVIDIA device node (/dev/nvidiactl) and no LAPSE_CUPTI_PATH:
 * a machine without a GPU, where nothing is loaded */
enum cupti_state { CUPTI_OFF = 0, CUPTI_COLLECTING = 1, CUPTI_MISSING = 2, CUPTI_NO_DEVICE = 3 };
enum cupti_activity_kind { CUPTI_ACT_KERNEL = 1, CUPTI_ACT_MEMCPY = 2, CUPTI_ACT_MEMSET = 3 };

typedef struct cupti_activity {
    uint32_t kind;             /* cupti_activity_kind */
    uint32_t copy_kind;        /* memcpy: CUPTI's CUpti_ActivityMemcpyKind; else 0 */
    uint32_t device, stream;
    uint32_t name;             /* kernels: index in the taken names (1..); else 0 */
    uint32_t thread, node;     /* the launching thread and its innermost open span's node
                                  (CORE_ROOT: none open); CUPTI_NO_NODE: launch unseen */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
    uint64_t bytes;            /* copies and sets */
    uint64_t launch_ns;        /* CLOCK_MONOTONIC at the launching call; 0: unseen */
} cupti_activity;

typedef struct cupti_taken {
    uint32_t state;        /* cupti_state */
    const char *why;       /* CUPTI_MISSING: the reason; CUPTI_COLLECTING: "", or what
                              was lost (a flush that failed, records CUPTI dropped) */
    uint64_t dropped;      /* records past the bound (dropped_activities) */
    cupti_activity *records;
    uint32_t count;
    char **names;          /* names[0] is ""; the strings stay the collector's */
    uint32_t name_count;
} cupti_taken;

/* Loads libcupti and starts collecting. 0, or -1 with cupti_why() saying why (the
 * state is then CUPTI_MISSING or CUPTI_NO_DEVICE). Never fails the program: any CUPTI failure is a
 * reason. */
int cupti_start(void);
const char *cupti_why(void);
uint32_t cupti_state(void); /* cupti_state */
/* Asks CUPTI for the completed buffers, then copies what is kept (malloc'd: free
 * with cupti_taken_free). 0 or -ENOMEM. */
int cupti_take(cupti_taken *out);
void cupti_taken_free(cupti_taken *t);
/* Flushes every record (forced), disables the activity kinds and unsubscribes. What
 * was collected stays for a last cupti_take; cupti_reset forgets it. */
void cupti_stop(void);
void cupti_reset(void);
/* For another CUPTI subscriber for a while (torch.profiler recording CUDA): while
 * collecting, flushes every record (forced), disables the kinds and unsubscribes
 * (returns 1; what was collected stays), else returns 0. cupti_resume subscribes and
 * enables again after a yield: 0, or -1 with the reason in the file's note (the
 * records kept stay; nothing more is collected). Not concurrent with start or stop. */
int cupti_yield(void);
int cupti_resume(void);
/* The yields so far: count, their time in all (one under way counted to now), the
 * first's start and the last's end (CLOCK_MONOTONIC; end 0: one is under way). */
typedef struct cupti_pause_record {
    uint32_t count;
    uint64_t paused_ns, first_ns, last_end_ns;
} cupti_pause_record;
void cupti_pauses(cupti_pause_record *out);
/* In a forked child of a collecting session: CUDA does not carry over fork; the
 * child collects nothing and says so (CUPTI_MISSING, its file's section). */
void cupti_fork_child(void);

#endif
