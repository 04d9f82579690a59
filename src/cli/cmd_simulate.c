/* cmd_simulate.c - `migsched simulate` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_simulate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched simulate: not built yet\n");
    return 2;
}
