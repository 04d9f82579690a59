/* test_dra_flow.c - the DRA allocator's claim life cycle
 * (src/service/dra_commit.c, dra_model.c, dra_loop.c, dra_hook.c) on the
 * fixture of dra_fx.h.
 *
 * Properties held: a failed write is undone and tried again after
 * --dra-retry; a claim going frees its room for the next pod in the queue,
 * the pods' PriorityClasses ordering it;
 * an allocation nobody reserves expires, a reserved one does not; a node
 * where kube-scheduler's PostFilter wiped our allocation is avoided, a
 * claim deallocated after its pod went is no wipe; what
 * migsched cannot serve is said on the pod and nothing is written; the
 * webhook gates only pods that ask for managed devices, and answers by
 * its deadline when the loop does not (the pod admitted unchanged); a
 * standby decides nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "dra_fx.h"

/* A write refused (409): undone, the room free again, the pod tried
 * again after --dra-retry and not before. */
static void test_write_conflict(void **state)
{
    fx_t *f = *state;
    dra_work_t *w;
    alloc_t a;

    fx_a100_cluster(f, 1, 1);
    fx_ask(f, "c1", "7g.40gb");
    w = fx_take(f, DRA_W_ALLOC);
    assert_non_null(w);
    fx_answer(f, w, false, NULL);
    assert_int_equal(f->x->st.writes_failed, 1);
    fx_advance(f, 1.0);
    assert_null(fx_take(f, DRA_W_ALLOC));   /* not before the retry */
    fx_advance(f, 1.5);
    w = fx_take(f, DRA_W_ALLOC);
    assert_non_null(w);   /* the same GPU again: the failed decision freed it */
    fx_answer(f, w, true, &a);
    assert_string_equal(a.dev[0], "gpu-0-mig-7g40gb-0-0");
    json_decref(a.al);
}

/* Room comes free: the queued pod is placed. */
static void test_queue(void **state)
{
    fx_t *f = *state;
    dra_work_t *w;
    alloc_t a;

    fx_a100_cluster(f, 1, 1);
    fx_place(f, "q1", "7g.40gb", &a);
    json_decref(a.al);
    fx_ask(f, "q2", "4g.20gb");
    assert_null(fx_take(f, DRA_W_ALLOC));   /* queued: no room */
    fx_post(f, DRA_K_CLAIM, "DELETED", json_pack("{s:{s:s,s:s,s:s}}", "metadata", "name", "q1-gpu", "namespace", "t", "uid",
                                              "claim-q1"));
    fx_batch(f);
    w = fx_take(f, DRA_W_ALLOC);
    assert_non_null(w);
    fx_answer(f, w, true, &a);
    assert_string_equal(a.dev[0], "gpu-0-mig-4g20gb-5-0");
    json_decref(a.al);
}

/* The queue follows the pods' PriorityClasses (spec.priority): of two
 * pods waiting for the one room that comes free, the later one with the
 * higher priority gets it (in submission order it would be the first). */
static void test_priority(void **state)
{
    fx_t *f = *state;
    dra_work_t *w;
    alloc_t a;
    json_t *hi;

    fx_a100_cluster(f, 1, 1);
    fx_place(f, "p1", "7g.40gb", &a);
    json_decref(a.al);
    fx_ask(f, "lo", "4g.20gb");
    fx_post(f, DRA_K_CLAIM, "ADDED", fx_claim(f, "hi", json_pack("[o]", fx_profile_req("mig", "4g.20gb")), NULL));
    hi = fx_pod("hi", true);
    json_object_set_new(json_object_get(hi, "spec"), "priority", json_integer(1000));
    fx_post(f, DRA_K_POD, "ADDED", hi);
    fx_batch(f);
    assert_null(fx_take(f, DRA_W_ALLOC));   /* both queued: no room */
    fx_post(f, DRA_K_CLAIM, "DELETED", json_pack("{s:{s:s,s:s,s:s}}", "metadata", "name", "p1-gpu", "namespace", "t", "uid",
                                              "claim-p1"));
    fx_batch(f);
    w = fx_take(f, DRA_W_ALLOC);
    assert_non_null(w);
    fx_answer(f, w, true, &a);
    assert_string_equal(a.pod, "hi");
    json_decref(a.al);
    assert_null(fx_take(f, DRA_W_ALLOC));   /* one 4g.20gb per A100 */
}

/* An allocation of ours nobody reserved expires after --dra-expire; a
 * reserved one does not. */
static void test_expire(void **state)
{
    fx_t *f = *state;
    dra_work_t *w;
    alloc_t a, b;

    fx_a100_cluster(f, 1, 2);
    fx_ask(f, "e1", "3g.20gb");
    fx_answer(f, fx_take(f, DRA_W_ALLOC), true, &a);
    fx_allocated(f, "e1", a.al, false);
    fx_place(f, "e2", "3g.20gb", &b);   /* reserved */
    fx_advance(f, 30);
    assert_null(fx_take(f, DRA_W_DEALLOC));
    fx_advance(f, 31);
    w = fx_take(f, DRA_W_DEALLOC);
    assert_non_null(w);
    assert_non_null(strstr(w->path, "/resourceclaims/e1-gpu"));
    assert_null(fx_take(f, DRA_W_DEALLOC));   /* one, not e2's */
    dra_work_free(w);
    json_decref(a.al);
    json_decref(b.al);
}

/* kube-scheduler's PostFilter wiped our allocation (the node failed
 * another filter): the pod goes elsewhere. */
static void test_wiped(void **state)
{
    fx_t *f = *state;
    alloc_t a, b;
    json_t *o;
    dra_work_t *w;

    fx_a100_cluster(f, 2, 1);
    fx_ask(f, "w1", "7g.40gb");
    fx_answer(f, fx_take(f, DRA_W_ALLOC), true, &a);
    fx_allocated(f, "w1", a.al, false);
    /* wiped: allocation and reservedFor gone, the pod ungated and pending */
    o = fx_claim(f, "w1", json_pack("[o]", fx_profile_req("mig", "7g.40gb")), NULL);
    json_object_set_new(json_object_get(o, "metadata"), "annotations",
                        json_pack("{s:s}", "migsched.io/dra-allocator", "me"));
    fx_post(f, DRA_K_CLAIM, "MODIFIED", o);
    fx_post(f, DRA_K_POD, "MODIFIED", fx_pod("w1", false));
    fx_batch(f);
    assert_int_equal(f->x->st.wiped, 1);
    w = fx_take(f, DRA_W_ALLOC);
    if (w == NULL)
        fail_msg("not decided again: %s", fx_events_text(f));
    fx_answer(f, w, true, &b);
    assert_string_not_equal(a.node, b.node);
    assert_false(w == NULL);
    json_decref(a.al);
    json_decref(b.al);
}

/* A claim deallocated after its pod went (kube-controller-manager clears
 * it when reservedFor empties) is no wipe: no count, no state for the
 * pod that is gone. */
static void test_gone_not_wiped(void **state)
{
    fx_t *f = *state;
    alloc_t a;
    json_t *o;

    fx_a100_cluster(f, 1, 1);
    fx_place(f, "g1", "7g.40gb", &a);
    fx_post(f, DRA_K_POD, "DELETED", fx_pod("g1", false));
    o = fx_claim(f, "g1", json_pack("[o]", fx_profile_req("mig", "7g.40gb")), NULL);
    json_object_set_new(json_object_get(o, "metadata"), "annotations",
                        json_pack("{s:s}", "migsched.io/dra-allocator", "me"));
    fx_post(f, DRA_K_CLAIM, "MODIFIED", o);
    fx_batch(f);
    assert_int_equal(f->x->st.wiped, 0);
    assert_null(dra_tab_get(&f->x->pst, "pod-g1"));
    json_decref(a.al);
}

/* What migsched cannot serve is said on the pod, and nothing written. */
static void test_refused(void **state)
{
    fx_t *f = *state;
    char *ev;

    fx_a100_cluster(f, 1, 1);
    fx_post(f, DRA_K_CLAIM, "ADDED",
         fx_claim(f, "r1", json_pack("[o]", fx_request("mig", "mig.nvidia.com",
                                                 "device.attributes['" DRV "'].profile.matches('1g.*')", 1)), NULL));
    fx_post(f, DRA_K_POD, "ADDED", fx_pod("r1", true));
    fx_batch(f);
    assert_null(fx_take(f, DRA_W_ALLOC));
    ev = fx_events_text(f);
    assert_non_null(strstr(ev, "MigschedRefused"));
    assert_non_null(strstr(ev, "CEL expression"));
    /* a pod with no managed claim loses the gate, nothing else */
    fx_post(f, DRA_K_CLAIM, "ADDED",
         fx_claim(f, "nic", json_pack("[o]", fx_request("n", "nic.example.com", NULL, 1)), NULL));
    fx_post(f, DRA_K_POD, "ADDED", fx_pod("nic", true));
    fx_batch(f);
    assert_null(fx_take(f, DRA_W_ALLOC));
    {
        dra_work_t *w = fx_take(f, DRA_W_UNGATE);

        assert_non_null(w);
        assert_string_equal(w->pod_name, "nic");
        dra_work_free(w);
    }
}

/* The webhook's question, from the loop's objects. */
static void test_review(void **state)
{
    fx_t *f = *state;
    dra_review_t rv;
    dra_msg_t m;
    char why[200];
    const char *body = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
                       "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\","
                       "\"namespace\":\"t\",\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":"
                       "[{\"name\":\"g\",\"resourceClaimTemplateName\":\"mig\"}]}}}}";
    int i;

    fx_post(f, DRA_K_TMPL, "ADDED",
         json_pack("{s:{s:s,s:s},s:{s:{s:{s:[o]}}}}", "metadata", "name", "mig", "namespace", "t", "spec", "spec",
                   "devices", "requests", fx_profile_req("r", "1g.5gb")));
    fx_post(f, DRA_K_TMPL, "ADDED",
         json_pack("{s:{s:s,s:s},s:{s:{s:{s:[o]}}}}", "metadata", "name", "nic", "namespace", "t", "spec", "spec",
                   "devices", "requests", fx_request("n", "nic.example.com", NULL, 1)));
    fx_batch(f);
    for (i = 0; i < 3; i++) {
        char b[1024], *at;

        snprintf(b, sizeof(b), "%s", body);
        if (i > 0 && (at = strstr(b, "\"mig\"}")) != NULL)
            memcpy(at, i == 1 ? "\"nic\"}" : "\"zzz\"}", 6);
        assert_int_equal(dra_parse_review(b, strlen(b), &rv, why, sizeof(why)), 0);
        memset(&m, 0, sizeof(m));
        m.review = &rv;
        dra_decide_review(f->x, &m);
        assert_int_equal(m.gate, i == 0);
        assert_int_equal(m.nunknown, i == 2);   /* an unknown template is named back */
        if (i == 2)
            assert_string_equal(m.unknown[0], "t/zzz");
        while (m.nunknown > 0)
            free(m.unknown[--m.nunknown]);
        free(m.unknown);
        dra_review_free(&rv);
    }
}

/* --- the webhook's deadline ---------------------------------------------------------- */

static const char review_mig[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u7\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\","
    "\"namespace\":\"t\",\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"resourceClaims\":"
    "[{\"name\":\"g\",\"resourceClaimTemplateName\":\"mig\"}]}}}}";

typedef struct hook_call {
    svc_dra_t *x;
    double timeout_s;
    int status;
    char *out;
    double took;
    atomic_bool finished;
} hook_call_t;

static void *hook_thread(void *arg)
{
    hook_call_t *c = arg;
    double t0 = ms_clock_mono();

    dra_hook_serve(c->x, "POST webhook", review_mig, strlen(review_mig), t0 + c->timeout_s, &c->status, &c->out);
    c->took = ms_clock_mono() - t0;
    atomic_store(&c->finished, true);
    return NULL;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

    nanosleep(&ts, NULL);
}

/* Run the webhook on its own thread, as the worker does; the test's
 * thread plays the loop (batches) when serve_loop is set. true once it
 * returned within limit_s; a hung call fails the test (the thread is left
 * behind: the process ends with the failure). */
static bool hook_run(fx_t *f, hook_call_t *c, double timeout_s, bool serve_loop, double limit_s)
{
    pthread_t th;
    double t0 = ms_clock_mono();

    memset(c, 0, sizeof(*c));
    c->x = f->x;
    c->timeout_s = timeout_s;
    assert_int_equal(pthread_create(&th, NULL, hook_thread, c), 0);
    while (!atomic_load(&c->finished) && ms_clock_mono() - t0 < limit_s) {
        if (serve_loop)
            fx_batch(f);
        sleep_s(0.01);
    }
    if (!atomic_load(&c->finished))
        return false;
    pthread_join(th, NULL);
    return true;
}

static void mig_template(fx_t *f)
{
    fx_post(f, DRA_K_TMPL, "ADDED",
         json_pack("{s:{s:s,s:s},s:{s:{s:{s:[o]}}}}", "metadata", "name", "mig", "namespace", "t", "spec", "spec",
                   "devices", "requests", fx_profile_req("r", "1g.5gb")));
    fx_batch(f);
}

/* The loop answers in time: the pod is gated (a managed claim). */
static void test_webhook_in_time(void **state)
{
    fx_t *f = *state;
    hook_call_t c;

    mig_template(f);
    assert_true(hook_run(f, &c, 5.0, true, 20.0));
    assert_int_equal(c.status, 200);
    assert_non_null(c.out);
    assert_non_null(strstr(c.out, "\"patch\""));   /* our gate */
    assert_int_equal(atomic_load(&f->x->hook_late), 0);
    free(c.out);
}

/* The loop does not answer (stuck, or slow: nobody takes its queue here):
 * the webhook answers by its deadline, well inside the API server's
 * timeoutSeconds, and admits the pod unchanged (failurePolicy Ignore's
 * answer); the question left behind is freed by the loop when it gets to
 * it (ASan: no leak, no use after free). Hangs, and fails at limit_s,
 * with a wait that has no deadline. */
static void test_webhook_deadline(void **state)
{
    fx_t *f = *state;
    hook_call_t c;
    json_t *o;

    mig_template(f);
    if (!hook_run(f, &c, 0.3, false, 10.0))
        fail_msg("the webhook did not answer within 10 s of a 0.3 s deadline while the loop was stuck");
    assert_true(c.took >= 0.25);
    assert_true(c.took < 5.0);   /* the API server's default timeoutSeconds: 10, ours 5 */
    assert_int_equal(c.status, 200);
    assert_non_null(o = json_loads(c.out, 0, NULL));
    assert_true(json_is_true(json_object_get(json_object_get(o, "response"), "allowed")));
    assert_null(json_object_get(json_object_get(o, "response"), "patch"));   /* unchanged: no gate */
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "response"), "uid")), "u7");
    json_decref(o);
    free(c.out);
    assert_int_equal(atomic_load(&f->x->hook_late), 1);
    fx_batch(f);   /* the loop gets to the abandoned question: answered into nothing, freed */
    /* and the next call, with a loop, is answered as before */
    assert_true(hook_run(f, &c, 5.0, true, 20.0));
    assert_non_null(strstr(c.out, "\"patch\""));
    free(c.out);
}

/* A stuck loop with /dra/status: 503 by the deadline, not a hung worker. */
static void test_status_deadline(void **state)
{
    fx_t *f = *state;
    int status = 0;
    char *out = NULL;
    double t0 = ms_clock_mono();

    dra_hook_serve(f->x, "GET status", NULL, 0, t0 + 0.2, &status, &out);
    assert_true(ms_clock_mono() - t0 < 5.0);
    assert_int_equal(status, 503);
    assert_non_null(strstr(out, "in time"));
    free(out);
}

/* A standby (leader election on, not the leader) decides nothing. */
static void test_standby(void **state)
{
    fx_t f;

    (void)state;
    fx_init(&f, true);
    fx_a100_cluster(&f, 1, 1);
    fx_ask(&f, "s1", "1g.5gb");
    assert_false(f.x->built);
    assert_null(fx_take(&f, DRA_W_ALLOC));
    fx_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_conflict, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_queue, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_priority, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_expire, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_wiped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_gone_not_wiped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_review, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_in_time, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_webhook_deadline, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_status_deadline, fx_setup, fx_teardown),
        cmocka_unit_test(test_standby),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
