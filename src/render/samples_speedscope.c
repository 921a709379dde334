/* speedscope's file format: shared frames, one "sampled" profile per thread. */
#include "store/sample_set.h"
#include "samples_write.h"
#include "samples_labels.h"
#include "render/json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int samples_write_speedscope(const sample_set *set, FILE *out, const char *name)
{
    const store_samples *s = sample_set_view(set);
    samples_thread *threads;
    uint32_t thread_count, *thread_of;
    if (samples_threads(s, &threads, &thread_count, &thread_of))
        return -ENOMEM;
    uint32_t processes = samples_process_count(threads, thread_count);

    json_out j;
    json_init(&j, out);
    j.compact = 1;
    json_begin_object(&j, NULL);
    json_str(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
    json_str(&j, "name", name ? name : "lapse samples");
    json_str(&j, "exporter", "lapse");
    json_u64(&j, "activeProfileIndex", 0);
    json_begin_object(&j, "shared");
    json_begin_array(&j, "frames");
    for (uint32_t i = 0; i < s->frame_count; i++) {
        const store_sample_frame *f = &s->frames[i];
        json_begin_object(&j, NULL);
        json_str(&j, "name", s->strings[f->function][0] ? s->strings[f->function] : "?");
        if (s->strings[f->file][0])
            json_str(&j, "file", s->strings[f->file]);
        if (f->line)
            json_u64(&j, "line", f->line);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_begin_array(&j, "profiles");
    char label[1024], plabel[512];
    for (uint32_t t = 0; t < thread_count; t++) {
        samples_thread_label(s, &threads[t], label, sizeof label);
        if (processes > 1) {
            samples_process_label(s, threads[t].pid, plabel, sizeof plabel);
            size_t n = strlen(plabel);
            snprintf(plabel + n, sizeof plabel - n, ": ");
            n = strlen(plabel);
            snprintf(plabel + n, sizeof plabel - n, "%s", label);
        } else {
            snprintf(plabel, sizeof plabel, "%s", label);
        }
        json_begin_object(&j, NULL);
        json_str(&j, "type", "sampled");
        json_str(&j, "name", plabel);
        json_str(&j, "unit", "microseconds");
        json_u64(&j, "startValue", 0);
        json_double(&j, "endValue", threads[t].weight_ns / 1000.0, 15);
        json_begin_array(&j, "samples");
        for (uint32_t i = 0; i < s->stack_count; i++) {
            if (thread_of[i] != t)
                continue;
            const store_sample_stack *st = &s->stacks[i];
            json_begin_array(&j, NULL);
            for (uint32_t d = 0; d < st->depth; d++)
                json_u64(&j, NULL, s->frame_ids[st->first + d]);
            json_end_array(&j);
        }
        json_end_array(&j);
        json_begin_array(&j, "weights");
        for (uint32_t i = 0; i < s->stack_count; i++)
            if (thread_of[i] == t)
                json_double(&j, NULL, s->stacks[i].weight_ns / 1000.0, 15);
        json_end_array(&j);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
    free(threads);
    free(thread_of);
    return ferror(out) ? -EIO : 0;
}
