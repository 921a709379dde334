#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cli_bad_usage(const char *cmd, const char *usage_line, const char *fmt, const char *arg)
{
    fprintf(stderr, "lapse %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fputs(usage_line, stderr);
    fprintf(stderr, "(lapse %s --help explains)\n", cmd);
    return 2;
}

int cli_parse_count(const char *s, long max, unsigned *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}
