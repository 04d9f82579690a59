/* test_ext.c - the extender's loop handlers (src/service/ext_loop.c,
 * ext_pods.c) driven without threads on two sim nodes and a fake clock
 * (fixture.c): filter holds the pod on a node that can take it and tells
 * the others apart; prioritize puts the held node first; the hold lapses
 * when the fake clock passes --extender-ttl, and not before; bind turns
 * the hold into a start, or moves it to the node kube-scheduler chose;
 * state reports the instance; a release (the pod went) frees it; a pod no
 * node can serve is unresolvable everywhere. */
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

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    const char *const extra[] = { "--extender-ttl", "30", NULL };

    if (f == NULL)
        return -1;
    fx_setup(f, "a=1xA100-40GB b=1xA100-40GB t=1xA100-40GB:timeslice=4", "best-fit", extra);
    fx_start(f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;

    fx_teardown(f);
    free(f);
    return 0;
}

/* ExtenderArgs for pod uid asking for resource res on the nodes (a JSON
 * array's inside). */
static ext_msg_t *args(int verb, const char *uid, const char *res, const char *nodes)
{
    ext_msg_t *e = svc_ext_msg_new(verb);
    char body[1024];
    svc_err_t err;

    assert_non_null(e);
    snprintf(body, sizeof(body),
             "{\"Pod\":{\"metadata\":{\"name\":\"p-%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"migsched.io/%s\":\"1\"},"
             "\"requests\":{\"migsched.io/%s\":\"1\"}}}],\"schedulerName\":\"migsched\"},"
             "\"status\":{\"phase\":\"Pending\"}},\"Nodes\":null,\"NodeNames\":[%s]}",
             uid, uid, res, res, nodes);
    if (svc_ext_parse_args(body, strlen(body), NULL, &e->args, &err) != 0)
        fail_msg("%s: %s", err.field, err.msg);
    return e;
}

static ext_msg_t *bind_msg(const char *uid, const char *node)
{
    ext_msg_t *e = svc_ext_msg_new(EXT_BIND);
    char body[256];
    svc_err_t err;

    assert_non_null(e);
    snprintf(body, sizeof(body), "{\"PodName\":\"p-%s\",\"PodNamespace\":\"default\",\"PodUID\":\"%s\",\"Node\":\"%s\"}",
             uid, uid, node);
    assert_int_equal(svc_ext_parse_bind(body, strlen(body), &e->bind, &err), 0);
    return e;
}

/* One extender message through a loop iteration; its JSON answer (the
 * caller decrefs) and its message (freed unless kept). */
static json_t *call(fx_t *f, ext_msg_t *e, ext_msg_t **keep)
{
    svc_msg_t *m = calloc(1, sizeof(*m));
    json_t *o;

    assert_non_null(m);
    m->kind = SVC_M_EXT;
    m->ext = e;
    fx_batch(f, &m, 1);
    assert_int_equal(m->status, 200);
    o = json_loads(m->body, 0, NULL);
    assert_non_null(o);
    if (keep != NULL) {
        *keep = m->ext;
        m->ext = NULL;
    }
    svc_msg_free(m);
    return o;
}

/* The filter's verdict for node: "pass", "fail" or "never". */
static const char *verdict(json_t *o, const char *node)
{
    json_t *names = json_object_get(o, "NodeNames");
    size_t i;

    for (i = 0; i < json_array_size(names); i++)
        if (strcmp(json_string_value(json_array_get(names, i)), node) == 0)
            return "pass";
    if (json_object_get(json_object_get(o, "FailedAndUnresolvableNodes"), node) != NULL)
        return "never";
    if (json_object_get(json_object_get(o, "FailedNodes"), node) != NULL)
        return "fail";
    return "?";
}

static const char *held_node(fx_t *f, const char *id)
{
    svc_job_t *j = svc_jobs_find(&f->d.jobs, id);

    assert_non_null(j);
    return svc_ext_job_node(&f->d, j);
}

static void test_filter_holds_and_the_clock_lapses_it(void **state)
{
    fx_t *f = *state;
    json_t *o;
    const char *held;
    int i, top = -1;

    o = call(f, args(EXT_FILTER, "u1", "mig-3g.20gb", "\"a\",\"b\",\"t\",\"zz\""), NULL);
    assert_string_equal(verdict(o, "a"), "pass");
    assert_string_equal(verdict(o, "b"), "pass");
    assert_string_equal(verdict(o, "t"), "never");    /* time-sliced: no MIG instance */
    assert_string_equal(verdict(o, "zz"), "never");   /* not ours */
    json_decref(o);
    assert_int_equal(fx_state(f, "k8s-u1"), MS_JOB_RESERVED);
    held = held_node(f, "k8s-u1");
    /* prioritize: the held node first, 10 */
    o = call(f, args(EXT_PRIORITIZE, "u1", "mig-3g.20gb", "\"a\",\"b\""), NULL);
    for (i = 0; i < 2; i++) {
        json_t *x = json_array_get(o, (size_t)i);

        if (json_integer_value(json_object_get(x, "Score")) == 10)
            top = i;
        else
            assert_true(json_integer_value(json_object_get(x, "Score")) <= 9);
    }
    assert_true(top >= 0);
    assert_string_equal(json_string_value(json_object_get(json_array_get(o, (size_t)top), "Host")), held);
    json_decref(o);
    /* the hold lasts --extender-ttl on the fake clock, and lapses after it */
    f->wall += 29;
    fx_batch(f, NULL, 0);
    assert_int_equal(fx_state(f, "k8s-u1"), MS_JOB_RESERVED);
    f->wall += 2;
    fx_batch(f, NULL, 0);
    assert_int_equal(fx_state(f, "k8s-u1"), MS_JOB_CANCELLED);
}

static void test_bind_starts_and_release_frees(void **state)
{
    fx_t *f = *state;
    json_t *o;
    ext_msg_t *e;
    const char *held;
    char other[8];

    json_decref(call(f, args(EXT_FILTER, "u2", "mig-7g.40gb", "\"a\",\"b\""), NULL));
    held = held_node(f, "k8s-u2");
    snprintf(other, sizeof(other), "%s", strcmp(held, "a") == 0 ? "b" : "a");
    /* kube-scheduler chose the other node: the hold moves there and starts */
    o = call(f, bind_msg("u2", other), &e);
    assert_string_equal(json_string_value(json_object_get(o, "Error")), "");
    assert_true(e->ok);
    json_decref(o);
    while (fx_exec(f) > 0)
        ;
    assert_string_equal(held_node(f, e->job_id), other);
    assert_int_equal(fx_state(f, e->job_id), MS_JOB_RUNNING);
    assert_int_equal(fx_state(f, "k8s-u2"), MS_JOB_CANCELLED);   /* the first hold */
    /* state: where it runs, with its instance */
    {
        ext_msg_t *q = svc_ext_msg_new(EXT_STATE), *r;

        assert_non_null(q);
        snprintf(q->job_id, sizeof(q->job_id), "%s", e->job_id);
        json_decref(call(f, q, &r));
        assert_int_equal(r->state, MS_JOB_RUNNING);
        assert_string_equal(r->node, other);
        assert_true(strncmp(r->inst_uuid, "MIG-", 4) == 0);
        assert_true(strncmp(r->gpu_uuid, "GPU-", 4) == 0);
        svc_ext_msg_free(r);
    }
    /* a bind retried: bound already, same job */
    o = call(f, bind_msg("u2", other), NULL);
    assert_string_equal(json_string_value(json_object_get(o, "Error")), "");
    json_decref(o);
    /* the pod is deleted: its instance is freed */
    {
        ext_msg_t *rel = svc_ext_msg_new(EXT_RELEASE);

        assert_non_null(rel);
        assert_non_null(rel->bind.uid = strdup("u2"));
        json_decref(call(f, rel, NULL));
    }
    assert_int_equal(fx_state(f, e->job_id), MS_JOB_CANCELLED);
    while (fx_exec(f) > 0)
        ;
    {
        ms_binst_t *inv;
        int n;

        assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
        free(inv);
        assert_int_equal(n, 0);
    }
    svc_ext_msg_free(e);
}

/* No node can serve it: unresolvable everywhere, no job made; a bind for a
 * pod no filter saw is refused with why. */
static void test_unservable_and_unknown(void **state)
{
    fx_t *f = *state;
    json_t *o;

    o = call(f, args(EXT_FILTER, "u3", "gpu-share", "\"a\",\"b\""), NULL);
    assert_string_equal(verdict(o, "a"), "never");
    assert_string_equal(verdict(o, "b"), "never");
    json_decref(o);
    assert_int_equal(fx_state(f, "k8s-u3"), -1);
    o = call(f, bind_msg("nobody", "a"), NULL);
    assert_non_null(strstr(json_string_value(json_object_get(o, "Error")), "no filter call"));
    json_decref(o);
}

/* A product name no GPU model has (issue 20, defect 19): never, with the
 * nearest profiles named, and no job made. */
static void test_no_such_profile_names_the_nearest(void **state)
{
    fx_t *f = *state;
    json_t *o = call(f, args(EXT_FILTER, "u5", "mig-5g.25gb", "\"a\",\"b\""), NULL);
    const char *why;

    assert_string_equal(verdict(o, "a"), "never");
    assert_string_equal(verdict(o, "b"), "never");
    why = json_string_value(json_object_get(json_object_get(o, "FailedAndUnresolvableNodes"), "a"));
    assert_non_null(why);
    assert_non_null(strstr(why, "5g.25gb"));
    assert_non_null(strstr(why, "nearest"));
    json_decref(o);
    assert_int_equal(fx_state(f, "k8s-u5"), -1);
}

/* --- ids and names at Kubernetes' limits (issue 20, defect 16) ----------- */

/* ExtenderArgs of a pod (its uid, name and namespace as given) asking for
 * a 3g.20gb on node. */
static ext_msg_t *long_args(int verb, const char *uid, const char *name, const char *ns, const char *node)
{
    ext_msg_t *e = svc_ext_msg_new(verb);
    size_t n = strlen(uid) + strlen(name) + strlen(ns) + strlen(node) + 512;
    char *body = malloc(n);
    svc_err_t err;

    assert_non_null(e);
    assert_non_null(body);
    snprintf(body, n,
             "{\"Pod\":{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\"},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
             "{\"migsched.io/mig-3g.20gb\":\"1\"}}}]}},\"NodeNames\":[\"%s\"]}",
             name, ns, uid, node);
    if (svc_ext_parse_args(body, strlen(body), NULL, &e->args, &err) != 0)
        fail_msg("%s: %s", err.field, err.msg);
    free(body);
    return e;
}

static ext_msg_t *long_bind(const char *uid, const char *name, const char *ns, const char *node)
{
    ext_msg_t *e = svc_ext_msg_new(EXT_BIND);
    size_t n = strlen(uid) + strlen(name) + strlen(ns) + strlen(node) + 128;
    char *body = malloc(n);
    svc_err_t err;

    assert_non_null(e);
    assert_non_null(body);
    snprintf(body, n, "{\"PodName\":\"%s\",\"PodNamespace\":\"%s\",\"PodUID\":\"%s\",\"Node\":\"%s\"}",
             name, ns, uid, node);
    assert_int_equal(svc_ext_parse_bind(body, strlen(body), &e->bind, &err), 0);
    free(body);
    return e;
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);

    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* Filter and bind pod (uid, name, ns) on node until it runs; its job id. */
static void run_pod(fx_t *f, const char *uid, const char *name, const char *ns, const char *node, char *job,
                    size_t len)
{
    json_t *o;
    ext_msg_t *e;

    o = call(f, long_args(EXT_FILTER, uid, name, ns, node), NULL);
    assert_string_equal(verdict(o, node), "pass");
    json_decref(o);
    o = call(f, long_bind(uid, name, ns, node), &e);
    assert_string_equal(json_string_value(json_object_get(o, "Error")), "");
    json_decref(o);
    while (fx_exec(f) > 0)
        ;
    snprintf(job, len, "%s", e->job_id);
    svc_ext_msg_free(e);
    assert_int_equal(fx_state(f, job), MS_JOB_RUNNING);
}

/* The backend's instances: exactly one, tagged job. */
static void one_instance_of(fx_t *f, const char *job)
{
    ms_binst_t *inv;
    int n;

    assert_int_equal(ms_backend_inventory(f->d.be, &inv, &n, NULL), MS_OK);
    assert_int_equal(n, 1);
    assert_string_equal(inv[0].job, job);
    free(inv);
}

/* A pod whose uid is not an id as it is (128 bytes; characters ids do not
 * take) gets a valid id all the same, its instance is tagged with exactly
 * that id, and a restart adopts the instance instead of destroying it. An
 * ordinary UID keeps "k8s-<uid>". */
static void test_long_uid_survives_restart(void **state)
{
    fx_t f;
    char *uid = repeat('u', 128), job[160], job2[160], dir[64];
    const char *uuid = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

    (void)state;
    fx_setup(&f, "a=2xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    run_pod(&f, uid, "p", "default", "a", job, sizeof(job));
    assert_true(svc_id_valid(job));
    assert_true(strncmp(job, "k8s-x", 5) == 0);
    one_instance_of(&f, job);
    /* an ordinary UID keeps "k8s-<uid>" (the ids of earlier versions) */
    run_pod(&f, uuid, "q", "default", "a", job2, sizeof(job2));
    assert_string_equal(job2, "k8s-3f2504e0-4f89-11d3-9a0c-0305e82c3301");
    /* odd characters are hashed too */
    {
        char id[SVC_EXT_ID_MAX];

        svc_ext_job_id("a/b c\"d", "", 1, id, sizeof(id));
        assert_true(svc_id_valid(id));
        svc_ext_job_id(uid, "a", 1000000000, id, sizeof(id));
        assert_true(svc_id_valid(id));
        assert_true(strlen(id) < SVC_EXT_ID_MAX);
    }
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    fx_setup_dir(&f, dir, "a=2xA100-40GB", "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(fx_state(&f, job), MS_JOB_RUNNING);
    assert_int_equal(fx_state(&f, job2), MS_JOB_RUNNING);
    fx_teardown(&f);
    free(uid);
}

/* A pod with the longest legal name (253) in the longest namespace (63),
 * on a node with the longest legal name (253): schedulable (the filter
 * answered "out of memory"), its k8s.pod label whole, its node whole in the
 * job's placement, in the state the bind annotates the pod with, and after
 * a restart (from the store). */
static void test_long_names_schedulable_and_whole(void **state)
{
    fx_t f;
    char *name = repeat('p', 253), *ns = repeat('n', 63), *node = repeat('w', 253), spec[300], job[160],
         dir[64], podlabel[400];
    const char *uid = "0b7c4e1a-92f5-4c3d-8e6f-1a2b3c4d5e6f";
    svc_job_t *j;

    (void)state;
    snprintf(spec, sizeof(spec), "%s=1xA100-40GB", node);
    fx_setup(&f, spec, "best-fit", NULL);
    fx_start(&f);
    run_pod(&f, uid, name, ns, node, job, sizeof(job));
    assert_string_equal(job, "k8s-0b7c4e1a-92f5-4c3d-8e6f-1a2b3c4d5e6f");
    assert_non_null(j = svc_jobs_find(&f.d.jobs, job));
    snprintf(podlabel, sizeof(podlabel), "%s/%s", ns, name);
    assert_string_equal(json_string_value(json_object_get(j->req.labels, "k8s.pod")), podlabel);
    assert_string_equal(j->place.node_name, node);
    {
        ext_msg_t *q = svc_ext_msg_new(EXT_STATE), *r;

        assert_non_null(q);
        snprintf(q->job_id, sizeof(q->job_id), "%s", job);
        json_decref(call(&f, q, &r));
        assert_string_equal(r->node, node);
        svc_ext_msg_free(r);
    }
    snprintf(dir, sizeof(dir), "%s", f.dir);
    fx_stop(&f);
    fx_setup_dir(&f, dir, spec, "best-fit", NULL);
    fx_start(&f);
    assert_int_equal(f.d.destroyed_at_start, 0);
    assert_int_equal(fx_state(&f, job), MS_JOB_RUNNING);
    assert_non_null(j = svc_jobs_find(&f.d.jobs, job));
    assert_string_equal(j->place.node_name, node);
    fx_teardown(&f);
    free(name);
    free(ns);
    free(node);
}

/* --- the prioritize's scores (ext_score.c) ------------------------------- */

static const char *const PNODES = "\"n0\",\"n1\",\"n2\",\"n3\",\"n4\"";
static const char *const PNAME[] = { "n0", "n1", "n2", "n3", "n4" };
static const char *const PROF[] = { "1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb" };

static uint64_t prng(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static void release_pod(fx_t *f, const char *uid)
{
    ext_msg_t *rel = svc_ext_msg_new(EXT_RELEASE);

    assert_non_null(rel);
    assert_non_null(rel->bind.uid = strdup(uid));
    json_decref(call(f, rel, NULL));
    while (fx_exec(f) > 0)
        ;
}

/* A pod of profile prof filtered over every node and bound where it is
 * held; 1 if it runs. */
static int place_pod(fx_t *f, const char *uid, const char *prof)
{
    char res[40];
    json_t *o;
    ext_pod_t *p;
    int ok;

    snprintf(res, sizeof(res), "mig-%s", prof);
    json_decref(call(f, args(EXT_FILTER, uid, res, PNODES), NULL));
    if ((p = svc_ext_pod_find(f->d.ext, uid)) == NULL || p->job == NULL ||
        svc_ext_job_state(&f->d, p->job) != MS_JOB_RESERVED)
        return 0;
    o = call(f, bind_msg(uid, svc_ext_job_node(&f->d, p->job)), NULL);
    ok = strcmp(json_string_value(json_object_get(o, "Error")), "") == 0;
    json_decref(o);
    while (fx_exec(f) > 0)
        ;
    return ok;
}

/* The prioritize of pod uid (filtered already) equals a scoring from
 * scratch now: ms_sched_node_scores, 0..9, the held node 10. */
static void prioritize_is_fresh(fx_t *f, const char *uid, const char *prof)
{
    char res[40];
    ms_sched_req_t r;
    ms_diag_t diag;
    int sc[5], i;
    json_t *o;
    ext_pod_t *p = svc_ext_pod_find(f->d.ext, uid);
    const char *held = "";

    if (p != NULL && p->job != NULL && svc_ext_job_state(&f->d, p->job) == MS_JOB_RESERVED)
        held = svc_ext_job_node(&f->d, p->job);
    memset(&r, 0, sizeof(r));
    r.profile = prof;
    r.isolation = MS_ISO_MIG;
    ms_diag_clear(&diag);
    assert_int_equal(ms_sched_node_scores(f->d.sched, &r, (const char *const *)PNAME, 5, sc, &diag), MS_OK);
    snprintf(res, sizeof(res), "mig-%s", prof);
    o = call(f, args(EXT_PRIORITIZE, uid, res, PNODES), NULL);
    assert_int_equal(json_array_size(o), 5);
    for (i = 0; i < 5; i++) {
        json_t *x = json_array_get(o, (size_t)i);
        int want = strcmp(PNAME[i], held) == 0 ? 10 : sc[i] < 0 ? 0 : sc[i] > 9 ? 9 : sc[i];

        assert_string_equal(json_string_value(json_object_get(x, "Host")), PNAME[i]);
        if (json_integer_value(json_object_get(x, "Score")) != want)
            fail_msg("pod %s (%s) on %s: prioritize %d, from scratch %d", uid, prof, PNAME[i],
                     (int)json_integer_value(json_object_get(x, "Score")), want);
    }
    json_decref(o);
}

/* Property: after random binds and releases, and with another pod's bind
 * or release between a pod's filter and its prioritize, the prioritize's
 * scores (the filter's, kept, or scored again) equal a scoring from
 * scratch, on every node, for every profile. */
static void test_prioritize_scores_equal_fresh(void **state)
{
    fx_t f;
    const char *const extra[] = { "--extender-ttl", "30", NULL };
    char bound[64][16], uid[16];
    int nb = 0, step, k, serial = 0;
    uint64_t x = 25;

    (void)state;
    memset(&f, 0, sizeof(f));
    fx_setup(&f, "n0=2xA100-40GB n1=2xA100-40GB n2=1xA100-40GB n3=2xA100-40GB n4=1xA100-40GB", "fa+", extra);
    fx_start(&f);
    for (step = 0; step < 120; step++) {
        int op = (int)(prng(&x) % 3);
        const char *prof = PROF[prng(&x) % 5];

        if (op == 2) {
            /* a probe filtered, then another pod changes the cluster, then
             * the probe's prioritize */
            json_decref(call(&f, args(EXT_FILTER, "probe", "mig-3g.20gb", PNODES), NULL));
            op = nb > 0 && prng(&x) % 2 ? 1 : 0;
            if (op == 0) {
                snprintf(uid, sizeof(uid), "r%d", serial++);
                if (place_pod(&f, uid, prof) && nb < 64)
                    snprintf(bound[nb++], sizeof(bound[0]), "%s", uid);
            } else {
                k = (int)(prng(&x) % (uint64_t)nb);
                release_pod(&f, bound[k]);
                memmove(bound[k], bound[nb - 1], sizeof(bound[0]));
                nb--;
            }
            prioritize_is_fresh(&f, "probe", "3g.20gb");
            release_pod(&f, "probe");
        } else if (op == 0 || nb == 0) {
            snprintf(uid, sizeof(uid), "r%d", serial++);
            if (place_pod(&f, uid, prof) && nb < 64)
                snprintf(bound[nb++], sizeof(bound[0]), "%s", uid);
        } else {
            k = (int)(prng(&x) % (uint64_t)nb);
            release_pod(&f, bound[k]);
            memmove(bound[k], bound[nb - 1], sizeof(bound[0]));
            nb--;
        }
        for (k = 0; k < 5; k++) {
            char res[40];

            snprintf(res, sizeof(res), "mig-%s", PROF[k]);
            json_decref(call(&f, args(EXT_FILTER, "probe", res, PNODES), NULL));
            prioritize_is_fresh(&f, "probe", PROF[k]);
            release_pod(&f, "probe");
        }
    }
    fx_teardown(&f);
}

/* ms_sched_node_scores_kept equals ms_sched_node_scores for every
 * profile on every node, listed in order and reversed. */
static void kept_is_fresh(fx_t *f, int step)
{
    const char *rev[5];
    ms_sched_req_t r;
    ms_diag_t diag;
    int kept[5], fresh[5], i, k, o;

    for (i = 0; i < 5; i++)
        rev[i] = PNAME[4 - i];
    for (k = 0; k < 5; k++)
        for (o = 0; o < 2; o++) {
            const char *const *nodes = o == 0 ? (const char *const *)PNAME : rev;

            memset(&r, 0, sizeof(r));
            r.profile = PROF[k];
            r.isolation = MS_ISO_MIG;
            ms_diag_clear(&diag);
            assert_int_equal(ms_sched_node_scores_kept(f->d.sched, &r, nodes, 5, kept, &diag), MS_OK);
            assert_int_equal(ms_sched_node_scores(f->d.sched, &r, nodes, 5, fresh, &diag), MS_OK);
            for (i = 0; i < 5; i++)
                if (kept[i] != fresh[i])
                    fail_msg("step %d, %s on %s: kept %d, from scratch %d", step, PROF[k], nodes[i], kept[i],
                             fresh[i]);
        }
}

/* Property: the scores the scheduler keeps per node (issue 25: kept while
 * none of the node's GPUs changed) equal a scoring from scratch after
 * random binds, releases and holds, on every node, for every profile. */
static void test_kept_scores_equal_fresh(void **state)
{
    fx_t f;
    const char *const extra[] = { "--extender-ttl", "30", NULL };
    char bound[64][16], uid[16];
    int nb = 0, step, k, serial = 0;
    uint64_t x = 77;

    (void)state;
    memset(&f, 0, sizeof(f));
    fx_setup(&f, "n0=2xA100-40GB n1=2xA100-40GB n2=1xA100-40GB n3=2xA100-40GB n4=1xA100-40GB", "fa+", extra);
    fx_start(&f);
    for (step = 0; step < 200; step++) {
        unsigned op = (unsigned)(prng(&x) % 4);

        if (op <= 1 || nb == 0) {
            snprintf(uid, sizeof(uid), "r%d", serial++);
            if (place_pod(&f, uid, PROF[prng(&x) % 5]) && nb < 64)
                snprintf(bound[nb++], sizeof(bound[0]), "%s", uid);
        } else if (op == 2) {
            k = (int)(prng(&x) % (uint64_t)nb);
            release_pod(&f, bound[k]);
            memmove(bound[k], bound[nb - 1], sizeof(bound[0]));
            nb--;
        } else {
            /* a hold (a filter's reservation), scored while it stands */
            char res[40];

            snprintf(res, sizeof(res), "mig-%s", PROF[prng(&x) % 5]);
            json_decref(call(&f, args(EXT_FILTER, "probe", res, PNODES), NULL));
            kept_is_fresh(&f, step);
            release_pod(&f, "probe");
        }
        kept_is_fresh(&f, step);
    }
    fx_teardown(&f);
}

/* Property (--extender-filter-nodes K): after random binds and releases,
 * a filter that holds offers the held node, which scored best, and the
 * best-scored of the others, min(K, nodes with room) in all; every node
 * it leaves out scored no better than any it offers; it names no node
 * that fails now, and every node that never can. One that holds nothing
 * names every node, as with K = 0. */
static void test_filter_offers_the_best(void **state)
{
    fx_t f;
    const char *const extra[] = { "--extender-filter-nodes", "2", NULL };
    char uid[16], res[40];
    int step, k, i, serial = 0, pre[5], room, offered, top;
    uint64_t x = 91;

    (void)state;
    memset(&f, 0, sizeof(f));
    fx_setup(&f, "n0=2xA100-40GB n1=2xA100-40GB n2=1xA100-40GB n3=2xA100-40GB n4=1xA100-40GB", "fa+", extra);
    fx_start(&f);
    for (step = 0; step < 60; step++) {
        snprintf(uid, sizeof(uid), "r%d", serial++);
        if (!place_pod(&f, uid, PROF[prng(&x) % 5]) && step % 7 == 0)
            release_pod(&f, uid);
        for (k = 0; k < 5; k++) {
            ms_sched_req_t r;
            ms_diag_t diag;
            json_t *o;
            const char *held = "";
            ext_pod_t *p;
            int worst_in = 11, best_out = -1;

            memset(&r, 0, sizeof(r));
            r.profile = PROF[k];
            r.isolation = MS_ISO_MIG;
            ms_diag_clear(&diag);
            assert_int_equal(ms_sched_node_scores(f.d.sched, &r, (const char *const *)PNAME, 5, pre, &diag), MS_OK);
            snprintf(res, sizeof(res), "mig-%s", PROF[k]);
            o = call(&f, args(EXT_FILTER, "probe", res, "\"n0\",\"n1\",\"n2\",\"n3\",\"n4\",\"zz\""), NULL);
            p = svc_ext_pod_find(f.d.ext, "probe");
            if (p != NULL && p->job != NULL && svc_ext_job_state(&f.d, p->job) == MS_JOB_RESERVED)
                held = svc_ext_job_node(&f.d, p->job);
            for (room = 0, offered = 0, top = -1, i = 0; i < 5; i++) {
                const char *v = verdict(o, PNAME[i]);

                room += pre[i] >= 0;
                top = pre[i] > top ? pre[i] : top;
                if (held[0] == '\0') {
                    assert_string_equal(v, pre[i] >= 0 ? "pass" : "fail");
                    continue;
                }
                assert_true(strcmp(v, "pass") == 0 || strcmp(v, "?") == 0);
                offered += strcmp(v, "pass") == 0;
                if (strcmp(PNAME[i], held) == 0)
                    assert_string_equal(v, "pass");
                else if (strcmp(v, "pass") == 0 && pre[i] < worst_in)
                    worst_in = pre[i];
                else if (strcmp(v, "?") == 0 && pre[i] > best_out)
                    best_out = pre[i];
            }
            if (held[0] != '\0') {
                for (i = 0; i < 5; i++)
                    if (strcmp(PNAME[i], held) == 0 && pre[i] != top)
                        fail_msg("step %d, %s: held on %s, scored %d of the best %d", step, PROF[k], held, pre[i], top);
                assert_int_equal(offered, room < 2 ? room : 2);
                if (best_out > worst_in)
                    fail_msg("step %d, %s: left out a node scored %d, offered one scored %d", step, PROF[k],
                             best_out, worst_in);
                assert_int_equal(json_object_size(json_object_get(o, "FailedNodes")), 0);
            }
            assert_string_equal(verdict(o, "zz"), "never");
            json_decref(o);
            release_pod(&f, "probe");
        }
    }
    fx_teardown(&f);
}

/* A pod's namespace is its tenant when that tenant is declared (else the
 * default tenant: the pod is not refused), and its spec.priority its job's
 * priority: the scheduler's view of the filter's held job says so; a pod
 * of a tenant at its limit is held nowhere. */
static void test_pod_tenant_and_priority(void **state)
{
    const char *const extra[] = { "--tenant", "team-a:limit=1", NULL };
    const char *ns[] = { "team-a", "nobody", "team-a" };
    fx_t f;
    int k;

    (void)state;
    fx_setup(&f, "a=1xA100-40GB b=1xA100-40GB", "best-fit", extra);
    fx_start(&f);
    for (k = 0; k < 3; k++) {
        ext_msg_t *e = svc_ext_msg_new(EXT_FILTER);
        ms_sched_job_info_t info;
        char body[1024], id[32];
        svc_err_t err;
        json_t *o;

        assert_non_null(e);
        snprintf(body, sizeof(body),
                 "{\"Pod\":{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"%s\",\"uid\":\"v%d\"},"
                 "\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
                 "{\"migsched.io/mig-1g.5gb\":\"1\"}}}]}},\"NodeNames\":[\"a\",\"b\"]}",
                 k, ns[k], k, 7 - k);
        assert_int_equal(svc_ext_parse_args(body, strlen(body), NULL, &e->args, &err), 0);
        o = call(&f, e, NULL);
        snprintf(id, sizeof(id), "k8s-v%d", k);
        if (k == 2) {   /* team-a at its limit (1 slice): no node now, no hold */
            assert_string_equal(verdict(o, "a"), "fail");
            assert_string_equal(verdict(o, "b"), "fail");
            json_decref(o);
            assert_true(svc_jobs_find(&f.d.jobs, id) == NULL || fx_state(&f, id) != MS_JOB_RESERVED);
            break;
        }
        json_decref(o);
        assert_int_equal(fx_state(&f, id), MS_JOB_RESERVED);
        assert_int_equal(ms_sched_job(f.d.sched, svc_jobs_find(&f.d.jobs, id)->slot, &info), MS_OK);
        assert_int_equal(info.priority, 7 - k);
        assert_int_equal(info.tenant, ms_sched_tenant_find(f.d.sched, k == 0 ? "team-a" : "default"));
    }
    assert_true(ms_sched_tenant_find(f.d.sched, "team-a") != ms_sched_tenant_find(f.d.sched, "default"));
    fx_teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_filter_holds_and_the_clock_lapses_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_starts_and_release_frees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unservable_and_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_such_profile_names_the_nearest, setup, teardown),
        cmocka_unit_test(test_long_uid_survives_restart),
        cmocka_unit_test(test_long_names_schedulable_and_whole),
        cmocka_unit_test(test_prioritize_scores_equal_fresh),
        cmocka_unit_test(test_kept_scores_equal_fresh),
        cmocka_unit_test(test_filter_offers_the_best),
        cmocka_unit_test(test_pod_tenant_and_priority),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
