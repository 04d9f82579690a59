/* layout.c - fixed per-GPU layouts: parsing "4g+2g+1g" / "7g;4g+3g",
 * giving starts, the default cycle, and restoring a GPU to its layout. */
#include "policy/policy_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The default cycle for models whose profile set has these generic names
 * (the 8-slice family). Each layout is maximal (uses all 7 compute slices)
 * and each classic profile is the largest instance of one of them, so four
 * GPUs host every profile and the mix leans to small instances:
 * 7g x1, 4g x1, 3g x2, 2g x3, 1g x5 per four GPUs. */
static const char default_cycle[] = "7g;4g+3g;3g+2g+1g+1g;2g+2g+1g+1g+1g";

/* Backtracking over ascending legal starts, largest profile first. */
static bool assign_rec(const ms_geom_t *g, const int *profs, int n, int i, ms_state_t s,
                       ms_gi_t *gis)
{
    uint16_t fit;
    int st;

    if (i == n)
        return true;
    fit = ms_state_fit(g, s, profs[i]);
    for (st = 0; st < ms_geom_width(g); st++) {
        ms_state_t ns;
        if (!((fit >> st) & 1u))
            continue;
        ns = ms_state_place(g, s, profs[i], st);
        if (ns == MS_STATE_NONE)
            continue;
        gis[i].prof = (int8_t)profs[i];
        gis[i].start = (int8_t)st;
        if (assign_rec(g, profs, n, i + 1, ns, gis))
            return true;
    }
    return false;
}

static int gi_by_start(const void *a, const void *b)
{
    return ((const ms_gi_t *)a)->start - ((const ms_gi_t *)b)->start;
}

ms_status_t ms__layout_assign(const ms_geom_t *g, const int *profs, int n,
                              ms__layout_t *out)
{
    int sorted[MS_MAX_INST] = {0}, i, j;
    ms_gi_t gis[MS_MAX_INST] = {{0, 0}};

    if (n < 0 || n > MS_MAX_INST)
        return MS_ENOFIT;
    for (i = 0; i < n; i++) {
        if (profs[i] < 0 || profs[i] >= ms_geom_nprofiles(g))
            return MS_EINVAL;
        sorted[i] = profs[i];
    }
    /* largest first (active profiles are in ascending size) */
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && sorted[j - 1] < sorted[j]; j--) {
            int t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    if (!assign_rec(g, sorted, n, 0, ms_geom_empty_state(), gis))
        return MS_ENOFIT;
    if (n > 0)
        qsort(gis, (size_t)n, sizeof(gis[0]), gi_by_start);
    out->n = n;
    if (n > 0)
        memcpy(out->gi, gis, (size_t)n * sizeof(gis[0]));
    return MS_OK;
}

/* One GPU's layout from [b, e): profile names separated by '+'. */
static ms_status_t parse_one(const ms_geom_t *g, const char *b, const char *e,
                             ms__layout_t *out, ms_diag_t *diag)
{
    int profs[MS_MAX_INST], n = 0;
    char name[64];
    ms_status_t st;

    while (b < e) {
        const char *t = b, *te;
        size_t len;
        int k;

        while (t < e && *t != '+')
            t++;
        te = t;
        while (b < te && isspace((unsigned char)*b))
            b++;
        while (te > b && isspace((unsigned char)te[-1]))
            te--;
        len = (size_t)(te - b);
        if (len == 0 || len >= sizeof(name)) {
            ms_diag_set(diag, NULL, 0, "static_layout", "empty or overlong profile in layout");
            return MS_EPARSE;
        }
        memcpy(name, b, len);
        name[len] = '\0';
        k = ms_geom_profile_find(g, name);
        if (k < 0) {
            ms_diag_set(diag, NULL, 0, "static_layout", "unknown or inactive profile '%s'", name);
            return MS_EPARSE;
        }
        if (n == MS_MAX_INST) {
            ms_diag_set(diag, NULL, 0, "static_layout", "too many instances in one layout");
            return MS_EINVAL;
        }
        profs[n++] = k;
        b = t < e ? t + 1 : t;
        if (t < e && b == e) {   /* "7g+": an empty last profile, as "+7g" is a first */
            ms_diag_set(diag, NULL, 0, "static_layout", "empty or overlong profile in layout");
            return MS_EPARSE;
        }
    }
    if (n == 0) {
        ms_diag_set(diag, NULL, 0, "static_layout", "empty layout");
        return MS_EPARSE;
    }
    st = ms__layout_assign(g, profs, n, out);
    return st == MS_ENOFIT ? MS_EINVAL : st;
}

ms_status_t ms__layouts_parse(const ms_geom_t *g, const char *spec, ms__layouts_t *out,
                              ms_diag_t *diag)
{
    const char *b = spec;

    out->n = 0;
    if (spec == NULL || *spec == '\0') {
        ms_diag_set(diag, NULL, 0, "static_layout", "empty layout");
        return MS_EPARSE;
    }
    for (;;) {
        const char *e = strchr(b, ';');
        ms_status_t st;

        if (e == NULL)
            e = b + strlen(b);
        if (out->n == MS__MAX_LAYOUTS) {
            ms_diag_set(diag, NULL, 0, "static_layout", "more than %d layouts", MS__MAX_LAYOUTS);
            return MS_EINVAL;
        }
        st = parse_one(g, b, e, &out->l[out->n], diag);
        if (st == MS_EINVAL && diag != NULL && diag->msg[0] == '\0')
            ms_diag_set(diag, NULL, 0, "static_layout",
                        "layout '%.*s' cannot be placed on a %s", (int)(e - b), b,
                        ms_geom_model(g)->name);
        if (st != MS_OK)
            return st;
        out->n++;
        if (*e == '\0')
            return MS_OK;
        b = e + 1;
    }
}

/* Generic default for other models: for each profile, largest first, put
 * it at its lowest start and fill the rest greedily with the largest
 * strictly smaller profile that still fits; the smallest profile, having
 * none smaller, fills the GPU with itself (one 1g alone left three of an
 * A30's four slices to nothing). Every layout is maximal. */
static ms_status_t generic_default(const ms_geom_t *g, ms__layouts_t *out)
{
    int np = ms_geom_nprofiles(g), k, q;

    out->n = 0;
    for (k = np - 1; k >= 0 && out->n < MS__MAX_LAYOUTS; k--) {
        ms__layout_t *l = &out->l[out->n];
        ms_state_t s = ms_state_place(g, ms_geom_empty_state(), k, ms_geom_first_start(g, k));
        int profs[MS_MAX_INST], n = 0, i, dup = 0;

        if (s == MS_STATE_NONE)
            continue;
        profs[n++] = k;
        for (q = k > 0 ? k - 1 : 0; q >= 0 && n < MS_MAX_INST;) {
            uint16_t fit = ms_state_fit(g, s, q);
            int st;
            if (fit == 0) {
                q--;
                continue;
            }
            for (st = 0; !((fit >> st) & 1u); st++)
                ;
            s = ms_state_place(g, s, q, st);
            profs[n++] = q;
        }
        if (ms__layout_assign(g, profs, n, l) != MS_OK)
            continue;
        for (i = 0; i < out->n; i++)
            if (out->l[i].n == l->n && memcmp(out->l[i].gi, l->gi, (size_t)l->n * sizeof(l->gi[0])) == 0)
                dup = 1;
        if (!dup)
            out->n++;
    }
    return out->n > 0 ? MS_OK : MS_ENOTSUP;
}

ms_status_t ms__layouts_default(const ms_geom_t *g, ms__layouts_t *out)
{
    if (ms__layouts_parse(g, default_cycle, out, NULL) == MS_OK)
        return MS_OK;
    return generic_default(g, out);
}

bool ms__layout_matches(const ms_gpu_t *gpu, const ms__layout_t *l)
{
    int i;

    if (gpu->ninst != l->n)
        return false;
    for (i = 0; i < l->n; i++)
        if (gpu->inst[i].prof != l->gi[i].prof || gpu->inst[i].start != l->gi[i].start)
            return false;
    return true;
}

ms_status_t ms__layout_restore(const ms_cluster_t *c, int gi, const ms__layout_t *l,
                               ms_plan_t *out)
{
    const ms_geom_t *g = c->geom;
    const ms_gpu_t *gp = &c->gpus[gi];
    ms_state_t s = gp->state;
    ms_status_t st;
    int i, k;

    for (i = 0; i < gp->ninst; i++) {
        const ms_inst_t *in = &gp->inst[i];
        int keep = 0;
        for (k = 0; k < l->n; k++)
            keep |= l->gi[k].prof == in->prof && l->gi[k].start == in->start;
        if (keep || in->job >= 0)
            continue;
        if ((st = ms_plan_add_destroy(out, gi, in->start)) != MS_OK)
            return st;
        s = ms_state_remove(g, s, in->prof, in->start);
    }
    for (k = 0; k < l->n; k++) {
        ms_state_t ns;
        i = ms_gpu_find_inst(gp, l->gi[k].start);
        if (i >= 0 && gp->inst[i].prof == l->gi[k].prof)
            continue;
        ns = ms_state_place(g, s, l->gi[k].prof, l->gi[k].start);
        if (ns == MS_STATE_NONE)
            continue;   /* a running job still holds those slices */
        if ((st = ms_plan_add_create(out, gi, l->gi[k].prof, l->gi[k].start)) != MS_OK)
            return st;
        s = ms_state_place(g, s, l->gi[k].prof, l->gi[k].start);
    }
    return MS_OK;
}
