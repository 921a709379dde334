/* LD_PRELOAD shim for the out-of-memory tests: with LAPSE_TEST_FAIL_ALLOC_AFTER=N the
 * first N calls of malloc, calloc and realloc (together) succeed, and every one after
 * them fails (NULL, errno ENOMEM), as in a process that ran out of memory for good.
 * With LAPSE_TEST_COUNT_ALLOCS=FILE it fails nothing and writes the number of calls
 * into FILE at exit, so that a test can fail each one in turn.
 *
 * The allocator underneath is the next one (dlsym RTLD_NEXT: libc's, or a sanitizer's);
 * what dlsym allocates while it is looked up comes from a small static block. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int resolving;

static _Alignas(16) unsigned char boot[8192];
static size_t boot_used;

static int in_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + sizeof boot;
}

static void *boot_alloc(size_t n)
{
    size_t at = (boot_used + 15u) & ~(size_t)15u;
    if (n > sizeof boot - at)
        return NULL;
    boot_used = at + n;
    return boot + at; /* static: zeroed, never reused */
}

static void resolve(void)
{
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
}

static unsigned long long calls, limit = ~0ull;
static const char *count_file;

static void write_count(void)
{
    int fd = open(count_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu\n", calls);
    if (write(fd, buf, (size_t)n) != n)
        n = 0;
    close(fd);
}

/* Read once the environment is there (a sanitizer's runtime allocates before it is):
 * calls made before count, and succeed. */
__attribute__((constructor)) static void configure(void)
{
    const char *after = getenv("LAPSE_TEST_FAIL_ALLOC_AFTER");
    if (after && *after)
        limit = strtoull(after, NULL, 10);
    count_file = getenv("LAPSE_TEST_COUNT_ALLOCS");
    if (count_file && *count_file)
        atexit(write_count);
}

/* Whether this call fails; counts it. */
static int fails(void)
{
    if (calls < limit) {
        calls++;
        return 0;
    }
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t n)
{
    if (!real_malloc) {
        if (resolving)
            return boot_alloc(n);
        resolve();
    }
    return fails() ? NULL : real_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (!real_calloc) {
        if (resolving)
            return b && a > SIZE_MAX / b ? NULL : boot_alloc(a * b);
        resolve();
    }
    return fails() ? NULL : real_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (!real_realloc)
        resolve();
    if (in_boot(p)) { /* moved out of the static block (its old size is not known: at
                         most what is left of the block after it) */
        void *q = malloc(n);
        size_t room = (size_t)(boot + sizeof boot - (unsigned char *)p);
        if (q)
            memcpy(q, p, n < room ? n : room);
        return q;
    }
    return fails() ? NULL : real_realloc(p, n);
}

void free(void *p)
{
    if (!p || in_boot(p))
        return;
    if (!real_free)
        resolve();
    real_free(p);
}
