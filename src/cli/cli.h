/* cli.h - the CLI's subcommands and the small helpers they share. */
#ifndef MIGSCHED_CLI_H
#define MIGSCHED_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "migsched/geometry.h"
#include "migsched/options.h"
#include "migsched/status.h"
#include "migsched/trace.h"

typedef struct ms_cli_cmd {
    const char *name;
    const char *help;
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
} ms_cli_cmd_t;

int ms_cli_frag(int argc, char **argv);
int ms_cli_models(int argc, char **argv);
int ms_cli_gen_trace(int argc, char **argv);
int ms_cli_simulate(int argc, char **argv);
int ms_cli_options(int argc, char **argv);
int ms_cli_experiment(int argc, char **argv);
int ms_cli_zoo(int argc, char **argv);
int ms_cli_fgd_experiment(int argc, char **argv);
int ms_cli_import_alibaba(int argc, char **argv);
int ms_cli_report(int argc, char **argv);
int ms_cli_check(int argc, char **argv);
int ms_cli_bench(int argc, char **argv);
int ms_cli_nvml_probe(int argc, char **argv);
int ms_cli_k8s_config(int argc, char **argv);
int ms_cli_advise(int argc, char **argv);
/* the clients of migschedd are src/client/client.h's */

/* Print "migsched <cmd>: <diag or status>" to stderr; returns exit code 1. */
int ms_cli_fail(const char *cmd, ms_status_t st, const ms_diag_t *d);

/* The geometry of --model with --profiles for command cmd. Returns 0 (g
 * set; free with ms_geom_destroy), or the exit code after printing why:
 * 2 for an unknown model or a bad profile list (1 out of memory). */
int ms_cli_geom(const char *cmd, const char *model, const char *profiles, ms_geom_t **g);

/* Exit codes, the same for every command (docs/cli.md):
 *   0 success; 1 bad input data or a failure while running (the message
 *   names file, line and field); 2 bad usage: an unknown option, a missing
 *   one, or an option value outside its documented range. */
enum { MS_CLI_OK = 0, MS_CLI_EDATA = 1, MS_CLI_EUSAGE = 2 };

/* Strict number parsers for option values (number.h): false on junk. */
bool ms_cli_parse_long(const char *s, long *out);
bool ms_cli_parse_double(const char *s, double *out);
/* An option value in [lo, hi]; otherwise print "migsched cmd: --opt: 'x'
 * is out of range; expected ... in [lo, hi]" and return false (the caller
 * exits 2). */
bool ms_cli_opt_long(const char *cmd, const char *opt, const char *s, long lo, long hi,
                     long *out);
bool ms_cli_opt_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                       double *out);
/* The option table (options.h) on the command line (opts.c). */
/* getopt_long's entries: the command's own (own, ending in a zero entry),
 * then every table option of scopes (a mask of ms_opt_scope_t), booleans
 * also as --no-NAME. A malloc'd array (free()), NULL when out of memory. */
struct option *ms_cli_opts(const struct option *own, unsigned scopes);
/* Whether getopt_long's code c is one of the table's. */
bool ms_cli_opts_is(int c);
/* Set the table option of code c to arg (optarg); false after printing
 * "migsched cmd: --NAME: message" (the caller exits 2). */
bool ms_cli_opts_set(const char *cmd, int c, const char *arg, const ms_opt_target_t *t);
/* Set the table's option name (a command with its own getopt entry for
 * it); false after printing the error as above. */
bool ms_cli_opt_table(const char *cmd, const char *name, const char *arg,
                      const ms_opt_target_t *t);
/* The --help lines of the table's options of scopes. */
void ms_cli_opts_help(FILE *f, unsigned scopes);
/* Say why the usage is wrong: the stray argument, else msg. */
void ms_cli_usage_error(const char *cmd, const char *stray, const char *msg);
/* Read a trace from path, '-' meaning stdin. */
ms_status_t ms_cli_read_trace(const char *path, const ms_geom_t *g, ms_trace_t **t,
                              ms_diag_t *d);
/* Whether two paths name the same existing file (or the same string). */
bool ms_cli_same_file(const char *a, const char *b);

/* The list options' parsers (lists.c), shared by commands and fuzzed.
 * Items are separated by commas; spaces around an item and around its
 * '=' or '@' are ignored; an empty item (",x", "x,", "x,,y") is an error. */
/* "1g=3,2g=1": a weight in [0, 1e6] per active profile (unnamed: 0), at
 * least one > 0. Fills d (field = opt) on error. */
ms_status_t ms_cli_parse_weights(const ms_geom_t *g, const char *opt, const char *list,
                                 double *w, ms_diag_t *d);
/* "1g.5gb@1,3g@4": instances on one GPU, *n of them, reaching *state. */
ms_status_t ms_cli_parse_used(const ms_geom_t *g, const char *list, ms_gi_t *gis, int *n,
                              ms_state_t *state, ms_diag_t *d);

#endif
