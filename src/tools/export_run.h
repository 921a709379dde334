/* `lapse export`'s work, shared by the command and the Python package: the Chrome
 * trace of a run (its newest attempt, or files given in memory) written to a file or
 * stdout. It reads the files (store) and renders them (render), so it sits above both. */
#ifndef LAPSE_TOOLS_EXPORT_RUN_H
#define LAPSE_TOOLS_EXPORT_RUN_H

#include <stddef.h>
#include <stdint.h>

typedef struct export_run_result {
    int rc;          /* 0, or a negative code; err says why */
    int no_files;    /* nothing readable: the run holds no usable file */
    int writing;     /* the failure is about the output */
    size_t processes;
    uint64_t threads, slices; /* threads: span and sample tracks; slices: of spans */
    uint64_t sample_slices;   /* slices of the merged Python samples' tracks */
    uint64_t gpu_tracks, gpu_slices, flows; /* GPU activity: (device, stream) tracks, their
                                               slices, launch arrows */
    char err[1024];
} export_run_result;

/* Writes the trace of the run at path to out_path ("-": standard output): two
 * passes over its files (the earliest instant, then one file at a time, so memory
 * is one file's), into a temporary of its own renamed into place at the end
 * (store_out; flags: STORE_SHARE). note(ctx, line), when given, receives one line
 * per file left out and per file whose timeline dropped spans. An out_path ending
 * in .gz is written gzip-compressed (-ENOTSUP when built without zlib). */
void export_run_perfetto(const char *path, const char *out_path, unsigned flags,
                         export_run_result *r, void (*note)(void *ctx, const char *line),
                         void *ctx);

/* The same in the Firefox Profiler's processed format (render/gecko.h): a thread of
 * markers per thread with spans (slices counts them), a thread per sampled Python
 * thread (sample_slices counts its entries: distinct stacks); no gzip (-ENOTSUP). */
void export_run_gecko(const char *path, const char *out_path, unsigned flags,
                      export_run_result *r, void (*note)(void *ctx, const char *line),
                      void *ctx);

/* The same, of one attempt given as files in memory (nothing is read from disk):
 * dir names the run directory (the file itself when single_file) in messages, files
 * their bytes (store_buffer, as run_model_load_mem takes them). */
struct store_buffer;
void export_mem_perfetto(const char *dir, int single_file, const struct store_buffer *files,
                         size_t count, const char *out_path, unsigned flags,
                         export_run_result *r, void (*note)(void *ctx, const char *line),
                         void *ctx);

/* Whether export_run_perfetto writes out_path as gzip (it ends in ".gz"). */
int export_wants_gzip(const char *out_path);

/* One line of fmt to note(ctx, line), when note is set: the exports' notes on stderr. */
void export_note(void (*note)(void *ctx, const char *line), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
