/* main.c - the migsched command line: dispatch to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "client/client.h"
#include "migsched/version.h"

static const ms_cli_cmd_t COMMANDS[] = {
    { "frag", "draw a GPU as a slice map and print its FragCost", ms_cli_frag },
    { "models", "list GPU models, profiles and state-table facts", ms_cli_models },
    { "gen-trace", "generate a synthetic job trace (Poisson arrivals)", ms_cli_gen_trace },
    { "simulate", "replay a trace on a simulated MIG cluster", ms_cli_simulate },
    { "options", "every policy, queue and simulator option: range, default, help", ms_cli_options },
    { "experiment", "the ablation experiment on one 4xA100 node (the demo)", ms_cli_experiment },
    { "zoo", "the workload zoo: every policy on many workload shapes", ms_cli_zoo },
    { "fgd-experiment", "FGD's fill experiment on the Alibaba openb trace", ms_cli_fgd_experiment },
    { "import-alibaba", "turn an Alibaba openb pod list into a migsched trace", ms_cli_import_alibaba },
    { "check", "validate a schedule against its trace", ms_cli_check },
    { "report", "turn runs into a directory of Markdown, CSV and SVG plots", ms_cli_report },
    { "bench", "placement and simulation benchmarks", ms_cli_bench },
    { "nvml-probe", "read-only: the driver's MIG profiles and placements vs our tables", ms_cli_nvml_probe },
    { "k8s-config", "GPU Operator MIG layouts, device-plugin configs, node labels", ms_cli_k8s_config },
    { "advise", "from GPU utilisation: time-slicing, MIG moves, layouts, simulated gain", ms_cli_advise },
    { "status", "migschedd: every node's GPUs as slice maps, FragCost, the queue", ms_cli_status },
    { "submit", "migschedd: submit a job", ms_cli_submit },
    { "jobs", "migschedd: list jobs", ms_cli_jobs },
    { "cancel", "migschedd: cancel jobs", ms_cli_cancel },
    { "watch", "migschedd: follow job state changes", ms_cli_watch },
    { "bench-api", "migschedd: a bounded load generator for the HTTP API", ms_cli_bench_api },
};

static void usage(FILE *f)
{
    size_t i;

    fprintf(f, "usage: migsched <command> [options]\n\ncommands:\n");
    for (i = 0; i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++)
        fprintf(f, "  %-16s %s\n", COMMANDS[i].name, COMMANDS[i].help);
    fprintf(f, "\n'migsched <command> --help' describes each command.\n");
}

int main(int argc, char **argv)
{
    size_t i;

    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("migsched %s\n", ms_version());
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (i = 0; i < sizeof(COMMANDS) / sizeof(COMMANDS[0]); i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "migsched: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
