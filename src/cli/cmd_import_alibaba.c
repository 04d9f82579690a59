/* cmd_import_alibaba.c - `migsched import-alibaba` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_import_alibaba(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched import-alibaba: not built yet\n");
    return 2;
}
