#include "samples_labels.h"

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

/* Length of the valid UTF-8 sequence at p (1-4), or 0. */
static int utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    int n;
    unsigned min;
    unsigned cp;
    if ((p[0] & 0xe0) == 0xc0) {
        n = 2, min = 0x80, cp = p[0] & 0x1f;
    } else if ((p[0] & 0xf0) == 0xe0) {
        n = 3, min = 0x800, cp = p[0] & 0x0f;
    } else if ((p[0] & 0xf8) == 0xf0) {
        n = 4, min = 0x10000, cp = p[0] & 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
        cp == 0xffff)
        return 0;
    return n;
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
        int n = utf8_len(p);
        if (n == 0) {
            fputc('?', out);
            p++;
            continue;
        }
        fwrite(p, 1, (size_t)n, out);
        p += n;
    }
}
