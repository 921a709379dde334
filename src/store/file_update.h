/* Replacing a file that another writer made: `lapse record` adding its samples to
 * the target's own .lapse file. The file is read and replaced through its
 * directory, opened once: no link is followed at the file or its directory, and
 * what is checked is what was opened (fstat), so nothing can be swapped in between. */
#ifndef LAPSE_STORE_FILE_UPDATE_H
#define LAPSE_STORE_FILE_UPDATE_H

#include "model.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct store_update {
    int dir_fd;       /* the file's directory */
    struct stat st;   /* the file as it was opened */
    char name[256];   /* its name in dir_fd */
    char path[4096];  /* as given, for messages */
} store_update;

/* Opens path's directory and then path in it, following a link at neither, and
 * decodes the file (a regular file) into f (store_file_free it). With owner >= 0,
 * the directory and the file must both belong to uid owner. 0, or a negative code
 * with one line in err: -EPERM (another user's), -ELOOP (a link), or a reason to
 * not read it. */
int store_update_open(store_update *u, const char *path, int64_t owner, store_file *f, char *err,
                      size_t errlen);
/* Writes f in the file's place (a temporary created in the same directory, given
 * the file's owner and mode, renamed over it) and closes u. 0, or a negative code
 * with one line in err. */
int store_update_write(store_update *u, const store_file *f, char *err, size_t errlen);
/* Closes u without writing. */
void store_update_close(store_update *u);

#endif
