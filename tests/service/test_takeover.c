/* test_takeover.c - Kubernetes mode's ownership (issue 20, defects 1-3)
 * on the sim backend and a fake clock (fixture.c), the pods as a new
 * leader lists them from the API server:
 *   - a replica that starts while another leads (its store empty, the
 *     backend running the other's instances) changes nothing on the
 *     backend, and with the gate shut (not the Lease holder) no op runs;
 *   - the takeover (EXT_ADOPT) adopts every bound pod, a gang's every GPU
 *     (migsched.io/placements), from the inventory as it is now; nothing
 *     is placed on their slices after;
 *   - an instance no pod owns is held, and destroyed only once unowned for
 *     --unowned-grace; another owner's (dra:) is held for good.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"
#include "service/fixture.h"

#define NODES "a=2xA100-40GB b=2xA100-40GB"

static const char *const KUBE[] = { "--kube", "--unowned-grace", "60", NULL };

/* The other replica's instances, as the sim backend keeps them. */
static void inv_write(const char *dir, const char *instances)
{
    char path[128];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/sim-inventory.json", dir);
    assert_non_null(fp = fopen(path, "w"));
    fprintf(fp, "{\"ngpus\":4,\"uuid_seq\":100,\"instances\":[%s]}", instances);
    assert_int_equal(fclose(fp), 0);
}

#define INST(gpu, start, prof, job) \
    "{\"gpu\":" #gpu ",\"start\":" #start ",\"prof\":" #prof ",\"job\":\"" job "\",\"uuid\":\"\"}"

static int instances_of(fx_t *f, const char *job)
{
    ms_binst_t *inv;
    int n, i, k = 0;

    assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
    for (i = 0; i < n; i++)
        k += strcmp(inv[i].job, job) == 0;
    free(inv);
    return k;
}

/* A bound pod as the API server lists it: mig-<prof> x count, annotated
 * as the old leader's bind left it. */
static json_t *pod(const char *uid, const char *node, const char *prof, int count, const char *place,
                   const char *places)
{
    char res[64], cnt[8];
    json_t *ann;

    snprintf(res, sizeof(res), "migsched.io/mig-%s", prof);
    snprintf(cnt, sizeof(cnt), "%d", count);
    ann = json_pack("{s:s,s:s,s:s}", "migsched.io/placement", place, "migsched.io/profile", prof, "migsched.io/job",
                    uid);
    if (places != NULL) {
        json_object_set_new(ann, "migsched.io/placements", json_string(places));
        json_object_set_new(ann, "migsched.io/gpus", json_string(cnt));
    }
    return json_pack("{s:{s:s,s:s,s:s,s:o},s:{s:s,s:s,s:[{s:s,s:{s:{s:s}}}]},s:{s:s}}", "metadata", "name", uid,
                     "namespace", "default", "uid", uid, "annotations", ann, "spec", "nodeName", node,
                     "schedulerName", "migsched", "containers", "name", "c", "resources", "limits", res, cnt,
                     "status", "phase", "Running");
}

static void takeover(fx_t *f, json_t *pods)
{
    svc_msg_t *m = calloc(1, sizeof(*m));
    ext_msg_t *e = svc_ext_msg_new(EXT_ADOPT);

    assert_non_null(m);
    assert_non_null(e);
    e->pods = pods;
    m->kind = SVC_M_EXT;
    m->ext = e;
    fx_batch(f, &m, 1);
    assert_int_equal(m->status, 200);
    svc_msg_free(m);
}

static bool never(void *ctx)
{
    (void)ctx;
    return false;
}

/* Defect 1: a replica starting while another leads destroyed every bound
 * pod's instance at start-up (its empty store owned none). */
static void test_standby_start_changes_nothing(void **state)
{
    fx_t f;
    char dir[64];
    ms_backend_op_t op;
    ms_diag_t why;

    (void)state;
    fx_setup(&f, NODES, "best-fit", KUBE);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    inv_write(dir, INST(0, 0, 4, "k8s-p1") "," INST(2, 0, 2, "k8s-p2") "," INST(3, 6, 0, ""));
    fx_setup_dir(&f, dir, NODES, "best-fit", KUBE);
    ms_backend_set_gate(f.d.be, never, NULL);
    fx_start(&f);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(f.d.adopted, 0);
    fx_exec(&f);
    assert_int_equal(instances_of(&f, "k8s-p1"), 1);
    assert_int_equal(instances_of(&f, "k8s-p2"), 1);
    assert_int_equal(instances_of(&f, ""), 1);
    /* the gate: not the Lease holder, no op runs */
    memset(&op, 0, sizeof(op));
    op.op.kind = MS_OP_DESTROY;
    op.op.gpu = 3;
    op.op.start = 6;
    op.op.prof = 0;
    op.job = "";
    op.profile = "1g.5gb";
    assert_int_equal(ms_backend_run(f.d.be, &op, &why), MS_ESTATE);
    assert_non_null(strstr(why.msg, "not the leader"));
    assert_int_equal(instances_of(&f, ""), 1);
    fx_teardown(&f);
}

/* Defects 2 and 3: the new leader adopts the old one's pods, a gang on
 * both its GPUs, from the inventory as it is now; the next pod is not
 * placed on their slices; an unowned instance goes after the grace period
 * only, another owner's never. */
static void test_takeover_adopts_pods_and_gangs(void **state)
{
    fx_t f;
    char dir[64];
    json_t *pods;
    svc_job_t *g;

    (void)state;
    fx_setup(&f, NODES, "best-fit", KUBE);
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    /* a's two GPUs: the gang's 7g each; b: a 3g (its instance made by the
     * old leader's agent after this replica's start: absent from the sim
     * here, so it is created), an unowned 1g and a DRA claim's 1g */
    inv_write(dir, INST(0, 0, 4, "gang") "," INST(1, 0, 4, "gang") "," INST(3, 6, 0, "k8s-gone") ","
                   INST(3, 5, 0, "dra:claim-1"));
    fx_setup_dir(&f, dir, NODES, "best-fit", KUBE);
    fx_start(&f);
    pods = json_pack("[o,o]", pod("gang", "a", "7g.40gb", 2, "a/0/0", "a/0/0,a/1/0"),
                     pod("p3", "b", "3g.20gb", 1, "b/0/0", NULL));
    takeover(&f, pods);
    assert_non_null(g = svc_jobs_find(&f.d.jobs, "gang"));
    assert_int_equal(fx_state(&f, "gang"), MS_JOB_RUNNING);
    assert_true(g->slot >= 0);
    assert_int_equal(fx_state(&f, "p3"), MS_JOB_RUNNING);
    assert_int_equal(instances_of(&f, "p3"), 1);
    assert_int_equal(instances_of(&f, "gang"), 2);
    assert_int_equal(fx_state(&f, "k8s-gone"), MS_JOB_RUNNING);   /* held */
    assert_int_equal(fx_state(&f, "dra:claim-1"), MS_JOB_RUNNING);
    assert_int_equal(atomic_load(&f.d.own.unowned), 1);
    {
        svc_msg_t *m = fx_msg(SVC_M_METRICS, NULL);

        fx_batch(&f, &m, 1);
        assert_non_null(strstr(m->body, "\nmigsched_unowned_instances 1\n"));
        svc_msg_free(m);
    }
    /* no room for a 7g on a, nor on b: nothing overlaps what runs */
    assert_int_equal(fx_run(&f, "{\"id\":\"big\",\"profile\":\"7g.40gb\"}"), MS_JOB_QUEUED);
    assert_int_equal(instances_of(&f, "gang"), 2);

    /* before the grace period: kept */
    f.mono += 59;
    f.wall += 59;
    fx_batch(&f, NULL, 0);
    fx_exec(&f);
    assert_int_equal(instances_of(&f, "k8s-gone"), 1);
    /* after it: the unowned one goes, the DRA claim's stays */
    f.mono += 2;
    f.wall += 2;
    fx_batch(&f, NULL, 0);
    fx_exec(&f);
    assert_int_equal(f.d.own.destroyed, 1);
    assert_int_equal(instances_of(&f, "k8s-gone"), 0);
    assert_int_equal(instances_of(&f, "dra:claim-1"), 1);
    assert_int_equal(instances_of(&f, "gang"), 2);
    assert_int_equal(instances_of(&f, "p3"), 1);
    fx_teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standby_start_changes_nothing),
        cmocka_unit_test(test_takeover_adopts_pods_and_gangs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
