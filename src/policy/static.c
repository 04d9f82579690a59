/* static.c - static partitioning: every GPU is cut once, by setup(), into a
 * fixed layout (cfg->static_layout: "4g+2g+1g" for every GPU, or
 * "7g;4g+3g;..." where GPU i gets layout i mod count; NULL = the default
 * cycle of layout.c). A job takes the smallest idle instance that is at
 * least its profile, then the lowest GPU, then the lowest start, or waits.
 * GIs are kept when jobs end; on_finish restores a GPU's layout where it
 * differs (after a gang used the GPU whole, or if the runner destroyed an
 * idle GI). */
#include "policy/policy_int.h"

#include <stdlib.h>

typedef struct stat_pol {
    ms__layouts_t lay;
    bool hostable[MS_MAX_PROFILES];
} stat_pol_t;

ms_status_t ms_policy_layout_check(const ms_geom_t *g, const char *spec, ms_diag_t *diag)
{
    ms__layouts_t *l = malloc(sizeof(*l));
    ms_status_t st;

    if (l == NULL)
        return MS_ENOMEM;
    st = spec == NULL ? ms__layouts_default(g, l) : ms__layouts_parse(g, spec, l, diag);
    free(l);
    return st;
}

static ms_status_t st_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    stat_pol_t *p = calloc(1, sizeof(*p));
    ms_status_t st;
    int i, k, used;

    if (p == NULL)
        return MS_ENOMEM;
    st = cfg->static_layout == NULL ? ms__layouts_default(c->geom, &p->lay)
                                    : ms__layouts_parse(c->geom, cfg->static_layout, &p->lay, NULL);
    if (st != MS_OK) {
        free(p);
        return st;
    }
    used = c->ngpus < p->lay.n ? c->ngpus : p->lay.n;
    for (i = 0; i < used; i++)
        for (k = 0; k < p->lay.l[i].n; k++) {
            int q, pk = p->lay.l[i].gi[k].prof;
            for (q = 0; q < ms_geom_nprofiles(c->geom); q++)
                if (ms_geom_covers(c->geom, pk, q))
                    p->hostable[q] = true;
        }
    *self = p;
    return MS_OK;
}

static void st_destroy(void *self)
{
    free(self);
}

static const ms__layout_t *layout_of(const stat_pol_t *p, int g)
{
    return &p->lay.l[g % p->lay.n];
}

static ms_status_t st_setup(void *self, const ms_cluster_t *c, ms_plan_t *out)
{
    int g, n0 = out->n;
    ms_status_t st;

    for (g = 0; g < c->ngpus; g++)
        if ((st = ms__layout_restore(c, g, layout_of(self, g), out)) != MS_OK) {
            out->n = n0;
            return st;
        }
    return MS_OK;
}

static bool st_can_host(void *self, const ms_cluster_t *c, const ms_job_t *j)
{
    const stat_pol_t *p = self;

    if (j->gang > 1)
        return ms__dyn_can_host(c, j);
    return c->share == MS_SHARE_MIG && j->prof >= 0 && j->prof < ms_geom_nprofiles(c->geom) &&
           p->hostable[j->prof];
}

static ms_status_t st_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                            ms_plan_t *out)
{
    int g, s, i;
    ms_status_t st;

    (void)self;
    if (j->gang > 1)
        return ms_policy_place_gang(c, j, out);
    if ((st = ms__scan_idle(c, j->prof, ms__smallest_key, NULL, &g, &s)) != MS_OK)
        return st;
    i = ms_gpu_find_inst(&c->gpus[g], s);
    return ms_plan_add_start(out, j->idx, g, s, c->gpus[g].inst[i].prof);
}

static ms_status_t st_on_finish(void *self, const ms_cluster_t *c, int g, double now,
                                ms_plan_t *out)
{
    int n0 = out->n;
    ms_status_t st;

    (void)now;
    if ((st = ms__layout_restore(c, g, layout_of(self, g), out)) != MS_OK)
        out->n = n0;
    return st;
}

const ms_policy_ops_t ms_policy_static = {
    .abi = MS_POLICY_ABI,
    .name = "static",
    .help = "static layout per GPU; smallest idle instance >= the job",
    .share = MS_SHARE_MIG,
    .create = st_create,
    .destroy = st_destroy,
    .setup = st_setup,
    .can_host = st_can_host,
    .place = st_place,
    .flags = MS_POLICY_PURE_PLACE,
    .on_finish = st_on_finish,
};
