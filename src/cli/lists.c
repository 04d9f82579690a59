/* lists.c - the comma-separated list options (--weights, --mix, --used),
 * one syntax for all (cli.h): items split at commas, spaces around an item
 * and around its separator ignored, an empty item an error. Each loop walks
 * the list once, so its work is bounded by the list's length. */
#include "cli/cli.h"

#include <string.h>

#include "migsched/number.h"

#define ITEM_MAX 64   /* longer items cannot name a profile: an error */

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* The next item of *p (up to a comma or the end) into buf, trimmed, and the
 * two halves around sep. Returns 1 with *p advanced, 0 at the end of the
 * list, -1 on a malformed item (d filled). */
static int next_item(const char **p, bool *more, char sep, char *buf, char **key, char **val,
                     const char *opt, const char *list, ms_diag_t *d)
{
    const char *s = *p, *end, *a, *b;
    size_t len;
    char *at;

    if (!*more)
        return 0;
    end = strchr(s, ',');
    if (end == NULL)
        end = s + strlen(s);
    a = s;
    b = end;
    while (a < b && is_space(*a))
        a++;
    while (b > a && is_space(b[-1]))
        b--;
    len = (size_t)(b - a);
    *more = *end == ',';
    *p = *more ? end + 1 : end;
    if (len == 0) {
        ms_diag_set(d, NULL, 0, opt, "empty item in '%s' (a stray comma?)", list);
        return -1;
    }
    if (len >= ITEM_MAX) {
        ms_diag_set(d, NULL, 0, opt, "item '%.*s...' is too long", 16, a);
        return -1;
    }
    memcpy(buf, a, len);
    buf[len] = '\0';
    at = strchr(buf, sep);
    if (at == NULL) {
        ms_diag_set(d, NULL, 0, opt, "'%s' lacks '%c' (write e.g. %s)", buf, sep,
                    sep == '=' ? "1g=3" : "3g@4");
        return -1;
    }
    *at = '\0';
    *key = buf;
    *val = at + 1;
    for (b = at; b > buf && is_space(b[-1]); b--)   /* trim the key's end */
        ;
    buf[b - buf] = '\0';
    while (is_space(**val))
        (*val)++;
    return 1;
}

ms_status_t ms_cli_parse_weights(const ms_geom_t *g, const char *opt, const char *list,
                                 double *w, ms_diag_t *d)
{
    const char *p = list;
    bool more = list != NULL && *list != '\0', any = false;
    char buf[ITEM_MAX], *key, *val;
    int k, r;

    for (k = 0; k < ms_geom_nprofiles(g); k++)
        w[k] = 0.0;
    if (!more) {
        ms_diag_set(d, NULL, 0, opt, "empty list (write e.g. 1g=3,2g=1)");
        return MS_EINVAL;
    }
    while ((r = next_item(&p, &more, '=', buf, &key, &val, opt, list, d)) > 0) {
        double v;

        k = ms_geom_profile_find(g, key);
        if (k < 0) {
            ms_diag_set(d, NULL, 0, opt, "unknown or inactive profile '%s'", key);
            return MS_EINVAL;
        }
        if (ms_number_double(val, &v) != MS_OK || v < 0.0 || v > 1e6) {
            ms_diag_set(d, NULL, 0, opt, "weight '%s' for %s is not a number in [0, 1e6]", val,
                        key);
            return MS_ERANGE;
        }
        w[k] = v;
        any = any || v > 0.0;
    }
    if (r < 0)
        return MS_EINVAL;
    if (!any) {
        ms_diag_set(d, NULL, 0, opt, "every weight is 0 in '%s' (one must be > 0)", list);
        return MS_EINVAL;
    }
    return MS_OK;
}

ms_status_t ms_cli_parse_used(const ms_geom_t *g, const char *list, ms_gi_t *gis, int *n,
                              ms_state_t *state, ms_diag_t *d)
{
    const char *p = list != NULL ? list : "";
    bool more = *p != '\0';
    char buf[ITEM_MAX], *key, *val;
    ms_state_t s = ms_geom_empty_state();
    int r;

    *n = 0;
    /* "" is the empty GPU; so is a list of spaces only */
    while (*p == ' ' || *p == '\t')
        p++;
    more = *p != '\0';
    while ((r = next_item(&p, &more, '@', buf, &key, &val, "used", list, d)) > 0) {
        int64_t st;
        int k;
        ms_state_t ns;

        if (*n >= MS_MAX_WIDTH) {
            ms_diag_set(d, NULL, 0, "used", "more than %d instances", MS_MAX_WIDTH);
            return MS_EINVAL;
        }
        k = ms_geom_profile_find(g, key);
        if (k < 0) {
            ms_diag_set(d, NULL, 0, "used", "unknown profile '%s' for %s", key,
                        ms_geom_model(g)->name);
            return MS_EINVAL;
        }
        if (ms_number_int(val, 0, ms_geom_width(g) - 1, &st) != MS_OK) {
            ms_diag_set(d, NULL, 0, "used", "start '%s' is not an integer in [0, %d]", val,
                        ms_geom_width(g) - 1);
            return MS_EINVAL;
        }
        ns = ms_state_place(g, s, k, (int)st);
        if (ns == MS_STATE_NONE) {
            ms_diag_set(d, NULL, 0, "used",
                        "%s@%d is not a legal start or overlaps another instance", key, (int)st);
            return MS_EINVAL;
        }
        s = ns;
        gis[*n].prof = (int8_t)k;
        gis[*n].start = (int8_t)st;
        (*n)++;
    }
    if (r < 0)
        return MS_EINVAL;
    *state = s;
    return MS_OK;
}
