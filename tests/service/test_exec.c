/* test_exec.c - the executor thread (src/service/exec.c, hook.c) on the sim
 * backend: a plan's ops run in order and each outcome goes to the loop;
 * after a failure the rest of its plan and every plan made before the loop
 * heard of it (its epoch) are discarded, while a plan made after runs;
 * stopping runs nothing more; the migration hook gets the move in its
 * environment, fails the op on a non-zero exit, and is killed at its
 * deadline on the daemon's clock, with every process of its group. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/fixture.h"

static svc_xplan_t *plan(int64_t id, uint64_t epoch, int n)
{
    svc_xplan_t *p = calloc(1, sizeof(*p));

    assert_non_null(p);
    assert_non_null(p->ops = calloc((size_t)n, sizeof(*p->ops)));
    p->plan_id = id;
    p->epoch = epoch;
    p->n = n;
    return p;
}

static void op(svc_xplan_t *p, int i, int kind, int gpu, int start, int prof, const char *job)
{
    svc_xop_t *o = &p->ops[i];

    o->idx = i;
    o->op_id = (uint64_t)(p->plan_id * 10 + i);   /* issue order, as ms_sched numbers them */
    o->op.kind = (uint8_t)kind;
    o->op.gpu = gpu;
    o->op.start = (int8_t)start;
    o->op.prof = (int8_t)prof;
    o->op.job = -1;
    snprintf(o->job, sizeof(o->job), "%s", job);
    snprintf(o->prof_name, sizeof(o->prof_name), "%s", prof == 2 ? "3g.20gb" : "1g.5gb");
}

/* Outcomes posted to the loop, as "plan:idx:result" words. */
static void outcomes(fx_t *f, int want, char *buf, size_t len)
{
    int got = 0;

    buf[0] = '\0';
    while (got < want) {
        svc_qlink_t *l = svc_queue_take(&f->d.loop.q, 0.05, NULL), *next;

        for (; l != NULL; l = next, got++) {
            svc_msg_t *m = SVC_QITEM(l, svc_msg_t, link);
            size_t n = strlen(buf);

            next = l->next;
            assert_int_equal(m->kind, SVC_M_OPRESULT);
            snprintf(buf + n, len - n, "%s%d:%d:%d", n > 0 ? " " : "", (int)m->plan_id, m->idx, m->result);
            svc_msg_free(m);
        }
    }
}

static void start_exec(fx_t *f)
{
    assert_int_equal(pthread_create(&f->d.exec.th, NULL, svc_exec_main, &f->d), 0);
    f->d.exec.running = true;
}

/* 3g.20gb's profile index on the A100-40GB */
static int prof_3g(fx_t *f)
{
    const ms_geom_t *g = ms_cluster_spec_nodes(f->spec)[0].geom;

    return ms_geom_profile_find(g, "3g.20gb");
}

static void test_failure_discards_by_epoch(void **state)
{
    fx_t f;
    const char *const extra[] = { "--sim-fail", "create:2", NULL };
    svc_xplan_t *p[4];
    char got[256];
    int k;

    (void)state;
    fx_setup(&f, "a=2xA100-40GB", "best-fit", extra);
    k = prof_3g(&f);
    p[0] = plan(1, 0, 1);
    op(p[0], 0, MS_OP_CREATE, 0, 0, k, "");
    p[1] = plan(2, 0, 2);   /* its create is the second: it fails */
    op(p[1], 0, MS_OP_CREATE, 0, 4, k, "");
    op(p[1], 1, MS_OP_START, 0, 4, k, "j");
    p[2] = plan(3, 0, 1);   /* made before the loop heard of the failure */
    op(p[2], 0, MS_OP_CREATE, 1, 0, k, "");
    p[3] = plan(4, 1, 1);   /* made after: it runs */
    op(p[3], 0, MS_OP_CREATE, 1, 0, k, "");
    /* the failure first (one node: its lane runs one op at a time) */
    for (k = 0; k < 2; k++)
        assert_int_equal(svc_queue_push(&f.d.exec.q, &p[k]->link), 0);
    start_exec(&f);
    outcomes(&f, 3, got, sizeof(got));
    assert_string_equal(got, "1:0:0 2:0:1 2:1:2");
    /* then a plan issued after the failed op but before the loop heard of
     * it (epoch 0: discarded), and one made after (epoch 1: it runs) */
    for (k = 2; k < 4; k++)
        assert_int_equal(svc_queue_push(&f.d.exec.q, &p[k]->link), 0);
    outcomes(&f, 2, got, sizeof(got));
    assert_string_equal(got, "3:0:2 4:0:0");
    svc_stop(&f.d);
    fx_teardown(&f);
}

static void test_stop_runs_nothing_more(void **state)
{
    fx_t f;
    svc_xplan_t *p = plan(1, 0, 1);
    ms_binst_t *inv;
    int n;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB", "best-fit", NULL);
    op(p, 0, MS_OP_CREATE, 0, 0, prof_3g(&f), "");
    atomic_store(&f.d.exec.stop, true);
    assert_int_equal(svc_queue_push(&f.d.exec.q, &p->link), 0);
    start_exec(&f);
    svc_stop(&f.d);
    assert_int_equal(svc_queue_len(&f.d.loop.q), 0);
    assert_int_equal(ms_backend_inventory(f.d.be, &inv, &n, NULL), MS_OK);
    assert_int_equal(n, 0);
    free(inv);
    fx_teardown(&f);
}

/* A clock whose monotonic reading moves a second each time it is read: the
 * hook's deadline comes after a fixed number of its polls, whatever the
 * machine's speed. */
static double tick_mono(void *ctx)
{
    return (double)atomic_fetch_add((atomic_long *)ctx, 1);
}

static double tick_wall(void *ctx)
{
    (void)ctx;
    return 1000000.0;
}

/* A MOVE (make-before-break) with the hook: two GIs, the job on the first. */
static svc_xplan_t *move_plan(fx_t *f, int64_t id)
{
    svc_xplan_t *p = plan(id, 0, 3);
    int k = prof_3g(f);

    op(p, 0, MS_OP_START, 0, 0, k, "mj");
    op(p, 1, MS_OP_CREATE, 0, 4, k, "");
    op(p, 2, MS_OP_MOVE, 0, 4, k, "mj");
    p->ops[2].op.from_gpu = 0;
    p->ops[2].op.from_start = 0;
    return p;
}

static void run_hook_case(const char *hook, const char *timeout, const char *want, const char *env_want)
{
    fx_t f;
    char env[96], cmd[256], got[128];
    const char *extra[] = { "--migrate-hook", cmd, "--migrate-timeout", timeout, NULL };
    svc_xplan_t *p;
    atomic_long ticks = 0;
    svc_clock_t clk = { tick_wall, tick_mono, &ticks };
    ms_backend_op_t create;
    ms_diag_t why;
    FILE *fp;
    char line[256];
    bool found = env_want == NULL;

    snprintf(env, sizeof(env), "/tmp/ms-hook-%d.env", (int)getpid());
    snprintf(cmd, sizeof(cmd), "env > %s; %s", env, hook);
    fx_setup(&f, "a=1xA100-40GB", "best-fit", extra);
    f.d.clock = &clk;
    memset(&create, 0, sizeof(create));   /* the source GI */
    create.op.kind = MS_OP_CREATE;
    create.op.prof = (int8_t)prof_3g(&f);
    create.job = "";
    assert_int_equal(ms_backend_run(f.d.be, &create, &why), MS_OK);
    p = move_plan(&f, 7);
    assert_int_equal(svc_queue_push(&f.d.exec.q, &p->link), 0);
    start_exec(&f);
    outcomes(&f, 3, got, sizeof(got));
    assert_string_equal(got, want);
    svc_stop(&f.d);
    if ((fp = fopen(env, "r")) != NULL) {
        while (!found && fgets(line, sizeof(line), fp) != NULL)
            found = strncmp(line, env_want, strlen(env_want)) == 0;
        fclose(fp);
    }
    assert_true(found);
    remove(env);
    fx_teardown(&f);
}

/* Is process pid gone (or a zombie, waiting for init to reap it)? Waits
 * up to 10 s for it: SIGKILL is immediate, so only a process nobody
 * killed takes that long. */
static bool gone(pid_t pid)
{
    int i;

    for (i = 0; i < 1000; i++) {
        char path[64], stat[256];
        FILE *fp;
        char *rp;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if ((fp = fopen(path, "r")) == NULL)
            return true;
        rp = fgets(stat, sizeof(stat), fp);
        fclose(fp);
        if (rp != NULL && (rp = strrchr(stat, ')')) != NULL && (rp[2] == 'Z' || rp[2] == 'X'))
            return true;
        usleep(10000);
    }
    return false;
}

/* Defect 9: a hook killed at --migrate-timeout left its children running,
 * so the move went on after the rollback. The hook's whole process group
 * is killed: its background child is gone once the op has failed. */
static void test_hook_group_killed(void **state)
{
    char pidfile[64], hook[160];
    FILE *fp;
    int pid = -1;

    (void)state;
    snprintf(pidfile, sizeof(pidfile), "/tmp/ms-hook-%d.pid", (int)getpid());
    snprintf(hook, sizeof(hook), "sleep 300 & echo $! > %s; wait", pidfile);
    run_hook_case(hook, "5", "7:0:0 7:1:0 7:2:1", NULL);
    assert_non_null(fp = fopen(pidfile, "r"));
    assert_int_equal(fscanf(fp, "%d", &pid), 1);
    fclose(fp);
    remove(pidfile);
    assert_true(pid > 1);
    assert_true(gone((pid_t)pid));
}

static void test_migration_hook(void **state)
{
    (void)state;
    /* the clock moves a second a poll (10 ms): an hour is ample for sh */
    run_hook_case("exit 0", "3600", "7:0:0 7:1:0 7:2:0", "MIGSCHED_MOVE=make-before-break");
    run_hook_case("exit 3", "3600", "7:0:0 7:1:0 7:2:1", "MIGSCHED_JOB=mj");
    /* no answer within --migrate-timeout on the daemon's clock: killed after
     * 5 polls, where a real clock would have waited 5 s */
    run_hook_case("sleep 30", "5", "7:0:0 7:1:0 7:2:1", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_discards_by_epoch),
        cmocka_unit_test(test_stop_runs_nothing_more),
        cmocka_unit_test(test_migration_hook),
        cmocka_unit_test(test_hook_group_killed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
