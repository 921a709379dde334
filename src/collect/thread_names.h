/* Thread names read from /proc, for the file's thread table. */
#ifndef LAPSE_COLLECT_THREAD_NAMES_H
#define LAPSE_COLLECT_THREAD_NAMES_H

/* Refreshes the names of the session's live threads from /proc/self/task/TID/comm
 * (a name a binding set, lapse_set_thread_name, stays). Before each snapshot. */
void collect_thread_names_refresh(void);

#endif
