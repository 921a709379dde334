/* Reading the files of one attempt of a run: every process once. */
#ifndef LAPSE_STORE_RUN_READ_H
#define LAPSE_STORE_RUN_READ_H

#include "file_io.h"
#include "run_dir.h"

/* Receives the bytes read of each file of the attempt (when asked for): the
 * callee owns held (store_held_free). file is the path as listed. */
typedef void (*store_hold_fn)(void *ctx, const char *file, store_held *held);

/* Calls fn for every image of the attempt's files (a plain file's one, each member
 * of a pack) and for every entry the listing passed over (f NULL, why). Each
 * process is decoded once: images with the same host, pid and session start (a
 * copied file, a rank's own file beside the pack that holds it) are one process,
 * the best of them read (a final one, then the latest write) and the others passed
 * with same_as naming it, as are pack members that overlap another. A file that
 * cannot be read at all is passed as one image with why. With hold,
 * hold(hold_ctx, file, held) gets what was read of each file that opened as a
 * regular file (store_held). Returns 0, fn's non-zero return, or -ENOMEM. */
int store_read_attempt(const store_attempt *a, unsigned flags, store_each_fn fn, void *ctx,
                       store_hold_fn hold, void *hold_ctx);

#endif
