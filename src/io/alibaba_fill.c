/* alibaba_fill.c - FGD's one-pass fill experiment (fgd.md §4) on a MIG
 * cluster, with migsched's policies: shuffle and tune the pod list exactly
 * as src/fgd/experiment.c does (same PRNG, same stop test), then place each
 * GPU pod once with the policy's hooks and ms_cluster_apply, nothing
 * departing, and log the unallocated capacity against arrived %.
 *
 * The policies get a virtual clock that advances one hour per pod (nothing
 * in the fill depends on time except node-profile's hysteresis, which this
 * keeps from binding). */
#include "migsched/alibaba.h"
#include "migsched/fgd.h"
#include "migsched/frag.h"
#include "migsched/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FILL_STEP_S 3600.0

void ms_ali_fill_cfg_defaults(ms_ali_fill_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    ms_policy_cfg_defaults(&cfg->pcfg);
    cfg->mapping = MS_ALI_MAP_COMPUTE;
    cfg->gpus_per_node = 8;
    cfg->seed = 42;
    cfg->tune = 1.3;
    cfg->make_room = true;
}

typedef struct fill {
    const ms_ali_pods_t *pods;
    const ms_geom_t *g;
    const ms_ali_fill_cfg_t *cfg;
    ms_cluster_t *c;
    void *self;
    ms_plan_t plan;
    ms_frag_table_t *ft;
    size_t *list;
    size_t nlist;
    /* per-GPU contributions and their totals */
    int *busy, *mem;
    bool *idle;
    double *frag;
    long tot_busy, tot_mem, tot_idle;
    double tot_frag;
    /* bins */
    double sum[5][MS_ALI_NBINS];
    size_t tried, failed;
    long cnt[MS_ALI_NBINS];
    long moves;
    ms_diag_t *d;
} fill_t;

static int cmp_name(const void *a, const void *b, const ms_ali_pods_t *p)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(ms_ali_pod_name(p, x), ms_ali_pod_name(p, y));

    return c != 0 ? c : (x < y ? -1 : x > y);
}

/* qsort has no context argument in C17: a small merge sort instead. */
static void sort_by_name(size_t *v, size_t *tmp, size_t n, const ms_ali_pods_t *p)
{
    size_t h, i, j, k;

    if (n < 2)
        return;
    h = n / 2;
    sort_by_name(v, tmp, h, p);
    sort_by_name(v + h, tmp, n - h, p);
    for (i = 0, j = h, k = 0; i < h && j < n;)
        tmp[k++] = cmp_name(&v[j], &v[i], p) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

static int64_t pod_req(const ms_ali_pod_t *p)
{
    return (int64_t)p->num_gpu * p->gpu_milli;
}

static void ali_req(const void *pods, size_t i, int *num_gpu, int *gpu_milli)
{
    const ms_ali_pod_t *p = (const ms_ali_pod_t *)pods + i;

    *num_gpu = p->num_gpu;
    *gpu_milli = p->gpu_milli;
}

/* Sort by name, shuffle, tune: the pod sequence of src/fgd/experiment.c. */
static ms_status_t build_list(fill_t *f)
{
    const ms_ali_pods_t *pods = f->pods;
    size_t cap = pods->n * 2 + 16, *tmp;
    double target = f->cfg->tune * (double)f->cfg->ngpus * 1000.0;
    int64_t total = 0;
    ms_rng_t rng;

    f->list = malloc(cap * sizeof(*f->list));
    tmp = malloc((pods->n + 1) * sizeof(*tmp));
    if (f->list == NULL || tmp == NULL) {
        free(tmp);
        return MS_ENOMEM;
    }
    for (size_t i = 0; i < pods->n; i++)
        f->list[i] = i;
    sort_by_name(f->list, tmp, pods->n, pods);
    free(tmp);
    for (size_t i = 0; i < pods->n; i++)
        total += pod_req(&pods->v[f->list[i]]);
    f->nlist = pods->n;
    ms_rng_seed(&rng, f->cfg->seed);
    return ms_fgd_shuffle_tune(&rng, &f->list, &f->nlist, &cap, pods->v, pods->n, ali_req, total,
                               target, f->cfg->tune > 0);
}

static void gpu_refresh(fill_t *f, int gi)
{
    const ms_gpu_t *gpu = &f->c->gpus[gi];
    int mem = 0;
    bool idle;
    double fc;

    for (int i = 0; i < gpu->ninst; i++)
        if (gpu->inst[i].job >= 0 && gpu->inst[i].prof >= 0)
            mem += ms_geom_profile(f->g, gpu->inst[i].prof)->msize;
    idle = ms_gpu_running(gpu) == 0;
    fc = f->ft->cost[gpu->state];
    f->tot_busy += (long)gpu->busy - f->busy[gi];
    f->tot_mem += (long)mem - f->mem[gi];
    f->tot_idle += (long)idle - (long)f->idle[gi];
    f->tot_frag += fc - f->frag[gi];
    f->busy[gi] = gpu->busy;
    f->mem[gi] = mem;
    f->idle[gi] = idle;
    f->frag[gi] = fc;
}

/* Apply the plan and refresh the GPUs it touched. */
static ms_status_t apply(fill_t *f, const char *hook)
{
    int failed = -1;
    ms_status_t st = ms_cluster_apply(f->c, &f->plan, &failed);

    if (st != MS_OK) {
        ms_diag_set(f->d, NULL, 0, "policy", "policy %s: %s plan op %d does not apply: %s",
                    f->cfg->policy->name, hook, failed, ms_strerror(st));
        return st;
    }
    for (int i = 0; i < f->plan.n; i++) {
        const ms_op_t *op = &f->plan.ops[i];

        if (op->gpu >= 0 && op->gpu < f->c->ngpus)
            gpu_refresh(f, op->gpu);
        if (op->kind == MS_OP_MOVE) {
            f->moves++;
            if (op->from_gpu >= 0 && op->from_gpu < f->c->ngpus)
                gpu_refresh(f, op->from_gpu);
        }
    }
    ms_plan_clear(&f->plan);
    return MS_OK;
}

/* place and apply; *placed false on MS_ENOFIT. */
static ms_status_t attempt(fill_t *f, const ms_job_t *j, bool *placed)
{
    ms_status_t st;

    ms_plan_clear(&f->plan);
    st = f->cfg->policy->place(f->self, f->c, j, &f->plan);
    if (st == MS_ENOFIT) {
        ms_plan_clear(&f->plan);
        return MS_OK;
    }
    if (st != MS_OK) {
        ms_diag_set(f->d, NULL, 0, "policy", "policy %s: place failed: %s",
                    f->cfg->policy->name, ms_strerror(st));
        return st;
    }
    *placed = true;
    return apply(f, "place");
}

/* Apply a make_room/on_idle answer; *acted true if it changed anything. */
static ms_status_t helped(fill_t *f, ms_status_t st, const char *hook, bool *acted)
{
    *acted = false;
    if (st == MS_ENOFIT || (st == MS_OK && f->plan.n == 0)) {
        ms_plan_clear(&f->plan);
        return MS_OK;
    }
    if (st != MS_OK) {
        ms_diag_set(f->d, NULL, 0, "policy", "policy %s: %s failed: %s", f->cfg->policy->name,
                    hook, ms_strerror(st));
        return st;
    }
    *acted = true;
    return apply(f, hook);
}

/* place; on a miss make_room then place again; then on_idle (told that this
 * job waits) then place again. As the simulator does for a waiting head. */
static ms_status_t try_place(fill_t *f, const ms_job_t *j, double now, bool *placed)
{
    const ms_policy_ops_t *pol = f->cfg->policy;
    ms_status_t st;
    bool acted;

    *placed = false;
    if ((st = attempt(f, j, placed)) != MS_OK || *placed || !f->cfg->make_room)
        return st;
    if (pol->make_room != NULL) {
        ms_plan_clear(&f->plan);
        st = pol->make_room(f->self, f->c, j, now, &f->plan);
        if ((st = helped(f, st, "make_room", &acted)) != MS_OK)
            return st;
        if (acted && ((st = attempt(f, j, placed)) != MS_OK || *placed))
            return st;
    }
    if (pol->on_idle != NULL) {
        int nwait[MS_MAX_PROFILES];

        memset(nwait, 0, sizeof(nwait));
        nwait[j->prof] = 1;
        ms_plan_clear(&f->plan);
        st = pol->on_idle(f->self, f->c, nwait, now, &f->plan);
        if ((st = helped(f, st, "on_idle", &acted)) != MS_OK)
            return st;
        if (acted)
            return attempt(f, j, placed);
    }
    return MS_OK;
}

static void log_point(fill_t *f, double arrived_pct)
{
    long x = lround(arrived_pct);
    double cap_c = (double)f->c->ngpus * ms_geom_compute(f->g);
    double cap_m = (double)f->c->ngpus * ms_geom_width(f->g);

    if (x < 0 || x >= MS_ALI_NBINS)
        return;
    f->sum[0][x] += 100.0 - 100.0 * (double)f->tot_busy / cap_c;
    f->sum[1][x] += 100.0 - 100.0 * (double)f->tot_mem / cap_m;
    f->sum[2][x] += 100.0 * (double)f->tot_idle / (double)f->c->ngpus;
    f->sum[3][x] += f->tot_frag / (double)f->c->ngpus;
    f->sum[4][x] += f->tried ? 100.0 * (double)f->failed / (double)f->tried : 0.0;
    f->cnt[x]++;
}

static void finish_bins(const fill_t *f, ms_ali_curve_t *out)
{
    double *dst[5] = { out->unalloc_compute_pct, out->unalloc_mem_pct, out->unalloc_gpu_pct,
                       out->fragcost, out->failed_pct };

    for (int x = 0; x < MS_ALI_NBINS; x++) {
        int b = x;

        if (f->cnt[b] == 0 && x > 0 && f->cnt[x - 1] > 0)
            b = x - 1;
        else if (f->cnt[b] == 0 && x + 1 < MS_ALI_NBINS && f->cnt[x + 1] > 0)
            b = x + 1;
        out->have[x] = f->cnt[b] > 0;
        for (int m = 0; m < 5; m++)
            dst[m][x] = out->have[x] ? f->sum[m][b] / (double)f->cnt[b] : 0.0;
    }
}

static void fill_free(fill_t *f)
{
    if (f->self != NULL)
        f->cfg->policy->destroy(f->self);
    ms_cluster_destroy(f->c);
    ms_plan_free(&f->plan);
    free(f->ft);
    free(f->list);
    free(f->busy);
    free(f->mem);
    free(f->idle);
    free(f->frag);
}

static ms_status_t check_cfg(const ms_ali_fill_cfg_t *cfg, ms_diag_t *d)
{
    const ms_policy_ops_t *p = cfg->policy;

    if (p == NULL || p->create == NULL || p->destroy == NULL || p->place == NULL) {
        ms_diag_set(d, NULL, 0, "policy", "a policy with create, destroy and place is required");
        return MS_EINVAL;
    }
    if (p->abi != MS_POLICY_ABI) {
        ms_diag_set(d, NULL, 0, "policy", "policy %s has ABI %d, expected %d", p->name, p->abi,
                    MS_POLICY_ABI);
        return MS_EINVAL;
    }
    if (p->share != MS_SHARE_MIG) {
        ms_diag_set(d, NULL, 0, "policy", "policy %s does not partition with MIG", p->name);
        return MS_EINVAL;
    }
    if (cfg->ngpus < 1 || cfg->gpus_per_node < 1) {
        ms_diag_set(d, NULL, 0, "gpus", "ngpus and gpus_per_node must be >= 1");
        return MS_EINVAL;
    }
    if (!isfinite(cfg->tune) || cfg->tune > 100.0) {
        ms_diag_set(d, NULL, 0, "tune", "tune must be a finite number <= 100");
        return MS_EINVAL;
    }
    return MS_OK;
}

ms_status_t ms_ali_fill_run(const ms_ali_pods_t *pods, const ms_geom_t *g,
                            const ms_ali_fill_cfg_t *cfg, ms_ali_curve_t *out,
                            ms_diag_t *d)
{
    fill_t f;
    ms_cluster_cfg_t cc;
    ms_policy_cfg_t pcfg;
    ms_status_t st;
    int64_t arrived = 0;
    double capacity, mapped = 0;
    int full;

    if (pods == NULL || g == NULL || cfg == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    if ((st = check_cfg(cfg, d)) != MS_OK)
        return st;
    if ((full = ms_ali_full_profile(g)) < 0) {
        ms_diag_set(d, NULL, 0, "profiles", "no full-size profile is active");
        return MS_EINVAL;
    }
    memset(&f, 0, sizeof(f));
    f.pods = pods;
    f.g = g;
    f.cfg = cfg;
    f.d = d;
    ms_plan_init(&f.plan);
    memset(&cc, 0, sizeof(cc));
    cc.geom = g;
    cc.ngpus = cfg->ngpus;
    cc.gpus_per_node = cfg->gpus_per_node;
    cc.share = MS_SHARE_MIG;
    cc.index_mode = MS_INDEX_BUCKET;
    f.ft = malloc(sizeof(*f.ft));
    f.busy = calloc((size_t)cfg->ngpus, sizeof(*f.busy));
    f.mem = calloc((size_t)cfg->ngpus, sizeof(*f.mem));
    f.idle = calloc((size_t)cfg->ngpus, sizeof(*f.idle));
    f.frag = calloc((size_t)cfg->ngpus, sizeof(*f.frag));
    if (f.ft == NULL || f.busy == NULL || f.mem == NULL || f.idle == NULL || f.frag == NULL) {
        st = MS_ENOMEM;
        goto done;
    }
    ms_frag_table_fill(g, NULL, f.ft);
    if ((st = ms_cluster_create(&cc, &f.c)) != MS_OK) {
        ms_diag_set(d, NULL, 0, "gpus", "cannot create the cluster: %s", ms_strerror(st));
        goto done;
    }
    for (int i = 0; i < cfg->ngpus; i++) {
        f.idle[i] = true;
        f.frag[i] = f.ft->cost[f.c->gpus[i].state];
        f.tot_frag += f.frag[i];
    }
    f.tot_idle = cfg->ngpus;
    pcfg = cfg->pcfg;
    pcfg.seed = cfg->seed;
    if ((st = cfg->policy->create(&pcfg, f.c, &f.self)) != MS_OK) {
        f.self = NULL;
        ms_diag_set(d, NULL, 0, "policy", "policy %s: create failed: %s", cfg->policy->name,
                    ms_strerror(st));
        goto done;
    }
    if (cfg->policy->setup != NULL) {
        if ((st = cfg->policy->setup(f.self, f.c, &f.plan)) != MS_OK) {
            ms_diag_set(d, NULL, 0, "policy", "policy %s: setup failed: %s", cfg->policy->name,
                        ms_strerror(st));
            goto done;
        }
        if ((st = apply(&f, "setup")) != MS_OK)
            goto done;
    }
    if ((st = build_list(&f)) == MS_EINVAL)
        ms_diag_set(d, NULL, 0, "pods", "the pod list has no GPU demand (every pod asks for "
                                        "0 GPUs): there is nothing to fill the cluster with");
    else if (st == MS_ERANGE)
        ms_diag_set(d, NULL, 0, "pods", "the pod list is far too small to fill %d GPUs "
                                        "(more than %zu pods after tuning)", cfg->ngpus,
                    MS_FGD_TUNE_MAX(pods->n));
    if (st != MS_OK)
        goto done;
    capacity = (double)cfg->ngpus * 1000.0;
    out->npods = f.nlist;
    log_point(&f, 0.0);
    for (size_t i = 0; i < f.nlist; i++) {
        const ms_ali_pod_t *p = &pods->v[f.list[i]];
        ms_job_t j;
        bool ok, placed = false;
        int k;

        if (p->num_gpu == 0)
            continue;
        out->ngpu_pods++;
        arrived += pod_req(p);
        k = p->num_gpu > 1 ? full : ms_ali_map_profile(g, cfg->mapping, p->gpu_milli);
        memset(&j, 0, sizeof(j));
        j.idx = (int32_t)i;
        j.prof = (int8_t)(k >= 0 ? k : 0);
        j.gang = (int16_t)p->num_gpu;
        j.arrival = (double)i * FILL_STEP_S;
        j.duration = 1.0;
        ok = k >= 0 && (j.gang <= 1 || j.gang <= cfg->gpus_per_node);
        if (k >= 0)
            mapped += (double)p->num_gpu * ms_geom_profile(g, k)->cslices / ms_geom_compute(g);
        if (ok && cfg->policy->can_host != NULL)
            ok = cfg->policy->can_host(f.self, f.c, &j);
        if (!ok) {
            out->nrejected++;
            out->nfailed++;
        } else {
            if (cfg->policy->on_arrival != NULL)
                cfg->policy->on_arrival(f.self, &j);
            if ((st = try_place(&f, &j, j.arrival, &placed)) != MS_OK)
                goto done;
            if (!placed)
                out->nfailed++;
        }
        f.tried = out->ngpu_pods;
        f.failed = out->nfailed;
        log_point(&f, 100.0 * (double)arrived / capacity);
    }
    finish_bins(&f, out);
    out->moves = f.moves;
    out->arrived_pct = 100.0 * (double)arrived / capacity;
    out->mapped_pct = 100.0 * mapped / (double)cfg->ngpus;
    out->final_unalloc_compute_pct =
        100.0 - 100.0 * (double)f.tot_busy / ((double)cfg->ngpus * ms_geom_compute(g));
    out->final_unalloc_mem_pct =
        100.0 - 100.0 * (double)f.tot_mem / ((double)cfg->ngpus * ms_geom_width(g));
    out->final_unalloc_gpu_pct = 100.0 * (double)f.tot_idle / (double)cfg->ngpus;
    out->final_fragcost = f.tot_frag / (double)cfg->ngpus;
    st = MS_OK;
done:
    fill_free(&f);
    return st;
}
