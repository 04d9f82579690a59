/* cli.h - the CLI's subcommands and the small helpers they share. */
#ifndef MIGSCHED_CLI_H
#define MIGSCHED_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "migsched/geometry.h"
#include "migsched/status.h"

typedef struct ms_cli_cmd {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
} ms_cli_cmd_t;

int ms_cli_frag(int argc, char **argv);
int ms_cli_models(int argc, char **argv);
int ms_cli_gen_trace(int argc, char **argv);
int ms_cli_simulate(int argc, char **argv);
int ms_cli_experiment(int argc, char **argv);
int ms_cli_zoo(int argc, char **argv);
int ms_cli_fgd_experiment(int argc, char **argv);
int ms_cli_import_alibaba(int argc, char **argv);
int ms_cli_report(int argc, char **argv);
int ms_cli_check(int argc, char **argv);
int ms_cli_bench(int argc, char **argv);
int ms_cli_nvml_probe(int argc, char **argv);
/* clients of migschedd (src/client/client.c) */
int ms_cli_status(int argc, char **argv);
int ms_cli_submit(int argc, char **argv);
int ms_cli_jobs(int argc, char **argv);
int ms_cli_cancel(int argc, char **argv);
int ms_cli_watch(int argc, char **argv);
int ms_cli_bench_api(int argc, char **argv);

/* Print "migsched <cmd>: <diag or status>" to stderr; returns exit code 1. */
int ms_cli_fail(const char *cmd, ms_status_t st, const ms_diag_t *d);

/* The geometry of --model with --profiles for command cmd. Returns 0 (g
 * set; free with ms_geom_destroy), or the exit code after printing why:
 * 2 for an unknown model, 1 for a bad profile list. */
int ms_cli_geom(const char *cmd, const char *model, const char *profiles, ms_geom_t **g);

/* Strict number parsers for option values: return false on junk. */
bool ms_cli_parse_long(const char *s, long *out);
bool ms_cli_parse_double(const char *s, double *out);

#endif
