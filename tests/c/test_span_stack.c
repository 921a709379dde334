/* The span stack read from outside: a child process runs a lapse session with spans
 * open on two threads; this process reads the paths open on each thread with
 * span_stack_path (process_vm_readv only), follows a span ending, and gets clear
 * errors for a process without lapse and a process that is gone. */
#include "../../src/core/span_registry.h"
#include "check.h"

#include <lapse.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char run_dir[] = "/tmp/lapse-test-span-stack-XXXXXX";
static int to_child[2], from_child[2];

static void send_line(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) < 0)
        _exit(3);
}

static int recv_line(int fd, char *buf, size_t n)
{
    size_t k = 0;
    while (k + 1 < n) {
        ssize_t r = read(fd, buf + k, 1);
        if (r <= 0)
            return -1;
        if (buf[k] == '\n')
            break;
        k++;
    }
    buf[k] = 0;
    return 0;
}

static void *worker(void *arg)
{
    (void)arg;
    lapse_set_thread_name("worker");
    uint32_t outer = lapse_intern("outer"), inner = lapse_intern("inner \"x\"");
    lapse_span_begin_id(outer);
    lapse_span_begin_id(inner);
    char line[64];
    snprintf(line, sizeof line, "%ld\n", (long)syscall(SYS_gettid));
    send_line(from_child[1], line);
    recv_line(to_child[0], line, sizeof line); /* "end" */
    lapse_span_end_id(inner);
    send_line(from_child[1], "ended\n");
    recv_line(to_child[0], line, sizeof line); /* "quit" */
    lapse_span_end_id(outer);
    return NULL;
}

static void child(void)
{
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = run_dir;
    o.role = "spanstack";
    o.snapshot_interval_ms = 60000;
    o.handle_signals = 0;
    if (lapse_start(&o) != 0)
        _exit(2);
    lapse_span_begin_id(lapse_intern("main_span"));
    char line[64];
    snprintf(line, sizeof line, "%ld\n", (long)getpid());
    send_line(from_child[1], line);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    lapse_stop();
    _exit(0);
}

int main(void)
{
    if (!mkdtemp(run_dir) || pipe(to_child) || pipe(from_child)) {
        perror("setup");
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0)
        child();
    char line[64], path[512], msg[256];
    CHECK(recv_line(from_child[0], line, sizeof line) == 0);
    long main_tid = atol(line);
    CHECK(recv_line(from_child[0], line, sizeof line) == 0);
    long worker_tid = atol(line);

    span_stack_reader *r = NULL;
    int rc = span_stack_open(pid, &r, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "span_stack_open: %s\n", msg);
    CHECK(rc == 0);
    if (r) {
        CHECK(span_stack_path(r, worker_tid, path, sizeof path) == 2);
        CHECK_STR(path, "outer/inner \"x\"");
        CHECK(span_stack_path(r, main_tid, path, sizeof path) == 1);
        CHECK_STR(path, "main_span");
        CHECK(span_stack_path(r, 999999999, path, sizeof path) == 0); /* no such thread */
        CHECK_STR(path, "");
        /* a buffer too short keeps what fits */
        char small[8];
        CHECK(span_stack_path(r, worker_tid, small, sizeof small) == 2);
        CHECK_STR(small, "outer/i");
        /* the program moves on: the next read sees it */
        send_line(to_child[1], "end\n");
        CHECK(recv_line(from_child[0], line, sizeof line) == 0);
        CHECK(span_stack_path(r, worker_tid, path, sizeof path) == 1);
        CHECK_STR(path, "outer");
        uint64_t reads = span_stack_reads(r);
        CHECK(span_stack_path(r, worker_tid, path, sizeof path) == 1);
        /* cached thread and names: gen, names count, thread, frames */
        CHECK(span_stack_reads(r) - reads <= 6);
    }
    send_line(to_child[1], "quit\n");
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (r) /* the process is gone */
        CHECK(span_stack_path(r, worker_tid, path, sizeof path) < 0);
    span_stack_close(r);

    /* a process without lapse */
    pid_t plain = fork();
    if (plain == 0) {
        execlp("sleep", "sleep", "5", (char *)NULL);
        _exit(127);
    }
    usleep(100000);
    r = NULL;
    CHECK(span_stack_open(plain, &r, msg, sizeof msg) == -ENOENT);
    CHECK(strstr(msg, "has no lapse core") != NULL);
    kill(plain, SIGKILL);
    waitpid(plain, NULL, 0);
    /* a pid that is gone */
    CHECK(span_stack_open(plain, &r, msg, sizeof msg) < 0);
    CHECK(strchr(msg, '\n') == NULL && msg[0]);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", run_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", run_dir);
    return check_done("test_span_stack");
}
