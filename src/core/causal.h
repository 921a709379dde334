/* Causality: a producer's signal and the wait of a consumer it ends (lapse_signal,
 * lapse_wait_on in lapse.h), recorded into one bounded buffer per process. A record
 * is written at the event; a wait's end is written last, when it is done (0 while
 * it is open). What does not fit is counted, never recorded. No lock, no
 * allocation, no syscall per record; the buffer is mapped once, lazily (its pages
 * come as records reach them). */
#ifndef LAPSE_CORE_CAUSAL_H
#define LAPSE_CORE_CAUSAL_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define CAUSAL_MAX_RECORDS 65536u /* per process and session */

enum causal_kind { CAUSAL_SIGNAL = 1, CAUSAL_WAIT = 2 };

typedef struct causal_record {
    uint64_t begin; /* ticks */
    uint64_t end;   /* ticks; written last, 0 while a wait is open (a signal: begin) */
    uint32_t name;
    uint16_t thread;
    uint8_t kind; /* causal_kind */
    uint8_t pad;
} causal_record;

extern causal_record *causal_records;
extern uint64_t causal_cursor;  /* next free record (atomic); past the bound: dropped */
extern uint64_t causal_dropped; /* atomic */

/* A new session or a forked child: no record yet. 0 or -ENOMEM (the buffer). */
int causal_begin(void);

/* A signal of name now, on the calling thread. */
void causal_signal(uint32_t name);
/* A wait on name begins now: the record's index + 1 (0: none was recorded). */
uint32_t causal_wait_begin(uint32_t name);
/* The wait of causal_wait_begin's result ends now. */
void causal_wait_end(uint32_t record);

#pragma GCC visibility pop

#endif
