/* cmd_bench.c - `migsched bench` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched bench: not built yet\n");
    return 2;
}
