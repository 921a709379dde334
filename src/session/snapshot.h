/* Turning the live span engine into a store_file for the writer. */
#ifndef LAPSE_SESSION_SNAPSHOT_H
#define LAPSE_SESSION_SNAPSHOT_H

#include "../store/model.h"

/* Fills f with the span data of every thread of the current generation. The
 * histogram pointers point into live memory: encode before the next session.
 * Meta counts (folded, dropped, unmatched) are added to f->meta. Returns 0 or
 * -ENOMEM. Free with snapshot_free. */
int snapshot_take(store_file *f);
void snapshot_free(store_file *f);

#endif
