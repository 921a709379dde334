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
    char state;      /* its state at the last read of stat (0: none yet) */
    char name[32];
    uint64_t last_seen; /* sample number */
} pyread_task;

#define PYREAD_MAX_NAMES 512 /* thread idents whose Python name is kept */
#define PYREAD_NAMED_INTERPRETERS 8

/* A thread's Python name, by its ident (and OS id: idents are reused). */
typedef struct py_thread_name {
    uint64_t ident;
    int64_t native_id;
    uint64_t last_seen; /* sample number */
    int known;
    char name[64];
} py_thread_name;

/* Where a str key was found in a dict's keys table, tried first next time. */
typedef struct py_dict_hint {
    uint64_t keys;
    int64_t index;
    uint64_t key;
} py_dict_hint;

typedef struct py_name_hints {
    py_dict_hint threading; /* "threading" in sys.modules */
    py_dict_hint active;    /* "_active" in threading's dict */
} py_name_hints;

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
    /* Python thread names (py_objects.c) and the type objects they are checked
     * against (0 when the symbol was absent: that check is skipped) */
    uint64_t dict_type, unicode_type, long_type, module_type;
    py_thread_name names[PYREAD_MAX_NAMES];
    int name_count;
    uint64_t names_read_ns, names_due_ns; /* CLOCK_MONOTONIC: last read of _active, next one due */
    py_name_hints name_hints[PYREAD_NAMED_INTERPRETERS];
};

/* A str object of the target as a malloc'd UTF-8 string, or NULL (pyread_sample.c). */
char *pyread_read_str(pyread_target *t, uint64_t addr);

#endif
