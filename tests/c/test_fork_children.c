/* The children a process forks record themselves in its list (src/session/
 * fork_children.c): only those that confirm (ran 100 ms as its program) are taken; a
 * child that does not record (no session continued in it) leaves the list alone and
 * gets a list of its own at its first fork, so its own session never empties its
 * parent's. */
#include "../../src/session/fork_children.h"
#include "check.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child(int record, int confirm, int reset_own)
{
    pid_t pid = fork();
    if (pid == 0) {
        fork_children_child(record, 1000 + (uint64_t)getpid());
        int due = fork_children_confirm_due() != 0;
        if (confirm)
            fork_children_confirm();
        if (reset_own) { /* as its own session's start: its own list, not the parent's */
            fork_children_prepare();
            fork_children_reset();
        }
        _exit(due == record ? 0 : 3);
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
    pid_t ran = child(1, 1, 0);
    child(1, 0, 0);                /* exec'd (or ended) before it confirmed */
    pid_t quiet = child(0, 1, 1);  /* no session in it: not recorded, and its own
                                      session's reset leaves this list alone */
    (void)quiet;
    pid_t ran2 = child(1, 1, 0);
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
