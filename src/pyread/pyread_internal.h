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
    /* Where the count of code objects created so far is (0: unknown). While it stays
     * the same no code object was made, so none took the address of one in the cache:
     * code objects verified at that count need no new check. */
    uint64_t code_counter;
    int pass_counter_ok; /* this pass read the count, before any of its other reads */
    uint32_t pass_counter;
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
