/* test_conformance.c - every registered policy, driven directly through its
 * ops by random arrivals and finishes: every plan applies, the cluster
 * invariants hold after each, no running job is lost or duplicated, and the
 * scan and bucket index modes produce identical plans. */
#include "policy_test.h"

#define NGPUS 8
#define PER 4
#define STEPS 600
#define MAXJOBS (STEPS + 8)

typedef struct run {
    ms_op_t *log;           /* every op of every policy plan, in order */
    int nlog, caplog;
} run_t;

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void logplan(run_t *r, const ms_plan_t *p)
{
    int i;

    for (i = 0; i < p->n; i++) {
        if (r->nlog == r->caplog) {
            r->caplog = r->caplog ? 2 * r->caplog : 1024;
            r->log = realloc(r->log, (size_t)r->caplog * sizeof(*r->log));
            assert_non_null(r->log);
        }
        r->log[r->nlog++] = p->ops[i];
    }
}

/* GIs the simulator destroys when their job ends: those created in the
 * same plan as the START or MOVE that filled them (dynamic partitioning). */
static uint16_t ephemeral[NGPUS];

static void apply_logged(ms_cluster_t *c, ms_plan_t *p, run_t *r)
{
    uint16_t created[NGPUS] = {0};
    int i;

    logplan(r, p);
    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i];
        uint16_t bit = op->start >= 0 ? (uint16_t)(1u << op->start) : 0;
        if (op->kind == MS_OP_CREATE) {
            created[op->gpu] |= bit;
            ephemeral[op->gpu] &= (uint16_t)~bit;
        } else if (op->kind == MS_OP_DESTROY) {
            ephemeral[op->gpu] &= (uint16_t)~bit;
        } else if ((op->kind == MS_OP_START || op->kind == MS_OP_MOVE) &&
                   ((created[op->gpu] & bit) || op->bbm)) {
            ephemeral[op->gpu] |= bit;
        }
    }
    pt_apply(c, p);
}

/* STOP the job; destroy its ephemeral GIs, as the simulator does. */
static void sim_stop(ms_cluster_t *c, int32_t job, int *gpus, int *n)
{
    int starts[8], i, k;
    ms_plan_t p;

    for (i = 0, k = 0; i < c->ngpus; i++) {
        int q = ms_gpu_find_job(&c->gpus[i], job);
        if (q >= 0)
            starts[k++] = c->gpus[i].inst[q].start;
    }
    pt_stop(c, job, gpus, n);
    ms_plan_init(&p);
    for (i = 0; i < *n; i++)
        if (c->share == MS_SHARE_MIG && (ephemeral[gpus[i]] & (1u << starts[i]))) {
            ephemeral[gpus[i]] &= (uint16_t)~(1u << starts[i]);
            assert_int_equal(ms_plan_add_destroy(&p, gpus[i], starts[i]), MS_OK);
        }
    pt_apply(c, &p);
    ms_plan_fini(&p);
}

/* Each running job is on exactly `gang` GPUs; no other job runs. */
static void check_jobs(const ms_cluster_t *c, const ms_job_t *jobs, const int *running, int n)
{
    int *seen = calloc((size_t)n, sizeof(int)), g, i;

    assert_non_null(seen);
    for (g = 0; g < c->ngpus; g++)
        for (i = 0; i < c->gpus[g].ninst; i++) {
            int32_t jb = c->gpus[g].inst[i].job;
            if (jb < 0)
                continue;
            assert_true(jb < n);
            assert_true(running[jb]);
            seen[jb]++;
        }
    for (i = 0; i < n; i++)
        if (running[i])
            assert_int_equal(seen[i], jobs[i].gang);
    free(seen);
}

static void drive(const ms_policy_ops_t *ops, ms_index_mode_t mode, uint64_t seed, run_t *r)
{
    ms_geom_t *g = pt_a100();
    ms_cluster_t *c = pt_cluster(g, NGPUS, PER, ops->share, mode);
    ms_policy_cfg_t cfg;
    ms_plan_t plan;
    ms_job_t *jobs = calloc(MAXJOBS, sizeof(*jobs));
    int *running = calloc(MAXJOBS, sizeof(int)), *waiting = calloc(MAXJOBS, sizeof(int));
    int nj = 0, nwait = 0, step, np = ms_geom_nprofiles(g);
    void *self = NULL;

    assert_non_null(jobs);
    assert_non_null(running);
    assert_non_null(waiting);
    memset(ephemeral, 0, sizeof(ephemeral));
    ms_policy_cfg_defaults(&cfg);
    cfg.demand_window = 64;
    cfg.hysteresis_s = 50.0;
    assert_int_equal(ops->create(&cfg, c, &self), MS_OK);
    ms_plan_init(&plan);
    if (ops->setup != NULL) {
        assert_int_equal(ops->setup(self, c, &plan), MS_OK);
        apply_logged(c, &plan, r);
    }
    for (step = 0; step < STEPS; step++) {
        uint64_t x = rng(&seed);
        int i;

        if (x % 100 < 55 || nj == 0) {
            ms_job_t *j = &jobs[nj];
            j->idx = nj;
            j->prof = (int8_t)(rng(&seed) % (uint64_t)np);
            j->gang = (int16_t)(rng(&seed) % 40 == 0 ? 2 : 1);
            j->arrival = step;
            j->duration = 100;
            nj++;
            if (ops->can_host != NULL && !ops->can_host(self, c, j))
                continue;
            if (ops->on_arrival != NULL)
                ops->on_arrival(self, j);
            waiting[nwait++] = j->idx;
        } else {
            /* finish a random running job */
            int cand = (int)(rng(&seed) % (uint64_t)nj), tries, gpus[8], n;
            for (tries = 0; tries < nj && !running[cand]; tries++)
                cand = (cand + 1) % nj;
            if (running[cand]) {
                sim_stop(c, cand, gpus, &n);
                running[cand] = 0;
                for (i = 0; i < n; i++) {
                    if (ops->on_finish != NULL) {
                        ms_status_t st = ops->on_finish(self, c, gpus[i], step, &plan);
                        assert_true(st == MS_OK || st == MS_ENOFIT);
                        apply_logged(c, &plan, r);
                        check_jobs(c, jobs, running, nj);
                    }
                }
            }
        }
        if (ops->on_idle != NULL && step % 5 == 0) {
            int byp[MS_MAX_PROFILES] = {0};
            for (i = 0; i < nwait; i++)
                byp[jobs[waiting[i]].prof]++;
            assert_int_equal(ops->on_idle(self, c, byp, step, &plan), MS_OK);
            apply_logged(c, &plan, r);
        }
        /* FCFS with backfilling over the waiting jobs */
        for (i = 0; i < nwait;) {
            ms_job_t *j = &jobs[waiting[i]];
            ms_status_t st = ops->place(self, c, j, &plan);
            if (st == MS_ENOFIT && ops->make_room != NULL) {
                assert_int_equal(plan.n, 0);
                if (ops->make_room(self, c, j, step, &plan) == MS_OK) {
                    apply_logged(c, &plan, r);
                    check_jobs(c, jobs, running, nj);
                    st = ops->place(self, c, j, &plan);
                }
            }
            if (st == MS_OK) {
                apply_logged(c, &plan, r);
                running[j->idx] = 1;
                check_jobs(c, jobs, running, nj);
                memmove(&waiting[i], &waiting[i + 1], (size_t)(nwait - i - 1) * sizeof(int));
                nwait--;
            } else {
                assert_int_equal(st, MS_ENOFIT);
                assert_int_equal(plan.n, 0);
                i++;
            }
        }
    }
    ms_plan_fini(&plan);
    ops->destroy(self);
    free(jobs);
    free(running);
    free(waiting);
    ms_cluster_destroy(c);
    ms_geom_destroy(g);
}

static void test_conformance(void **state)
{
    int n, i;
    const ms_policy_ops_t *const *all = ms_policies(&n);
    uint64_t seed;

    (void)state;
    for (i = 0; i < n; i++)
        for (seed = 1; seed <= 3; seed++) {
            run_t a = {NULL, 0, 0}, b = {NULL, 0, 0};
            drive(all[i], MS_INDEX_BUCKET, seed, &a);
            drive(all[i], MS_INDEX_SCAN, seed, &b);
            if (a.nlog != b.nlog || (a.nlog > 0 && memcmp(a.log, b.log, (size_t)a.nlog * sizeof(*a.log)) != 0))
                fail_msg("policy %s, seed %d: scan and bucket plans differ", all[i]->name, (int)seed);
            assert_true(a.nlog > 0);
            if (strcmp(all[i]->name, "fa") == 0) {
                int q, moves = 0;
                for (q = 0; q < a.nlog; q++)
                    moves += a.log[q].kind == MS_OP_MOVE;
                assert_true(moves > 0);   /* migration is exercised */
            }
            free(a.log);
            free(b.log);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
