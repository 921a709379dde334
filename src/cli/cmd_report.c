#include "commands.h"

#include <stdio.h>

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "lapse report: not built yet\n");
    return 1;
}
