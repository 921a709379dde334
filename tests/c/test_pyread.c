/* The external reader's parts that take outside input: the 3.11+ line table, the
 * 3.13 _Py_DebugOffsets block, ELF symbol lookup, and reading memory with
 * process_vm_readv (on this process). Corrupt input must give "unknown", never a
 * crash. */
#include "check.h"

#include "pyread/elf_symbols.h"
#include "pyread/line_table.h"
#include "pyread/py_layout.h"
#include "pyread/remote_mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void test_line_table(void)
{
    const int first = 10;
    const uint8_t table[] = {
        0x82, 0x05,             /* short form (code 0), 3 units: [0,3) line 10 */
        0xD9, 0x01, 0x02,       /* one-line form code 11 (+1), 2 units: [3,5) line 11 */
        0xE8, 0x03,             /* no columns (13), delta -1 (zigzag 3), 1 unit: [5,6) line 10 */
        0xF3, 0x48, 0x03, 0x00, 0x01, 0x01, /* long form (14), +100 (varint 200), 4 units: [6,10) line 110 */
        0xF8,                   /* no location (15), 1 unit: [10,11) */
        0x80, 0x00,             /* short form, 1 unit: [11,12) line 110 */
    };
    size_t n = sizeof table;
    CHECK(line_table_line(table, n, first, -1) == first); /* not started: the first line */
    CHECK(line_table_line(table, n, first, 0) == 10);
    CHECK(line_table_line(table, n, first, 2) == 10);
    CHECK(line_table_line(table, n, first, 3) == 11); /* an entry's end belongs to the next */
    CHECK(line_table_line(table, n, first, 4) == 11);
    CHECK(line_table_line(table, n, first, 5) == 10);
    CHECK(line_table_line(table, n, first, 6) == 110);
    CHECK(line_table_line(table, n, first, 9) == 110);
    CHECK(line_table_line(table, n, first, 10) == -1);
    CHECK(line_table_line(table, n, first, 11) == 110);
    CHECK(line_table_line(table, n, first, 12) == -1); /* past the table */

    /* corrupt tables: unknown, never past the end */
    const uint8_t truncated[] = {0xE8};         /* varint missing */
    CHECK(line_table_line(truncated, sizeof truncated, first, 0) == -1);
    const uint8_t no_start[] = {0x05, 0x82};    /* not at an entry boundary */
    CHECK(line_table_line(no_start, sizeof no_start, first, 0) == -1);
    const uint8_t endless[] = {0xE8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f};
    CHECK(line_table_line(endless, sizeof endless, first, 0) == -1);
    const uint8_t cut_columns[] = {0xD9, 0x01}; /* one-line form missing a column byte */
    CHECK(line_table_line(cut_columns, sizeof cut_columns, first, 0) == -1);
    CHECK(line_table_line(NULL, 0, first, 0) == -1);
    /* every prefix of a valid table, at every unit: no read past its length */
    for (size_t len = 0; len <= n; len++)
        for (long u = -1; u < 14; u++)
            (void)line_table_line(table, len, first, u);
}

static void put_word(unsigned char *b, int i, uint64_t v)
{
    memcpy(b + 8 * (size_t)i, &v, sizeof v);
}

/* A plausible 3.13 block: sizes first, offsets inside them. */
static void make_block(unsigned char *b)
{
    memset(b, 0, PY_DEBUG_OFFSETS_READ);
    memcpy(b, "xdebugpy", 8);
    put_word(b, 1, 0x030d00f0);
    put_word(b, 3, 2000); put_word(b, 5, 632);                       /* runtime */
    put_word(b, 6, 100000); put_word(b, 7, 8); put_word(b, 8, 0);    /* interp: size, id, next */
    put_word(b, 9, 72); put_word(b, 15, 6000); put_word(b, 17, 6016); put_word(b, 18, 6008);
    put_word(b, 19, 300); put_word(b, 20, 0); put_word(b, 21, 8); put_word(b, 22, 16);
    put_word(b, 23, 72); put_word(b, 24, 136); put_word(b, 25, 144); /* thread */
    put_word(b, 28, 80); put_word(b, 29, 8); put_word(b, 30, 0); put_word(b, 31, 56);
    put_word(b, 32, 72); put_word(b, 33, 70);                        /* frame */
    put_word(b, 34, 200); put_word(b, 35, 112); put_word(b, 36, 120); put_word(b, 37, 128);
    put_word(b, 38, 136); put_word(b, 39, 68); put_word(b, 43, 192); /* code */
    put_word(b, 45, 8);
    put_word(b, 65, 16); put_word(b, 66, 32);                        /* bytes */
    put_word(b, 68, 32); put_word(b, 69, 16); put_word(b, 70, 40);   /* unicode */
}

static void test_debug_offsets(void)
{
    unsigned char b[PY_DEBUG_OFFSETS_READ];
    py_layout L;
    char why[160];
    make_block(b);
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == 0);
    CHECK(L.minor == 13 && L.has_cframe == 0);
    CHECK_U64(L.tstate_current_frame, 72);
    CHECK_U64(L.frame_size, 72);
    CHECK_U64(L.gil_last_holder, 8);
    CHECK_U64(L.gil_locked, 16);
    CHECK_U64(L.unicode_compact_size, 56);

    make_block(b);
    memcpy(b, "ydebugpy", 8);
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == -1);
    make_block(b);
    put_word(b, 1, 0x030e00f0); /* 3.14: another block layout */
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == -1);
    CHECK(strstr(why, "3.14") != NULL);
    make_block(b);
    put_word(b, 2, 1); /* free-threaded */
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == -1);
    make_block(b);
    put_word(b, 23, 5000); /* current_frame outside the thread state */
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == -1);
    make_block(b);
    put_word(b, 18, 10); /* GIL holder before the GIL state */
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == -1);
    make_block(b);
    CHECK(py_layout_from_debug_offsets(b, 100, &L, why, sizeof why) == -1); /* too short */

    /* thread names: imports.modules from the block; the dict and int offsets it also
     * carries must agree with the ones generated from 3.13's headers */
    make_block(b);
    put_word(b, 11, 7656);
    put_word(b, 57, py_object_offsets_3_13.dict_keys);
    put_word(b, 58, py_object_offsets_3_13.dict_values);
    put_word(b, 62, py_object_offsets_3_13.long_size);
    put_word(b, 63, py_object_offsets_3_13.long_digits);
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == 0);
    CHECK_U64(L.objects.interp_modules, 7656);
    CHECK(L.objects.managed_mode == PY_MANAGED_INLINE_VALUES);
    put_word(b, 57, py_object_offsets_3_13.dict_keys + 8); /* disagrees: no names, stacks still */
    CHECK(py_layout_from_debug_offsets(b, sizeof b, &L, why, sizeof why) == 0);
    CHECK_U64(L.objects.interp_modules, 0);
}

static void test_tables(void)
{
    const py_layout *t11 = py_layout_for_table(3, 11), *t12 = py_layout_for_table(3, 12);
    CHECK(t11 && t12);
    CHECK(py_layout_for_table(3, 13) == NULL && py_layout_for_table(3, 10) == NULL &&
          py_layout_for_table(2, 7) == NULL);
    for (int i = 0; i < 2; i++) {
        const py_layout *L = i ? t12 : t11;
        if (!L)
            continue;
        CHECK(L->frame_owner < L->frame_size && L->frame_previous < L->frame_size);
        CHECK(L->tstate_cframe < L->tstate_size && L->code_linetable < L->code_size);
        CHECK(L->has_cframe == 1);
    }
    CHECK(t11 && t11->gil_mode == PY_GIL_RUNTIME_TSTATE && t11->owner_cstack == -1);
    CHECK(t12 && t12->gil_mode == PY_GIL_INTERP_POINTER && t12->owner_cstack == 3);
    CHECK(t11 && t11->objects.managed_mode == PY_MANAGED_TWO_POINTERS && t11->objects.long_tagged == 0);
    CHECK(t12 && t12->objects.managed_mode == PY_MANAGED_TAGGED && t12->objects.long_tagged == 1);
    for (int i = 0; i < 2; i++) {
        const py_layout *L = i ? t12 : t11;
        CHECK(L && L->objects.interp_modules > 0 && L->objects.interp_modules < L->interp_size);
        CHECK(L && L->objects.keys_indices > L->objects.keys_nentries && L->objects.long_shift == 30);
    }
}

static void test_elf(void)
{
    elf_symbols es;
    /* our own executable, by the path the maps name it (a link is not followed) */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    CHECK(elf_symbols_read(exe, &es) == 0);
    CHECK(es.ok && es.py_runtime == 0);
    CHECK(elf_symbols_read("/proc/self/exe", &es) == -1);
    CHECK(elf_symbols_read("/nonexistent/file", &es) == -1);
    CHECK(elf_symbols_read("/dev/null", &es) == -1); /* a device is not opened */

    char path[] = "/tmp/test_pyread_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        unsigned char junk[256];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (unsigned char)(i * 37 + 11);
        CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
        CHECK(elf_symbols_read(path, &es) == -1); /* not ELF */
        /* an ELF header whose tables point far outside the file */
        memcpy(junk, "\177ELF\002\001\001", 7);
        CHECK(pwrite(fd, junk, sizeof junk, 0) == (ssize_t)sizeof junk);
        CHECK(elf_symbols_read(path, &es) == 0 && es.py_runtime == 0);
        close(fd);
        unlink(path);
    }
    /* a real libpython, where there is one */
    const char *home = getenv("HOME");
    char lib[512];
    snprintf(lib, sizeof lib, "%s/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0", home ? home : "/root");
    if (access(lib, R_OK) == 0) {
        CHECK(elf_symbols_read(lib, &es) == 0);
        CHECK(es.py_runtime != 0 && es.py_version != 0 && es.py_code_type != 0 && es.is_dyn);
    }
}

static void test_remote_mem(void)
{
    remote_mem rm;
    CHECK(remote_mem_init(&rm, getpid()) == 0);
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *two = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(two != MAP_FAILED);
    if (two == MAP_FAILED)
        return;
    for (long i = 0; i < page * 2; i++)
        two[i] = (unsigned char)(i * 7);
    unsigned char got[8192];
    uint64_t base = (uint64_t)(uintptr_t)two;
    CHECK(remote_read(&rm, base + 100, got, 300) == 0 && !memcmp(got, two + 100, 300));
    remote_mem_reset(&rm);
    CHECK(remote_read_cached(&rm, base + page - 10, got, 20, 8) == 0 && !memcmp(got, two + page - 10, 20));
    CHECK(remote_read_cached(&rm, base + 5, got, 600, 1) == 0 && !memcmp(got, two + 5, 600));
    uint64_t calls = rm.syscalls;
    remote_mem_reset(&rm); /* reads again every block used: one call */
    CHECK(rm.syscalls == calls + 1);
    calls = rm.syscalls;
    CHECK(remote_read_cached(&rm, base + page - 10, got, 20, 8) == 0 && !memcmp(got, two + page - 10, 20));
    CHECK(rm.syscalls == calls); /* served from the refetched blocks */
    two[page + 3] = 0xAB;       /* changed since: the next pass sees it */
    remote_mem_reset(&rm);
    CHECK(remote_read_cached(&rm, base + page + 3, got, 1, 1) == 0 && got[0] == 0xAB);

    /* a refresh reads again, in one call, what was used since a mark (a torn thread's
     * blocks), and the blocks named first; the rest of the pass's cache stays */
    int mark = remote_mem_used_mark(&rm);
    CHECK(remote_read_cached(&rm, base + 40, got, 8, 1) == 0 && got[0] == two[40]);
    two[40] = 0x11;                  /* used since the mark */
    two[page + 3] = 0x22;            /* used before it, named first */
    two[page + 600] = 0x33;          /* not used in this pass */
    calls = rm.syscalls;
    uint64_t first = base + page + 3;
    CHECK(remote_mem_refresh(&rm, &first, 1, mark) == 0);
    CHECK(rm.syscalls == calls + 1);
    CHECK(remote_read_cached(&rm, base + 40, got, 1, 1) == 0 && got[0] == 0x11);
    CHECK(remote_read_cached(&rm, base + page + 3, got, 1, 1) == 0 && got[0] == 0x22);
    CHECK(rm.syscalls == calls + 1);

    /* the second page goes away: reads stop there */
    munmap(two + page, (size_t)page);
    remote_mem_reset(&rm);
    CHECK(remote_read_some(&rm, base + page - 16, got, 64) == 16);
    CHECK(remote_read(&rm, base + page - 16, got, 64) == -1);
    CHECK(remote_read_cached(&rm, base + page + 8, got, 8, 1) == -1);
    CHECK(remote_read(&rm, 8, got, 8) == -1);
    munmap(two, (size_t)page);
    remote_mem_free(&rm);
}

int main(void)
{
    test_line_table();
    test_debug_offsets();
    test_tables();
    test_elf();
    test_remote_mem();
    return check_done("test_pyread");
}
