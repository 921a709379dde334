/* The reader's state behind pyread_target; shared by pyread_open.c and pyread_sample.c. */
#ifndef LAPSE_PYREAD_PYREAD_INTERNAL_H
#define LAPSE_PYREAD_PYREAD_INTERNAL_H

#include "code_cache.h"
#include "elf_symbols.h"
#include "py_layout.h"
#include "pyread.h"
#include "remote_mem.h"

#define PYREAD_MAX_TASKS 512
#define PYREAD_MAX_CHECKS 256 /* code objects compared again per pass */

/* An OS thread of the target seen in a sample: its /proc stat file kept open. */
typedef struct pyread_task {
    int64_t tid;
    int stat_fd;
    int schedstat_fd;
    int have_cpu;
    uint64_t cpu_ns; /* run time at the previous read */
    char name[32];
    uint64_t last_seen; /* sample number */
} pyread_task;

struct pyread_target {
    pid_t pid;
    char version[32];
    char binary[512];
    uint64_t runtime, version_addr, code_type;
    py_layout layout;
    remote_mem mem;
    code_cache codes;
    pyread_task tasks[PYREAD_MAX_TASKS];
    int task_count;
    uint64_t sample_number;
    code_entry *checks[PYREAD_MAX_CHECKS];
    int check_count;
};

#endif
