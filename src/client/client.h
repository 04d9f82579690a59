/* client.h - the CLI's commands that are clients of migschedd's HTTP API
 * (src/client/, an archive linked into the CLI with libcurl and jansson).
 * argv[0] is the command name; the exit codes are client.c's. The client
 * parses numbers with the library's parsers (number.h), like every face. */
#ifndef MIGSCHED_CLIENT_H
#define MIGSCHED_CLIENT_H

int ms_cli_status(int argc, char **argv);
int ms_cli_submit(int argc, char **argv);
int ms_cli_jobs(int argc, char **argv);
int ms_cli_cancel(int argc, char **argv);
int ms_cli_watch(int argc, char **argv);
int ms_cli_bench_api(int argc, char **argv);

#endif
