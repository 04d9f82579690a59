/* ext_bind.c - an extender worker: a bind for real, in --kube mode
 * (--kube-api, --kubeconfig or in-cluster). The loop never waits on the
 * network; this thread does, with the HTTP connection suspended:
 *   1. the loop turns the pod's reservation into a start (ms_sched_bind);
 *   2. wait until the scheduler reports the job running: the backend has
 *      created the instance and started the job on it (the sim backend
 *      plays the node agents in-process), at most BIND_WAIT_S by the
 *      daemon's clock; asked again each time the loop says a job left
 *      STARTING (ext_runs.c), not after naps;
 *   3. POST .../pods/NAME/binding with the pod's UID (a recreated pod of
 *      the same name is refused) and, in the Binding's metadata, what it
 *      got as annotations, which the API server writes into the pod in the
 *      same update as spec.nodeName (BindingREST's setPodNodeAndMetadata):
 *        migsched.io/instance-uuid, migsched.io/profile,
 *        migsched.io/placement ("node/gpu/start"), migsched.io/gpu-uuid,
 *        migsched.io/job, cdi.k8s.io/migsched: migsched.io/mig=<instance
 *      uuid> (the CDI device reference; a time-sliced slot names its GPU).
 *      One write: no pod is ever seen annotated and not bound, or bound
 *      without its annotations, and a failed bind leaves nothing to undo
 *      (a PATCH before the Binding cost the API server a second write);
 *   4. a refusal (or an instance that never ran): the instance is
 *      released, and the reply is {"Error": why}; an outcome it cannot
 *      know (no answer, a 5xx, and the pod not bound by us when asked)
 *      keeps the instance for kube-scheduler's retry (post_binding).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "kube/kube.h"
#include "service/extender_int.h"

#define BIND_WAIT_S 8.0

/* Release the pod's job if it is still job_id (rollback of a bind). */
static void rollback(svc_t *d, const char *uid, const char *job_id)
{
    ext_msg_t *e = svc_ext_msg_new(EXT_RELEASE);
    int status;
    char *body = NULL;

    if (e == NULL || (e->bind.uid = strdup(uid)) == NULL) {
        svc_ext_msg_free(e);
        return;
    }
    e->rollback = true;
    snprintf(e->job_id, sizeof(e->job_id), "%s", job_id);
    e = svc_ext_call(d, e, &status, &body);
    svc_ext_msg_free(e);
    free(body);
}

bool svc_ext_pod_path(const char *ns, const char *name, const char *sub, char *buf, size_t len)
{
    char ens[200], ename[800];

    if (!ms_kube_escape(ns, ens, sizeof(ens)) || !ms_kube_escape(name, ename, sizeof(ename)))
        return false;
    return (size_t)snprintf(buf, len, "/api/v1/namespaces/%s/pods/%s%s", ens, ename, sub) < len;
}

/* A short reason from an API-server answer: its Status message. */
static void api_why(const char *what, long status, const char *resp, const char *err, char *why, size_t len)
{
    json_t *o = resp != NULL ? json_loads(resp, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(o, "message"));

    if (status == 0)
        snprintf(why, len, "migsched: %s: %.200s", what, err);
    else
        snprintf(why, len, "migsched: %s: HTTP %ld: %.200s", what, status, msg != NULL ? msg : "");
    json_decref(o);
}

/* Is the pod bound to b->node, by us (its job annotation is job_id)? Read
 * within 5 s: the shipped kube-scheduler waits 10 s for the bind (its
 * httpTimeout, deploy/kubernetes/scheduler/). */
static bool bound_to(svc_t *d, const svc_ext_bind_t *b, const char *job_id)
{
    char path[1200];
    json_t *o = NULL;
    bool yes = false;

    if (svc_ext_pod_path(b->ns, b->name, "", path, sizeof(path)) &&
        (o = svc_ext_get_json(d, path, 5000L, NULL)) != NULL) {
        const char *node = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
        const char *uid = json_string_value(json_object_get(json_object_get(o, "metadata"), "uid"));
        const char *job = json_string_value(
            json_object_get(json_object_get(json_object_get(o, "metadata"), "annotations"), "migsched.io/job"));

        yes = node != NULL && strcmp(node, b->node) == 0 && uid != NULL && strcmp(uid, b->uid) == 0 &&
              job != NULL && strcmp(job, job_id) == 0;
    }
    json_decref(o);
    return yes;
}

/* 2. Until the job runs: its state with the instance (NULL, why set, when
 * it will not run or not in time). The state is asked of the loop again
 * when the loop says a job left STARTING (ext_runs.c), or after RUNS_MAX_S
 * at the latest; the generation is taken before each question, so a
 * change between the answer and the wait ends the wait at once. */
#define RUNS_MAX_S 1.0

static ext_msg_t *ask_running(svc_t *d, svc_ext_runs_t *runs, const svc_ext_bind_t *b, const char *job_id,
                              char *why, size_t len)
{
    double t0 = svc_clock_mono(d->clock);

    for (;;) {
        ext_msg_t *q = svc_ext_msg_new(EXT_STATE);
        uint64_t gen = svc_ext_runs_gen(runs);
        char *body = NULL;
        int status, st;

        if (q == NULL) {
            snprintf(why, len, "migsched: out of memory");
            return NULL;
        }
        snprintf(q->job_id, sizeof(q->job_id), "%s", job_id);
        q = svc_ext_call(d, q, &status, &body);
        free(body);
        st = q != NULL ? q->state : -1;
        if (st == MS_JOB_RUNNING)
            return q;
        if (st != MS_JOB_STARTING) {
            snprintf(why, len, "migsched: the instance for %.60s/%.120s could not be created%s%.200s", b->ns,
                     b->name, q != NULL && q->why[0] ? ": " : "", q != NULL ? q->why : "");
            svc_ext_msg_free(q);
            return NULL;
        }
        svc_ext_msg_free(q);
        if (svc_clock_mono(d->clock) - t0 > BIND_WAIT_S) {
            snprintf(why, len, "migsched: the instance was not ready within %.0f s", BIND_WAIT_S);
            return NULL;
        }
        (void)svc_ext_runs_wait(runs, gen, RUNS_MAX_S);
    }
}

static ext_msg_t *wait_running(svc_t *d, const svc_ext_bind_t *b, const char *job_id, char *why, size_t len)
{
    svc_ext_runs_t *runs = &d->ext->runs;
    ext_msg_t *q;

    svc_ext_runs_enter(runs);   /* (the loop signals only while a bind waits) */
    q = ask_running(d, runs, b, job_id, why, len);
    svc_ext_runs_leave(runs);
    return q;
}

/* The pod's annotations: what its instance is (NULL: out of memory). */
static json_t *bind_annotations(const char *job_id, const ext_msg_t *q)
{
    char place[SVC_NODE_NAME_MAX + 32], cdi[96];
    const char *dev = q->inst_uuid[0] ? q->inst_uuid : q->gpu_uuid;
    json_t *ann;

    snprintf(place, sizeof(place), "%s/%d/%d", q->node, q->gpu, q->start);
    snprintf(cdi, sizeof(cdi), "migsched.io/mig=%s", dev);
    ann = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "migsched.io/instance-uuid", q->inst_uuid, "migsched.io/profile",
                    q->profile, "migsched.io/placement", place, "migsched.io/gpu-uuid", q->gpu_uuid,
                    "migsched.io/job", job_id, "cdi.k8s.io/migsched", cdi);
    if (ann != NULL && q->ninst > 1) {
        char n[16];

        /* annotation values are strings (a number is refused: 422) */
        snprintf(n, sizeof(n), "%d", q->ninst);
        if (json_object_set_new(ann, "migsched.io/gpus", json_string(n)) != 0 ||
            /* a gang's every GPU, so that a new leader adopts all of them */
            json_object_set_new(ann, "migsched.io/placements", json_string(q->places)) != 0) {
            json_decref(ann);
            return NULL;
        }
    }
    return ann;
}

/* What a Binding's POST came to. */
typedef enum { BIND_DONE, BIND_REFUSED, BIND_UNKNOWN } bind_outcome_t;

/* 3. The Binding, carrying the annotations (the API server writes them
 * with spec.nodeName in one update of the pod); why is set unless DONE.
 * An answer that does not say the write failed (none at all: a timeout or
 * a lost connection; or a 5xx, which the API server also gives when etcd
 * committed late) is checked against the pod itself: bound by us is
 * success. Otherwise the outcome is UNKNOWN, and the caller keeps the
 * instance: a Binding that landed after all must not find it gone (the
 * pod would be bound to nothing); kube-scheduler retries the pod, whose
 * filter then passes only this node and whose bind finds it bound or
 * binds it (a deleted pod's instance goes with the pod watch). */
static bind_outcome_t post_binding(svc_t *d, const svc_ext_bind_t *b, const char *job_id, const ext_msg_t *q,
                                   char *why, size_t len)
{
    json_t *ann = bind_annotations(job_id, q);
    json_t *bo = ann != NULL ? json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:o},s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
                                         "Binding", "metadata", "name", b->name, "namespace", b->ns, "uid", b->uid,
                                         "annotations", ann, "target", "apiVersion", "v1", "kind", "Node", "name",
                                         b->node)
                             : NULL;
    char *body = bo != NULL ? json_dumps(bo, JSON_COMPACT) : NULL, path[1200], err[256], *resp = NULL;
    long hs = 0;
    int rq;
    double deadline;
    bind_outcome_t rc = BIND_DONE;

    json_decref(bo);
    if (body == NULL || !svc_ext_pod_path(b->ns, b->name, "/binding", path, sizeof(path))) {
        snprintf(why, len, "migsched: out of memory");
        free(body);
        return BIND_REFUSED;
    }
    /* sent only while this replica leads (its wait for the instance may
     * have outlasted the leadership checked when the bind came in), even
     * if this thread is held up from here to the transfer */
    deadline = svc_ext_write_deadline(d, 30.0);
    svc_ext_stall(d->ext_stall_bind, b->name, b->ns, "failpoint stall-before-binding: the bind sleeps 5 s");
    if ((rq = ms_kube_request_by(d->kube, "POST", path, body, deadline, &hs, &resp, err, sizeof(err))) != 0)
        hs = 0;   /* no answer */
    if (rq == MS_KUBE_LATE) {
        /* nothing sent, so nothing can have landed: the pod is the next
         * leader's to place (kube-scheduler retries it) */
        snprintf(why, len, "migsched: this replica's leadership ended before the binding was sent");
        rc = BIND_REFUSED;
    } else if (hs != 200 && hs != 201 && hs != 202) {
        api_why("binding the pod", hs, resp, err, why, len);
        /* 409 (bound already: by an earlier attempt of ours whose answer
         * kube-scheduler did not wait for, its httpTimeout?), no answer
         * or a 5xx (this write may have landed): bound by us is success,
         * and rolling back would take the running pod's instance */
        if ((hs == 409 || hs == 0 || hs >= 500) && bound_to(d, b, job_id))
            rc = BIND_DONE;
        else
            rc = hs == 0 || hs >= 500 ? BIND_UNKNOWN : BIND_REFUSED;
    }
    free(body);
    free(resp);
    return rc;
}

/* 1. The loop's bind; the job's id, or false with the answer in *status,
 * *out (e is freed either way). */
static bool loop_bind(svc_t *d, ext_msg_t *e, const svc_ext_bind_t *b, char *job_id, size_t len, int *status,
                      char **out)
{
    if ((e->bind.uid = strdup(b->uid)) == NULL || (e->bind.node = strdup(b->node)) == NULL ||
        (e->bind.name = strdup(b->name)) == NULL || (e->bind.ns = strdup(b->ns)) == NULL) {
        svc_ext_msg_free(e);
        *status = 500;
        *out = NULL;
        return false;
    }
    e = svc_ext_call(d, e, status, out);
    if (e == NULL || !e->ok) {
        svc_ext_msg_free(e);
        return false;   /* its reply says why */
    }
    snprintf(job_id, len, "%s", e->job_id);
    svc_ext_msg_free(e);
    free(*out);
    *out = NULL;
    return true;
}

void svc_ext_kube_bind(svc_t *d, ext_msg_t *e, int *status, char **out)
{
    svc_ext_bind_t b = e->bind;
    char job_id[160], why[512];
    double t0 = svc_clock_mono(d->clock);
    ext_msg_t *q = NULL;
    bind_outcome_t bo = BIND_REFUSED;

    memset(&e->bind, 0, sizeof(e->bind));
    if (!loop_bind(d, e, &b, job_id, sizeof(job_id), status, out)) {
        svc_ext_bind_free(&b);
        return;
    }
    if ((q = wait_running(d, &b, job_id, why, sizeof(why))) != NULL)
        bo = post_binding(d, &b, job_id, q, why, sizeof(why));
    *status = 200;
    if (bo == BIND_DONE) {
        ms_log("info", "pod bound",
               json_pack("{s:s,s:s,s:s,s:s,s:s,s:f}", "pod", b.name, "namespace", b.ns, "node", b.node, "job",
                         job_id, "instance", q->inst_uuid, "seconds", svc_clock_mono(d->clock) - t0));
        *out = svc_ext_bind_reply(NULL);
    } else if (bo == BIND_UNKNOWN) {
        ms_log("warn", "bind's outcome unknown; the instance is kept for the retry",
               json_pack("{s:s,s:s,s:s,s:s,s:s}", "pod", b.name, "namespace", b.ns, "node", b.node, "job", job_id,
                         "why", why));
        *out = svc_ext_bind_reply(why);
    } else {
        ms_log("warn", "bind failed; rolled back",
               json_pack("{s:s,s:s,s:s,s:s}", "pod", b.name, "namespace", b.ns, "node", b.node, "why", why));
        rollback(d, b.uid, job_id);
        *out = svc_ext_bind_reply(why);
    }
    svc_ext_msg_free(q);
    svc_ext_bind_free(&b);
}
