/* cmd_options.c - `migsched options`: the one option table (options.h) as
 * text or as the Markdown table docs/cli.md holds (tests/cli/
 * test_options.sh checks that the two agree). */
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: migsched options [--markdown]\n"
        "Every policy, queue and simulator option, from the one option table that every\n"
        "face parses with (include/migsched/options.h): `simulate` and `zoo` take them\n"
        "all (the zoo's --variants too, as policy/NAME=VALUE), migschedd the queue and\n"
        "policy options (flags and --config lines), `experiment` --beta and --queue.\n"
        "A boolean X is a flag, and --no-X sets it false.\n"
        "  --markdown   the table as Markdown (docs/cli.md)\n");
}

/* Markdown: | option | scope | value | default | what it does | */
static void markdown(void)
{
    char value[128];
    int i;

    printf("| option | scope | value | default | what it does |\n|---|---|---|---|---|\n");
    for (i = 0; i < ms_opt_count(); i++) {
        const ms_opt_t *o = ms_opt_get(i);

        if (o->type == MS_OPT_BOOL)
            snprintf(value, sizeof(value), "a flag (`--no-%s`: false)", o->name);
        else
            ms_opt_range(o, value, sizeof(value));
        printf("| `--%s%s%s` | %s | %s | %s | %s |\n", o->name, o->arg != NULL ? " " : "",
               o->arg != NULL ? o->arg : "", ms_opt_scope_name(o->scope), value, o->def,
               o->help);
    }
}

int ms_cli_options(int argc, char **argv)
{
    static const ms_opt_scope_t SCOPES[] = { MS_OPT_QUEUE, MS_OPT_POLICY, MS_OPT_SIM };
    size_t s;

    if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
        markdown();
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc != 1) {
        usage(stderr);
        return 2;
    }
    for (s = 0; s < sizeof(SCOPES) / sizeof(SCOPES[0]); s++) {
        printf("%s%s options:\n", s > 0 ? "\n" : "", ms_opt_scope_name(SCOPES[s]));
        ms_cli_opts_help(stdout, (unsigned)SCOPES[s]);
    }
    return 0;
}
