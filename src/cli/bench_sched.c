/* bench_sched.c - `migsched bench`: whole decisions through ms_sched on a
 * heterogeneous cluster, as the service and the extender make them.
 *
 * The cluster: N GPUs in nodes of 8, of three models and two sharing
 * modes (40% A100-40GB MIG, 40% H100-80GB MIG, 20% A30-24GB time-sliced 4
 * ways), filled to the target occupancy by submits with random requests
 * (generic sizes and memory in GB). Each measured step ends random running
 * jobs while at or above the target (ms_sched_finished, untimed), then
 * times one ms_sched_submit: request resolution, the class, the scheduling
 * pass, the policy's place and the plan applied. A submit that does not
 * start its job (the job would queue) is timed too, then cancelled. The
 * reservation case times ms_sched_reserve (any node) followed by
 * ms_sched_bind, then ends the job.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "migsched/sched.h"

#define MEASURE_BUDGET_NS 3000000000LL

static const char *const REQ_SIZES[] = { "1g", "2g", "3g", "4g", "7g" };

typedef struct sb {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
    uint64_t rng;
    double now;
    int32_t *run;            /* running slots */
    long nrun, caprun;
    long busy_jobs;
} sb_t;

static uint64_t sb_next(sb_t *b)   /* splitmix64 */
{
    uint64_t z = (b->rng += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void sb_free(sb_t *b)
{
    ms_sched_destroy(b->s);
    ms_cluster_spec_destroy(b->cs);
    free(b->run);
    memset(b, 0, sizeof(*b));
}

static ms_status_t sb_create(sb_t *b, const ms_policy_ops_t *pol, bool no_mig, long ngpus,
                             uint64_t seed)
{
    ms_sched_cfg_t cfg;
    ms_diag_t d;
    long nodes = ngpus / 8 > 0 ? ngpus / 8 : 1, i;
    ms_status_t st;

    memset(b, 0, sizeof(*b));
    b->rng = seed;
    if ((st = ms_cluster_spec_create(&b->cs)) != MS_OK)
        return st;
    for (i = 0; i < nodes && st == MS_OK; i++) {
        char spec[64];
        long r = i % 5;

        snprintf(spec, sizeof(spec), "n%ld=%dx%s", i, ngpus < 8 ? (int)ngpus : 8,
                 r < 2 ? "A100-40GB" : r < 4 ? "H100-80GB" : "A30-24GB:timeslice=4");
        st = ms_cluster_spec_add(b->cs, spec, 0, &d);
    }
    if (st != MS_OK)
        return st;
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = pol;
    if (no_mig)
        cfg.pcfg.migration = false;
    cfg.nodes = ms_cluster_spec_nodes(b->cs);
    cfg.nnodes = ms_cluster_spec_nnodes(b->cs);
    return ms_sched_create(&cfg, 0.0, &b->s, &d);
}

static void sb_req(sb_t *b, ms_sched_req_t *q)
{
    memset(q, 0, sizeof(*q));
    if (sb_next(b) % 4 == 0)
        q->mem_gb = (double)(5u << (sb_next(b) % 3));
    else
        q->profile = REQ_SIZES[sb_next(b) % 5];
    q->migratable = true;
}

static ms_status_t sb_track(sb_t *b, int32_t slot)
{
    if (b->nrun == b->caprun) {
        long cap = b->caprun ? b->caprun * 2 : 4096;
        int32_t *v = realloc(b->run, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return MS_ENOMEM;
        b->run = v;
        b->caprun = cap;
    }
    b->run[b->nrun++] = slot;
    return MS_OK;
}

/* Submit one job; a job that does not start now is cancelled (its decision
 * was timed). *ns receives the submit's time. */
static ms_status_t sb_arrive(sb_t *b, int64_t *ns, bool *started)
{
    ms_sched_req_t q;
    ms_sched_job_info_t ji;
    int32_t slot = -1;
    int64_t t0, t1;
    ms_status_t st;

    sb_req(b, &q);
    b->now += 0.001;
    t0 = ms__bench_now_ns();
    st = ms_sched_submit(b->s, &q, b->now, &slot, NULL);
    t1 = ms__bench_now_ns();
    if (ns != NULL)
        *ns = t1 - t0;
    *started = false;
    if (st == MS_ENOFIT)
        return MS_OK;
    if (st != MS_OK || (st = ms_sched_job(b->s, slot, &ji)) != MS_OK)
        return st;
    if (ji.state == MS_JOB_QUEUED) {
        if ((st = ms_sched_cancel(b->s, slot, b->now)) != MS_OK)
            return st;
        return ms_sched_forget(b->s, slot);
    }
    *started = true;
    return sb_track(b, slot);
}

static ms_status_t sb_depart(sb_t *b)
{
    long r;
    int32_t slot;
    ms_status_t st;

    if (b->nrun == 0)
        return MS_OK;
    r = (long)(sb_next(b) % (uint64_t)b->nrun);
    slot = b->run[r];
    b->run[r] = b->run[--b->nrun];
    b->now += 0.001;
    if ((st = ms_sched_finished(b->s, slot, b->now)) != MS_OK)
        return st;
    return ms_sched_forget(b->s, slot);
}

ms_status_t ms__bench_sched(const bopts_t *o, const ms_policy_ops_t *pol, bool no_mig,
                            long ngpus, long iters, sched_res_t *res)
{
    sb_t b;
    int64_t *lat = NULL, *rl = NULL, tstart;
    long target = (long)(o->occupancy * (double)ngpus * 3.0), i, n = 0, nr = 0, nofit = 0;
    ms_status_t st;
    bool started;

    /* occupancy in jobs: about 3 running jobs per GPU at 100% (a rough
     * target: the mix averages 2-3 compute slices of 4-7) */
    memset(res, 0, sizeof(*res));
    snprintf(res->policy, sizeof(res->policy), "%s%s", pol->name, no_mig ? "-nomig" : "");
    res->ngpus = ngpus;
    lat = malloc((size_t)iters * sizeof(*lat));
    rl = malloc((size_t)iters * sizeof(*rl));
    if (lat == NULL || rl == NULL) {
        free(lat);
        free(rl);
        return MS_ENOMEM;
    }
    st = sb_create(&b, pol, no_mig, ngpus, o->seed * 7919u + (uint64_t)ngpus);
    for (i = 0; st == MS_OK && b.nrun < target && i < target * 4; i++)
        st = sb_arrive(&b, NULL, &started);
    tstart = ms__bench_now_ns();
    for (i = 0; st == MS_OK && i < iters; i++) {
        while (st == MS_OK && b.nrun >= target)
            st = sb_depart(&b);
        if (st != MS_OK)
            break;
        st = sb_arrive(&b, &lat[n++], &started);
        nofit += !started;
        if (i >= 200 && ms__bench_now_ns() - tstart > MEASURE_BUDGET_NS)
            break;
    }
    /* reservation + bind, at the same occupancy */
    tstart = ms__bench_now_ns();
    for (i = 0; st == MS_OK && i < iters; i++) {
        ms_sched_req_t q;
        int32_t slot;
        int64_t t0, t1;

        while (st == MS_OK && b.nrun >= target)
            st = sb_depart(&b);
        if (st != MS_OK)
            break;
        sb_req(&b, &q);
        b.now += 0.001;
        t0 = ms__bench_now_ns();
        st = ms_sched_reserve(b.s, &q, NULL, 0, 30.0, b.now, &slot, NULL);
        if (st == MS_OK)
            st = ms_sched_bind(b.s, slot, b.now);
        t1 = ms__bench_now_ns();
        if (st == MS_ENOFIT) {
            st = MS_OK;
            continue;
        }
        if (st != MS_OK)
            break;
        rl[nr++] = t1 - t0;
        st = sb_track(&b, slot);
        if (i >= 200 && ms__bench_now_ns() - tstart > MEASURE_BUDGET_NS)
            break;
    }
    if (st == MS_OK) {
        res->nofit_frac = n > 0 ? (double)nofit / (double)n : 0.0;
        res->submit = ms__bench_lat_summary(lat, n);
        res->resv = ms__bench_lat_summary(rl, nr);
        res->ngroups = ms_sched_ngroups(b.s);
    }
    free(lat);
    free(rl);
    sb_free(&b);
    return st;
}

void ms__bench_sched_header(void)
{
    printf("\nDecisions through ms_sched: nodes of 8 GPUs, 40%% A100-40GB MIG, 40%% H100-80GB MIG,\n"
           "20%% A30-24GB time-sliced x4; requests by generic size or memory. submit = one\n"
           "ms_sched_submit (resolution, queue pass, policy, plan applied); reserve+bind =\n"
           "ms_sched_reserve on any node then ms_sched_bind\n");
    printf("%-13s %7s %6s %7s %6s %9s %9s %9s %9s %9s\n", "policy", "GPUs", "groups", "n",
           "nofit", "sub p50", "sub p99", "sub max", "rsv p50", "rsv p99");
}

void ms__bench_sched_row(const sched_res_t *r, FILE *json, bool *first)
{
    printf("%-13s %7ld %6d %7ld %6.3f %9.3f %9.3f %9.1f %9.3f %9.3f\n", r->policy, r->ngpus,
           r->ngroups, r->submit.n, r->nofit_frac, r->submit.p50_us, r->submit.p99_us,
           r->submit.max_us, r->resv.p50_us, r->resv.p99_us);
    fflush(stdout);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"sched\", \"policy\": \"%s\", \"gpus\": %ld, "
                      "\"groups\": %d, \"nofit_frac\": %.4f, "
                      "\"submit\": {\"n\": %ld, \"p50_us\": %.4f, \"p99_us\": %.4f, \"max_us\": %.3f}, "
                      "\"reserve_bind\": {\"n\": %ld, \"p50_us\": %.4f, \"p99_us\": %.4f, \"max_us\": %.3f}}",
                *first ? "" : ",", r->policy, r->ngpus, r->ngroups, r->nofit_frac, r->submit.n,
                r->submit.p50_us, r->submit.p99_us, r->submit.max_us, r->resv.n, r->resv.p50_us,
                r->resv.p99_us, r->resv.max_us);
        *first = false;
    }
}
