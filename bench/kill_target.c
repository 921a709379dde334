/* The C target of bench/kill_loop.py: a program that works in ticks of known
 * length under a session that writes its file often, and keeps its own record of
 * the work it did where a SIGKILL cannot take it back.
 *
 * usage: kill_target SIDE_FILE [TICK_US] [PATHS]
 *
 * Starts a session from the environment (LAPSE_RUN_DIR, LAPSE_RUN_ID,
 * LAPSE_SNAPSHOT_MS, ...; role "killed"), prints "ready <pid> <lapse file>", then
 * works until it is killed: each tick is a span "tick" that spins TICK_US
 * microseconds (default 500) on the clock inside one of PATHS child spans
 * (default 256: a file of some size, whose write takes a while) and adds 1 to the
 * counter "work". After the span has ended, the tick's number and end time go to
 * SIDE_FILE, mapped shared: the page cache keeps what the process stored there when
 * it dies. SIDE_FILE holds u64s: [0] ticks done, [1] the session's start
 * (CLOCK_MONOTONIC ns), [2 + i % RING] the end time of tick i + 1.
 */
#include "lapse.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RING 65536

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SIDE_FILE [TICK_US] [PATHS]\n", argv[0]);
        return 2;
    }
    uint64_t tick_ns = (argc > 2 ? strtoull(argv[2], NULL, 10) : 500) * 1000;
    int paths = argc > 3 ? atoi(argv[3]) : 256;
    if (paths < 1 || paths > 4000) {
        fprintf(stderr, "kill_target: PATHS must be 1..4000\n");
        return 2;
    }
    size_t size = (2 + RING) * sizeof(uint64_t);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        perror("kill_target: side file");
        return 1;
    }
    volatile uint64_t *side = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (side == MAP_FAILED) {
        perror("kill_target: mmap");
        return 1;
    }
    uint32_t *ids = malloc((size_t)paths * sizeof *ids);
    for (int i = 0; i < paths; i++) {
        char name[32];
        snprintf(name, sizeof name, "step%04d", i);
        ids[i] = lapse_intern(name);
    }
    lapse_options o;
    lapse_options_init(&o);
    o.role = "killed";
    side[1] = mono_ns();
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "kill_target: lapse_start: %s\n", lapse_last_error());
        return 1;
    }
    printf("ready %ld %s\n", (long)getpid(), lapse_file_path());
    fflush(stdout);
    for (uint64_t done = 0;; done++) {
        {
            LAPSE_SCOPE("tick");
            uint32_t id = ids[done % (uint64_t)paths];
            lapse_span_begin_id(id);
            uint64_t until = mono_ns() + tick_ns;
            while (mono_ns() < until)
                ;
            lapse_span_end_id(id);
            lapse_count_name("work", 1);
        }
        side[2 + done % RING] = mono_ns();
        __atomic_store_n(&side[0], done + 1, __ATOMIC_RELEASE);
    }
}
