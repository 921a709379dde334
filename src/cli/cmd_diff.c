#include "commands.h"

#include <stdio.h>

int cmd_diff(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "lapse diff: not built yet\n");
    return 1;
}
