/* Creating files. Every file lapse writes (run files, packs, exports, outputs, the
 * Python package's saves) is created here: a temporary of its own next to the
 * destination, created with O_CREAT|O_EXCL|O_NOFOLLOW (never truncating, never
 * through a link), filled, fsync'ed and renamed over the destination, so a reader
 * sees the old file or the new one and a link planted at any name is never written
 * through (a link at the destination itself is replaced, not followed). */
#ifndef LAPSE_STORE_FILE_WRITE_H
#define LAPSE_STORE_FILE_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Who may read what lapse creates: by default its user alone (directories 0700,
 * files 0600); with STORE_SHARE the user's group too (0750, 0640). The umask
 * applies on top: nothing is ever more open than it allows. */
#define STORE_SHARE 1u

/* STORE_SHARE when $LAPSE_SHARE is a non-zero number, else 0. */
unsigned store_share_from_env(void);

/* The kernel's random bytes; else a hash of the clock, the pid and a counter. */
uint32_t store_random_u32(void);

/* A file being written. */
typedef struct store_out {
    int dir_fd;      /* the destination's directory, opened once: the temporary and
                        the rename happen in that same directory */
    int fd;          /* the temporary (-1 once closed) */
    FILE *stream;    /* store_out_stream's, else NULL */
    char name[256];  /* the destination's name in dir_fd */
    char tmp[256];   /* the temporary's: NAME.tmp.<pid>.<8 hex digits> */
    char path[4096]; /* the destination as given, for messages */
} store_out;

/* Creates the temporary of path with mode 0600 (STORE_SHARE: 0640) in flags.
 * 0, or -errno with one line in err. */
int store_out_open(store_out *o, const char *path, unsigned flags, char *err, size_t errlen);
/* The same in the directory dir_fd (which o then owns and closes), with mode. */
int store_out_open_at(store_out *o, int dir_fd, const char *name, const char *path, mode_t mode,
                      char *err, size_t errlen);
/* Writes all of data to the temporary. 0 or -errno. */
int store_out_write(store_out *o, const void *data, size_t len);
/* A stdio stream on the temporary (closed by commit or abort); NULL when out of
 * memory. */
FILE *store_out_stream(store_out *o);
/* Flushes, fsyncs and renames the temporary over the destination, then removes
 * the temporaries of the same destination that writers which died left
 * (store_remove_dead_temps). 0, or -errno with one line in err (the temporary is
 * then removed). Closes o either way. */
int store_out_commit(store_out *o, char *err, size_t errlen);
/* Removes the temporary and closes o. */
void store_out_abort(store_out *o);

/* store_out_open, all of data, store_out_commit. */
int store_write_atomic(const char *path, const void *data, size_t len, unsigned flags, char *err,
                       size_t errlen);

/* mkdir -p, each directory it creates with mode 0700 (STORE_SHARE: 0750); existing
 * ones are left as they are. 0 or -errno. */
int store_make_dirs(const char *path, unsigned flags);

/* Whether entry is a temporary of the file named by its first base_len bytes:
 * "<base>.tmp.<pid>", optionally followed by "." and anything. Sets *pid. */
int store_temp_pid(const char *entry, size_t base_len, long *pid);

/* Removes from dir_fd the temporaries of name (store_temp_pid), and when name is a
 * ".lapse" file those of every ".lapse" file there (a killed process's own file is
 * never written again), that are regular
 * files of this process's effective user and whose pid is not a live process on
 * this host; never a link, another user's file or a live writer's. Returns how
 * many it removed. */
int store_remove_dead_temps(int dir_fd, const char *name);

#endif
