/* The process's I/O counters less lapse's own, read under the lock that lapse's own
 * writes hold. */
#include "io.h"

#include "lapse.h"

#include "proc_sampler.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t io_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t own_io[4]; /* what lapse's own writes moved (read_chars, write_chars,
                              read_bytes, write_bytes), summed; atomic */
static const char *io_file = "/proc/self/io";

void collect_io_configure(void)
{
    const char *v = getenv("LAPSE_TEST_IO_FILE");
    io_file = v && *v ? v : "/proc/self/io";
}

void collect_own_read(uint64_t bytes) { __atomic_add_fetch(&own_io[0], bytes, __ATOMIC_RELAXED); }

void collect_block_handled_signals(sigset_t *saved)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, saved);
}

/* Reads the four counters of a /proc io file. *returned: the bytes this read
 * returned, which the kernel adds to read_chars after the read: the values read do
 * not include them yet, the next reading will (count them as lapse's own once the
 * values read are used). */
static int read_io_file(const char *path, uint64_t out[4], uint64_t *returned)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    *returned = (uint64_t)n;
    buf[n] = 0;
    static const char *const keys[4] = {"rchar: ", "wchar: ", "read_bytes: ", "write_bytes: "};
    for (int i = 0; i < 4; i++) {
        const char *at = strstr(buf, keys[i]);
        if (!at)
            return -1;
        out[i] = strtoull(at + strlen(keys[i]), NULL, 10);
    }
    return 0;
}

/* Every reading of lapse's of the process's counters, and every file write of its,
 * happen under io_mu: a reading never sees a write of lapse's half done (its bytes
 * moved, not yet counted as lapse's own), nor another reading's bytes before they
 * are counted as lapse's own. A phase boundary that comes while lapse writes its
 * file waits for that write. */
int lapse_io_counters(uint64_t out[4])
{
    uint64_t returned;
    sigset_t saved; /* a handler on this thread must not wait for a write behind us */
    collect_block_handled_signals(&saved);
    pthread_mutex_lock(&io_mu);
    int rc = read_io_file(io_file, out, &returned);
    if (rc == 0) {
        for (int i = 0; i < 4; i++) {
            uint64_t own = __atomic_load_n(&own_io[i], __ATOMIC_RELAXED);
            out[i] = out[i] > own ? out[i] - own : 0;
        }
        collect_own_read(returned); /* from the next reading on */
    }
    pthread_mutex_unlock(&io_mu);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return rc;
}

int lapse_rss_bytes(uint64_t *out)
{
    /* its read counts in read_chars: under the same lock as the I/O readings */
    sigset_t saved;
    collect_block_handled_signals(&saved);
    pthread_mutex_lock(&io_mu);
    int rc = proc_rss_bytes(out);
    pthread_mutex_unlock(&io_mu);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return rc;
}

void collect_io_write_begin(collect_own_write *w)
{
    uint64_t returned;
    pthread_mutex_lock(&io_mu);
    /* measured, not estimated: a small file costs whole blocks of data, inode and
     * journal */
    w->measured = read_io_file("/proc/thread-self/io", w->before, &returned) == 0;
}

void collect_io_write_end(collect_own_write *w, int counted)
{
    uint64_t after[4], returned;
    /* after - before holds the first reading's bytes; the second's come on top */
    if (counted && w->measured && read_io_file("/proc/thread-self/io", after, &returned) == 0) {
        for (int i = 0; i < 4; i++)
            if (after[i] > w->before[i])
                __atomic_add_fetch(&own_io[i], after[i] - w->before[i], __ATOMIC_RELAXED);
        collect_own_read(returned);
    }
    pthread_mutex_unlock(&io_mu);
}

void collect_io_fork_prepare(void) { pthread_mutex_lock(&io_mu); }
void collect_io_fork_parent(void) { pthread_mutex_unlock(&io_mu); }
void collect_io_fork_child(void) { pthread_mutex_init(&io_mu, NULL); }
