/* Encoding and decoding of a .lapse file (docs/format.md). */
#ifndef LAPSE_STORE_CODEC_H
#define LAPSE_STORE_CODEC_H

#include "bytes.h"
#include "model.h"

enum store_section_type {
    STORE_SECTION_META = 1,
    STORE_SECTION_NAMES = 2,
    STORE_SECTION_THREADS = 3,
    STORE_SECTION_NODES = 4,
    STORE_SECTION_COUNTERS = 5,
    STORE_SECTION_SPANS = 6,
    STORE_SECTION_ESTIMATES = 7,
    STORE_SECTION_CPU_SAMPLES = 8, /* older writers' wait%: read, checked, not used */
    STORE_SECTION_PROCESS_SAMPLES = 9,
    STORE_SECTION_SAMPLES = 10, /* Python stack samples (store_samples) */
    STORE_SECTION_CPU_TICKS = 11, /* the CPU sampler's ticks per node (wait%) */
};

/* Deepest path a reader accepts (the writer's max_depth is far below). */
#define STORE_MAX_DEPTH 65536u
/* Most records a PROCESS_SAMPLES section may hold (the writer keeps at most 1024). */
#define STORE_MAX_PROC_RECORDS 65536u
#define STORE_PROC_RECORD_SIZE 80u
#define STORE_PROC_HEADER_SIZE 24u

enum store_read_flags {
    STORE_READ_SKIP_SPANS = 1u << 0, /* leave spans out (span_count stays 0) */
    STORE_READ_SKIP_HIST = 1u << 1,  /* leave histograms out (hist stays NULL) */
};

/* Appends the encoding of f to out. Returns 0, or -ENOMEM. */
int store_encode(const store_file *f, bytes_out *out);

/* Decodes a whole file. On failure returns a negative code, writes one line into
 * err and leaves *f empty. Never trusts the input: every count, index and length
 * is checked before use. */
int store_decode(const uint8_t *data, size_t len, unsigned flags, store_file *f, char *err,
                 size_t errlen);

/* Frees what store_decode allocated. */
void store_file_free(store_file *f);

#endif
