/* One sample: every interpreter's threads and their Python frames, read with
 * process_vm_readv while the target runs. What a torn read can break is checked:
 * a thread's interpreter and previous-thread back-pointers, frame owners, that a
 * frame's code is a code object, the instruction offset against the code's length,
 * and a depth cap (which also ends a frame list that loops). */
#include "py_objects.h"
#include "pyread_internal.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_INTERPRETERS 64
#define MAX_STRING 1024
_Static_assert(sizeof(((pyread_thread *)0)->os_name) == sizeof(((pyread_task *)0)->name) &&
                   sizeof(((pyread_thread *)0)->name) >= sizeof(((pyread_task *)0)->name),
               "thread names are copied whole");
_Static_assert(sizeof(((pyread_thread *)0)->name) == sizeof(((py_thread_name *)0)->name), "names are copied whole");

#define FRAME_FILL 8 /* blocks read below a frame that misses: 4 KiB of data stack */
#define TORN_RETRIES 2 /* a torn stack is read again up to this many times in a pass */

static uint64_t get_u64(const unsigned char *b, uint64_t off)
{
    uint64_t v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static int64_t get_i64(const unsigned char *b, uint64_t off)
{
    int64_t v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static int get_i32(const unsigned char *b, uint64_t off)
{
    int32_t v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static void put_utf8(char *out, size_t *n, size_t cap, uint32_t c)
{
    unsigned char b[4];
    size_t k;
    if (c < 0x80) {
        b[0] = (unsigned char)c;
        k = 1;
    } else if (c < 0x800) {
        b[0] = (unsigned char)(0xC0 | (c >> 6));
        b[1] = (unsigned char)(0x80 | (c & 63));
        k = 2;
    } else if (c < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (c >> 12));
        b[1] = (unsigned char)(0x80 | ((c >> 6) & 63));
        b[2] = (unsigned char)(0x80 | (c & 63));
        k = 3;
    } else if (c < 0x110000) {
        b[0] = (unsigned char)(0xF0 | (c >> 18));
        b[1] = (unsigned char)(0x80 | ((c >> 12) & 63));
        b[2] = (unsigned char)(0x80 | ((c >> 6) & 63));
        b[3] = (unsigned char)(0x80 | (c & 63));
        k = 4;
    } else {
        b[0] = '?';
        k = 1;
    }
    if (*n + k < cap) {
        memcpy(out + *n, b, k);
        *n += k;
    }
}

/* A str object of the target as a malloc'd UTF-8 string, or NULL. */
char *pyread_read_str(pyread_target *t, uint64_t addr)
{
    const py_layout *L = &t->layout;
    unsigned char head[128];
    if (!addr || L->unicode_compact_size > sizeof head || remote_read(&t->mem, addr, head, L->unicode_compact_size) != 0)
        return NULL;
    uint32_t state;
    memcpy(&state, head + L->unicode_state, sizeof state);
    int64_t length = get_i64(head, L->unicode_length);
    int kind = (int)((state >> 2) & 7), compact = (int)((state >> 5) & 1), ascii = (int)((state >> 6) & 1);
    if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4))
        return NULL;
    if (length > MAX_STRING)
        length = MAX_STRING;
    uint64_t data = addr + (ascii ? L->unicode_ascii_size : L->unicode_compact_size);
    size_t bytes = (size_t)length * (size_t)kind;
    unsigned char raw[MAX_STRING * 4];
    if (remote_read(&t->mem, data, raw, bytes) != 0)
        return NULL;
    size_t cap = (size_t)length * 4 + 1, n = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    for (int64_t i = 0; i < length; i++) {
        uint32_t c;
        if (kind == 1)
            c = raw[i];
        else if (kind == 2) {
            uint16_t u;
            memcpy(&u, raw + 2 * i, 2);
            c = u;
        } else
            memcpy(&c, raw + 4 * i, 4);
        put_utf8(out, &n, cap, c);
    }
    out[n] = 0;
    return out;
}

/* A bytes object's content (malloc'd), or NULL. */
static uint8_t *read_bytes(pyread_target *t, uint64_t addr, size_t *len)
{
    const py_layout *L = &t->layout;
    int64_t size;
    if (!addr || remote_read(&t->mem, addr + L->bytes_size, &size, sizeof size) != 0 || size < 0 ||
        size > (1 << 22))
        return NULL;
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf)
        return NULL;
    if (remote_read(&t->mem, addr + L->bytes_ob_sval, buf, (size_t)size) != 0) {
        free(buf);
        return NULL;
    }
    *len = (size_t)size;
    return buf;
}

/* The bytes of a code object that identify it: from co_firstlineno to the end of
 * the last of co_version (3.12+), co_filename, co_name, co_qualname, co_linetable. */
static void fingerprint_range(const py_layout *L, uint64_t *from, uint64_t *len)
{
    uint64_t lo = L->code_firstlineno, hi = L->code_firstlineno + 4;
    const uint64_t offs[] = {L->code_filename, L->code_name, L->code_qualname, L->code_linetable};
    for (size_t i = 0; i < 4; i++) {
        if (offs[i] < lo)
            lo = offs[i];
        if (offs[i] + 8 > hi)
            hi = offs[i] + 8;
    }
    if (L->code_version && L->code_version < lo)
        lo = L->code_version;
    if (L->code_version && L->code_version + 4 > hi)
        hi = L->code_version + 4;
    *from = lo;
    *len = hi - lo;
}

/* Up to 16 bytes of the qualified name's characters and of the line table, with
 * their lengths, read through the pass's cache; 0, or -1 when unreadable. */
static int content_print(pyread_target *t, uint64_t qualname, uint64_t linetable, unsigned char out[48])
{
    const py_layout *L = &t->layout;
    int64_t qlen = 0, tlen = 0;
    memset(out, 0, 48);
    if (remote_read_cached(&t->mem, qualname + L->unicode_length, &qlen, 8, 1) != 0 ||
        remote_read_cached(&t->mem, linetable + L->bytes_size, &tlen, 8, 1) != 0)
        return -1;
    memcpy(out, &qlen, 8);
    memcpy(out + 24, &tlen, 8);
    size_t qn = qlen > 0 && qlen < 16 ? (size_t)qlen : 16, tn = tlen > 0 && tlen < 16 ? (size_t)tlen : 16;
    if (qlen <= 0 || tlen < 0)
        return -1;
    if (remote_read_cached(&t->mem, qualname + L->unicode_ascii_size, out + 8, qn, 1) != 0 ||
        (tn && tlen > 0 && remote_read_cached(&t->mem, linetable + L->bytes_ob_sval, out + 32, tn, 1) != 0))
        return -1;
    return 0;
}

/* The code object at addr, from the cache or read now. *not_code is set when the
 * object is readable but not a code object. */
static code_entry *get_code(pyread_target *t, uint64_t addr, int *not_code)
{
    *not_code = 0;
    code_entry *e = code_cache_find(&t->codes, addr);
    if (e && !e->stale) {
        if (e->checked_pass != t->sample_number && t->check_count < PYREAD_MAX_CHECKS) {
            e->checked_pass = t->sample_number;
            t->checks[t->check_count++] = e;
        }
        return e;
    }
    const py_layout *L = &t->layout;
    unsigned char co[512];
    if (L->code_size > sizeof co || remote_read(&t->mem, addr, co, L->code_size) != 0)
        return NULL;
    if (t->code_type && get_u64(co, L->ob_type) != t->code_type) {
        *not_code = 1;
        return NULL;
    }
    code_entry n;
    memset(&n, 0, sizeof n);
    n.addr = addr;
    n.code_units = (long)get_i64(co, 16); /* PyVarObject ob_size: code units */
    n.info.firstlineno = get_i32(co, L->code_firstlineno);
    char *qual = pyread_read_str(t, get_u64(co, L->code_qualname));
    if (!qual)
        qual = pyread_read_str(t, get_u64(co, L->code_name));
    char *file = pyread_read_str(t, get_u64(co, L->code_filename));
    n.linetable = read_bytes(t, get_u64(co, L->code_linetable), &n.linetable_len);
    if (!qual || !file || !n.linetable) {
        free(qual);
        free(file);
        free(n.linetable);
        return NULL;
    }
    n.info.qualname = qual;
    n.info.filename = file;
    uint64_t fp_from, fp_len;
    fingerprint_range(L, &fp_from, &fp_len);
    if (fp_len <= sizeof n.fingerprint && fp_from + fp_len <= L->code_size)
        memcpy(n.fingerprint, co + fp_from, fp_len);
    /* A code object with a version is told from a later one at its address by the
     * version in its fingerprint; one without (3.11, or the counter ran out) by the
     * first bytes of its strings too. */
    uint32_t version = 0;
    if (L->code_version)
        memcpy(&version, co + L->code_version, sizeof version);
    n.versioned = version != 0;
    uint64_t qual_ptr = get_u64(co, L->code_qualname);
    if (!n.versioned &&
        content_print(t, qual_ptr ? qual_ptr : get_u64(co, L->code_name), get_u64(co, L->code_linetable),
                      n.content) != 0) {
        free(qual);
        free(file);
        free(n.linetable);
        return NULL;
    }
    n.checked_pass = t->sample_number;
    n.counter_verified = t->pass_counter_ok;
    n.verified_counter = t->pass_counter;
    e = code_cache_insert(&t->codes, &n);
    if (!e) {
        free(qual);
        free(file);
        free(n.linetable);
    }
    return e;
}

static pyread_task *task_for(pyread_target *t, int64_t tid)
{
    for (int i = 0; i < t->task_count; i++)
        if (t->tasks[i].tid == tid)
            return &t->tasks[i];
    /* forget tasks not seen for a while to make room */
    if (t->task_count == PYREAD_MAX_TASKS) {
        int w = 0;
        for (int i = 0; i < t->task_count; i++) {
            if (t->tasks[i].last_seen + 2 >= t->sample_number)
                t->tasks[w++] = t->tasks[i];
            else {
                if (t->tasks[i].stat_fd >= 0)
                    close(t->tasks[i].stat_fd);
                if (t->tasks[i].schedstat_fd >= 0)
                    close(t->tasks[i].schedstat_fd);
            }
        }
        t->task_count = w;
        if (w == PYREAD_MAX_TASKS)
            return NULL;
    }
    pyread_task *k = &t->tasks[t->task_count++];
    memset(k, 0, sizeof *k);
    k->tid = tid;
    k->stat_fd = -1;
    k->schedstat_fd = -1;
    char p[96];
    snprintf(p, sizeof p, "/proc/%d/task/%lld/comm", (int)t->pid, (long long)tid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, k->name, sizeof k->name - 1);
        close(fd);
        k->name[n > 0 ? n : 0] = 0;
        k->name[strcspn(k->name, "\n")] = 0;
    }
    snprintf(p, sizeof p, "/proc/%d/task/%lld/stat", (int)t->pid, (long long)tid);
    k->stat_fd = open(p, O_RDONLY | O_CLOEXEC);
    snprintf(p, sizeof p, "/proc/%d/task/%lld/schedstat", (int)t->pid, (long long)tid);
    k->schedstat_fd = open(p, O_RDONLY | O_CLOEXEC);
    return k;
}

/* The thread's CPU time since the previous call; 0 with *known = 0 the first time. */
static uint64_t task_cpu_delta(pyread_task *k, int *known)
{
    *known = 0;
    if (k->schedstat_fd < 0)
        return 0;
    char buf[128];
    ssize_t n = pread(k->schedstat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    uint64_t run = strtoull(buf, NULL, 10);
    uint64_t delta = k->have_cpu && run >= k->cpu_ns ? run - k->cpu_ns : 0;
    *known = k->have_cpu;
    k->have_cpu = 1;
    k->cpu_ns = run;
    return delta;
}

/* The thread's state letter from /proc/PID/task/TID/stat (0 unknown), and in *cpu
 * (when not NULL) the CPU it last ran on, field 39 (-1 unknown). */
static char task_state(pyread_task *k, int *cpu)
{
    if (cpu)
        *cpu = -1;
    if (k->stat_fd < 0)
        return 0;
    char buf[512];
    ssize_t n = pread(k->stat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ' || !paren[2])
        return 0;
    const char *f = paren + 2; /* the state; the CPU is 36 fields on */
    for (int i = 0; cpu && f && i < 36; i++)
        f = strchr(f + 1, ' ');
    if (cpu && f && f[1] >= '0' && f[1] <= '9')
        *cpu = atoi(f + 1);
    return paren[2];
}

int pyread_thread_cpu(pyread_target *t, int64_t tid, char *state)
{
    int cpu = -1;
    pyread_task *k = tid > 0 ? task_for(t, tid) : NULL;
    char st = k ? task_state(k, &cpu) : 0;
    if (state)
        *state = st;
    return cpu;
}

/* Walk one thread's frames from `frame`, innermost first, into th->frames. */
static void walk_frames(pyread_target *t, pyread_sample *s, pyread_thread *th, uint64_t frame)
{
    const py_layout *L = &t->layout;
    unsigned char fb[256];
    int room = (int)(sizeof s->frame_pool / sizeof s->frame_pool[0]) - s->frame_pool_used;
    th->frames = &s->frame_pool[s->frame_pool_used];
    int steps = 0;
    while (frame) {
        if (steps++ >= PYREAD_MAX_DEPTH * 2 || th->depth >= PYREAD_MAX_DEPTH || th->depth >= room) {
            th->truncated = 1;
            break;
        }
        if (frame & 7 || L->frame_size > sizeof fb || remote_read_cached(&t->mem, frame, fb, L->frame_size, FRAME_FILL) != 0) {
            th->torn = 1;
            break;
        }
        int owner = fb[L->frame_owner];
        uint64_t previous = get_u64(fb, L->frame_previous);
        if (owner > 3) {
            th->torn = 1;
            break;
        }
        if (owner == L->owner_cstack) {
            frame = previous;
            continue;
        }
        uint64_t code_addr = get_u64(fb, L->frame_code);
        int not_code = 0;
        code_entry *e = code_addr ? get_code(t, code_addr, &not_code) : NULL;
        if (!e) {
            if (not_code && L->minor >= 13) { /* 3.13: f_executable may be another object */
                frame = previous;
                continue;
            }
            th->torn = 1;
            break;
        }
        /* the instruction pointer: at most one unit before the code's first (a frame
         * not started yet), on a unit boundary; anything else is a torn read (checked
         * in unsigned arithmetic: a torn value may be any 64 bits) */
        uint64_t instr = get_u64(fb, L->frame_instr);
        uint64_t first = code_addr + L->code_adaptive;
        uint64_t from = instr + 2 - first; /* 2 bytes per unit, from unit -1 */
        if (instr + 2 < first || (from & 1) || from / 2 > INT32_MAX) {
            th->torn = 1;
            break;
        }
        int64_t unit = (int64_t)(from / 2) - 1;
        if (e->code_units > 0 && unit >= e->code_units) {
            th->torn = 1;
            break;
        }
        th->frames[th->depth].code = &e->info;
        th->frames[th->depth].line = code_entry_line(e, (long)unit);
        th->depth++;
        frame = previous;
    }
    s->frame_pool_used += th->depth;
}

static uint64_t gil_holder(pyread_target *t, uint64_t interp)
{
    const py_layout *L = &t->layout;
    uint64_t gil = 0, holder = 0;
    int32_t locked = 0;
    switch (L->gil_mode) {
    case PY_GIL_RUNTIME_TSTATE:
        return remote_read_cached(&t->mem, t->runtime + L->runtime_tstate_current, &holder, 8, 1) == 0 ? holder : 0;
    case PY_GIL_INTERP_POINTER:
        if (remote_read_cached(&t->mem, interp + L->interp_gil, &gil, 8, 1) != 0 || !gil)
            return 0;
        break;
    case PY_GIL_INTERP_INLINE:
        gil = interp + L->interp_gil;
        break;
    default:
        return 0;
    }
    if (remote_read_cached(&t->mem, gil + L->gil_locked, &locked, sizeof locked, 1) != 0 || locked != 1)
        return 0;
    return remote_read_cached(&t->mem, gil + L->gil_last_holder, &holder, 8, 1) == 0 ? holder : 0;
}

static int sample_once(pyread_target *t, pyread_sample *s, unsigned flags)
{
    const py_layout *L = &t->layout;
    s->thread_count = 0;
    s->frame_pool_used = 0;
    s->gil_holder = 0;
    s->read_errors = 0;
    t->sample_number++;
    remote_mem_reset(&t->mem);
    t->pass_counter_ok = t->code_counter && t->mem.watch_ok && t->mem.watch_value != 0;
    t->pass_counter = t->mem.watch_value;

    uint64_t interp = 0;
    if (remote_read_cached(&t->mem, t->runtime + L->runtime_interpreters_head, &interp, 8, 1) != 0) {
        if (t->mem.last_errno == ESRCH || (kill(t->pid, 0) != 0 && errno == ESRCH))
            return PYREAD_GONE;
        return PYREAD_READ;
    }
    unsigned char tb[1024];
    uint64_t tstate_fields_end = 0;
    const uint64_t tfields[] = {L->tstate_prev, L->tstate_next, L->tstate_interp, L->tstate_thread_id,
                                L->tstate_native_thread_id, L->has_cframe ? L->tstate_cframe : L->tstate_current_frame};
    for (size_t i = 0; i < sizeof tfields / sizeof tfields[0]; i++)
        if (tfields[i] + 8 > tstate_fields_end)
            tstate_fields_end = tfields[i] + 8;
    if (tstate_fields_end > sizeof tb)
        return PYREAD_READ;

    uint64_t interps[PYREAD_NAMED_INTERPRETERS];
    int interp_count = 0;
    for (int ni = 0; interp && ni < MAX_INTERPRETERS; ni++) {
        int64_t interp_id = 0;
        if (interp_count < PYREAD_NAMED_INTERPRETERS)
            interps[interp_count++] = interp;
        uint64_t ts = 0, prev = 0, interp_next = 0;
        if (remote_read_cached(&t->mem, interp + L->interp_id, &interp_id, 8, 1) != 0 ||
            remote_read_cached(&t->mem, interp + L->interp_threads_head, &ts, 8, 1) != 0 ||
            remote_read_cached(&t->mem, interp + L->interp_next, &interp_next, 8, 1) != 0) {
            s->read_errors++;
            break;
        }
        uint64_t holder = gil_holder(t, interp);
        if (holder && !s->gil_holder)
            s->gil_holder = holder;
        for (int nt = 0; ts && nt < PYREAD_MAX_THREADS * 2; nt++) {
            if (s->thread_count == PYREAD_MAX_THREADS)
                break;
            /* A torn stack is read again: the thread's blocks anew in one call, the
             * pointers to its newest frame first (its newest frames are what changed) */
            int mark = remote_mem_used_mark(&t->mem), listed = 0;
            pyread_thread *th = &s->threads[s->thread_count];
            for (int attempt = 0;; attempt++) {
                if (remote_read_cached(&t->mem, ts, tb, tstate_fields_end, 1) != 0) {
                    s->read_errors++;
                    break;
                }
                if (get_u64(tb, L->tstate_interp) != interp || get_u64(tb, L->tstate_prev) != prev) {
                    s->read_errors++; /* torn: the list changed under us */
                    break;
                }
                listed = 1;
                memset(th, 0, sizeof *th);
                th->tstate = ts;
                th->thread_id = get_u64(tb, L->tstate_thread_id);
                th->native_id = (int64_t)get_u64(tb, L->tstate_native_thread_id);
                th->interp_id = interp_id;
                th->holds_gil = holder == ts;
                uint64_t frame = 0, pointers[2] = {ts + (L->has_cframe ? L->tstate_cframe : L->tstate_current_frame), 0};
                if (L->has_cframe) {
                    uint64_t cframe = get_u64(tb, L->tstate_cframe);
                    pointers[1] = cframe + L->cframe_current_frame;
                    if (cframe && remote_read_cached(&t->mem, pointers[1], &frame, 8, 1) != 0)
                        th->torn = 1;
                } else {
                    frame = get_u64(tb, L->tstate_current_frame);
                }
                if (!th->torn)
                    walk_frames(t, s, th, frame);
                if (!th->torn || attempt == TORN_RETRIES ||
                    remote_mem_refresh(&t->mem, pointers, pointers[1] ? 2 : 1, mark) != 0)
                    break;
                s->frame_pool_used -= th->depth;
            }
            if (!listed)
                break;
            s->thread_count++;
            if (th->torn)
                s->read_errors++;
            if ((flags & (PYREAD_WANT_OS_STATE | PYREAD_WANT_NAMES | PYREAD_WANT_CPU_TIME | PYREAD_WANT_WAITING)) &&
                th->native_id > 0) {
                pyread_task *k = task_for(t, th->native_id);
                if (k) {
                    k->last_seen = t->sample_number;
                    if (flags & PYREAD_WANT_NAMES) { /* both 32 bytes or more, k->name ends in a NUL */
                        memcpy(th->os_name, k->name, sizeof k->name);
                        memcpy(th->name, k->name, sizeof k->name);
                    }
                    if (flags & PYREAD_WANT_CPU_TIME)
                        th->cpu_delta_ns = task_cpu_delta(k, &th->cpu_known);
                    /* the OS state when asked, and at a thread's first sight when its
                     * CPU time since the previous sample is not known yet */
                    if ((flags & PYREAD_WANT_OS_STATE) || ((flags & PYREAD_WANT_CPU_TIME) && !th->cpu_known))
                        th->os_state = k->state = task_state(k, NULL);
                    if ((flags & PYREAD_WANT_WAITING) && !th->holds_gil) {
                        /* A thread that has not run since a read found it waiting still
                         * waits (schedstat, 3-4 times cheaper than stat, says it has not
                         * run): its stat is not read again. One woken since but not yet
                         * on a CPU reads as waiting until it runs. */
                        int known;
                        uint64_t ran = task_cpu_delta(k, &known);
                        if (!known || ran || k->state == 'R' || !k->state)
                            k->state = task_state(k, NULL);
                        th->os_state = k->state;
                    }
                }
            }
            prev = ts;
            ts = get_u64(tb, L->tstate_next);
        }
        interp = interp_next;
    }
    if (s->thread_count == 0 && kill(t->pid, 0) != 0 && errno == ESRCH)
        return PYREAD_GONE;
    if (flags & PYREAD_WANT_NAMES)
        py_thread_names_apply(t, s, interps, interp_count);
    return 0;
}

/* Compare the code objects this pass took from the cache with what their addresses
 * hold now (through the pass's cache), but for those verified at the count of code
 * objects this pass read first: no code object was made since. Returns how many
 * changed (they are marked stale, and read again at their next use). */
static int check_codes(pyread_target *t)
{
    const py_layout *L = &t->layout;
    uint64_t from, len;
    fingerprint_range(L, &from, &len);
    if (len > sizeof t->checks[0]->fingerprint)
        return 0;
    unsigned char buf[96], content[48];
    int changed = 0;
    for (int i = 0; i < t->check_count; i++) {
        /* through the cache: the blocks stay in the set read at the start of each pass */
        code_entry *e = t->checks[i];
        if (t->pass_counter_ok && e->counter_verified && e->verified_counter == t->pass_counter)
            continue;
        uint64_t qual = 0, linetable = 0;
        int same = remote_read_cached(&t->mem, e->addr + from, buf, len, 1) == 0 &&
                   memcmp(buf, e->fingerprint, len) == 0;
        if (same && !e->versioned) {
            memcpy(&qual, buf + (L->code_qualname - from), 8);
            if (!qual)
                memcpy(&qual, buf + (L->code_name - from), 8);
            memcpy(&linetable, buf + (L->code_linetable - from), 8);
            same = content_print(t, qual, linetable, content) == 0 &&
                   memcmp(content, e->content, sizeof content) == 0;
        }
        if (!same) {
            t->checks[i]->stale = 1; /* read again, in place, at its next use */
            changed++;
        } else {
            e->counter_verified = t->pass_counter_ok;
            e->verified_counter = t->pass_counter;
        }
    }
    return changed;
}

int pyread_sample_now(pyread_target *t, pyread_sample *s, unsigned flags)
{
    for (int attempt = 0;; attempt++) {
        t->check_count = 0;
        int rc = sample_once(t, s, flags);
        if (rc != 0)
            return rc;
        if (check_codes(t) == 0)
            return 0;
        if (attempt == 1) {
            /* still changing: a thread whose stack uses a code object found changed
             * is torn for this sample (its names could be another object's) */
            for (int i = 0; i < s->thread_count; i++) {
                pyread_thread *th = &s->threads[i];
                for (int k = 0; k < th->depth; k++) {
                    const code_entry *e =
                        (const code_entry *)((const char *)th->frames[k].code - offsetof(code_entry, info));
                    if (e->stale) {
                        th->torn = 1;
                        s->read_errors++;
                        break;
                    }
                }
            }
            return 0;
        }
    }
}
