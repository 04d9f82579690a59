/* cmd_check.c - `migsched check`: validate a schedule against its trace. */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/check.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched check --trace T.csv --schedule S.csv --gpus N [--model M]\n"
        "                      [--profiles LIST] [--timeslice]\n"
        "Checks what every policy must keep: legal starts, instances at least the\n"
        "job's profile, no start before arrival, no two instances on a memory slice\n"
        "at once, every job that ran ran its full duration. Exit 0 if the schedule\n"
        "is valid, 1 if it is not (or the input is malformed), 2 on bad usage.\n");
}

int ms_cli_check(int argc, char **argv)
{
    static const struct option opts[] = {
        { "trace", required_argument, NULL, 't' },
        { "schedule", required_argument, NULL, 's' },
        { "gpus", required_argument, NULL, 'g' },
        { "model", required_argument, NULL, 'm' },
        { "profiles", required_argument, NULL, 'p' },
        { "timeslice", no_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *trace = NULL, *sched = NULL, *model = "A100-40GB", *profiles = "";
    long gpus = 0;
    bool ts = false;
    int c, i, rc = 1;
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    ms_check_result_t r;
    ms_diag_t d;
    ms_status_t st;
    FILE *f = NULL;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't': trace = optarg; break;
        case 's': sched = optarg; break;
        case 'g':
            if (!ms_cli_parse_long(optarg, &gpus) || gpus <= 0 || gpus > 10000000) {
                fprintf(stderr, "migsched check: bad --gpus '%s'\n", optarg);
                return 2;
            }
            break;
        case 'm': model = optarg; break;
        case 'p': profiles = optarg; break;
        case 'T': ts = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (trace == NULL || sched == NULL || gpus <= 0 || optind != argc) {
        usage(stderr);
        return 2;
    }
    if ((rc = ms_cli_geom("check", model, profiles, &g)) != 0)
        return rc;
    rc = 1;
    if ((st = ms_trace_read_file(trace, g, &t, &d)) != MS_OK) {
        rc = ms_cli_fail("check", st, &d);
        goto out;
    }
    if ((f = fopen(sched, "r")) == NULL) {
        ms_diag_set(&d, sched, 0, "schedule", "cannot open the file");
        rc = ms_cli_fail("check", MS_EIO, &d);
        goto out;
    }
    if ((st = ms_schedule_check(f, sched, t, (int)gpus, ts, &r, &d)) != MS_OK) {
        rc = ms_cli_fail("check", st, &d);
        goto out;
    }
    for (i = 0; i < r.nmsgs; i++)
        printf("violation: %s\n", r.msgs[i]);
    if (r.violations > r.nmsgs)
        printf("... and %ld more\n", r.violations - r.nmsgs);
    printf("%s: %ld segments, %ld jobs ran, %ld not in the schedule, %ld violations\n",
           r.violations == 0 ? "valid" : "INVALID", r.segments, r.jobs_run, r.jobs_missing,
           r.violations);
    rc = r.violations == 0 ? 0 : 1;
out:
    if (f != NULL)
        fclose(f);
    ms_trace_free(t);
    ms_geom_destroy(g);
    return rc;
}
