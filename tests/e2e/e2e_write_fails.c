/* End-to-end test program: sessions whose writes the test makes fail.
 *
 * usage: e2e_write_fails RUN_DIR SESSIONS [SNAPSHOT_MS]
 * Runs SESSIONS sessions one after the other (role "writer", snapshots every
 * SNAPSHOT_MS, default an hour). Each starts when a line "start" comes on stdin;
 * it prints "file <path>" once the session's first file is written, then reads a
 * line: "stop" ends the session with lapse_stop (printing "stopped <rc>") and goes
 * on to the next; "exit" leaves the session running and exits (lapse's final write
 * at exit). Spans run meanwhile ("step"). Prints "bye" before it exits.
 */
#include "lapse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line of stdin, read a byte at a time (nothing past it is consumed). */
static int read_line(char *buf, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        char c;
        ssize_t r = read(0, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return n ? 0 : -1;
        if (c == '\n')
            break;
        buf[n++] = c;
    }
    buf[n] = 0;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s RUN_DIR SESSIONS [SNAPSHOT_MS]\n", argv[0]);
        return 2;
    }
    int sessions = atoi(argv[2]);
    uint32_t snapshot_ms = argc > 3 ? (uint32_t)atoi(argv[3]) : 3600000u;
    char line[64];
    for (int i = 0; i < sessions; i++) {
        if (read_line(line, sizeof line) != 0 || strcmp(line, "start") != 0)
            break;
        lapse_options opts;
        lapse_options_init(&opts);
        opts.run_dir = argv[1];
        opts.role = "writer";
        opts.snapshot_interval_ms = snapshot_ms;
        if (lapse_start(&opts) != 0) {
            fprintf(stderr, "e2e_write_fails: lapse_start: %s\n", lapse_last_error());
            return 1;
        }
        {
            LAPSE_SCOPE("step");
        }
        printf("file %s\n", lapse_file_path());
        fflush(stdout);
        if (read_line(line, sizeof line) != 0)
            strcpy(line, "exit");
        {
            LAPSE_SCOPE("step");
        }
        if (strcmp(line, "exit") == 0)
            break;
        int rc = lapse_stop();
        printf("stopped %d\n", rc);
        fflush(stdout);
    }
    printf("bye\n");
    fflush(stdout);
    return 0;
}
