/* cmd_fgd_experiment.c - `migsched fgd-experiment` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_fgd_experiment(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched fgd-experiment: not built yet\n");
    return 2;
}
