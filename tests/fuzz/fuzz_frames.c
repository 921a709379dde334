/* A fuzz driver for the CPython reader's walk (src/pyread/pyread_sample.c): what a
 * torn or garbage read can do to it.
 *
 *   fuzz_frames [-t SECONDS] [-s SEED]
 *
 * It builds a fake CPython in its own memory from the layout tables the reader uses
 * (3.11, 3.12, and a 3.13-shaped variant: no cframe, the GIL inside the
 * interpreter): a runtime, one or two interpreters, up to 12 threads, frames on a data
 * stack, code objects with their strings and line tables, and 3.12's count of code
 * objects made. The reader opens it with pyread_open_layout on this process's own
 * pid and reads it with process_vm_readv like any target. The first pass of each
 * build must read back exactly the stacks that were built (so the fuzzing starts
 * from a walk that works); then, pass after pass, the memory is changed under the
 * reader the way a running target changes it and worse: random bytes, pointers
 * into other objects, into the middle of one, to an unmapped page or to nothing,
 * loops of frames, huge and negative lengths, code objects replaced in place with
 * and without a new count. Each pass must return, with at most PYREAD_MAX_THREADS
 * threads of at most PYREAD_MAX_DEPTH frames, each frame naming a code object
 * whose strings are NUL-terminated; any violation aborts. Run it under the
 * sanitizer build (`make fuzz` does, after the file reader's driver).
 */
#include "pyread/py_layout.h"
#include "pyread/pyread.h"
#include "fuzz_random.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ARENA_SIZE (1u << 20)
#define MAX_BUILT_THREADS 12 /* enough, with deep stacks, to outgrow the reader's first 128 cache blocks */
#define MAX_BUILT_FRAMES 40
#define MAX_CODES 12

static uint64_t seed0;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_frames: invariant broken: %s (replay: fuzz_frames -s %llu)\n", what,
            (unsigned long long)seed0);
    abort();
}

/* ---- the fake target's memory ---- */

static unsigned char *arena;   /* ARENA_SIZE bytes, followed by an unmapped page */
static uint64_t arena_used;
static uint64_t unmapped_page; /* an address that faults */

static uint64_t alloc(uint64_t size)
{
    uint64_t at = (arena_used + 63) & ~(uint64_t)63;
    if (at + size > ARENA_SIZE)
        fail("arena too small for a build");
    arena_used = at + size;
    memset(arena + at, 0, size);
    return (uint64_t)(uintptr_t)(arena + at);
}

static void put64(uint64_t addr, uint64_t v) { memcpy((void *)(uintptr_t)addr, &v, 8); }
static void put32(uint64_t addr, uint32_t v) { memcpy((void *)(uintptr_t)addr, &v, 4); }
static void put8(uint64_t addr, uint8_t v) { memcpy((void *)(uintptr_t)addr, &v, 1); }

/* ---- what was built, to compare the first pass with ---- */

typedef struct built_code {
    uint64_t addr;
    char qualname[40];
    int firstlineno;
    int units;
} built_code;

typedef struct built_thread {
    uint64_t tstate;
    int depth;
    int code_of[MAX_BUILT_FRAMES]; /* innermost first */
} built_thread;

typedef struct build {
    py_layout L;
    uint64_t runtime, code_type, code_counter;
    built_code codes[MAX_CODES];
    int ncodes;
    built_thread threads[MAX_BUILT_THREADS];
    int nthreads;
    uint64_t frames[MAX_BUILT_THREADS * MAX_BUILT_FRAMES]; /* every frame built */
    int nframes;
    uint32_t next_version;
} build;

static uint64_t make_str(const py_layout *L, const char *s)
{
    size_t n = strlen(s);
    uint64_t o = alloc(L->unicode_compact_size + n + 1);
    put64(o + L->unicode_length, n);
    /* compact ASCII: kind 1 (bits 2-4), compact (bit 5), ascii (bit 6) */
    put32(o + L->unicode_state, (1u << 2) | (1u << 5) | (1u << 6));
    memcpy((void *)(uintptr_t)(o + L->unicode_ascii_size), s, n + 1);
    return o;
}

/* A location table giving every code unit the line firstlineno + 1: a one-line
 * entry with line delta 1 (code 11), then same-line entries (code 10), each of up to
 * 8 code units followed by two column bytes. */
static uint64_t make_linetable(const py_layout *L, int units)
{
    uint8_t table[64];
    size_t n = 0;
    for (int left = units, code = 11; left > 0 && n + 3 <= sizeof table; code = 10) {
        int len = left > 8 ? 8 : left;
        table[n++] = (uint8_t)(0x80 | (code << 3) | (len - 1));
        table[n++] = 0; /* start column */
        table[n++] = 0; /* end column */
        left -= len;
    }
    uint64_t o = alloc(L->bytes_ob_sval + n + 1);
    put64(o + L->bytes_size, n);
    memcpy((void *)(uintptr_t)(o + L->bytes_ob_sval), table, n);
    return o;
}

static void fill_code(build *b, int i, uint64_t at)
{
    const py_layout *L = &b->L;
    built_code *c = &b->codes[i];
    c->addr = at;
    c->firstlineno = 10 + (int)below(1000);
    c->units = 4 + (int)below(40);
    snprintf(c->qualname, sizeof c->qualname, "fn_%d_%u", i, (unsigned)below(100000));
    memset((void *)(uintptr_t)at, 0, L->code_adaptive + 2u * (unsigned)c->units);
    put64(at + L->ob_type, b->code_type);
    put64(at + 16, (uint64_t)c->units); /* ob_size */
    put32(at + L->code_firstlineno, (uint32_t)c->firstlineno);
    if (L->code_version) {
        put32(at + L->code_version, b->next_version);
        if (b->next_version)
            b->next_version++;
        put32(b->code_counter, b->next_version);
    }
    uint64_t q = make_str(L, c->qualname);
    put64(at + L->code_qualname, q);
    put64(at + L->code_name, q);
    put64(at + L->code_filename, make_str(L, "/fake/target.py"));
    put64(at + L->code_linetable, make_linetable(L, c->units));
}

/* A 3.13-shaped layout from 3.12's: the current frame in the thread state, the GIL
 * inside the interpreter. Its offsets only have to agree with what build() writes. */
static py_layout layout_313(void)
{
    py_layout L = py_layout_3_12;
    L.minor = 13;
    L.has_cframe = 0;
    L.tstate_current_frame = 56;
    L.gil_mode = PY_GIL_INTERP_INLINE;
    L.interp_gil = 512;
    return L;
}

static void build_target(build *b)
{
    memset(b, 0, sizeof *b);
    arena_used = 0;
    int which = (int)below(3);
    b->L = which == 0 ? py_layout_3_11 : which == 1 ? py_layout_3_12 : layout_313();
    const py_layout *L = &b->L;
    b->code_type = alloc(256);
    b->runtime = alloc(L->runtime_interpreters_head + 8 + (L->gil_mode == PY_GIL_RUNTIME_TSTATE ? 1024 : 0));
    b->code_counter = L->code_version ? alloc(8) : 0;
    b->next_version = L->code_version ? 1 + (uint32_t)below(100) : 0;
    if (b->next_version && one_in(8))
        b->next_version = 0; /* a counter that ran out */
    if (b->code_counter)
        put32(b->code_counter, b->next_version);
    b->ncodes = 2 + (int)below(MAX_CODES - 1);
    for (int i = 0; i < b->ncodes; i++)
        fill_code(b, i, alloc(L->code_adaptive + 2 * 48));

    int ninterp = one_in(4) ? 2 : 1;
    uint64_t interp_next = 0;
    b->nthreads = 0;
    for (int ni = ninterp - 1; ni >= 0; ni--) {
        uint64_t interp = alloc(L->interp_gil + 64 > L->interp_threads_head + 8 ? L->interp_gil + 64
                                                                              : L->interp_threads_head + 8);
        put64(interp + L->interp_id, (uint64_t)ni);
        put64(interp + L->interp_next, interp_next);
        interp_next = interp;
        int nthreads = 1 + (int)below(ni ? 2 : MAX_BUILT_THREADS - 2);
        uint64_t prev = 0, first = 0;
        for (int k = 0; k < nthreads && b->nthreads < MAX_BUILT_THREADS; k++) {
            built_thread *th = &b->threads[b->nthreads++];
            uint64_t ts = alloc(L->tstate_size);
            th->tstate = ts;
            put64(ts + L->tstate_prev, prev);
            if (prev)
                put64(prev + L->tstate_next, ts);
            else
                first = ts;
            put64(ts + L->tstate_interp, interp);
            put64(ts + L->tstate_thread_id, 0x1000 + (uint64_t)b->nthreads);
            put64(ts + L->tstate_native_thread_id, 0); /* no /proc reads */
            /* frames, outermost first, next to each other as on a data stack */
            th->depth = (int)below(MAX_BUILT_FRAMES + 1);
            /* a frame and its locals and stack: up to 600 bytes apart, so that some
             * builds need more than the reader's first 128 cache blocks */
            uint64_t stride = L->frame_size + 32 + 8 * below(64);
            uint64_t stack = alloc(stride * (uint64_t)(th->depth + 1));
            uint64_t below_frame = 0;
            for (int d = th->depth - 1; d >= 0; d--) { /* d: distance from the innermost */
                uint64_t f = stack + (uint64_t)(th->depth - 1 - d) * stride;
                int ci = (int)below((uint64_t)b->ncodes);
                th->code_of[d] = ci;
                put64(f + L->frame_previous, below_frame);
                put64(f + L->frame_code, b->codes[ci].addr);
                int unit = (int)below((uint64_t)b->codes[ci].units);
                put64(f + L->frame_instr, b->codes[ci].addr + L->code_adaptive + 2u * (unsigned)unit);
                put8(f + L->frame_owner, 0);
                below_frame = f;
                b->frames[b->nframes++] = f;
            }
            uint64_t current = below_frame;
            if (L->has_cframe) {
                uint64_t cframe = alloc(64);
                put64(cframe + L->cframe_current_frame, current);
                put64(ts + L->tstate_cframe, cframe);
            } else {
                put64(ts + L->tstate_current_frame, current);
            }
            prev = ts;
        }
        put64(interp + L->interp_threads_head, first);
        if (L->gil_mode == PY_GIL_INTERP_POINTER) {
            uint64_t gil = alloc(64);
            put64(interp + L->interp_gil, gil);
            put32(gil + L->gil_locked, 1);
            put64(gil + L->gil_last_holder, first);
        } else if (L->gil_mode == PY_GIL_INTERP_INLINE) {
            put32(interp + L->interp_gil + L->gil_locked, 1);
            put64(interp + L->interp_gil + L->gil_last_holder, first);
        }
    }
    put64(b->runtime + L->runtime_interpreters_head, interp_next);
}

/* ---- what a pass must give ---- */

static void check_sample(const pyread_sample *s)
{
    if (s->thread_count < 0 || s->thread_count > PYREAD_MAX_THREADS)
        fail("thread count out of range");
    if (s->frame_pool_used < 0 || s->frame_pool_used > (int)(sizeof s->frame_pool / sizeof s->frame_pool[0]))
        fail("frame pool overrun");
    for (int i = 0; i < s->thread_count; i++) {
        const pyread_thread *th = &s->threads[i];
        if (th->depth < 0 || th->depth > PYREAD_MAX_DEPTH)
            fail("depth out of range");
        if (th->depth && (th->frames < s->frame_pool || th->frames + th->depth > s->frame_pool + s->frame_pool_used))
            fail("frames outside the pool");
        for (int k = 0; k < th->depth; k++) {
            const pyread_frame *f = &th->frames[k];
            if (!f->code || !f->code->qualname || !f->code->filename)
                fail("frame without a code object");
            if (strlen(f->code->qualname) > 4 * 1024 || strlen(f->code->filename) > 4 * 1024)
                fail("string longer than the reader's cap");
            if (f->line < -1)
                fail("line below -1");
        }
    }
}

/* The first pass of a build reads exactly what was built. */
static void check_exact(const build *b, const pyread_sample *s)
{
    if (s->read_errors)
        fail("read errors on an unchanged build");
    if (s->thread_count != b->nthreads)
        fail("thread count differs from the build");
    for (int i = 0; i < b->nthreads; i++) {
        const built_thread *bt = NULL;
        for (int j = 0; j < b->nthreads; j++)
            if (b->threads[j].tstate == s->threads[i].tstate)
                bt = &b->threads[j];
        if (!bt)
            fail("a thread that was not built");
        const pyread_thread *th = &s->threads[i];
        if (th->depth != bt->depth || th->torn || th->truncated)
            fail("depth differs from the build");
        for (int k = 0; k < th->depth; k++) {
            const built_code *c = &b->codes[bt->code_of[k]];
            if (strcmp(th->frames[k].code->qualname, c->qualname) != 0)
                fail("function name differs from the build");
            if (th->frames[k].line != c->firstlineno + 1)
                fail("line differs from the build");
        }
    }
}

/* ---- changes under the reader ---- */

static uint64_t some_pointer(const build *b)
{
    switch (below(8)) {
    case 0: return 0;
    case 1: return unmapped_page + below(4096);
    case 2: return (uint64_t)(uintptr_t)arena + below(arena_used + 64);
    case 3: return b->frames[b->nframes ? below((uint64_t)b->nframes) : 0];
    case 4: return b->codes[below((uint64_t)b->ncodes)].addr + below(64);
    case 5: return 0xffff800000000000ull + below(1u << 20);
    case 6: return rnd();
    default: return (uint64_t)(uintptr_t)arena + (below(arena_used) & ~(uint64_t)7);
    }
}

static void mutate(build *b)
{
    const py_layout *L = &b->L;
    uint64_t base = (uint64_t)(uintptr_t)arena;
    switch (below(9)) {
    case 0: /* random bytes anywhere in what was built */
        for (int i = 1 + (int)below(8); i > 0; i--)
            arena[below(arena_used)] = (unsigned char)rnd();
        break;
    case 1: /* a pointer-sized slot rewritten */
        put64(base + (below(arena_used) & ~(uint64_t)7), some_pointer(b));
        break;
    case 2: /* a frame's links: a loop, a jump, garbage */
        if (b->nframes) {
            uint64_t f = b->frames[below((uint64_t)b->nframes)];
            uint64_t off = one_in(2) ? L->frame_previous : one_in(2) ? L->frame_code : L->frame_instr;
            put64(f + off, one_in(2) ? b->frames[below((uint64_t)b->nframes)] : some_pointer(b));
        }
        break;
    case 3: /* a frame's owner */
        if (b->nframes)
            put8(b->frames[below((uint64_t)b->nframes)] + L->frame_owner, (uint8_t)below(8));
        break;
    case 4: { /* a string or a line table's length */
        built_code *c = &b->codes[below((uint64_t)b->ncodes)];
        uint64_t q;
        memcpy(&q, (void *)(uintptr_t)(c->addr + L->code_qualname), 8);
        uint64_t lt;
        memcpy(&lt, (void *)(uintptr_t)(c->addr + L->code_linetable), 8);
        static const int64_t lengths[] = {-1, 0, 1, 15, 16, 17, 1023, 1024, 1025, 1 << 22, (1 << 22) + 1,
                                          INT64_MAX, INT64_MIN};
        int64_t v = lengths[below(sizeof lengths / sizeof lengths[0])];
        uint64_t where = one_in(2) ? q + L->unicode_length : lt + L->bytes_size;
        if (where >= base && where + 8 <= base + arena_used)
            memcpy((void *)(uintptr_t)where, &v, 8);
        if (one_in(3) && q >= base && q + 8 <= base + arena_used)
            put32(q + L->unicode_state, (uint32_t)rnd());
        break;
    }
    case 5: /* a code object replaced in place: new names, a new version */
        fill_code(b, (int)below((uint64_t)b->ncodes), b->codes[below((uint64_t)b->ncodes)].addr);
        break;
    case 6: /* the same without the count moving (a torn or stale count) */
        if (b->code_counter) {
            uint32_t kept;
            memcpy(&kept, (void *)(uintptr_t)b->code_counter, 4);
            int i = (int)below((uint64_t)b->ncodes);
            fill_code(b, i, b->codes[i].addr);
            put32(b->code_counter, kept);
        }
        break;
    case 7: /* thread list: a broken back-pointer or a loop */
        if (b->nthreads) {
            uint64_t ts = b->threads[below((uint64_t)b->nthreads)].tstate;
            put64(ts + (one_in(2) ? L->tstate_next : L->tstate_prev),
                  one_in(2) ? b->threads[below((uint64_t)b->nthreads)].tstate : some_pointer(b));
        }
        break;
    default: /* the count of code objects */
        if (b->code_counter)
            put32(b->code_counter, (uint32_t)rnd());
        break;
    }
}

int main(int argc, char **argv)
{
    double seconds = 10;
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: fuzz_frames [-t SECONDS] [-s SEED]\n");
            return 2;
        }
    }
    printf("fuzz_frames: seed %llu\n", (unsigned long long)seed);
    fflush(stdout);
    rng_state = seed0 = seed;
    unsigned char *map = mmap(NULL, ARENA_SIZE + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || munmap(map + ARENA_SIZE, 4096) != 0) {
        perror("fuzz_frames: mmap");
        return 1;
    }
    arena = map;
    unmapped_page = (uint64_t)(uintptr_t)(map + ARENA_SIZE);
    pyread_sample *s = malloc(sizeof *s);
    build *b = malloc(sizeof *b);
    if (!s || !b)
        return 1;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long builds = 0, passes = 0, clean = 0;
    do {
        build_target(b);
        builds++;
        pyread_target *t;
        char msg[256];
        if (pyread_open_layout(getpid(), &b->L, b->runtime, b->code_type, b->code_counter, &t, msg,
                               sizeof msg) != 0) {
            fprintf(stderr, "fuzz_frames: %s\n", msg);
            return 1;
        }
        for (int pass = 0; pass < 64; pass++) {
            int rc = pyread_sample_now(t, s, one_in(4) ? PYREAD_WANT_NAMES : 0);
            passes++;
            if (rc != 0 && rc != PYREAD_READ)
                fail("unexpected return code");
            if (rc == 0) {
                check_sample(s);
                clean += s->read_errors == 0;
            }
            if (pass == 0) {
                if (rc != 0)
                    fail("an unchanged build could not be read");
                check_exact(b, s);
            }
            if (one_in(2))
                for (int m = (int)below(3); m >= 0; m--)
                    mutate(b);
        }
        pyread_close(t);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    printf("fuzz_frames: %lu builds, %lu passes, %lu without a read error\n", builds, passes, clean);
    free(s);
    free(b);
    return 0;
}
