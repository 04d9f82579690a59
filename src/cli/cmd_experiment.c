/* cmd_experiment.c - `migsched experiment` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_experiment(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched experiment: not built yet\n");
    return 2;
}
