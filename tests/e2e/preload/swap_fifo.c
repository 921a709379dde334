/* LD_PRELOAD shim for the FIFO-swap tests: the first time the program opens a path
 * whose last component is $LAPSE_TEST_SWAP_FIFO, that path is replaced by a FIFO
 * (rename over it) just before the open. So a file listed as a regular file is a FIFO
 * when the reader opens it: the race of a FIFO swapped in after the directory listing,
 * made deterministic. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int swapped;

static void maybe_swap(const char *path)
{
    const char *name = getenv("LAPSE_TEST_SWAP_FIFO");
    if (swapped || !name || !*name || !path)
        return;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, name) != 0)
        return;
    swapped = 1;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.swap-fifo", path);
    if (mkfifo(tmp, 0600) == 0 && rename(tmp, path) == 0)
        fprintf(stderr, "swap_fifo: %s is a FIFO now\n", path);
}

#define WRAP(fn, ...)                                                                  \
    static int (*real)(__VA_ARGS__);                                                   \
    if (!real)                                                                         \
        real = (int (*)(__VA_ARGS__))dlsym(RTLD_NEXT, fn)

static mode_t mode_of(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_of(flags, ap);
    va_end(ap);
    maybe_swap(path);
    WRAP("open", const char *, int, ...);
    return real(path, flags, m);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_of(flags, ap);
    va_end(ap);
    maybe_swap(path);
    WRAP("open64", const char *, int, ...);
    return real(path, flags, m);
}

int openat(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_of(flags, ap);
    va_end(ap);
    maybe_swap(path);
    WRAP("openat", int, const char *, int, ...);
    return real(dir, path, flags, m);
}

int openat64(int dir, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_of(flags, ap);
    va_end(ap);
    maybe_swap(path);
    WRAP("openat64", int, const char *, int, ...);
    return real(dir, path, flags, m);
}
