#include "commands.h"

#include <stdio.h>

int cmd_export(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "lapse export: not built yet\n");
    return 1;
}
