/* test_pure.c - the promise of MS_POLICY_PURE_PLACE and version() (policy.h),
 * on which the scheduler's queue passes rely to skip a blocked job until
 * something could change the answer (issue 25):
 *   - place() has no side effect: asked twice, it answers the same;
 *   - between two calls that see the same cluster and the same version(),
 *     whatever hooks ran in between (arrivals, queue lengths), place()
 *     answers the same;
 *   - an MS_ENOFIT stays one while other jobs are placed (the cluster only
 *     loses capacity) and version() is unchanged;
 *   - with MS_POLICY_FIT_ANY, place() answers MS_ENOFIT exactly when no GPU
 *     has a free legal start for the profile, whatever the version() (new
 *     demand weights change where, never whether).
 * On random clusters and demand, for every policy with the flag.
 */
#include "policy_test.h"

#include <stdio.h>

#include "migsched/rng.h"

typedef struct answer {
    ms_status_t st;
    int n;
    ms_op_t ops[16];
} answer_t;

static void ask(const ms_policy_ops_t *pol, void *self, const ms_cluster_t *c, const ms_job_t *j,
                ms_plan_t *p, answer_t *a)
{
    ms_plan_clear(p);
    a->st = pol->place(self, c, j, p);
    a->n = a->st == MS_OK ? p->n : 0;
    assert_true(a->n <= 16);
    if (a->n > 0)
        memcpy(a->ops, p->ops, (size_t)a->n * sizeof(a->ops[0]));
}

static bool same(const answer_t *a, const answer_t *b)
{
    return a->st == b->st && a->n == b->n &&
           (a->n == 0 || memcmp(a->ops, b->ops, (size_t)a->n * sizeof(a->ops[0])) == 0);
}

static uint64_t version(const ms_policy_ops_t *pol, void *self)
{
    return pol->version != NULL ? pol->version(self) : 0;
}

/* A random hook that must not change the cluster: an arrival, or a queue
 * report (on_idle with no plan expected from these policies). */
static void poke(const ms_policy_ops_t *pol, void *self, const ms_cluster_t *c, ms_rng_t *r,
                 int np, ms_plan_t *p)
{
    int by[MS_MAX_PROFILES], k;

    if (ms_rng_next(r) % 3 != 0 && pol->on_arrival != NULL) {
        ms_job_t j = pt_job(-1, (int)(ms_rng_next(r) % (uint64_t)np));

        j.duration = 50.0 + (double)(ms_rng_next(r) % 1000);
        pol->on_arrival(self, &j);
        return;
    }
    if (pol->on_idle == NULL)
        return;
    for (k = 0; k < MS_MAX_PROFILES; k++)
        by[k] = k < np && ms_rng_next(r) % 2 ? (int)(ms_rng_next(r) % 40) : 0;
    ms_plan_clear(p);
    assert_int_equal(pol->on_idle(self, c, by, 0.0, p), MS_OK);
    assert_int_equal(p->n, 0);
}

/* GPU g's state once its idle GIs are gone */
static ms_state_t busy_state(const ms_cluster_t *c, int g)
{
    const ms_gpu_t *gpu = &c->gpus[g];
    ms_state_t s = gpu->state;
    int i;

    for (i = 0; i < gpu->ninst; i++)
        if (gpu->inst[i].job < 0 && gpu->inst[i].start >= 0)
            s = ms_state_remove(c->geom, s, gpu->inst[i].prof, gpu->inst[i].start);
    assert_true(s != MS_STATE_NONE);
    return s;
}

/* MS_POLICY_FIT_PLACE (policy.h): a placement goes only where the profile
 * fits once the GPU's idle GIs are gone; and an MS_ENOFIT stays one when a
 * job ends on a GPU where the profile still does not fit so (its GI left
 * idle), so the scheduler need not ask again. */
static void check_fit(const ms_policy_ops_t *pol, void *self, ms_cluster_t *c, const ms_job_t *j,
                      const answer_t *a, ms_rng_t *r, ms_plan_t *p, uint64_t seed, int step)
{
    int i, g;

    if (!(pol->flags & MS_POLICY_FIT_PLACE) || j->gang > 1)
        return;
    for (i = 0; a->st == MS_OK && i < a->n; i++)
        if (a->ops[i].kind == MS_OP_START &&
            ms_state_fit(c->geom, busy_state(c, a->ops[i].gpu), j->prof) == 0)
            fail_msg("%s seed %llu step %d: placed on GPU %d, where the profile does not fit",
                     pol->name, (unsigned long long)seed, step, (int)a->ops[i].gpu);
    if (a->st != MS_ENOFIT)
        return;
    g = (int)(ms_rng_next(r) % (uint64_t)c->ngpus);
    for (i = 0; i < c->gpus[g].ninst; i++) {
        const ms_inst_t *in = &c->gpus[g].inst[i];
        ms_op_t op;
        answer_t b;

        if (in->job < 0)
            continue;
        memset(&op, 0, sizeof(op));
        op.kind = MS_OP_STOP;
        op.job = in->job;
        op.gpu = g;
        op.start = in->start;
        op.prof = in->prof;
        op.from_gpu = -1;
        op.from_start = -1;
        assert_int_equal(ms_cluster_apply_op(c, &op), MS_OK);
        if (ms_state_fit(c->geom, busy_state(c, g), j->prof) != 0)
            return;   /* now it fits there: the scheduler asks again */
        ask(pol, self, c, j, p, &b);
        if (b.st != MS_ENOFIT)
            fail_msg("%s seed %llu step %d: a job that did not fit does after an end on GPU %d, "
                     "where it still does not fit", pol->name, (unsigned long long)seed, step, g);
        return;
    }
}

static long g_any_reweighed;   /* FIT_ANY answers checked after a new version() */

/* MS_POLICY_FIT_ANY: MS_ENOFIT exactly when no GPU has a free legal start
 * for the profile (its GIs as they are: an idle one still takes slices). */
static void check_any(const ms_policy_ops_t *pol, const ms_cluster_t *c, const ms_job_t *j,
                      const answer_t *a, uint64_t seed, int step)
{
    bool room = false;
    int g;

    if (!(pol->flags & MS_POLICY_FIT_ANY) || j->gang > 1)
        return;
    for (g = 0; g < c->ngpus && !room; g++)
        room = ms_state_fit(c->geom, c->gpus[g].state, j->prof) != 0;
    if (room == (a->st == MS_ENOFIT))
        fail_msg("%s seed %llu step %d: %s while %s GPU has room for the profile", pol->name,
                 (unsigned long long)seed, step, a->st == MS_ENOFIT ? "no fit" : "placed",
                 room ? "a" : "no");
}

static void run(const ms_policy_ops_t *pol, uint64_t seed, long *checked, long *differed)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, 6 + (int)(seed % 5), 4, pol->share, MS_INDEX_BUCKET);
    ms_policy_cfg_t cfg;
    void *self = NULL;
    ms_plan_t p;
    ms_rng_t r;
    int np = ms_geom_nprofiles(g), step, failed;
    int32_t next = 0;

    ms_policy_cfg_defaults(&cfg);
    assert_int_equal(pol->create(&cfg, c, &self), MS_OK);
    ms_plan_init(&p);
    if (pol->setup != NULL) {
        assert_int_equal(pol->setup(self, c, &p), MS_OK);
        pt_apply(c, &p);
    }
    ms_rng_seed(&r, seed);
    for (step = 0; step < 400; step++) {
        ms_job_t j = pt_job(next, (int)(ms_rng_next(&r) % (uint64_t)np));
        answer_t a, b;
        uint64_t v = version(pol, self);
        int q;

        ask(pol, self, c, &j, &p, &a);
        ask(pol, self, c, &j, &p, &b);
        if (!same(&a, &b))
            fail_msg("%s seed %llu step %d: place() answered differently when asked twice",
                     pol->name, (unsigned long long)seed, step);
        if (ms_rng_next(&r) % 4 == 0) {
            check_fit(pol, self, c, &j, &a, &r, &p, seed, step);
            ask(pol, self, c, &j, &p, &a);   /* the cluster may have changed */
        }
        for (q = 0; q < 1 + (int)(ms_rng_next(&r) % 40); q++)
            poke(pol, self, c, &r, np, &p);
        ask(pol, self, c, &j, &p, &b);
        (*checked)++;
        check_any(pol, c, &j, &b, seed, step);
        if ((pol->flags & MS_POLICY_FIT_ANY) && version(pol, self) != v)
            g_any_reweighed++;
        if (!same(&a, &b)) {
            (*differed)++;
            if (version(pol, self) == v)
                fail_msg("%s seed %llu step %d: place() answered differently with the same "
                         "cluster and version()", pol->name, (unsigned long long)seed, step);
        }
        if (a.st == MS_ENOFIT) {
            /* place another job (if it fits): the first must still not */
            ms_job_t o = pt_job(next + 1, (int)(ms_rng_next(&r) % (uint64_t)np));

            v = version(pol, self);
            ms_plan_clear(&p);
            if (pol->place(self, c, &o, &p) == MS_OK) {
                assert_int_equal(ms_cluster_apply(c, &p, &failed), MS_OK);
                next += 2;
                ask(pol, self, c, &j, &p, &b);
                if (b.st != MS_ENOFIT && version(pol, self) == v)
                    fail_msg("%s seed %llu step %d: a placement made room for a job that did not fit",
                             pol->name, (unsigned long long)seed, step);
            }
        } else if (a.st == MS_OK && ms_rng_next(&r) % 3 != 0) {
            assert_int_equal(ms_cluster_apply(c, &p, &failed), MS_OK);
            next++;
        } else {
            /* end a random running job (its GI goes, as the scheduler does) */
            int gi = (int)(ms_rng_next(&r) % (uint64_t)c->ngpus), i;
            const ms_gpu_t *gpu = &c->gpus[gi];

            for (i = 0; i < gpu->ninst; i++)
                if (gpu->inst[i].job >= 0) {
                    ms_op_t op;

                    memset(&op, 0, sizeof(op));
                    op.kind = MS_OP_STOP;
                    op.job = gpu->inst[i].job;
                    op.gpu = gi;
                    op.start = gpu->inst[i].start;
                    op.prof = gpu->inst[i].prof;
                    op.from_gpu = -1;
                    op.from_start = -1;
                    assert_int_equal(ms_cluster_apply_op(c, &op), MS_OK);
                    if (pol->on_finish != NULL) {
                        ms_status_t st;

                        ms_plan_clear(&p);
                        st = pol->on_finish(self, c, gi, 0.0, &p);
                        assert_true(st == MS_OK || st == MS_ENOFIT);
                        if (st == MS_OK && p.n > 0 && ms_cluster_apply(c, &p, &failed) != MS_OK)
                            fail_msg("%s: on_finish plan refused", pol->name);
                    }
                    break;
                }
        }
        assert_int_equal(ms_cluster_check(c), MS_OK);
    }
    ms_plan_fini(&p);
    pol->destroy(self);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_pure_place(void **state)
{
    int n, i;
    uint64_t seed;
    const ms_policy_ops_t *const *all = ms_policies(&n);
    long checked = 0, differed = 0;

    (void)state;
    for (i = 0; i < n; i++) {
        if (!(all[i]->flags & MS_POLICY_PURE_PLACE))
            continue;
        for (seed = 1; seed <= 12; seed++)
            run(all[i], seed * 131u + (uint64_t)i, &checked, &differed);
    }
    /* the demand-weighted policies do change their answers with the demand */
    if (differed == 0)
        fail_msg("no answer changed in %ld checks: the test tests nothing", checked);
    if (g_any_reweighed == 0)
        fail_msg("no MS_POLICY_FIT_ANY answer was checked after a new version()");
    print_message("(%ld checks, %ld answers changed with a new version(), %ld under "
                  "MS_POLICY_FIT_ANY after one)\n", checked, differed, g_any_reweighed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pure_place),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
