/* Reading the lapse span path open on a thread of another process, from outside,
 * with process_vm_readv only (the target is never stopped). The target's lapse core
 * exports `lapse_span_registry` (src/core/span_registry.h): found here in the ELF
 * symbol tables of the files the process maps (a lapse library or Python extension
 * first, then the executable), then followed to the thread list, the open frames and
 * the names. Every count, index and address read is checked; a read that fails a
 * check gives "unknown" (a negative code), never a wrong path on purpose. */
#include "core/span_registry.h"
#include "elf_symbols.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define NAME_CACHE 4096u  /* names kept by id */
#define NAME_MAX_LEN 256u /* longer names are cut */
#define TID_CACHE 256u    /* thread addresses kept by tid */

struct span_stack_reader {
    pid_t pid;
    uint64_t registry_addr;
    lapse_span_registry_v1 reg;
    char *names[NAME_CACHE]; /* names by id, read once (they never change) */
    int64_t tids[TID_CACHE];
    uint64_t thread_addr[TID_CACHE];
    uint32_t tid_count;
    uint64_t reads; /* process_vm_readv calls so far */
};

static int read_mem(span_stack_reader *r, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    r->reads++;
    ssize_t n = process_vm_readv(r->pid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)len)
        return 0;
    return n < 0 ? -errno : -EFAULT;
}

/* ---- finding the registry ---- */

/* The symbol's value in the ELF file at path (elf_find), whether the file is position
 * independent and its first PT_LOAD's page-aligned vaddr. */
static int elf_lookup(const char *path, const char *symbol, uint64_t *value, int *is_dyn,
                      uint64_t *first_vaddr)
{
    elf_file_info info;
    if (elf_find(path, &symbol, value, 1, NULL, &info) != 0 || !*value)
        return -1;
    *is_dyn = info.is_dyn;
    *first_vaddr = info.first_load_vaddr;
    return 0;
}

typedef struct mapped {
    char path[512];
    uint64_t start; /* of its mapping at file offset 0 */
} mapped;

/* The files pid maps at file offset 0: lapse's own first (a name holding "lapse"),
 * then the rest in map order. Returns how many (up to max), -errno when the maps
 * cannot be read. */
static int mapped_files(pid_t pid, mapped *out, int max)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -errno;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        unsigned long long start, end, offset;
        int at = 0;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &at) < 4 ||
            !at || line[at] != '/' || offset != 0)
            continue;
        char *path = line + at;
        path[strcspn(path, "\n")] = 0;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = !strcmp(out[i].path, path);
        if (seen)
            continue;
        snprintf(out[n].path, sizeof out[n].path, "%s", path);
        out[n].start = start;
        n++;
    }
    fclose(f);
    /* lapse's files first */
    int k = 0;
    for (int i = 0; i < n; i++) {
        const char *base = strrchr(out[i].path, '/');
        if (strstr(base ? base : out[i].path, "lapse")) {
            mapped t = out[k];
            out[k] = out[i];
            out[i] = t;
            k++;
        }
    }
    return n;
}

static int check_registry(const lapse_span_registry_v1 *g)
{
    return !memcmp(g->magic, LAPSE_SPAN_REGISTRY_MAGIC, sizeof LAPSE_SPAN_REGISTRY_MAGIC) &&
           g->version == LAPSE_SPAN_REGISTRY_VERSION && g->size >= sizeof *g &&
           g->names_chunk_bits > 0 && g->names_chunk_bits < 24 && g->frame_size >= 8 &&
           g->frame_size <= 256 && g->frame_off_name + 4 <= g->frame_size &&
           g->frame_off_flags + 4 <= g->frame_size && g->thread_off_next < 4096 &&
           g->thread_off_gen < 4096 && g->thread_off_tid < 4096 && g->thread_off_depth < 4096 &&
           g->thread_off_stack < 4096 && g->thread_off_exited < 4096 && g->max_depth > 0 &&
           g->max_depth <= 1u << 20;
}

int span_stack_open(pid_t pid, span_stack_reader **out, char *msg, size_t msglen)
{
    *out = NULL;
    mapped *files = calloc(512, sizeof *files);
    span_stack_reader *r = calloc(1, sizeof *r);
    if (!files || !r) {
        free(files);
        free(r);
        snprintf(msg, msglen, "out of memory");
        return -ENOMEM;
    }
    r->pid = pid;
    int n = mapped_files(pid, files, 512);
    if (n < 0) {
        snprintf(msg, msglen, "cannot read /proc/%d/maps: %s", (int)pid, strerror(-n));
        free(files);
        free(r);
        return n;
    }
    /* two copies of the core may be mapped (liblapse.so preloaded and the Python
     * extension): take the one with a session, else the first found */
    int rc = -ENOENT, active = 0;
    for (int i = 0; i < n && !active; i++) {
        uint64_t value = 0, first = 0;
        int is_dyn = 0;
        char path[600];
        if (elf_lookup(files[i].path, LAPSE_SPAN_REGISTRY_SYMBOL, &value, &is_dyn, &first)) {
            /* in another mount namespace: through the target's root */
            snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, files[i].path);
            if (elf_lookup(path, LAPSE_SPAN_REGISTRY_SYMBOL, &value, &is_dyn, &first))
                continue;
        }
        uint64_t addr = is_dyn ? files[i].start - first + value : value;
        lapse_span_registry_v1 g;
        int e = read_mem(r, addr, &g, sizeof g);
        if (e) {
            if (rc)
                rc = e; /* say why, unless one was found already */
            continue;
        }
        if (!check_registry(&g))
            continue;
        uint32_t gen = 0;
        active = read_mem(r, (uint64_t)(uintptr_t)g.gen, &gen, 4) == 0 && gen != 0;
        if (rc == 0 && !active)
            continue; /* keep the first one found */
        r->registry_addr = addr;
        r->reg = g;
        rc = 0;
    }
    free(files);
    if (rc) {
        if (rc == -ENOENT)
            snprintf(msg, msglen, "process %d has no lapse core (not run under lapse, or an "
                                  "older lapse)", (int)pid);
        else
            snprintf(msg, msglen, "cannot read the span registry of process %d: %s", (int)pid,
                     strerror(-rc));
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void span_stack_close(span_stack_reader *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < NAME_CACHE; i++)
        free(r->names[i]);
    free(r);
}

uint64_t span_stack_reads(const span_stack_reader *r) { return r->reads; }

/* ---- reading a path ---- */

typedef struct thread_view {
    uint64_t next, stack;
    int64_t tid;
    uint32_t gen, depth;
    int32_t exited;
} thread_view;

static int read_thread(span_stack_reader *r, uint64_t addr, thread_view *t)
{
    const lapse_span_registry_v1 *g = &r->reg;
    uint32_t lo = g->thread_off_next, hi = g->thread_off_next + 8;
    uint32_t offs[] = {g->thread_off_gen, g->thread_off_tid, g->thread_off_depth,
                       g->thread_off_stack, g->thread_off_exited};
    uint32_t sizes[] = {4, 8, 4, 8, 4};
    for (int i = 0; i < 5; i++) {
        if (offs[i] < lo)
            lo = offs[i];
        if (offs[i] + sizes[i] > hi)
            hi = offs[i] + sizes[i];
    }
    unsigned char buf[4096 + 16];
    if (hi - lo > sizeof buf)
        return -EINVAL;
    int e = read_mem(r, addr + lo, buf, hi - lo);
    if (e)
        return e;
    memcpy(&t->next, buf + g->thread_off_next - lo, 8);
    memcpy(&t->gen, buf + g->thread_off_gen - lo, 4);
    memcpy(&t->tid, buf + g->thread_off_tid - lo, 8);
    memcpy(&t->depth, buf + g->thread_off_depth - lo, 4);
    memcpy(&t->stack, buf + g->thread_off_stack - lo, 8);
    memcpy(&t->exited, buf + g->thread_off_exited - lo, 4);
    return 0;
}

/* The address of tid's thread in the current session; 0 when it has none. */
static int find_thread(span_stack_reader *r, int64_t tid, uint32_t gen, uint64_t *addr)
{
    *addr = 0;
    for (uint32_t i = 0; i < r->tid_count; i++)
        if (r->tids[i] == tid) {
            thread_view t;
            if (read_thread(r, r->thread_addr[i], &t) == 0 && t.tid == tid && t.gen == gen) {
                *addr = r->thread_addr[i];
                return 0;
            }
        }
    /* walk the list and remember every thread seen */
    uint64_t at;
    int e = read_mem(r, (uint64_t)(uintptr_t)r->reg.threads_head, &at, 8);
    if (e)
        return e;
    r->tid_count = 0;
    for (uint32_t n = 0; at && n < r->reg.max_threads; n++) {
        thread_view t;
        if ((e = read_thread(r, at, &t)))
            return e;
        if (t.gen != gen) /* a list being replaced under us */
            return -EAGAIN;
        if (r->tid_count < TID_CACHE) {
            r->tids[r->tid_count] = t.tid;
            r->thread_addr[r->tid_count++] = at;
        }
        if (t.tid == tid && !*addr)
            *addr = at;
        at = t.next;
    }
    return 0;
}

static const char *name_of(span_stack_reader *r, uint32_t id, char *tmp, size_t tmplen)
{
    if (id < NAME_CACHE && r->names[id])
        return r->names[id];
    const lapse_span_registry_v1 *g = &r->reg;
    uint64_t chunk, str;
    uint64_t chunks = (uint64_t)(uintptr_t)g->names_chunks;
    uint32_t mask = (1u << g->names_chunk_bits) - 1;
    if (read_mem(r, chunks + 8ull * (id >> g->names_chunk_bits), &chunk, 8) || !chunk ||
        read_mem(r, chunk + 8ull * (id & mask), &str, 8) || !str)
        return NULL;
    /* a name may end near the end of a mapping: read it in pieces up to a page edge */
    size_t len = 0;
    while (len < NAME_MAX_LEN && len + 1 < tmplen) {
        size_t want = 64;
        uint64_t a = str + len;
        size_t to_page = 4096 - (size_t)(a & 4095);
        if (want > to_page)
            want = to_page;
        if (want > tmplen - 1 - len)
            want = tmplen - 1 - len;
        if (read_mem(r, a, tmp + len, want))
            return NULL;
        void *nul = memchr(tmp + len, 0, want);
        if (nul) {
            len = (size_t)((char *)nul - tmp);
            break;
        }
        len += want;
    }
    tmp[len] = 0;
    if (id < NAME_CACHE)
        r->names[id] = strdup(tmp);
    return tmp;
}

int span_stack_path(span_stack_reader *r, int64_t tid, char *buf, size_t len)
{
    if (len)
        buf[0] = 0;
    const lapse_span_registry_v1 *g = &r->reg;
    uint32_t gen, names;
    int e = read_mem(r, (uint64_t)(uintptr_t)g->gen, &gen, 4);
    if (e)
        return e;
    if (gen == 0)
        return 0; /* no session */
    if ((e = read_mem(r, (uint64_t)(uintptr_t)g->names_count, &names, 4)))
        return e;
    uint64_t addr;
    if ((e = find_thread(r, tid, gen, &addr)))
        return e;
    if (!addr)
        return 0; /* the thread never opened a span in this session */
    thread_view t;
    if ((e = read_thread(r, addr, &t)))
        return e;
    if (t.tid != tid || t.gen != gen)
        return -EAGAIN;
    if (t.exited || t.depth == 0)
        return 0;
    if (t.depth >= g->max_depth || !t.stack)
        return -EAGAIN;
    size_t bytes = (size_t)(t.depth + 1) * g->frame_size;
    unsigned char *frames = malloc(bytes);
    if (!frames)
        return -ENOMEM;
    if ((e = read_mem(r, t.stack, frames, bytes))) {
        free(frames);
        return e;
    }
    size_t used = 0;
    int spans = 0;
    char tmp[NAME_MAX_LEN + 1];
    for (uint32_t d = 1; d <= t.depth; d++) {
        uint32_t name, flags;
        memcpy(&name, frames + (size_t)d * g->frame_size + g->frame_off_name, 4);
        memcpy(&flags, frames + (size_t)d * g->frame_size + g->frame_off_flags, 4);
        if (flags & g->frame_flag_folded)
            continue;
        if (name == 0 || name >= names) {
            free(frames);
            return -EAGAIN; /* a frame being written: try at the next sample */
        }
        const char *s = name_of(r, name, tmp, sizeof tmp);
        if (!s) {
            free(frames);
            return -EAGAIN;
        }
        int n = snprintf(buf + used, len > used ? len - used : 0, "%s%s", spans ? "/" : "", s);
        if (n > 0)
            used += (size_t)n;
        if (used >= len && len) { /* cut: keep what fits */
            used = len - 1;
        }
        spans++;
    }
    free(frames);
    return spans;
}
