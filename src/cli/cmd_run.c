/* lapse run [options] (script.py | -m module) [args...]
 * lapse lines [options] (script.py | -m module) [args...]
 *
 * Runs a Python target once under lapse (run: a session; lines: the line profiler).
 * The work is done by the Python package (`python -m lapse run` or `lines`, argv[0]
 * here), which this command executes with the interpreter it
 * belongs to: $LAPSE_PYTHON, else the python next to this executable (a venv's
 * bin/ where pip installed both), else python3 on PATH. */
#include "commands.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The python next to /proc/self/exe, if there is one. */
static int sibling_python(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const names[] = {"python", "python3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(out, len, "%s/%s", self, names[i]);
        if (access(out, X_OK) == 0)
            return 0;
    }
    return -1;
}

int cmd_run(int argc, char **argv)
{
    char python[PATH_MAX];
    const char *chosen = getenv("LAPSE_PYTHON");
    if (chosen && *chosen)
        snprintf(python, sizeof python, "%s", chosen);
    else if (sibling_python(python, sizeof python) != 0)
        snprintf(python, sizeof python, "python3");
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) {
        fprintf(stderr, "lapse %s: out of memory\n", argv[0]);
        return 1;
    }
    args[0] = python;
    args[1] = "-m";
    args[2] = "lapse";
    args[3] = argv[0]; /* "run" or "lines" */
    for (int i = 1; i < argc; i++)
        args[3 + i] = argv[i];
    execvp(python, args);
    int e = errno;
    fprintf(stderr, "lapse %s: cannot run %s: %s (set LAPSE_PYTHON to a Python with the lapse "
                    "package installed: pip install .)\n",
            argv[0], python, strerror(e));
    free(args);
    return 1;
}
