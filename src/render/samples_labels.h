/* What the writers of samples (samples_write.h, perfetto.c) share: labels of frames, threads and processes, the
 * list of threads a set holds, and escaping for XML. Not part of the API. */
#ifndef LAPSE_SAMPLES_UTIL_H
#define LAPSE_SAMPLES_UTIL_H

#include "store/sample_set.h"

#include <stdio.h>

typedef struct samples_thread {
    int64_t pid, tid;
    uint32_t name;       /* string id: the name seen in the most samples */
    uint64_t count, weight_ns;
} samples_thread;

/* The distinct (pid, tid) of s, sorted by pid then tid, and for each stack the index
 * of its thread (thread_of, stack_count entries). 0, or -ENOMEM. Free both. */
int samples_threads(const store_samples *s, samples_thread **threads, uint32_t *count,
                    uint32_t **thread_of);

/* How many processes threads (as samples_threads sorts them) come from. */
uint32_t samples_process_count(const samples_thread *threads, uint32_t count);

/* "function (file:line)", "function (file)" or "function". Returns buf. */
char *samples_frame_label(const store_samples *s, uint32_t frame, char *buf, size_t n);
/* Makes a label fit in a collapsed line: ';' becomes ':', control characters '?'. */
void samples_clean_for_collapsed(char *label);
/* "MainThread (tid 123)" or "tid 123". */
char *samples_thread_label(const store_samples *s, const samples_thread *t, char *buf,
                           size_t n);
/* "process 123 (python app.py)" or "process 123". */
char *samples_process_label(const store_samples *s, int64_t pid, char *buf, size_t n);

/* Writes s as XML character data: &, <, >, " and ' escaped, control characters and
 * bytes that are not valid UTF-8 replaced with '?'. */
void samples_xml_text(FILE *out, const char *s);

#endif
