/* fixture.c - migschedd's core without its threads (fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "service/extender.h"
#include "service/fixture.h"

static double fake_wall(void *ctx)
{
    return ((fx_t *)ctx)->wall;
}

static double fake_mono(void *ctx)
{
    return ((fx_t *)ctx)->mono;
}

static void open_backend(fx_t *f)
{
    const ms_node_spec_t *nd = ms_cluster_spec_nodes(f->spec);
    int nn = ms_cluster_spec_nnodes(f->spec), ng = ms_cluster_spec_ngpus(f->spec), i, g, k = 0;
    const ms_geom_t **geom = calloc((size_t)ng, sizeof(*geom));
    bool *mig = calloc((size_t)ng, sizeof(*mig));
    ms_backend_cfg_t bc;
    ms_diag_t why;

    assert_non_null(geom);
    assert_non_null(mig);
    for (i = 0; i < nn; i++)
        for (g = 0; g < nd[i].ngpus; g++, k++) {
            geom[k] = nd[i].geom;
            mig[k] = nd[i].mode == MS_NODE_MIG;
        }
    memset(&bc, 0, sizeof(bc));
    bc.kind = f->cfg.backend;
    bc.state_dir = f->cfg.state_dir;
    bc.ngpus = ng;
    bc.op_delay_s = 0;
    bc.fail = f->cfg.sim_fail;
    bc.gpu_geom = geom;
    bc.gpu_mig = mig;
    bc.keep_foreign = true;   /* the agent's DRA driver's instances are never ours */
    if (ms_backend_open(&bc, &f->d.be, &why) != MS_OK)
        fail_msg("backend: %s", why.msg);
    free(geom);
    free(mig);
}

void fx_setup_dir(fx_t *f, const char *dir, const char *node, const char *policy, const char *const *extra)
{
    const char *argv[40] = { "migschedd", "--state-dir", dir, "--policy", policy, "--commit-delay", "0",
                             "--op-delay", "0" };
    char nodes[sizeof(f->nodes)], *save = NULL, *one;
    int argc = 9;
    ms_diag_t diag;

    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "%s", dir);
    snprintf(f->nodes, sizeof(f->nodes), "%s", node);
    assert_int_equal(ms_cluster_spec_create(&f->spec), MS_OK);
    snprintf(nodes, sizeof(nodes), "%s", node);
    for (one = strtok_r(nodes, " ", &save); one != NULL; one = strtok_r(NULL, " ", &save)) {
        ms_diag_clear(&diag);
        if (ms_cluster_spec_add(f->spec, one, 0, &diag) != MS_OK)
            fail_msg("node %s: %s", one, diag.msg);
    }
    /* the command line a daemon of these nodes would have */
    for (one = f->nodes; argc < 30;) {
        char *sp = strchr(one, ' ');

        argv[argc++] = "--node";
        argv[argc++] = one;
        if (sp == NULL)
            break;
        *sp = '\0';
        one = sp + 1;
    }
    while (extra != NULL && *extra != NULL && argc < 39)
        argv[argc++] = *extra++;
    assert_int_equal(svc_cfg_parse(&f->cfg, argc, (char **)(uintptr_t)argv), 0);
    f->wall = 1000000.0;
    f->mono = 500.0;
    f->clock.wall = fake_wall;
    f->clock.mono = fake_mono;
    f->clock.ctx = f;
    f->d.cfg = &f->cfg;
    f->d.clock = &f->clock;
    f->d.listen_fd = -1;
    f->d.spec = f->spec;
    svc_metrics_init(&f->d.met);
    pthread_mutex_init(&f->d.tmu, NULL);
    open_backend(f);
    assert_int_equal(svc_store_open(&f->d.store, dir), 0);
    snprintf(f->d.id_prefix, sizeof(f->d.id_prefix), "jtest");
    assert_int_equal(svc_init(&f->d), 0);
    assert_int_equal(svc_ext_init(&f->d), 0);
}

void fx_setup(fx_t *f, const char *node, const char *policy, const char *const *extra)
{
    char dir[64];

    snprintf(dir, sizeof(dir), "/tmp/ms-svc-XXXXXX");
    assert_non_null(mkdtemp(dir));
    fx_setup_dir(f, dir, node, policy, extra);
}

void fx_start(fx_t *f)
{
    if (svc_restart(&f->d, f->wall) != 0)
        fail_msg("start-up: %s", f->d.start_why[0] ? f->d.start_why : "failed (see the log)");
    f->started = true;
}

int fx_try_start(fx_t *f)
{
    int rc = svc_restart(&f->d, f->wall);

    f->started = rc == 0;
    return rc;
}

void fx_stop(fx_t *f)
{
    svc_queue_close(&f->d.exec.q);
    svc_queue_close(&f->d.loop.q);
    svc_queue_close(&f->d.sync.q);
    svc_fini(&f->d);
    svc_ext_free(&f->d);
    svc_store_close(f->d.store);
    ms_backend_close(f->d.be);
    ms_cluster_spec_destroy(f->spec);
    pthread_mutex_destroy(&f->d.tmu);
    svc_metrics_destroy(&f->d.met);
    svc_cfg_free(&f->cfg);
    f->spec = NULL;
}

void fx_teardown(fx_t *f)
{
    char cmd[128];

    fx_stop(f);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

svc_msg_t *fx_submit_msg(const char *body)
{
    svc_msg_t *m = calloc(1, sizeof(*m));
    svc_err_t err;

    assert_non_null(m);
    m->kind = SVC_M_SUBMIT;
    if (svc_req_parse(body, strlen(body), &m->id, &m->req, &m->canon, &err) != 0)
        fail_msg("%s: %s", body, err.msg);
    return m;
}

svc_msg_t *fx_msg(int kind, const char *id)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    assert_non_null(m);
    m->kind = kind;
    if (id != NULL)
        assert_non_null(m->id = strdup(id));
    return m;
}

int fx_sync(fx_t *f)
{
    svc_qlink_t *l = svc_queue_drain(&f->d.sync.q), *next;
    int n = 0;

    if (l != NULL)
        assert_int_equal(svc_store_sync(f->d.store), 0);
    for (; l != NULL; l = next, n++) {
        next = l->next;
        svc_ticket_release(&f->d, SVC_QITEM(l, svc_ticket_t, link));
    }
    return n;
}

void fx_batch(fx_t *f, svc_msg_t **msgs, int n)
{
    svc_qlink_t *head = NULL, **tail = &head;
    int i;

    for (i = 0; i < n; i++) {
        msgs[i]->t_enq = f->mono;
        *tail = &msgs[i]->link;
        tail = &msgs[i]->link.next;
    }
    *tail = NULL;
    svc_loop_batch(&f->d, head, f->wall, false);
    fx_sync(f);
}

int fx_exec(fx_t *f)
{
    svc_qlink_t *outcomes;
    int n;

    /* the executor on this thread: each op runs as it is dispatched */
    f->d.exec.mode = SVC_EXEC_INLINE;
    n = svc_exec_step(&f->d, f->mono);
    outcomes = svc_queue_drain(&f->d.loop.q);
    if (outcomes != NULL || n > 0) {   /* the outcomes are the syncer's to free */
        svc_loop_batch(&f->d, outcomes, f->wall, false);
        fx_sync(f);
    }
    return n > 0 || outcomes != NULL ? (n > 0 ? n : 1) : 0;
}

int fx_run(fx_t *f, const char *body)
{
    svc_msg_t *m = fx_submit_msg(body);
    int st;

    fx_batch(f, &m, 1);
    assert_true(m->status == 201 || m->status == 200);
    while (fx_exec(f) > 0)
        ;
    st = m->rjob != NULL ? m->rjob->state : -1;
    svc_msg_free(m);
    return st;
}

int fx_state(fx_t *f, const char *id)
{
    svc_job_t *j = svc_jobs_find(&f->d.jobs, id);

    return j != NULL ? j->state : -1;
}

long fx_sql(fx_t *f, const char *sql)
{
    char path[128];
    sqlite3 *db;
    sqlite3_stmt *st;
    long v = -1;

    snprintf(path, sizeof(path), "%s/migschedd.db", f->dir);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(st) == SQLITE_ROW)
        v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}
