/* The options record and top share: how the external sampler samples. */
#ifndef LAPSE_CLI_SAMPLER_ARGS_H
#define LAPSE_CLI_SAMPLER_ARGS_H

#include "args.h"
#include "pyread/sampler.h"

/* vals of the long-only ones, for the commands' option tables */
enum { CLI_OPT_MODE = 300, CLI_OPT_IDLE };

#define CLI_SAMPLER_OPTIONS                                                                    \
    {"rate", required_argument, NULL, 'r'}, {"duration", required_argument, NULL, 'd'},       \
        {"mode", required_argument, NULL, CLI_OPT_MODE}, {"idle", no_argument, NULL, CLI_OPT_IDLE}

/* Applies option c (cli_next's) to o: 1 when it was one of CLI_SAMPLER_OPTIONS, 0
 * when not, 2 after a bad value was printed. */
int cli_sampler_option(const cli_parser *p, int c, sampler_opts *o);

#endif
