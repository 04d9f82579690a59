/* cmd_gen_trace.c - `migsched gen-trace` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_gen_trace(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched gen-trace: not built yet\n");
    return 2;
}
