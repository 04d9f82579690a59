/* policy_test.h - small helpers shared by the policy tests (header-only,
 * static functions: each test binary is one translation unit). */
#ifndef POLICY_TEST_H
#define POLICY_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/policy.h"

static inline ms_geom_t *pt_a100(void)
{
    ms_geom_t *g = NULL;

    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    return g;
}

static inline ms_cluster_t *pt_cluster(const ms_geom_t *g, int ngpus, int per,
                                       ms_share_mode_t share, ms_index_mode_t mode)
{
    ms_cluster_cfg_t cc;
    ms_cluster_t *c = NULL;

    memset(&cc, 0, sizeof(cc));
    cc.geom = g;
    cc.ngpus = ngpus;
    cc.gpus_per_node = per;
    cc.share = share;
    cc.replicas = 4;
    cc.index_mode = mode;
    assert_int_equal(ms_cluster_create(&cc, &c), MS_OK);
    return c;
}

static inline void pt_apply(ms_cluster_t *c, ms_plan_t *p)
{
    int failed = -1;

    assert_int_equal(ms_cluster_apply(c, p, &failed), MS_OK);
    assert_int_equal(ms_cluster_check(c), MS_OK);
    ms_plan_clear(p);
}

static inline int pt_prof(const ms_geom_t *g, const char *name)
{
    int k = ms_geom_profile_find(g, name);

    assert_true(k >= 0);
    return k;
}

/* Put a running job on GPU gi at start st (CREATE + START). */
static inline void pt_run(ms_cluster_t *c, int gi, const char *prof, int st, int32_t job)
{
    ms_plan_t p;
    int k = pt_prof(c->geom, prof);

    ms_plan_init(&p);
    assert_int_equal(ms_plan_add_create(&p, gi, k, st), MS_OK);
    assert_int_equal(ms_plan_add_start(&p, job, gi, st, k), MS_OK);
    pt_apply(c, &p);
    ms_plan_fini(&p);
}

static inline ms_job_t pt_job(int32_t idx, int prof)
{
    ms_job_t j;

    memset(&j, 0, sizeof(j));
    j.idx = idx;
    j.prof = (int8_t)prof;
    j.gang = 1;
    j.duration = 100.0;
    return j;
}

/* The job's (gpu, start), or gpu -1. */
static inline void pt_where(const ms_cluster_t *c, int32_t job, int *gpu, int *start)
{
    int g, i;

    *gpu = *start = -1;
    for (g = 0; g < c->ngpus; g++)
        if ((i = ms_gpu_find_job(&c->gpus[g], job)) >= 0) {
            *gpu = g;
            *start = c->gpus[g].inst[i].start;
            return;
        }
}

/* Stop a job everywhere it runs (STOP ops only). */
static inline void pt_stop(ms_cluster_t *c, int32_t job, int *gpus, int *n)
{
    ms_plan_t p;
    ms_op_t op;
    int g, i;

    ms_plan_init(&p);
    *n = 0;
    for (g = 0; g < c->ngpus; g++)
        if ((i = ms_gpu_find_job(&c->gpus[g], job)) >= 0) {
            memset(&op, 0, sizeof(op));
            op.kind = MS_OP_STOP;
            op.job = job;
            op.gpu = g;
            op.start = c->gpus[g].inst[i].start;
            op.from_gpu = -1;
            op.from_start = -1;
            assert_int_equal(ms_plan_add(&p, &op), MS_OK);
            gpus[(*n)++] = g;
        }
    pt_apply(c, &p);
    ms_plan_fini(&p);
}

#endif
