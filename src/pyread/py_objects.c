/* Reading dicts, ints and instance attributes of a live CPython, for Python's
 * thread names: sys.modules (PyInterpreterState.imports.modules) -> "threading" ->
 * its module dict -> "_active" (thread ident -> Thread) -> each Thread's "_name".
 *
 * Every read goes straight to process_vm_readv (never through the pass's block
 * cache, whose blocks are read again at each pass) and is checked: object types
 * against the runtime's type objects where their symbols were found, table sizes
 * bounded, indices inside their table, loops capped. Anything that does not check
 * out leaves the name unknown (the OS name is shown) and is tried again later. */
#include "py_objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LOG2_SIZE 20      /* a dict of up to 1M slots */
#define MAX_KEYS_SCANNED 65536 /* entries compared when looking up a str key */
#define ENTRY_CHUNK 64        /* dict entries read per call */
#define MAX_ACTIVE_THREADS 4096
#define MAX_NAME_KEY 64
#define NAMES_RETRY_NS 1000000000ull /* unnamed threads: read _active again at most once a second */
#define NAMES_FRESH_NS 20000000ull   /* a new thread: read _active now, or 20 ms after the last read */
#define MAX_INTERPRETERS_NAMED 8

static int read_u64(pyread_target *t, uint64_t addr, uint64_t *out)
{
    return addr && remote_read(&t->mem, addr, out, 8) == 0 ? 0 : -1;
}

/* The object's type is want (when want is known: 0 means its symbol was absent). */
static int has_type(pyread_target *t, uint64_t obj, uint64_t want)
{
    uint64_t type = 0;
    if (!obj || (obj & 7) || read_u64(t, obj + t->layout.ob_type, &type) != 0)
        return 0;
    return want == 0 || type == want;
}

/* The str at addr is exactly the ASCII text want. */
static int str_equals(pyread_target *t, uint64_t addr, const char *want)
{
    const py_layout *L = &t->layout;
    size_t n = strlen(want);
    unsigned char head[128];
    char data[MAX_NAME_KEY];
    if (!addr || (addr & 7) || n > sizeof data || L->unicode_ascii_size > sizeof head ||
        remote_read(&t->mem, addr, head, L->unicode_ascii_size) != 0)
        return 0;
    uint64_t type;
    memcpy(&type, head + L->ob_type, 8);
    if (t->unicode_type && type != t->unicode_type)
        return 0;
    uint32_t state;
    int64_t length;
    memcpy(&state, head + L->unicode_state, 4);
    memcpy(&length, head + L->unicode_length, 8);
    int compact = (int)((state >> 5) & 1), ascii = (int)((state >> 6) & 1);
    if (!compact || !ascii || length != (int64_t)n)
        return 0;
    return remote_read(&t->mem, addr + L->unicode_ascii_size, data, n) == 0 && memcmp(data, want, n) == 0;
}

/* A dict's keys table, checked: its kind, sizes, and where its entries start. */
typedef struct keys_table {
    uint64_t addr;
    int kind;
    int64_t nentries;
    uint64_t entries;
    uint64_t entry_size, entry_key, entry_value;
} keys_table;

static int read_keys(pyread_target *t, uint64_t keys, keys_table *out)
{
    const py_object_offsets *O = &t->layout.objects;
    unsigned char head[64];
    if (!keys || (keys & 7) || O->keys_indices > sizeof head || remote_read(&t->mem, keys, head, O->keys_indices) != 0)
        return -1;
    int log2_size = head[O->keys_log2_size], log2_index_bytes = head[O->keys_log2_index_bytes];
    int kind = head[O->keys_kind];
    int64_t nentries;
    memcpy(&nentries, head + O->keys_nentries, 8);
    if (log2_size < 3 || log2_size > MAX_LOG2_SIZE || log2_index_bytes < log2_size ||
        log2_index_bytes > log2_size + 3 || nentries < 0 || nentries > ((int64_t)1 << log2_size))
        return -1;
    out->addr = keys;
    out->kind = kind;
    out->nentries = nentries;
    out->entries = keys + O->keys_indices + ((uint64_t)1 << log2_index_bytes);
    if ((uint64_t)kind == O->kind_general) {
        out->entry_size = O->entry_size;
        out->entry_key = O->entry_key;
        out->entry_value = O->entry_value;
    } else if ((uint64_t)kind == O->kind_unicode || (uint64_t)kind == O->kind_split) {
        out->entry_size = O->unicode_entry_size;
        out->entry_key = O->unicode_entry_key;
        out->entry_value = O->unicode_entry_value;
    } else {
        return -1;
    }
    if (out->entry_size == 0 || out->entry_size > 32 || out->entry_value + 8 > out->entry_size ||
        out->entry_key + 8 > out->entry_size)
        return -1;
    return 0;
}

/* Entries [from, from + n) of a keys table into buf (n <= ENTRY_CHUNK). */
static int read_entries(pyread_target *t, const keys_table *k, int64_t from, int64_t n, unsigned char *buf)
{
    return remote_read(&t->mem, k->entries + (uint64_t)from * k->entry_size, buf, (size_t)n * k->entry_size);
}

static uint64_t entry_field(const keys_table *k, const unsigned char *buf, int64_t i, uint64_t off)
{
    uint64_t v;
    memcpy(&v, buf + (uint64_t)i * k->entry_size + off, 8);
    return v;
}

/* The index of the str key want in a keys table, and that entry's value pointer
 * (NULL in a split table, whose values are elsewhere); -1 if absent or unreadable.
 * A hint (index, key) found before is tried first. */
static int64_t keys_find_str(pyread_target *t, const keys_table *k, const char *want, py_dict_hint *hint,
                             uint64_t *entry_value)
{
    unsigned char buf[ENTRY_CHUNK * 32];
    if (hint && hint->keys == k->addr && hint->index < k->nentries) {
        if (read_entries(t, k, hint->index, 1, buf) == 0 && entry_field(k, buf, 0, k->entry_key) == hint->key) {
            *entry_value = entry_field(k, buf, 0, k->entry_value);
            return hint->index;
        }
    }
    int64_t count = k->nentries < MAX_KEYS_SCANNED ? k->nentries : MAX_KEYS_SCANNED;
    for (int64_t from = 0; from < count; from += ENTRY_CHUNK) {
        int64_t n = count - from < ENTRY_CHUNK ? count - from : ENTRY_CHUNK;
        if (read_entries(t, k, from, n, buf) != 0)
            return -1;
        for (int64_t i = 0; i < n; i++) {
            uint64_t key = entry_field(k, buf, i, k->entry_key);
            if (key && str_equals(t, key, want)) {
                *entry_value = entry_field(k, buf, i, k->entry_value);
                if (hint) {
                    hint->keys = k->addr;
                    hint->index = from + i;
                    hint->key = key;
                }
                return from + i;
            }
        }
    }
    return -1;
}

/* A value of a split table: values[index] of its PyDictValues (capacity checked on 3.13). */
static int split_value(pyread_target *t, uint64_t values, int64_t index, uint64_t *out)
{
    const py_object_offsets *O = &t->layout.objects;
    if (!values || index < 0 || index > 255)
        return -1;
    if (O->managed_mode == PY_MANAGED_INLINE_VALUES) {
        unsigned char capacity = 0;
        if (remote_read(&t->mem, values + O->values_capacity, &capacity, 1) != 0 || index >= capacity)
            return -1;
    }
    return read_u64(t, values + O->values_array + 8 * (uint64_t)index, out);
}

/* dict[want] for a str key; 0 and *out (non-NULL), or -1. */
static int dict_find_str(pyread_target *t, uint64_t dict, const char *want, py_dict_hint *hint, uint64_t *out)
{
    const py_object_offsets *O = &t->layout.objects;
    uint64_t keys = 0, values = 0, value = 0;
    keys_table k;
    if (!has_type(t, dict, t->dict_type) || read_u64(t, dict + O->dict_keys, &keys) != 0 ||
        read_u64(t, dict + O->dict_values, &values) != 0 || read_keys(t, keys, &k) != 0)
        return -1;
    int64_t index = keys_find_str(t, &k, want, hint, &value);
    if (index < 0)
        return -1;
    if (values && split_value(t, values, index, &value) != 0)
        return -1;
    if (!value)
        return -1;
    *out = value;
    return 0;
}

/* The instance attribute want of obj, for a type with a managed dict (every class
 * defined in Python without __slots__, as threading.Thread). */
static int attribute(pyread_target *t, uint64_t obj, const char *want, uint64_t *out)
{
    const py_object_offsets *O = &t->layout.objects;
    uint64_t type = 0, flags = 0, values = 0, dict = 0;
    if (!obj || (obj & 7) || read_u64(t, obj + t->layout.ob_type, &type) != 0 || !type || (type & 7) ||
        read_u64(t, type + O->type_flags, &flags) != 0 || !(flags & O->flag_managed_dict))
        return -1;
    uint64_t pre[2];
    switch (O->managed_mode) {
    case PY_MANAGED_TWO_POINTERS: /* values at obj-32, dict at obj-24 */
        if (remote_read(&t->mem, obj - 32, pre, sizeof pre) != 0)
            return -1;
        values = pre[0];
        dict = pre[1];
        break;
    case PY_MANAGED_TAGGED:
        if (read_u64(t, obj - 24, &dict) != 0)
            return -1;
        if (dict & 1) { /* the values pointer less one (_PyDictOrValues_GetValues) */
            values = dict + 1;
            dict = 0;
        }
        break;
    case PY_MANAGED_INLINE_VALUES:
        if (read_u64(t, obj - 24, &dict) != 0)
            return -1;
        if (!dict && (flags & O->flag_inline_values)) {
            unsigned char valid = 0;
            values = obj + O->object_size;
            if (remote_read(&t->mem, values + O->values_valid, &valid, 1) != 0 || !valid)
                return -1;
        }
        break;
    default:
        return -1;
    }
    if (values) {
        uint64_t keys = 0, entry_value = 0;
        keys_table k;
        if (read_u64(t, type + O->type_cached_keys, &keys) != 0 || read_keys(t, keys, &k) != 0 ||
            (uint64_t)k.kind != O->kind_split)
            return -1;
        int64_t index = keys_find_str(t, &k, want, NULL, &entry_value);
        return index >= 0 && split_value(t, values, index, out) == 0 && *out ? 0 : -1;
    }
    return dict ? dict_find_str(t, dict, want, NULL, out) : -1;
}

/* The value of a non-negative int that fits 64 bits. */
static int read_ident(pyread_target *t, uint64_t obj, uint64_t *out)
{
    const py_object_offsets *O = &t->layout.objects;
    int64_t size = 0;
    uint32_t digits[3] = {0, 0, 0};
    if (!has_type(t, obj, t->long_type) || remote_read(&t->mem, obj + O->long_size, &size, 8) != 0)
        return -1;
    int64_t ndigits;
    if (O->long_tagged) {
        if ((size & 3) == 2) /* negative */
            return -1;
        ndigits = (int64_t)((uint64_t)size >> 3);
    } else {
        if (size < 0)
            return -1;
        ndigits = size;
    }
    if (ndigits > 3 || O->long_shift != 30)
        return -1;
    if (ndigits && remote_read(&t->mem, obj + O->long_digits, digits, 4 * (size_t)ndigits) != 0)
        return -1;
    if (digits[0] >> 30 || digits[1] >> 30 || digits[2] >> 4)
        return -1;
    *out = (uint64_t)digits[0] | ((uint64_t)digits[1] << 30) | ((uint64_t)digits[2] << 60);
    return 0;
}

/* The entry of a thread, looked for from *next on (threads come in the same order
 * pass after pass, and were added in it: one comparison each, not one per entry);
 * *next is left after the entry found. */
static py_thread_name *name_entry(pyread_target *t, uint64_t ident, int64_t native_id, int *next)
{
    for (int k = 0; k < t->name_count; k++) {
        int i = (*next + k) % t->name_count;
        if (t->names[i].ident == ident && t->names[i].native_id == native_id) {
            *next = i + 1;
            return &t->names[i];
        }
    }
    return NULL;
}

/* Read threading._active of one interpreter and name the unnamed entries found in it. */
static void read_active(pyread_target *t, uint64_t interp, py_name_hints *hints)
{
    const py_object_offsets *O = &t->layout.objects;
    uint64_t modules = 0, module = 0, module_dict = 0, active = 0;
    if (!O->interp_modules || read_u64(t, interp + O->interp_modules, &modules) != 0 ||
        dict_find_str(t, modules, "threading", &hints->threading, &module) != 0 ||
        !has_type(t, module, t->module_type) || read_u64(t, module + O->module_dict, &module_dict) != 0 ||
        dict_find_str(t, module_dict, "_active", &hints->active, &active) != 0 || !has_type(t, active, t->dict_type))
        return;
    uint64_t keys = 0, values = 0;
    keys_table k;
    if (read_u64(t, active + O->dict_keys, &keys) != 0 || read_u64(t, active + O->dict_values, &values) != 0 ||
        values || read_keys(t, keys, &k) != 0 || (uint64_t)k.kind != O->kind_general ||
        k.nentries > MAX_ACTIVE_THREADS)
        return;
    unsigned char buf[ENTRY_CHUNK * 32];
    for (int64_t from = 0; from < k.nentries; from += ENTRY_CHUNK) {
        int64_t n = k.nentries - from < ENTRY_CHUNK ? k.nentries - from : ENTRY_CHUNK;
        if (read_entries(t, &k, from, n, buf) != 0)
            return;
        for (int64_t i = 0; i < n; i++) {
            uint64_t key = entry_field(&k, buf, i, k.entry_key), thread = entry_field(&k, buf, i, k.entry_value);
            uint64_t ident = 0, name = 0;
            if (!key || !thread || read_ident(t, key, &ident) != 0)
                continue;
            for (int j = 0; j < t->name_count; j++) {
                py_thread_name *e = &t->names[j];
                if (e->ident != ident || e->known)
                    continue;
                if (!name && (attribute(t, thread, "_name", &name) != 0 || !has_type(t, name, t->unicode_type)))
                    break;
                char *text = pyread_read_str(t, name);
                if (text && text[0]) {
                    snprintf(e->name, sizeof e->name, "%s", text);
                    e->known = 1;
                }
                free(text);
            }
        }
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keep the entries seen in this pass, so that a full table makes room. */
static void forget_unseen(pyread_target *t)
{
    int kept = 0;
    for (int i = 0; i < t->name_count; i++)
        if (t->names[i].last_seen == t->sample_number)
            t->names[kept++] = t->names[i];
    t->name_count = kept;
}

void py_thread_names_apply(pyread_target *t, pyread_sample *s, const uint64_t *interps, int interp_count)
{
    int fresh = 0, unnamed = 0, next = 0;
    /* first mark the threads known, so that making room forgets only threads gone */
    for (int i = 0; i < s->thread_count; i++) {
        py_thread_name *e = name_entry(t, s->threads[i].thread_id, s->threads[i].native_id, &next);
        if (e)
            e->last_seen = t->sample_number;
        else
            fresh = 1;
    }
    if (fresh && (t->name_count + s->thread_count > PYREAD_MAX_NAMES || t->name_count >= 2 * s->thread_count + 16))
        forget_unseen(t); /* the table stays near the number of threads */
    next = 0;
    for (int i = 0; i < s->thread_count; i++) {
        pyread_thread *th = &s->threads[i];
        py_thread_name *e = name_entry(t, th->thread_id, th->native_id, &next);
        if (!e) {
            if (t->name_count == PYREAD_MAX_NAMES)
                continue;
            e = &t->names[t->name_count++];
            memset(e, 0, sizeof *e);
            e->ident = th->thread_id;
            e->native_id = th->native_id;
            e->last_seen = t->sample_number;
        }
        if (!e->known)
            unnamed = 1;
    }
    if (fresh && t->names_due_ns > t->names_read_ns + NAMES_FRESH_NS)
        t->names_due_ns = t->names_read_ns + NAMES_FRESH_NS;
    if (unnamed) {
        uint64_t now = now_ns();
        if (now >= t->names_due_ns) {
            t->names_read_ns = now;
            t->names_due_ns = now + NAMES_RETRY_NS;
            for (int i = 0; i < interp_count && i < MAX_INTERPRETERS_NAMED; i++)
                read_active(t, interps[i], &t->name_hints[i]);
        }
    }
    next = 0;
    for (int i = 0; i < s->thread_count; i++) {
        pyread_thread *th = &s->threads[i];
        py_thread_name *e = name_entry(t, th->thread_id, th->native_id, &next);
        if (e && e->known)
            memcpy(th->name, e->name, sizeof th->name); /* same size; e->name ends in a NUL */
    }
}
