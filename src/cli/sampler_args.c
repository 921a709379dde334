#include "sampler_args.h"

int cli_sampler_option(const cli_parser *p, int c, sampler_opts *o)
{
    switch (c) {
    case 'r':
        if (cli_parse_double(p->arg, 0.1, 100000, &o->rate_hz))
            return cli_bad_value(p, "a rate in Hz between 0.1 and 100000");
        return 1;
    case 'd':
        if (cli_parse_double(p->arg, 0.001, 1e7, &o->duration_s))
            return cli_bad_value(p, "a positive number of seconds");
        return 1;
    case CLI_OPT_MODE:
        if ((o->mode = sampler_mode_parse(p->arg)) < 0)
            return cli_bad_value(p, "wall, cpu or gil");
        return 1;
    case CLI_OPT_IDLE:
        o->idle = 1;
        return 1;
    default:
        return 0;
    }
}
