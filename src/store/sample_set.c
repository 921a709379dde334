/* The aggregated set of Python stack samples: interning of strings and frames,
 * aggregation of identical stacks, all by open-addressing hash tables over the
 * arrays of the store_samples the set owns. */
#include "sample_set.h"

#include "../core/hash.h"
#include "store/codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct id_table {
    uint32_t *slots; /* id + 1; 0 = empty */
    uint32_t cap;    /* a power of two */
} id_table;

struct sample_set {
    store_samples s;
    uint32_t string_cap, process_cap, frame_cap, stack_cap;
    uint64_t frame_id_cap, stack_hash_cap;
    id_table strings, frames, stacks;
    uint64_t *stack_hash; /* per stack, to rehash and compare cheaply */
    char *mode;
};


/* Grows an array of elem-size items to hold need; 0 or -ENOMEM. */
static int grow(void **arr, uint64_t *cap, uint64_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint64_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    if (n > SIZE_MAX / elem)
        return -ENOMEM;
    void *p = realloc(*arr, (size_t)(n * elem));
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = n;
    return 0;
}

static int grow32(void **arr, uint32_t *cap, uint64_t need, size_t elem)
{
    if (need > UINT32_MAX - 1)
        return -ENOMEM;
    uint64_t c = *cap;
    int rc = grow(arr, &c, need, elem);
    if (c > UINT32_MAX)
        c = UINT32_MAX;
    *cap = (uint32_t)c;
    return rc;
}

/* Makes room for one more entry in t (count entries so far), rehashing with hash_of. */
static int table_reserve(id_table *t, uint32_t count, const sample_set *set,
                         uint64_t (*hash_of)(const sample_set *, uint32_t))
{
    if ((uint64_t)(count + 1) * 4 <= (uint64_t)t->cap * 3)
        return 0;
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -ENOMEM;
    for (uint32_t id = 0; id < count; id++) {
        uint32_t i = (uint32_t)hash_of(set, id) & (cap - 1);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

static uint64_t string_hash(const sample_set *set, uint32_t id)
{
    const char *s = set->s.strings[id];
    return hash_mix(hash_bytes(HASH_SEED, s, strlen(s)));
}

static uint64_t frame_hash_of(const store_sample_frame *f)
{
    uint32_t v[3] = {f->function, f->file, f->line};
    return hash_mix(hash_bytes(HASH_SEED, v, sizeof v));
}

static uint64_t frame_hash(const sample_set *set, uint32_t id)
{
    return frame_hash_of(&set->s.frames[id]);
}

/* Word at a time, in two independent lanes (a stack is hashed at every sample). */
static uint64_t stack_hash_of(const sample_key *k, const uint32_t *frames, uint32_t depth)
{
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t a = ((uint64_t)k->pid * m) ^ (uint64_t)k->tid;
    uint64_t b = ((uint64_t)k->thread_name << 40 ^ (uint64_t)k->span_path << 8 ^ k->state) * m ^ depth;
    uint32_t d = 0;
    for (; d + 1 < depth; d += 2) {
        a = (a ^ frames[d]) * m;
        b = (b ^ frames[d + 1]) * m;
    }
    if (d < depth)
        a = (a ^ frames[d]) * m;
    return hash_mix(a ^ hash_mix(b));
}

static uint64_t stack_hash(const sample_set *set, uint32_t id)
{
    return set->stack_hash[id];
}

sample_set *sample_set_new(void)
{
    sample_set *set = calloc(1, sizeof *set);
    if (!set)
        return NULL;
    if (sample_set_string(set, "", 0) != 0 || sample_set_set_mode(set, "wall") != 0) {
        sample_set_free(set);
        return NULL;
    }
    return set;
}

void sample_set_free(sample_set *set)
{
    if (!set)
        return;
    for (uint32_t i = 0; i < set->s.string_count; i++)
        free(set->s.strings[i]);
    free(set->s.strings);
    free(set->s.processes);
    free(set->s.frames);
    free(set->s.frame_ids);
    free(set->s.stacks);
    free(set->stack_hash);
    free(set->strings.slots);
    free(set->frames.slots);
    free(set->stacks.slots);
    free(set->mode);
    free(set);
}

uint32_t sample_set_string(sample_set *set, const char *s, size_t len)
{
    if (len && !s)
        return SAMPLE_NONE;
    if (table_reserve(&set->strings, set->s.string_count, set, string_hash))
        return SAMPLE_NONE;
    /* a NUL inside s would make two strings look alike: stop at it */
    const char *nul = len ? memchr(s, 0, len) : NULL;
    if (nul)
        len = (size_t)(nul - s);
    uint64_t h = hash_mix(hash_bytes(HASH_SEED, s, len));
    uint32_t mask = set->strings.cap - 1;
    uint32_t i = (uint32_t)h & mask;
    for (; set->strings.slots[i]; i = (i + 1) & mask) {
        const char *t = set->s.strings[set->strings.slots[i] - 1];
        if (!strncmp(t, s ? s : "", len) && t[len] == 0)
            return set->strings.slots[i] - 1;
    }
    if (grow32((void **)&set->s.strings, &set->string_cap, set->s.string_count + 1ull,
               sizeof(char *)))
        return SAMPLE_NONE;
    char *copy = malloc(len + 1);
    if (!copy)
        return SAMPLE_NONE;
    if (len)
        memcpy(copy, s, len);
    copy[len] = 0;
    uint32_t id = set->s.string_count++;
    set->s.strings[id] = copy;
    set->strings.slots[i] = id + 1;
    return id;
}

uint32_t sample_set_frame(sample_set *set, uint32_t function, uint32_t file, uint32_t line)
{
    if (function >= set->s.string_count || file >= set->s.string_count)
        return SAMPLE_NONE;
    if (table_reserve(&set->frames, set->s.frame_count, set, frame_hash))
        return SAMPLE_NONE;
    store_sample_frame f = {function, file, line};
    uint32_t mask = set->frames.cap - 1;
    uint32_t i = (uint32_t)frame_hash_of(&f) & mask;
    for (; set->frames.slots[i]; i = (i + 1) & mask) {
        const store_sample_frame *g = &set->s.frames[set->frames.slots[i] - 1];
        if (g->function == function && g->file == file && g->line == line)
            return set->frames.slots[i] - 1;
    }
    if (grow32((void **)&set->s.frames, &set->frame_cap, set->s.frame_count + 1ull, sizeof f))
        return SAMPLE_NONE;
    uint32_t id = set->s.frame_count++;
    set->s.frames[id] = f;
    set->frames.slots[i] = id + 1;
    return id;
}

int sample_set_process(sample_set *set, int64_t pid, int64_t ppid, uint32_t command,
                       uint32_t python_version)
{
    if (command >= set->s.string_count || python_version >= set->s.string_count)
        return -EINVAL;
    for (uint32_t i = 0; i < set->s.process_count; i++)
        if (set->s.processes[i].pid == pid) {
            set->s.processes[i] = (store_sample_process){pid, ppid, command, python_version};
            return 0;
        }
    if (grow32((void **)&set->s.processes, &set->process_cap, set->s.process_count + 1ull,
               sizeof(store_sample_process)))
        return -ENOMEM;
    set->s.processes[set->s.process_count++] =
        (store_sample_process){pid, ppid, command, python_version};
    return 0;
}

static int key_equal(const store_sample_stack *st, const sample_key *k, uint32_t depth)
{
    return st->pid == k->pid && st->tid == k->tid && st->thread_name == k->thread_name &&
           st->span_path == k->span_path && st->state == k->state && st->depth == depth;
}

/* Adds count samples standing for weight_ns to the stack (key, frames). */
static int stack_add(sample_set *set, const sample_key *key, const uint32_t *frame_ids,
                     uint32_t depth, uint64_t count, uint64_t weight_ns)
{
    if (key->thread_name >= set->s.string_count || key->span_path >= set->s.string_count ||
        (key->state & ~STORE_SAMPLE_STATE_MASK) || (depth && !frame_ids) ||
        depth > STORE_MAX_FRAMES)
        return -EINVAL;
    for (uint32_t d = 0; d < depth; d++)
        if (frame_ids[d] >= set->s.frame_count)
            return -EINVAL;
    if (table_reserve(&set->stacks, set->s.stack_count, set, stack_hash))
        return -ENOMEM;
    uint64_t h = stack_hash_of(key, frame_ids, depth);
    uint32_t mask = set->stacks.cap - 1;
    uint32_t i = (uint32_t)h & mask;
    for (; set->stacks.slots[i]; i = (i + 1) & mask) {
        uint32_t id = set->stacks.slots[i] - 1;
        store_sample_stack *st = &set->s.stacks[id];
        if (set->stack_hash[id] == h && key_equal(st, key, depth) &&
            (!depth || !memcmp(set->s.frame_ids + st->first, frame_ids, (size_t)depth * 4))) {
            st->count += count;
            st->weight_ns += weight_ns;
            return 0;
        }
    }
    if (grow32((void **)&set->s.stacks, &set->stack_cap, set->s.stack_count + 1ull,
               sizeof(store_sample_stack)) ||
        grow((void **)&set->stack_hash, &set->stack_hash_cap, set->s.stack_count + 1ull,
             sizeof(uint64_t)) ||
        grow((void **)&set->s.frame_ids, &set->frame_id_cap, set->s.frame_id_count + depth + 1,
             sizeof(uint32_t)))
        return -ENOMEM;
    uint32_t id = set->s.stack_count++;
    store_sample_stack *st = &set->s.stacks[id];
    *st = (store_sample_stack){key->pid,  key->tid, key->thread_name, key->span_path, key->state,
                               depth, set->s.frame_id_count, count, weight_ns};
    if (depth)
        memcpy(set->s.frame_ids + set->s.frame_id_count, frame_ids, (size_t)depth * 4);
    set->s.frame_id_count += depth;
    set->stack_hash[id] = h;
    set->stacks.slots[i] = id + 1;
    return 0;
}

int sample_set_add(sample_set *set, const sample_key *key, const uint32_t *frame_ids,
                   uint32_t depth, uint64_t weight_ns)
{
    return stack_add(set, key, frame_ids, depth, 1, weight_ns);
}

store_samples *sample_set_data(sample_set *set) { return &set->s; }

const store_samples *sample_set_view(const sample_set *set) { return &set->s; }

int sample_set_set_mode(sample_set *set, const char *mode)
{
    char *copy = strdup(mode ? mode : "");
    if (!copy)
        return -ENOMEM;
    free(set->mode);
    set->mode = copy;
    set->s.mode = copy;
    return 0;
}

/* Adds the strings, frames, processes and stacks of src to set (ids remapped; a
 * stack already in set adds up). 0, -EINVAL (src inconsistent) or -ENOMEM. */
static int add_content(sample_set *set, const store_samples *src)
{
    int rc = -ENOMEM;
    uint32_t *smap = malloc(((size_t)src->string_count + 1) * sizeof *smap);
    uint32_t *fmap = malloc(((size_t)src->frame_count + 1) * sizeof *fmap);
    uint32_t *frames = NULL;
    uint64_t frames_cap = 0;
    if (!smap || !fmap)
        goto out;
    for (uint32_t i = 0; i < src->string_count; i++) {
        const char *str = src->strings[i] ? src->strings[i] : "";
        if ((smap[i] = sample_set_string(set, str, strlen(str))) == SAMPLE_NONE)
            goto out;
    }
    rc = -EINVAL;
    for (uint32_t i = 0; i < src->frame_count; i++) {
        const store_sample_frame *f = &src->frames[i];
        if (f->function >= src->string_count || f->file >= src->string_count)
            goto out;
        if ((fmap[i] = sample_set_frame(set, smap[f->function], smap[f->file], f->line)) ==
            SAMPLE_NONE) {
            rc = -ENOMEM;
            goto out;
        }
    }
    for (uint32_t i = 0; i < src->process_count; i++) {
        const store_sample_process *p = &src->processes[i];
        if (p->command >= src->string_count || p->python_version >= src->string_count)
            goto out;
        if (sample_set_process(set, p->pid, p->ppid, smap[p->command], smap[p->python_version])) {
            rc = -ENOMEM;
            goto out;
        }
    }
    for (uint32_t i = 0; i < src->stack_count; i++) {
        const store_sample_stack *st = &src->stacks[i];
        rc = -EINVAL;
        if (st->thread_name >= src->string_count || st->span_path >= src->string_count ||
            st->first > src->frame_id_count || st->depth > src->frame_id_count - st->first)
            goto out;
        rc = -ENOMEM;
        if (grow((void **)&frames, &frames_cap, st->depth + 1ull, sizeof *frames))
            goto out;
        rc = -EINVAL;
        for (uint32_t d = 0; d < st->depth; d++) {
            uint32_t f = src->frame_ids[st->first + d];
            if (f >= src->frame_count)
                goto out;
            frames[d] = fmap[f];
        }
        sample_key k = {st->pid, st->tid, smap[st->thread_name], smap[st->span_path], st->state};
        if ((rc = stack_add(set, &k, frames, st->depth, st->count, st->weight_ns)))
            goto out;
    }
    rc = 0;
out:
    free(frames);
    free(smap);
    free(fmap);
    return rc;
}

sample_set *sample_set_from_store(const store_samples *src)
{
    sample_set *set = sample_set_new();
    if (!set)
        return NULL;
    store_samples *dst = &set->s;
    if (sample_set_set_mode(set, src->mode ? src->mode : "")) {
        sample_set_free(set);
        return NULL;
    }
    dst->rate_asked_hz = src->rate_asked_hz;
    dst->rate_achieved_hz = src->rate_achieved_hz;
    dst->samples = src->samples;
    dst->late_samples = src->late_samples;
    dst->read_errors = src->read_errors;
    dst->start_real_ns = src->start_real_ns;
    dst->end_real_ns = src->end_real_ns;
    dst->duration_ns = src->duration_ns;
    dst->idle = src->idle;
    if (add_content(set, src)) {
        sample_set_free(set);
        return NULL;
    }
    return set;
}

int sample_set_merge(sample_set *set, const store_samples *src)
{
    store_samples *dst = &set->s;
    int first = dst->stack_count == 0 && dst->samples == 0;
    if (first) {
        if (sample_set_set_mode(set, src->mode ? src->mode : ""))
            return -ENOMEM;
        dst->rate_asked_hz = src->rate_asked_hz;
        dst->rate_achieved_hz = src->rate_achieved_hz;
        dst->start_real_ns = src->start_real_ns;
        dst->end_real_ns = src->end_real_ns;
        dst->idle = src->idle;
    } else {
        if (strcmp(dst->mode, src->mode ? src->mode : "") &&
            sample_set_set_mode(set, "mixed"))
            return -ENOMEM;
        if (src->rate_asked_hz > dst->rate_asked_hz)
            dst->rate_asked_hz = src->rate_asked_hz;
        if (src->rate_achieved_hz < dst->rate_achieved_hz)
            dst->rate_achieved_hz = src->rate_achieved_hz; /* the lowest */
        if (src->start_real_ns && (!dst->start_real_ns || src->start_real_ns < dst->start_real_ns))
            dst->start_real_ns = src->start_real_ns;
        if (src->end_real_ns > dst->end_real_ns)
            dst->end_real_ns = src->end_real_ns;
        dst->idle |= src->idle;
    }
    dst->samples += src->samples;
    dst->late_samples += src->late_samples;
    dst->read_errors += src->read_errors;
    if (src->duration_ns > dst->duration_ns)
        dst->duration_ns = src->duration_ns;
    return add_content(set, src);
}

uint64_t sample_set_total_count(const sample_set *set)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < set->s.stack_count; i++)
        n += set->s.stacks[i].count;
    return n;
}

uint64_t sample_set_total_weight_ns(const sample_set *set)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < set->s.stack_count; i++)
        n += set->s.stacks[i].weight_ns;
    return n;
}
