/* Small pieces shared by the subcommands' argument parsing. */
#ifndef LAPSE_CLI_ARGS_H
#define LAPSE_CLI_ARGS_H

/* Prints "lapse CMD: <fmt with arg>", the usage line and where help is, on stderr;
 * returns 2, the exit status for wrong usage. */
int cli_bad_usage(const char *cmd, const char *usage_line, const char *fmt, const char *arg);

/* Parses a whole number in [1, max]; 0 on success, -1 otherwise. */
int cli_parse_count(const char *s, long max, unsigned *out);

/* Parses a number in [lo, hi]; 0 on success, -1 otherwise. */
int cli_parse_double(const char *s, double lo, double hi, double *out);

#endif
