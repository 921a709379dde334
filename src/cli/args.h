/* The subcommands' argument parsing: one parser (getopt_long) over each command's
 * table of options, with one wording for every usage error. Every option takes both
 * forms: --rate=200 and --rate 200; a short one -r200 and -r 200. */
#ifndef LAPSE_CLI_ARGS_H
#define LAPSE_CLI_ARGS_H

#include <getopt.h>

/* What cli_next returns for a usage error it has already printed (exit 2). */
#define CLI_USAGE_ERROR (-2)

/* One command's parse. options: getopt_long's table, ended by a zero entry; an
 * entry whose val is a letter or digit is also that short option, any other val
 * (>= 256) makes it long only. Every table has {"help", no_argument, NULL, 'h'}. */
typedef struct cli_parser {
    const char *cmd;        /* "report": the messages say "lapse report: ..." */
    const struct option *options;
    int argc;
    char **argv;            /* argv[0] is the command's name */
    char shortopts[64];
    const struct option *option; /* the option just returned */
    char opt[64];           /* its name, as "--rate" */
    const char *arg;        /* its value, or NULL */
    int operands;           /* once cli_next returned -1: argv[operands..argc-1] */
} cli_parser;

/* in_order: stop at the first operand (what follows it is a program's own
 * arguments); otherwise options and operands may come in any order, and "--" ends
 * the options either way. */
void cli_parser_init(cli_parser *p, const char *cmd,
                     const struct option *options, int in_order, int argc, char **argv);

/* The next option's val; -1 when the options are done (the operands are then
 * argv[p->operands..argc-1]); CLI_USAGE_ERROR after printing an unknown option,
 * a missing value or a value given to a flag. */
int cli_next(cli_parser *p);

/* "lapse CMD: OPT needs WHAT (got 'VALUE') (lapse CMD --help explains)", one line;
 * returns 2. */
int cli_bad_value(const cli_parser *p, const char *what);

/* Prints "lapse CMD: <fmt with arg> (lapse CMD --help explains)", one line on
 * stderr; returns 2, the exit status for wrong usage. */
int cli_bad_usage(const char *cmd, const char *fmt, const char *arg);

/* Parses a whole number in [1, max]; 0 on success, -1 otherwise. */
int cli_parse_count(const char *s, long max, unsigned *out);

/* Parses a number in [lo, hi]; 0 on success, -1 otherwise. */
int cli_parse_double(const char *s, double lo, double hi, double *out);

/* Parses a process id (1 to 2^31-1); 0 on success, -1 otherwise. */
int cli_parse_pid(const char *s, long *out);

#endif
