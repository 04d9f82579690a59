/* cmd_models.c - `migsched models` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_models(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched models: not built yet\n");
    return 2;
}
