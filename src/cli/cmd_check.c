/* cmd_check.c - `migsched check`: validate a schedule against its trace. */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "migsched/check.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched check --trace T.csv --schedule S.csv (--gpus N | --node SPEC ...) [options]\n"
        "  --trace FILE         the job trace ('-' = stdin)\n"
        "  --schedule FILE      the schedule CSV ('-' = stdin; not both)\n"
        "  --gpus N             GPUs of the cluster, 1..1000000\n"
        "  --gpus-per-node K    GPUs per node, 1..1000000 (default: one node)\n"
        "  --node SPEC          a node NAME=COUNTxMODEL[:mig|:timeslice=R|:whole], repeated,\n"
        "                       as given to simulate: each GPU is checked in its model and mode\n"
        "  --cluster FILE       the nodes from a file\n"
        "  --model M            GPU model (default A100-40GB)\n"
        "  --profiles LIST      active profile set (default: the classic ones)\n"
        "  --timeslice          rows are time-slice slots (start -1)\n"
        "  --allow-missing      a job not in the schedule is no violation (a policy\n"
        "                       that rejects jobs, e.g. a static layout)\n"
        "Checks what every policy must keep: legal starts, instances at least the\n"
        "job's profile, no start before arrival, no two instances on a memory slice\n"
        "at once, and every job of the trace ran its full duration (a gang larger\n"
        "than a node is counted as unrunnable). Exit 0 if the schedule is valid,\n"
        "1 if it is not (or the input is malformed), 2 on bad usage.\n");
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
        { "gpus-per-node", required_argument, NULL, 'n' },
        { "allow-missing", no_argument, NULL, 'A' },
        { "node", required_argument, NULL, 'N' },
        { "cluster", required_argument, NULL, 'C' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *trace = NULL, *sched = NULL, *model = "A100-40GB", *profiles = "";
    long gpus = 0, gpn = 0;
    bool ts = false, allow = false;
    ms_check_opts_t co;
    int c, i, rc = 1;
    ms_geom_t *g = NULL;
    ms_trace_t *t = NULL;
    ms_check_result_t r;
    ms_diag_t d;
    ms_status_t st;
    FILE *f = NULL;
    ms_cluster_spec_t *cs = NULL;
    bool model_given = false;

    ms_diag_clear(&d);
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't': trace = optarg; break;
        case 's': sched = optarg; break;
        case 'g':
            if (!ms_cli_opt_long("check", "gpus", optarg, 1, 1000000, &gpus))
                return 2;
            break;
        case 'n':
            if (!ms_cli_opt_long("check", "gpus-per-node", optarg, 1, 1000000, &gpn))
                return 2;
            break;
        case 'A': allow = true; break;
        case 'm': model = optarg; model_given = true; break;
        case 'N':
        case 'C':
            if (cs == NULL && ms_cluster_spec_create(&cs) != MS_OK)
                return 1;
            st = c == 'N' ? ms_cluster_spec_add(cs, optarg, 0, &d)
                          : ms_cluster_spec_read_file(cs, optarg, 0, &d);
            if (st != MS_OK) {
                ms_cluster_spec_destroy(cs);
                if (c == 'N') {
                    fprintf(stderr, "migsched check: --node: %s\n", d.msg);
                    return 2;
                }
                return ms_cli_fail("check", st, &d);
            }
            break;
        case 'p': profiles = optarg; break;
        case 'T': ts = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (trace == NULL || sched == NULL || (gpus <= 0) == (cs == NULL) || optind != argc) {
        ms_cli_usage_error("check", optind != argc ? argv[optind] : NULL,
                           "--trace, --schedule and one of --gpus and --node/--cluster are required");
        usage(stderr);
        ms_cluster_spec_destroy(cs);
        return 2;
    }
    if (cs != NULL && !model_given)
        model = ms_geom_model(ms_cluster_spec_nodes(cs)[0].geom)->name;
    if (strcmp(trace, "-") == 0 && strcmp(sched, "-") == 0) {
        fprintf(stderr, "migsched check: --trace and --schedule cannot both be stdin\n");
        ms_cluster_spec_destroy(cs);
        return 2;
    }
    if ((rc = ms_cli_geom("check", model, profiles, &g)) != 0) {
        ms_cluster_spec_destroy(cs);
        return rc;
    }
    rc = 1;
    if ((st = ms_cli_read_trace(trace, g, &t, &d)) != MS_OK) {
        rc = ms_cli_fail("check", st, &d);
        goto out;
    }
    if ((f = strcmp(sched, "-") == 0 ? stdin : fopen(sched, "r")) == NULL) {
        ms_diag_set(&d, sched, 0, "schedule", "cannot open the file");
        rc = ms_cli_fail("check", MS_EIO, &d);
        goto out;
    }
    memset(&co, 0, sizeof(co));
    co.ngpus = (int)gpus;
    co.gpus_per_node = (int)gpn;
    co.timeslice = ts;
    co.allow_missing = allow;
    if (cs != NULL) {
        co.nodes = ms_cluster_spec_nodes(cs);
        co.nnodes = ms_cluster_spec_nnodes(cs);
    }
    if ((st = ms_schedule_check(f, strcmp(sched, "-") == 0 ? "<stdin>" : sched, t, &co, &r,
                                &d)) != MS_OK) {
        rc = ms_cli_fail("check", st, &d);
        goto out;
    }
    for (i = 0; i < r.nmsgs; i++)
        printf("violation: %s\n", r.msgs[i]);
    if (r.violations > r.nmsgs)
        printf("... and %ld more\n", r.violations - r.nmsgs);
    if (r.jobs_unrunnable > 0)
        printf("note: %ld jobs can never run here (a gang larger than a node of %ld GPUs)\n",
               r.jobs_unrunnable, gpn > 0 && gpn < gpus ? gpn : gpus);
    printf("%s: %ld segments, %ld jobs ran, %ld not in the schedule, %ld unrunnable, "
           "%ld violations\n",
           r.violations == 0 ? "valid" : "INVALID", r.segments, r.jobs_run, r.jobs_missing,
           r.jobs_unrunnable, r.violations);
    rc = r.violations == 0 ? 0 : 1;
out:
    if (f != NULL && f != stdin)
        fclose(f);
    ms_trace_free(t);
    ms_geom_destroy(g);
    ms_cluster_spec_destroy(cs);
    return rc;
}
