#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_bad_usage(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "lapse %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (lapse %s --help explains)\n", cmd);
    return 2;
}

void cli_parser_init(cli_parser *p, const char *cmd,
                     const struct option *options, int in_order, int argc, char **argv)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->options = options;
    p->argc = argc;
    p->argv = argv;
    /* "+": stop at the first operand; ":": a missing value is told apart from an
     * unknown option; messages are ours (opterr = 0) */
    size_t n = 0;
    if (in_order)
        p->shortopts[n++] = '+';
    p->shortopts[n++] = ':';
    for (const struct option *o = options; o->name; o++) {
        if (o->val > 0 && o->val < 128 && isalnum(o->val) && n + 3 < sizeof p->shortopts) {
            p->shortopts[n++] = (char)o->val;
            if (o->has_arg == required_argument)
                p->shortopts[n++] = ':';
        }
    }
    p->shortopts[n] = 0;
    optind = 0; /* glibc: start afresh, reading shortopts' "+" again */
    opterr = 0;
}

static const struct option *by_val(const cli_parser *p, int val)
{
    for (const struct option *o = p->options; o->name; o++)
        if (o->val == val)
            return o;
    return NULL;
}

int cli_next(cli_parser *p)
{
    int index = -1;
    int c = getopt_long(p->argc, p->argv, p->shortopts, p->options, &index);
    p->arg = optarg;
    if (c == -1) {
        p->operands = optind;
        return -1;
    }
    const struct option *o = index >= 0 ? &p->options[index] : by_val(p, c == '?' || c == ':' ? optopt : c);
    p->option = o;
    snprintf(p->opt, sizeof p->opt, "--%s", o ? o->name : "?");
    if (c == ':') {
        cli_bad_usage(p->cmd, "%s needs a value", p->opt);
        return CLI_USAGE_ERROR;
    }
    if (c == '?') {
        const char *token = optind > 0 && optind <= p->argc ? p->argv[optind - 1] : "";
        if (!strncmp(token, "--", 2)) {
            /* a long option: unknown, ambiguous, or a flag given "=value" */
            size_t len = strcspn(token + 2, "=");
            for (const struct option *f = p->options; f->name; f++)
                if (token[2 + len] == '=' && f->has_arg == no_argument && strlen(f->name) == len &&
                    !strncmp(f->name, token + 2, len)) {
                    cli_bad_usage(p->cmd, "--%s takes no value", f->name);
                    return CLI_USAGE_ERROR;
                }
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(len + 2 < sizeof name ? len + 2 : sizeof name - 1), token);
            cli_bad_usage(p->cmd, "unknown option '%s'", name);
        } else {
            char name[3] = {'-', (char)(optopt ? optopt : '?'), 0};
            cli_bad_usage(p->cmd, "unknown option '%s'", name);
        }
        return CLI_USAGE_ERROR;
    }
    return c;
}

int cli_bad_value(const cli_parser *p, const char *what)
{
    fprintf(stderr, "lapse %s: %s needs %s (got '%s') (lapse %s --help explains)\n", p->cmd,
            p->opt, what, p->arg ? p->arg : "", p->cmd);
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

int cli_parse_pid(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > 0x7fffffff)
        return -1;
    *out = v;
    return 0;
}
