/* The children a process forks record themselves in its list (src/session/
 * fork_children.c): only those that show they worked (a span of their own) are taken,
 * not one that wrote its own file first or execs; a child that does not record (no session continued in it) leaves the list alone and
 * gets a list of its own at its first fork, so its own session never empties its
 * parent's. */
#include "../../src/session/fork_children.h"
#include "check.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { IDLE, WORKED, WROTE };

static pid_t child(int record, int what, int reset_own)
{
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t forked = 1000 + (uint64_t)getpid();
        fork_children_child(record, forked);
        uint64_t due = fork_children_look_due();
        int ok = record ? due == forked + FORK_CHILDREN_LOOK_NS : due == 0;
        fork_children_look(due, 0, 0); /* nothing yet: it looks again later */
        ok &= !record || fork_children_look_due() == due + FORK_CHILDREN_LOOK_NS;
        if (what != IDLE)
            fork_children_look(due, what == WORKED, what == WROTE);
        ok &= what == IDLE || fork_children_look_due() == 0;
        if (reset_own) { /* as its own session's start: its own list, not the parent's */
            fork_children_prepare();
            fork_children_reset();
        }
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return pid;
}

int main(void)
{
    store_file f = {0};
    CHECK(fork_children_take(&f) == 0); /* no fork yet: no list */
    CHECK_EQ_U64(f.child_count, 0);

    fork_children_prepare();
    pid_t ran = child(1, WORKED, 0);
    child(1, IDLE, 0);             /* exec'd (or ended) before any span */
    child(1, WROTE, 0);            /* a file of its own first: that names it */
    child(0, WORKED, 1);           /* no session in it: not recorded, and its own
                                      session's reset leaves this list alone */
    pid_t ran2 = child(1, WORKED, 0);
    CHECK(fork_children_take(&f) == 0);
    CHECK_EQ_U64(f.child_count, 2);
    CHECK_EQ_U64(f.children_unrecorded, 0);
    if (f.child_count == 2) {
        CHECK_EQ_U64((uint64_t)f.children[0].pid, (uint64_t)ran);
        CHECK_EQ_U64(f.children[0].fork_mono_ns, 1000 + (uint64_t)ran);
        CHECK_EQ_U64((uint64_t)f.children[1].pid, (uint64_t)ran2);
    }
    free(f.children);

    fork_children_reset(); /* a new session: none */
    CHECK(fork_children_take(&f) == 0);
    CHECK_EQ_U64(f.child_count, 0);
    return check_done("test_fork_children");
}
