/* options.h - every policy, queue and simulator option, by name, in one
 * table.
 *
 * Every face sets these options through ms_opt_set: `migsched simulate`,
 * `zoo` and `experiment` from their command lines, the zoo's variant
 * strings ("fa+/t=0.2/fifo"), migschedd's flags and its --config file. So
 * an option has one name, one type, one range, one default, one help line
 * and one error message everywhere, and numbers are read in the one
 * syntax of number.h ("0x0.8", " 5" and "inf" are not numbers; "inf" is a
 * word only backfill-bound takes).
 *
 * Scopes say which configuration an option sets (ms_opt_target_t):
 *   policy     ms_policy_cfg_t: the policies' knobs (fa's threshold, ...)
 *   queue      ms_sched_cfg_t: the queue discipline (docs/sched.md)
 *   simulator  ms_sim_cfg_t: the simulator's model (interference, the
 *              cost of creating and moving instances, estimates) and its
 *              placement index
 * A face passes the configurations it has: migschedd has no simulator,
 * so `migschedd --beta 0.1` is an error that says so.
 *
 * Values: a boolean option X is a flag (X alone is true) and takes
 * true/false, on/off, yes/no, 1/0; "no-X" is X false ("no-X = false" in a
 * file is X true). Every other option needs a value. String values
 * (static-layout) are borrowed: the caller keeps them alive as long as the
 * configuration.
 *
 * The table lives in src/sim/options.c, the lowest layer that knows all
 * three configurations.
 */
#ifndef MIGSCHED_OPTIONS_H
#define MIGSCHED_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "migsched/policy.h"
#include "migsched/sched.h"
#include "migsched/sim.h"
#include "migsched/status.h"

typedef enum ms_opt_scope {
    MS_OPT_POLICY = 1,
    MS_OPT_QUEUE = 2,
    MS_OPT_SIM = 4
} ms_opt_scope_t;

typedef enum ms_opt_type {
    MS_OPT_DOUBLE,    /* a number in [lo, hi] (and "inf" where inf is set) */
    MS_OPT_INT,       /* an integer in [lo, hi] */
    MS_OPT_UINT64,    /* an integer in [0, 2^64 - 1] (seeds) */
    MS_OPT_BOOL,      /* a flag */
    MS_OPT_STRING,    /* any text (borrowed) */
    MS_OPT_CHOICE,    /* one of the words in choices */
    MS_OPT_TENANT     /* NAME[:weight=W][,guarantee=S][,limit=S]; each use
                       * declares one more tenant (ms_sim_tenants_t) */
} ms_opt_type_t;

/* One option, as the help and the docs show it. */
typedef struct ms_opt {
    const char *name;          /* the long option without dashes */
    ms_opt_scope_t scope;
    ms_opt_type_t type;
    const char *arg;           /* the value's name in help ("T", "N", "S") */
    double lo, hi;             /* DOUBLE, INT */
    bool inf;                  /* DOUBLE: "inf" is accepted too */
    const char *const *choices;/* CHOICE: NULL-terminated */
    const char *def;           /* the default, as text */
    const char *help;          /* what it does, one line, no range or default */
} ms_opt_t;

/* The configurations a face has; NULL where it has none. */
typedef struct ms_opt_target {
    ms_policy_cfg_t *pcfg;     /* policy options */
    ms_sched_cfg_t *sched;     /* queue options */
    ms_sim_cfg_t *sim;         /* simulator options */
} ms_opt_target_t;

/* The target of a simulator face: every option, into cfg (its scheduler's
 * queue and policy configuration included). */
ms_opt_target_t ms_opt_target_sim(ms_sim_cfg_t *cfg);

/* Set option name (or "no-NAME" for a boolean) to value (NULL: none given,
 * which only a boolean accepts). Errors, with diag's field the option's
 * name and its message the one every face prints after "--NAME: ":
 *   MS_ENOENT  no such option, or one of a scope the target lacks;
 *   MS_EINVAL  a value missing;
 *   MS_ERANGE  a value that is not of the option's type or is outside its
 *              range ("'0x0.8' is not a decimal number; expected a number
 *              in [0, 1]").
 * Nothing is changed on error. Numbers are number.h's. */
ms_status_t ms_opt_set(const ms_opt_target_t *t, const char *name, const char *value,
                       ms_diag_t *diag);

/* The option named name (or "no-NAME" of a boolean: *negated set), NULL
 * if none. negated may be NULL. */
const ms_opt_t *ms_opt_find(const char *name, bool *negated);
/* The table, in help order: i in [0, ms_opt_count()). */
int ms_opt_count(void);
const ms_opt_t *ms_opt_get(int i);
/* "simulator", "queue" or "policy". */
const char *ms_opt_scope_name(ms_opt_scope_t s);

/* The option's range as text: "[0, 1]", "[0, 1e+12] or inf",
 * "easy, backfill or fifo", "true or false", "any text". Returns buf. */
const char *ms_opt_range(const ms_opt_t *o, char *buf, size_t n);
/* Its --help entry: "  --NAME ARG" padded to column 24, the help, the
 * range and the default, wrapped at 80 columns with the continuation lines
 * indented to column 24; each line ends in '\n'. Returns buf (truncated to
 * n - 1 bytes when short; 512 bytes always suffice). */
const char *ms_opt_help(const ms_opt_t *o, char *buf, size_t n);

#endif
