#include "samples_labels.h"
#include "utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct stack_ref {
    int64_t pid, tid;
    uint32_t stack;
} stack_ref;

static int cmp_ref(const void *a, const void *b)
{
    const stack_ref *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

uint32_t samples_process_count(const samples_thread *threads, uint32_t count)
{
    uint32_t processes = 0;
    for (uint32_t i = 0; i < count; i++)
        processes += i == 0 || threads[i].pid != threads[i - 1].pid;
    return processes;
}

int samples_threads(const store_samples *s, samples_thread **threads, uint32_t *count,
                    uint32_t **thread_of)
{
    *threads = NULL;
    *count = 0;
    *thread_of = NULL;
    uint32_t n = s->stack_count;
    stack_ref *refs = malloc(((size_t)n + 1) * sizeof *refs);
    samples_thread *ts = malloc(((size_t)n + 1) * sizeof *ts);
    uint32_t *of = malloc(((size_t)n + 1) * sizeof *of);
    /* per thread, the samples of the name chosen so far and of the current run */
    if (!refs || !ts || !of) {
        free(refs);
        free(ts);
        free(of);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        refs[i] = (stack_ref){s->stacks[i].pid, s->stacks[i].tid, i};
    qsort(refs, n, sizeof *refs, cmp_ref);
    uint32_t t = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        samples_thread *th = &ts[t];
        *th = (samples_thread){refs[i].pid, refs[i].tid, 0, 0, 0};
        for (; j < n && refs[j].pid == th->pid && refs[j].tid == th->tid; j++) {
            const store_sample_stack *st = &s->stacks[refs[j].stack];
            th->count += st->count;
            th->weight_ns += st->weight_ns;
            of[refs[j].stack] = t;
        }
        /* the name seen in the most samples (stacks of one thread are few names) */
        uint64_t best = 0;
        for (uint32_t k = i; k < j; k++) {
            uint32_t name = s->stacks[refs[k].stack].thread_name;
            if (!name || name == th->name)
                continue;
            uint64_t seen = 0;
            for (uint32_t m = i; m < j; m++)
                if (s->stacks[refs[m].stack].thread_name == name)
                    seen += s->stacks[refs[m].stack].count;
            if (seen > best) {
                best = seen;
                th->name = name;
            }
            /* one pass over the names is enough when they are all the same */
            if (best * 2 > th->count)
                break;
        }
        t++;
        i = j;
    }
    free(refs);
    *threads = ts;
    *count = t;
    *thread_of = of;
    return 0;
}

char *samples_frame_label(const store_samples *s, uint32_t frame, char *buf, size_t n)
{
    if (frame >= s->frame_count) {
        snprintf(buf, n, "?");
        return buf;
    }
    const store_sample_frame *f = &s->frames[frame];
    const char *fn = s->strings[f->function][0] ? s->strings[f->function] : "?";
    const char *file = s->strings[f->file];
    if (file[0] && f->line)
        snprintf(buf, n, "%s (%s:%u)", fn, file, f->line);
    else if (file[0])
        snprintf(buf, n, "%s (%s)", fn, file);
    else
        snprintf(buf, n, "%s", fn);
    return buf;
}

void samples_clean_for_collapsed(char *label)
{
    for (char *p = label; *p; p++) {
        if (*p == ';')
            *p = ':';
        else if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
}

char *samples_thread_label(const store_samples *s, const samples_thread *t, char *buf, size_t n)
{
    const char *name = t->name < s->string_count ? s->strings[t->name] : "";
    if (name[0])
        snprintf(buf, n, "%s (tid %lld)", name, (long long)t->tid);
    else
        snprintf(buf, n, "tid %lld", (long long)t->tid);
    return buf;
}

char *samples_process_label(const store_samples *s, int64_t pid, char *buf, size_t n)
{
    const char *cmd = "";
    for (uint32_t i = 0; i < s->process_count; i++)
        if (s->processes[i].pid == pid && s->processes[i].command < s->string_count)
            cmd = s->strings[s->processes[i].command];
    if (cmd[0])
        snprintf(buf, n, "process %lld (%.200s)", (long long)pid, cmd);
    else
        snprintf(buf, n, "process %lld", (long long)pid);
    return buf;
}

/* Length of the UTF-8 sequence at p that XML 1.0 takes (1-4), or 0: valid UTF-8
 * (utf8.c) other than the noncharacters U+FFFE and U+FFFF. */
static int xml_char_len(const unsigned char *p)
{
    size_t n = utf8_seq_len(p);
    if (n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
        return 0;
    return (int)n;
}

void samples_xml_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '&': fputs("&amp;", out); p++; continue;
        case '<': fputs("&lt;", out); p++; continue;
        case '>': fputs("&gt;", out); p++; continue;
        case '"': fputs("&quot;", out); p++; continue;
        case '\'': fputs("&apos;", out); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7f) {
            fputc('?', out);
            p++;
            continue;
        }
        int n = xml_char_len(p);
        if (n == 0) {
            fputc('?', out);
            p++;
            continue;
        }
        fwrite(p, 1, (size_t)n, out);
        p += n;
    }
}
