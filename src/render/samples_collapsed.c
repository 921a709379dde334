/* Collapsed stacks: flamegraph.pl's input, one line per stack. */
#include "store/sample_set.h"
#include "samples_write.h"
#include "samples_labels.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct line {
    char *text;
    uint64_t value;
} line;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(((const line *)a)->text, ((const line *)b)->text);
}

/* Appends s to the growing buffer; 0 or -ENOMEM. */
static int put(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 256;
        while (*len + n + 1 > c)
            c *= 2;
        char *p = realloc(*buf, c);
        if (!p)
            return -ENOMEM;
        *buf = p;
        *cap = c;
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return 0;
}

int samples_write_collapsed(const sample_set *set, FILE *out, unsigned flags)
{
    const store_samples *s = sample_set_view(set);
    samples_thread *threads;
    uint32_t thread_count, *thread_of;
    if (samples_threads(s, &threads, &thread_count, &thread_of))
        return -ENOMEM;
    uint32_t processes = samples_process_count(threads, thread_count);
    line *lines = calloc((size_t)s->stack_count + 1, sizeof *lines);
    int rc = lines ? 0 : -ENOMEM;
    char label[1024];
    for (uint32_t i = 0; i < s->stack_count && !rc; i++) {
        const store_sample_stack *st = &s->stacks[i];
        char *buf = NULL;
        size_t len = 0, cap = 0;
        if (processes > 1) {
            samples_process_label(s, st->pid, label, sizeof label);
            samples_clean_for_collapsed(label);
            rc |= put(&buf, &len, &cap, label);
            rc |= put(&buf, &len, &cap, ";");
        }
        samples_thread_label(s, &threads[thread_of[i]], label, sizeof label);
        samples_clean_for_collapsed(label);
        rc |= put(&buf, &len, &cap, label);
        if ((flags & SAMPLES_COLLAPSED_SPANS) && st->span_path) {
            snprintf(label, sizeof label, "[span %s]", s->strings[st->span_path]);
            samples_clean_for_collapsed(label);
            rc |= put(&buf, &len, &cap, ";");
            rc |= put(&buf, &len, &cap, label);
        }
        for (uint32_t d = 0; d < st->depth; d++) {
            samples_frame_label(s, s->frame_ids[st->first + d], label, sizeof label);
            samples_clean_for_collapsed(label);
            rc |= put(&buf, &len, &cap, ";");
            rc |= put(&buf, &len, &cap, label);
        }
        lines[i].text = buf;
        lines[i].value = (flags & SAMPLES_COLLAPSED_WEIGHT_US) ? (st->weight_ns + 500) / 1000
                                                               : st->count;
        if (!buf)
            rc = -ENOMEM;
    }
    if (!rc) {
        qsort(lines, s->stack_count, sizeof *lines, cmp_line);
        if (!(flags & SAMPLES_COLLAPSED_NO_HEADER)) {
            fprintf(out, "# lapse collapsed stacks (flamegraph.pl input): mode %s, asked %.6g Hz, "
                         "achieved %.6g Hz, %llu late samples, %llu read errors\n",
                    s->mode ? s->mode : "", s->rate_asked_hz, s->rate_achieved_hz,
                    (unsigned long long)s->late_samples, (unsigned long long)s->read_errors);
            if (flags & SAMPLES_COLLAPSED_WEIGHT_US)
                fprintf(out, "# values: microseconds that the samples of each stack stand for "
                             "(estimates from sampling, not measured)\n");
            else
                fprintf(out, "# values: samples that saw each stack; each stands for about one "
                             "sampling period (estimates, not measured)\n");
        }
        for (uint32_t i = 0; i < s->stack_count;) {
            uint32_t j = i;
            uint64_t v = 0;
            for (; j < s->stack_count && !strcmp(lines[j].text, lines[i].text); j++)
                v += lines[j].value;
            if (v)
                fprintf(out, "%s %llu\n", lines[i].text, (unsigned long long)v);
            i = j;
        }
    }
    for (uint32_t i = 0; lines && i < s->stack_count; i++)
        free(lines[i].text);
    free(lines);
    free(threads);
    free(thread_of);
    if (rc)
        return rc;
    return ferror(out) ? -EIO : 0;
}
