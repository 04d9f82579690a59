/* opts.c - the option table (options.h) on the command line: getopt_long
 * entries for its options, the one setter with the one error message, and
 * the --help lines. simulate, zoo and experiment use it; migschedd reads
 * the same table (src/service/config.c). */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

/* getopt codes: table option i is CODE0 + 2i, its "no-" form CODE0 + 2i + 1 */
#define CODE0 1000

struct option *ms_cli_opts(const struct option *own, unsigned scopes)
{
    int nown = 0, n = ms_opt_count(), i, k;
    struct option *o;
    char *names;

    while (own[nown].name != NULL)
        nown++;
    /* one block: the entries, then the "no-NAME" strings (64 bytes each) */
    o = malloc((size_t)(nown + 2 * n + 1) * sizeof(*o) + (size_t)n * 64);
    if (o == NULL)
        return NULL;
    names = (char *)(o + nown + 2 * n + 1);
    memcpy(o, own, (size_t)nown * sizeof(*o));
    k = nown;
    for (i = 0; i < n; i++) {
        const ms_opt_t *t = ms_opt_get(i);

        if (!(scopes & (unsigned)t->scope))
            continue;
        o[k].name = t->name;
        o[k].has_arg = t->type == MS_OPT_BOOL ? optional_argument : required_argument;
        o[k].flag = NULL;
        o[k++].val = CODE0 + 2 * i;
        if (t->type == MS_OPT_BOOL) {
            snprintf(names + 64 * i, 64, "no-%s", t->name);
            o[k].name = names + 64 * i;
            o[k].has_arg = no_argument;
            o[k].flag = NULL;
            o[k++].val = CODE0 + 2 * i + 1;
        }
    }
    memset(&o[k], 0, sizeof(o[k]));
    return o;
}

bool ms_cli_opts_is(int c)
{
    return c >= CODE0 && c < CODE0 + 2 * ms_opt_count();
}

bool ms_cli_opt_table(const char *cmd, const char *name, const char *arg,
                      const ms_opt_target_t *t)
{
    const ms_opt_t *o = ms_opt_find(name, NULL);
    ms_diag_t d;
    ms_status_t st;

    ms_diag_clear(&d);
    if ((st = ms_opt_set(t, name, arg, &d)) == MS_OK)
        return true;
    fprintf(stderr, "migsched %s: --%s: %s\n", cmd, o != NULL ? o->name : name,
            d.msg[0] ? d.msg : ms_strerror(st));
    return false;
}

bool ms_cli_opts_set(const char *cmd, int c, const char *arg, const ms_opt_target_t *t)
{
    const ms_opt_t *o = ms_opt_get((c - CODE0) / 2);
    char name[72];

    snprintf(name, sizeof(name), "%s%s", (c - CODE0) % 2 ? "no-" : "", o->name);
    return ms_cli_opt_table(cmd, name, arg, t);
}

void ms_cli_opts_help(FILE *f, unsigned scopes)
{
    char buf[512];
    int i;

    for (i = 0; i < ms_opt_count(); i++)
        if (scopes & (unsigned)ms_opt_get(i)->scope)
            fputs(ms_opt_help(ms_opt_get(i), buf, sizeof(buf)), f);
}
