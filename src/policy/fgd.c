/* fgd.c - FGD (Weng et al., ATC'23) adapted to MIG, on dynamic GIs.
 *
 * The fragment of a GPU state is ms_frag_fgd: the free compute slices each
 * profile cannot use, weighted by that profile's share of the recent demand.
 * The demand is the profile mix of the last demand_window arrivals (a ring
 * filled in on_arrival). A job goes where the fragment grows least (FGD's
 * "steepest descent"), ties to the lowest GPU and start.
 *
 * The ranks depend on the weights, so they are rebuilt, deterministically,
 * from the mix as it is at every REBUILD_EVERY-th arrival if it has changed
 * since the last build (the weights are taken at that arrival, the ranks
 * built at the next placement; until issue 25 both happened at the first
 * placement after that arrival, which in the simulator is the same moment:
 * the arrival's own pass places first). Before any arrival the weights are
 * uniform. place() has no other state: a queue pass need not offer it a
 * job again before an op frees capacity or version() changes.
 */
#include "policy/policy_int.h"

#include <stdlib.h>
#include <string.h>

#define REBUILD_EVERY 32

typedef struct fgd {
    ms__rankpol_t rp;
    const ms_geom_t *geom;
    int window;                 /* ring capacity */
    int8_t *ring;               /* [window] profiles of recent arrivals */
    int head, filled;
    long arrivals;
    int count[MS_MAX_PROFILES]; /* profiles in the ring */
    int built[MS_MAX_PROFILES]; /* counts the ranks were built with */
    bool dirty;                 /* the ranks lag the weights */
    uint64_t ver;               /* weights taken */
    double w[MS_MAX_PROFILES];
    double frag[MS_MAX_STATES]; /* ms_frag_fgd per state for w */
} fgd_t;

static uint64_t fgd_key(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    const fgd_t *f = ctx;
    ms_state_t a = ms_state_place(g, s, k, st);

    return ms_rank_score_key(f->frag[a] - f->frag[s]);
}

/* Take the weights of the current mix (the ranks follow at the next
 * placement). */
static void fgd_weigh(fgd_t *f)
{
    int np = ms_geom_nprofiles(f->geom), k, s, total = 0;

    for (k = 0; k < np; k++)
        total += f->count[k];
    for (k = 0; k < np; k++)
        f->w[k] = total > 0 ? (double)f->count[k] / (double)total : 1.0 / (double)np;
    for (s = 0; s < ms_geom_nstates(f->geom); s++)
        f->frag[s] = ms_frag_fgd(f->geom, (ms_state_t)s, f->w);
    memcpy(f->built, f->count, sizeof(f->built));
    f->ver++;
    f->dirty = true;
}

static ms_status_t fgd_build(fgd_t *f)
{
    ms_status_t st = ms__rankpol_build(&f->rp, f->geom, fgd_key, f);

    if (st == MS_OK)
        f->dirty = false;
    return st;
}

static void fgd_destroy(void *self)
{
    fgd_t *f = self;

    if (f == NULL)
        return;
    ms__rankpol_fini(&f->rp);
    free(f->ring);
    free(f);
}

static ms_status_t fgd_create(const ms_policy_cfg_t *cfg, const ms_cluster_t *c, void **self)
{
    fgd_t *f = calloc(1, sizeof(*f));
    ms_status_t st;

    if (f == NULL)
        return MS_ENOMEM;
    f->geom = c->geom;
    f->window = cfg->demand_window > 0 ? cfg->demand_window : 256;
    f->ring = malloc((size_t)f->window * sizeof(*f->ring));
    if (f->ring == NULL) {
        fgd_destroy(f);
        return MS_ENOMEM;
    }
    fgd_weigh(f);
    if ((st = fgd_build(f)) != MS_OK) {
        fgd_destroy(f);
        return st;
    }
    *self = f;
    return MS_OK;
}

static void fgd_on_arrival(void *self, const ms_job_t *j)
{
    fgd_t *f = self;

    if (j->prof < 0 || j->prof >= ms_geom_nprofiles(f->geom))
        return;
    if (f->filled == f->window)
        f->count[f->ring[f->head]]--;
    else
        f->filled++;
    f->ring[f->head] = j->prof;
    f->count[j->prof]++;
    f->head = (f->head + 1) % f->window;
    if (++f->arrivals % REBUILD_EVERY == 0 &&
        memcmp(f->count, f->built, sizeof(f->count)) != 0)
        fgd_weigh(f);
}

static uint64_t fgd_version(void *self)
{
    return ((const fgd_t *)self)->ver;
}

static ms_status_t fgd_place(void *self, const ms_cluster_t *c, const ms_job_t *j,
                             ms_plan_t *out)
{
    fgd_t *f = self;
    ms_status_t st;

    if (f->dirty && (st = fgd_build(f)) != MS_OK)
        return st;
    return ms__rankpol_place(&f->rp, c, j, out);
}

const ms_policy_ops_t ms_policy_fgd = {
    .abi = MS_POLICY_ABI,
    .name = "fgd",
    .help = "dynamic GIs; least growth of the demand-weighted FGD fragment",
    .share = MS_SHARE_MIG,
    .create = fgd_create,
    .destroy = fgd_destroy,
    .can_host = ms__dyn_can_host_hook,
    .on_arrival = fgd_on_arrival,
    .place = fgd_place,
    .flags = MS_POLICY_PURE_PLACE,
    .version = fgd_version,
    .on_finish = ms__dyn_on_finish,
};
