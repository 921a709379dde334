/* One function per subcommand; argv[0] is the subcommand's name. Each returns
 * the process exit status: 0 success, 1 failure (one line on stderr), 2 usage. */
#ifndef LAPSE_CLI_COMMANDS_H
#define LAPSE_CLI_COMMANDS_H

int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_view(int argc, char **argv);

#endif
