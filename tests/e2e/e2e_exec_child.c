/* End-to-end test program: a process that starts a session in code and runs a
 * child through fork + exec. The child starts its session from the environment
 * the parent's session exported (LAPSE_PROFILE, LAPSE_RUN_DIR, LAPSE_RUN_ID), so it
 * joins the parent's run with no configuration passed to it.
 *
 * usage: e2e_exec_child RUN_DIR        (the parent)
 *        e2e_exec_child --child        (what the parent executes)
 */
#include "lapse.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--child")) {
        if (!lapse_is_active()) {
            fprintf(stderr, "e2e_exec_child: the child has no session\n");
            return 3;
        }
        lapse_set_role("child");
        for (int i = 0; i < 7; i++) {
            LAPSE_SCOPE("child_step");
        }
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: e2e_exec_child RUN_DIR\n");
        return 2;
    }
    lapse_options o;
    lapse_options_init(&o);
    o.run_dir = argv[1];
    o.role = "parent";
    if (lapse_start(&o) != 0) {
        fprintf(stderr, "e2e_exec_child: %s\n", lapse_last_error());
        return 1;
    }
    int status = -1;
    {
        LAPSE_SCOPE("spawn_child");
        pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "--child", (char *)NULL);
            _exit(127);
        }
        waitpid(pid, &status, 0);
    }
    lapse_stop();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
