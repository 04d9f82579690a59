/* sched_world.c - see sched_world.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sched_world.h"
#include "migsched/options.h"
#include "migsched/sim.h"

void world_make_cfg(world_t *w, ms_sched_cfg_t *cfg, const char *const *nodes, int n)
{
    ms_diag_t d;
    int i;

    memset(w, 0, sizeof(*w));
    assert_non_null(cfg->policy);
    assert_int_equal(ms_cluster_spec_create(&w->cs), MS_OK);
    for (i = 0; i < n; i++)
        if (ms_cluster_spec_add(w->cs, nodes[i], 0, &d) != MS_OK)
            fail_msg("node %s: %s", nodes[i], d.msg);
    cfg->nodes = ms_cluster_spec_nodes(w->cs);
    cfg->nnodes = ms_cluster_spec_nnodes(w->cs);
    ms_diag_clear(&d);
    if (ms_sched_create(cfg, 0.0, &w->s, &d) != MS_OK)
        fail_msg("ms_sched_create: %s", d.msg);
}

void world_make_a100_h100(world_t *w, ms_sched_cfg_t *cfg, int per_node)
{
    char a[64], h[64];
    const char *nodes[2] = { a, h };

    snprintf(a, sizeof(a), "a=%dxA100-40GB", per_node);
    snprintf(h, sizeof(h), "h=%dxH100-80GB", per_node);
    world_make_cfg(w, cfg, nodes, 2);
}

void world_make(world_t *w, const ms_policy_ops_t *pol, const char *const *nodes, int n, bool track,
                const ms_sched_exec_t *ex)
{
    ms_sched_cfg_t cfg;

    ms_sched_cfg_defaults(&cfg);
    cfg.policy = pol;
    cfg.track_ops = track;
    if (ex != NULL)
        cfg.exec = *ex;
    world_make_cfg(w, &cfg, nodes, n);
}

void world_make_named(world_t *w, const char *policy, const char *const *nodes, int n, bool track,
                      const ms_sched_exec_t *ex)
{
    const ms_policy_ops_t *pol = ms_policy_find(policy);

    if (pol == NULL)
        fail_msg("no policy %s", policy);
    world_make(w, pol, nodes, n, track, ex);
}

void world_free(world_t *w)
{
    ms_sched_destroy(w->s);
    ms_cluster_spec_destroy(w->cs);
    memset(w, 0, sizeof(*w));
}

uint64_t world_fold_op(uint64_t h, const ms_op_t *op, double now)
{
    h = (h ^ ((uint64_t)op->kind << 56 ^ (uint64_t)(uint32_t)op->job << 24 ^ (uint64_t)(uint32_t)op->gpu << 8 ^
              (uint64_t)(uint8_t)op->start)) *
        1099511628211ULL;
    return (h ^ (uint64_t)llround(now * 1000.0)) * 1099511628211ULL;
}

uint64_t world_rnd(ms_rng_t *r, uint64_t n)
{
    return ms_rng_next(r) % n;
}

void hw_make(hw_t *h, const ms_sched_t *s)
{
    int k;

    memset(h, 0, sizeof(*h));
    h->n = ms_sched_ngroups(s);
    assert_true(h->n <= (int)(sizeof(h->c) / sizeof(h->c[0])));
    for (k = 0; k < h->n; k++) {
        const ms_cluster_t *v = ms_sched_group_cluster(s, k);
        ms_cluster_cfg_t cc;

        memset(&cc, 0, sizeof(cc));
        cc.geom = v->geom;
        cc.ngpus = v->ngpus;
        cc.gpus_per_node = v->gpus_per_node;
        cc.share = v->share;
        cc.replicas = v->replicas;
        assert_int_equal(ms_cluster_create(&cc, &h->c[k]), MS_OK);
    }
}

void hw_apply(hw_t *h, const ms_sched_t *s, const ms_op_t *gop)
{
    ms_op_t op = *gop;
    int grp, local, fl;

    ms_sched_gpu_where(s, gop->gpu, NULL, &grp, &local);
    op.gpu = local;
    if (op.kind == MS_OP_MOVE) {
        ms_sched_gpu_where(s, gop->from_gpu, NULL, NULL, &fl);
        op.from_gpu = fl;
    }
    if (ms_cluster_apply_op(h->c[grp], &op) != MS_OK)
        fail_msg("the hardware refuses op %d job %d gpu %d/%d start %d prof %d from %d/%d",
                 (int)op.kind, (int)op.job, (int)gop->gpu, local, (int)op.start, (int)op.prof,
                 (int)gop->from_gpu, (int)op.from_start);
}

void hw_free(hw_t *h)
{
    int k;

    for (k = 0; k < h->n; k++)
        ms_cluster_destroy(h->c[k]);
    h->n = 0;
}

int32_t world_submit(ms_sched_t *s, const char *prof, const char *ten, const char *model, int prio,
                     double dur, double now)
{
    ms_sched_req_t r;
    ms_diag_t dg;
    int32_t slot = -1;

    memset(&r, 0, sizeof(r));
    r.profile = prof;
    r.tenant = ten;
    r.model = model;
    r.priority = prio;
    r.estimate_s = dur;
    r.duration_s = dur;
    ms_diag_clear(&dg);
    if (ms_sched_submit(s, &r, now, &slot, &dg) != MS_OK)
        fail_msg("submit %s: %s", prof, dg.msg);
    assert_int_equal(ms_sched_check(s), MS_OK);
    return slot;
}

void world_finish(ms_sched_t *s, int32_t slot, double now, int32_t *finishing)
{
    *finishing = slot;
    assert_int_equal(ms_sched_finished(s, slot, now), MS_OK);
    *finishing = -1;
    assert_int_equal(ms_sched_check(s), MS_OK);
}

ms_job_state_t world_job_state(ms_sched_t *s, int32_t slot)
{
    ms_sched_job_info_t in;

    assert_int_equal(ms_sched_job(s, slot, &in), MS_OK);
    return in.state;
}

const char *world_job_model(ms_sched_t *s, int32_t slot)
{
    ms_sched_job_info_t in;
    const ms_geom_t *g = NULL;

    assert_int_equal(ms_sched_job(s, slot, &in), MS_OK);
    if (in.ninst == 0)
        return "";
    assert_non_null(ms_sched_gpu(s, in.inst[0].gpu, &g));
    return ms_geom_model(g)->name;
}

void world_opt_refuses(const char *opt, const char *const *bad, int n)
{
    ms_sim_cfg_t c;
    ms_opt_target_t t;
    ms_diag_t dg;
    int i;

    ms_sim_cfg_defaults(&c);
    t = ms_opt_target_sim(&c);
    for (i = 0; i < n; i++) {
        ms_diag_clear(&dg);
        assert_int_not_equal(ms_opt_set(&t, opt, bad[2 * i], &dg), MS_OK);
        assert_string_equal(dg.field, opt);
        if (strstr(dg.msg, bad[2 * i + 1]) == NULL)
            fail_msg("%s: %s", bad[2 * i], dg.msg);
    }
}

void world_wl_until(const world_wl_t *wl, int n, double t)
{
    for (;;) {
        int32_t k, best = -1;

        for (k = 0; k < n; k++)
            if (!wl->done[k] && isfinite(wl->end[k]) && wl->end[k] <= t &&
                (best < 0 || wl->end[k] < wl->end[best]))
                best = k;
        if (best < 0)
            return;
        wl->finish(wl->ctx, best, wl->end[best], n);
    }
}

double world_wl_next(const world_wl_t *wl, ms_rng_t *r, int n, double now)
{
    now += floor(ms_rng_unit(r) * 40.0);
    world_wl_until(wl, n, now);
    return now;
}

void world_wl_end(const world_wl_t *wl, int n, uint64_t seed)
{
    int32_t k;

    world_wl_until(wl, n, INFINITY);
    for (k = 0; k < n; k++) {
        ms_sched_job_info_t in;
        bool wait = wl->may_wait != NULL && wl->may_wait(wl->ctx, k);

        assert_int_equal(ms_sched_job(wl->s, k, &in), MS_OK);
        if (in.state != (wait ? MS_JOB_QUEUED : MS_JOB_DONE))
            fail_msg("seed %llu: job %d is %s at the end (may be left queued: %d)", (unsigned long long)seed,
                     (int)k, ms_job_state_name(in.state), wait);
    }
}

void world_pre_init(world_pre_t *pr, bool track)
{
    pr->track = track;
    pr->finishing = -1;
    pr->plans = 1469598103934665603ULL;
    pr->nops = 0;
    pr->npend = 0;
}

const ms_op_t *world_pre_op(world_pre_t *pr, const ms_sched_plan_t *p, int i, int maxj)
{
    const ms_op_t *op = &p->ops[i].op;

    if (pr->track && p->ops[i].id != 0) {
        assert_true(pr->nops < WORLD_MAXOPS);
        pr->ops[pr->nops++] = p->ops[i].id;
    }
    pr->plans = world_fold_op(pr->plans, op, p->now);
    return op->job >= 0 && op->job < maxj ? op : NULL;
}

int world_pre_victim(world_pre_t *pr, int32_t job)
{
    assert_true(pr->npend < WORLD_MAXPEND);
    pr->pend[pr->npend] = job;
    return pr->npend++;
}

void world_pre_confirm(world_pre_t *pr, ms_sched_t *s, double now)
{
    int k;

    for (k = 0; k < pr->nops; k++) {
        assert_int_equal(ms_sched_op_done(s, pr->ops[k], now), MS_OK);
        assert_int_equal(ms_sched_check(s), MS_OK);
    }
    pr->nops = 0;
}
