/* cmd_report.c - `migsched report` (placeholder until the module lands). */
#include "cli/cli.h"

int ms_cli_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "migsched report: not built yet\n");
    return 2;
}
