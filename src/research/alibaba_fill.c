/* alibaba_fill.c - FGD's one-pass fill experiment (fgd.md §4) on a MIG
 * cluster, with migsched's policies: shuffle and tune the pod list exactly
 * as src/research/fgd/experiment.c does (same PRNG, same stop test), then place each
 * GPU pod once through ms_sched (the scheduler the simulator and the service
 * use: a pod that does not start at once, after make_room and on_idle, is
 * withdrawn), nothing departing, and log the unallocated capacity against
 * arrived %.
 *
 * The policies get a virtual clock that advances one hour per pod (nothing
 * in the fill depends on time except node-profile's hysteresis, which this
 * keeps from binding). */
#include "migsched/research/alibaba.h"
#include "migsched/research/fgd.h"
#include "migsched/frag.h"
#include "migsched/rng.h"
#include "migsched/sched.h"

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
    ms_sched_t *s;
    int ngpus;
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

/* Sort by name, shuffle, tune: the pod sequence of src/research/fgd/experiment.c. */
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
    const ms_gpu_t *gpu = ms_sched_gpu(f->s, gi, NULL);
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

/* The scheduler's executor: refresh the GPUs each plan touched. */
static ms_status_t on_plan(void *ctx, const ms_sched_plan_t *p)
{
    fill_t *f = ctx;

    for (int i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        gpu_refresh(f, op->gpu);
        if (op->kind == MS_OP_MOVE) {
            f->moves++;
            gpu_refresh(f, op->from_gpu);
        }
    }
    return MS_OK;
}

static void log_point(fill_t *f, double arrived_pct)
{
    long x = lround(arrived_pct);
    double cap_c = (double)f->ngpus * ms_geom_compute(f->g);
    double cap_m = (double)f->ngpus * ms_geom_width(f->g);

    if (x < 0 || x >= MS_ALI_NBINS)
        return;
    f->sum[0][x] += 100.0 - 100.0 * (double)f->tot_busy / cap_c;
    f->sum[1][x] += 100.0 - 100.0 * (double)f->tot_mem / cap_m;
    f->sum[2][x] += 100.0 * (double)f->tot_idle / (double)f->ngpus;
    f->sum[3][x] += f->tot_frag / (double)f->ngpus;
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
    ms_sched_destroy(f->s);
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

/* Nodes of gpus_per_node GPUs (the last may be short), all MIG. */
static ms_status_t make_sched(fill_t *f)
{
    const ms_ali_fill_cfg_t *cfg = f->cfg;
    ms_cluster_spec_t *cs = NULL;
    ms_sched_cfg_t sc;
    ms_status_t st;

    if ((st = ms_cluster_spec_create(&cs)) != MS_OK ||
        (st = ms_cluster_spec_add_gpus(cs, "n", cfg->ngpus, cfg->gpus_per_node, f->g, MS_NODE_MIG,
                                       0)) != MS_OK) {
        ms_cluster_spec_destroy(cs);
        return st;
    }
    ms_sched_cfg_defaults(&sc);
    sc.policy = cfg->policy;
    sc.pcfg = cfg->pcfg;
    sc.pcfg.seed = cfg->seed;
    sc.nodes = ms_cluster_spec_nodes(cs);
    sc.nnodes = ms_cluster_spec_nnodes(cs);
    sc.no_room = !cfg->make_room;
    /* no executor while the policy's setup plans run: every GPU is
     * refreshed once the scheduler exists */
    st = ms_sched_create(&sc, 0.0, &f->s, f->d);
    ms_cluster_spec_destroy(cs);
    if (st == MS_OK) {
        ms_sched_exec_t ex;

        for (int g = 0; g < cfg->ngpus; g++)
            gpu_refresh(f, g);
        ex.ctx = f;
        ex.plan = on_plan;
        ms_sched_set_exec(f->s, &ex);
    }
    return st;
}

ms_status_t ms_ali_fill_run(const ms_ali_pods_t *pods, const ms_geom_t *g,
                            const ms_ali_fill_cfg_t *cfg, ms_ali_curve_t *out,
                            ms_diag_t *d)
{
    fill_t f;
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
    f.ngpus = cfg->ngpus;
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
    for (int i = 0; i < cfg->ngpus; i++) {
        f.idle[i] = true;
        f.frag[i] = f.ft->cost[ms_geom_empty_state()];
        f.tot_frag += f.frag[i];
    }
    f.tot_idle = cfg->ngpus;
    if ((st = make_sched(&f)) != MS_OK)
        goto done;
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
        int k;

        if (p->num_gpu == 0)
            continue;
        out->ngpu_pods++;
        arrived += pod_req(p);
        k = p->num_gpu > 1 ? full : ms_ali_map_profile(g, cfg->mapping, p->gpu_milli);
        if (k >= 0)
            mapped += (double)p->num_gpu * ms_geom_profile(g, k)->cslices / ms_geom_compute(g);
        if (k < 0) {
            out->nrejected++;
            out->nfailed++;
        } else {
            ms_sched_req_t rq;
            ms_sched_job_info_t ji;
            int32_t slot = -1;
            double now = (double)i * FILL_STEP_S;

            memset(&rq, 0, sizeof(rq));
            rq.prof_geom = g;
            rq.prof = k;
            rq.gang = p->num_gpu;
            rq.duration_s = 1.0;
            rq.migratable = true;
            st = ms_sched_submit(f.s, &rq, now, &slot, NULL);
            if (st == MS_ENOFIT) {
                out->nrejected++;
                out->nfailed++;
            } else if (st != MS_OK) {
                goto done;
            } else if ((st = ms_sched_job(f.s, slot, &ji)) != MS_OK) {
                goto done;
            } else if (ji.state == MS_JOB_QUEUED) {
                /* it did not fit: the fill places each pod once */
                out->nfailed++;
                if ((st = ms_sched_cancel(f.s, slot, now)) != MS_OK ||
                    (st = ms_sched_forget(f.s, slot)) != MS_OK)
                    goto done;
            }
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
