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
    STORE_SECTION_CHILDREN = 12,  /* the children the process forked (store_child) */
    STORE_SECTION_CAUSALITY = 17, /* signals and waits (store_causal); before SPANS */
    STORE_SECTION_GPU_DEVICE = 13, /* NVML telemetry per device (store_gpu) */
    STORE_SECTION_GPU_DEVICE_IDS = 16, /* NVML's UUID of GPU_DEVICE's devices */
    STORE_SECTION_GPU_MEMORY = 14, /* VRAM peaks from torch per device (store_gpu_memory) */
    STORE_SECTION_GPU_ACTIVITY = 15, /* GPU kernels, copies, sets (store_gpu_activity) */
    STORE_SECTION_GPU_TIME = 18,  /* GPU time of gpu_time phases per node */
};

/* Depth of the span tree. A writer folds spans deeper than its max_depth (meta) into
 * their parent, so no node is deeper; a reader accepts no more. max_depth is at most
 * STORE_MAX_DEPTH (the core's CORE_MAX_DEPTH); a file without it was written with the
 * default. */
#define STORE_MAX_DEPTH 4096u
#define STORE_DEFAULT_DEPTH 64u
/* Most frames a sampled Python stack may hold (the sampler keeps 512). */
#define STORE_MAX_FRAMES 65536u
/* Most records a PROCESS_SAMPLES section may hold (the writer keeps at most 1024). */
#define STORE_MAX_PROC_RECORDS 65536u
#define STORE_PROC_RECORD_SIZE 80u
#define STORE_PROC_HEADER_SIZE 24u

enum store_read_flags {
    STORE_READ_SKIP_SPANS = 1u << 0, /* leave spans out (span_count stays 0) */
    STORE_READ_SKIP_HIST = 1u << 1,  /* leave histograms out (hist stays NULL) */
    STORE_READ_META_ONLY = 1u << 2,  /* stop after the meta section: only f->meta is set */
};

#define STORE_FILE_HEADER_SIZE 32u
#define STORE_SECTION_HEADER_SIZE 24u

/* Appends the encoding of f to out. Returns 0, or -ENOMEM. */
int store_encode(const store_file *f, bytes_out *out);

/* Decodes a whole file. On failure returns a negative code, writes one line into
 * err and leaves *f empty. Never trusts the input: every count, index and length
 * is checked before use. */
int store_decode(const uint8_t *data, size_t len, unsigned flags, store_file *f, char *err,
                 size_t errlen);

/* The framing, checked before what it announces is read: the file header (magic,
 * checksum, version; len is what is at hand of it) and one section header (its
 * checksum). 0, or -EINVAL with one line in err. */
typedef struct store_header {
    uint32_t version;
    uint64_t total; /* the file's length as its writer wrote it */
    uint32_t sections;
} store_header;
int store_header_check(const uint8_t *data, size_t len, store_header *h, char *err, size_t errlen);

typedef struct store_section {
    uint32_t index, type, count, crc;
    uint64_t len; /* of the payload, padding excluded */
} store_section;
int store_section_check(const uint8_t *data, uint32_t index, store_section *s, char *err,
                        size_t errlen);

/* Decoding one section at a time, in file order (store_decode does it for a file in
 * memory; store_read_each for one read from disk). Begin, then for each section
 * whose header and payload checksum hold: store_decoder_section with its payload
 * when store_decoder_wants it, else NULL (its place in the order is still checked);
 * stop when `done`; then finish. On a failure (negative code, err set) free f. */
typedef struct store_decoder {
    store_file *f;
    char *err;
    size_t errlen;
    unsigned flags;
    unsigned next;      /* index in the section order of the next one allowed */
    int done;           /* STORE_READ_META_ONLY: the meta is read, stop */
    uint32_t max_depth; /* the deepest node allowed, from the meta */
    uint8_t *thread_has_root;
} store_decoder;
void store_decoder_begin(store_decoder *d, store_file *f, unsigned flags, char *err,
                         size_t errlen);
int store_decoder_wants(const store_decoder *d, uint32_t type);
int store_decoder_section(store_decoder *d, const store_section *s, const uint8_t *payload);
int store_decoder_finish(store_decoder *d, uint32_t version);

/* Frees what store_decode allocated. */
void store_file_free(store_file *f);

#endif
