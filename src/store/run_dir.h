/* Finding the files of a run: a single file, a run directory
 * (<run>/<host>/NAME.lapse), or a directory of runs (attempts). */
#ifndef LAPSE_STORE_RUN_DIR_H
#define LAPSE_STORE_RUN_DIR_H

#include <stddef.h>
#include <stdint.h>

/* An entry named like a .lapse file (or a directory of a run) that is not read:
 * a symbolic link that leaves the run directory or loops, a FIFO, a device, a
 * socket, a directory named *.lapse. */
typedef struct store_skipped {
    char *path;
    char *why; /* one line */
} store_skipped;

typedef struct store_attempt {
    char *dir;             /* the run directory (or the file itself, as given) */
    int single_file;       /* dir is one .lapse file (files[0], its links resolved) */
    char **files;          /* sorted paths of its .lapse files: regular files inside dir,
                              reached through links only where they stay inside */
    size_t file_count;
    uint64_t newest_mtime_ns; /* newest modification among its files */
    store_skipped *skipped;   /* entries not read, each to be named in one line */
    size_t skipped_count;
    /* NULL: files are read from disk; else buffers[i] holds the bytes of files[i]
     * (an attempt given from memory: nothing is opened) */
    const struct store_buffer *buffers;
} store_attempt;

typedef struct store_run_listing {
    store_attempt *attempts; /* oldest first */
    size_t count;
    size_t newest;           /* index of the attempt a report shows */
} store_run_listing;

/* Lists what PATH holds, without opening a file (lstat; links resolved to check
 * where they lead). Returns 0, or a negative code with one line in err (no such
 * path, or no .lapse file under it). */
int store_list_run(const char *path, store_run_listing *out, char *err, size_t errlen);
void store_run_listing_free(store_run_listing *l);

/* A temporary of a .lapse file in a run directory, NAME.lapse.tmp.<pid>[.x]
 * (store_temp_pid): what a writer that did not finish left, or a write in progress. */
typedef struct store_temp {
    char *path;        /* the temporary */
    char *file;        /* the file it was to replace */
    int64_t pid;       /* its writer's */
    uint32_t uid;      /* its owner */
    uint64_t mtime_ns; /* its last modification */
} store_temp;

/* The temporaries of .lapse files in dir: regular files only (links are not
 * followed), in name order. 0 or -ENOMEM; a directory that cannot be read has none. */
int store_list_temps(const char *dir, store_temp **out, size_t *count);
void store_temps_free(store_temp *t, size_t count);

#endif
