/* extender_kube.c - the extender's Kubernetes side (--kube-api,
 * --kubeconfig or in-cluster): binding for real, and the pod watch.
 *
 * A bind, on one of the HTTP front's extender workers (http.c; the loop never
 * waits on the network):
 *   1. the loop turns the pod's reservation into a start (ms_sched_bind);
 *   2. wait until the scheduler reports the job running: the backend has
 *      created the instance and started the job on it (the sim backend
 *      plays the node agents in-process);
 *   3. PATCH the pod (JSON merge patch; metadata.uid in it makes the API
 *      server refuse a recreated pod of the same name) with what it got:
 *        migsched.io/instance-uuid, migsched.io/profile,
 *        migsched.io/placement ("node/gpu/start"), migsched.io/gpu-uuid,
 *        cdi.k8s.io/migsched: migsched.io/mig=<instance uuid>
 *      (the CDI device reference the container runtime resolves from the
 *      spec file the node agent writes; a time-sliced slot names its GPU);
 *   4. POST .../pods/NAME/binding with the pod's UID;
 *   5. any failure: the annotations are removed (best effort), the
 *      instance is released, and the reply is {"Error": why}.
 * The pod watch (list+watch of /api/v1/pods) frees the instance of a pod
 * that completes (phase Succeeded or Failed: ms_sched_finished) or is
 * deleted (cancel), and after every (re)list the instances of pods that
 * went away meanwhile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube.h"
#include "service/extender.h"
#include "service/extender_int.h"

#define BIND_WAIT_S 8.0

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

    nanosleep(&ts, NULL);
}

static ext_msg_t *msg_new(int verb)
{
    ext_msg_t *e = calloc(1, sizeof(*e));

    if (e != NULL)
        e->verb = verb;
    return e;
}

/* Release the pod's job if it is still job_id (rollback of a bind). */
static void rollback(svc_t *d, const char *uid, const char *job_id)
{
    ext_msg_t *e = msg_new(EXT_RELEASE);
    int status;
    char *body = NULL;

    if (e == NULL || (e->bind.uid = strdup(uid)) == NULL) {
        svc_ext_msg_free(e);
        return;
    }
    e->rollback = true;
    snprintf(e->job_id, sizeof(e->job_id), "%s", job_id);
    e = svc__ext_call(d, e, &status, &body);
    svc_ext_msg_free(e);
    free(body);
}

static bool pod_path(const char *ns, const char *name, const char *sub, char *buf, size_t len)
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

/* Is the pod bound to b->node, by us (its job annotation is job_id)? */
static bool bound_to(svc_t *d, const svc_ext_bind_t *b, const char *job_id)
{
    char path[1200], err[256], *resp = NULL;
    long hs = 0;
    json_t *o;
    bool yes = false;

    if (!pod_path(b->ns, b->name, "", path, sizeof(path)) ||
        ms_kube_request(d->kube, "GET", path, NULL, &hs, &resp, err, sizeof(err)) != 0 || hs != 200) {
        free(resp);
        return false;
    }
    if ((o = json_loads(resp, 0, NULL)) != NULL) {
        const char *node = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
        const char *uid = json_string_value(json_object_get(json_object_get(o, "metadata"), "uid"));
        const char *job = json_string_value(
            json_object_get(json_object_get(json_object_get(o, "metadata"), "annotations"), "migsched.io/job"));

        yes = node != NULL && strcmp(node, b->node) == 0 && uid != NULL && strcmp(uid, b->uid) == 0 &&
              job != NULL && strcmp(job, job_id) == 0;
    }
    json_decref(o);
    free(resp);
    return yes;
}

void svc__ext_kube_bind(svc_t *d, ext_msg_t *e, int *status, char **out)
{
    svc_ext_bind_t b = e->bind;
    char job_id[160], why[512], path[1200], err[256], *resp = NULL, *body = NULL;
    double t0 = svc_mono(), nap = 0.002;
    ext_msg_t *q = NULL;
    json_t *ann = NULL, *patch = NULL;
    long hs = 0;
    bool patched = false;

    memset(&e->bind, 0, sizeof(e->bind));
    if ((e->bind.uid = strdup(b.uid)) == NULL || (e->bind.node = strdup(b.node)) == NULL ||
        (e->bind.name = strdup(b.name)) == NULL || (e->bind.ns = strdup(b.ns)) == NULL) {
        svc_ext_msg_free(e);
        svc_ext_bind_free(&b);
        *status = 500;
        *out = NULL;
        return;
    }
    e = svc__ext_call(d, e, status, out);
    if (e == NULL || !e->ok) {
        svc_ext_msg_free(e);
        svc_ext_bind_free(&b);
        return;   /* its reply says why */
    }
    snprintf(job_id, sizeof(job_id), "%s", e->job_id);
    svc_ext_msg_free(e);
    free(*out);
    *out = NULL;
    /* 2. the instance */
    for (;;) {
        int st;

        if ((q = msg_new(EXT_STATE)) == NULL) {
            snprintf(why, sizeof(why), "migsched: out of memory");
            goto fail;
        }
        snprintf(q->job_id, sizeof(q->job_id), "%s", job_id);
        q = svc__ext_call(d, q, status, &body);
        free(body);
        body = NULL;
        st = q != NULL ? q->state : -1;
        if (st == MS_JOB_RUNNING)
            break;
        if (st != MS_JOB_STARTING) {
            snprintf(why, sizeof(why), "migsched: the instance for %.60s/%.120s could not be created%s%.200s", b.ns,
                     b.name, q != NULL && q->why[0] ? ": " : "", q != NULL ? q->why : "");
            goto fail;
        }
        if (svc_mono() - t0 > BIND_WAIT_S) {
            snprintf(why, sizeof(why), "migsched: the instance was not ready within %.0f s", BIND_WAIT_S);
            goto fail;
        }
        svc_ext_msg_free(q);
        q = NULL;
        sleep_s(nap);
        nap = nap * 2 > 0.05 ? 0.05 : nap * 2;
    }
    /* 3. annotate */
    {
        char place[128], cdi[96];
        const char *dev = q->inst_uuid[0] ? q->inst_uuid : q->gpu_uuid;

        snprintf(place, sizeof(place), "%s/%d/%d", q->node, q->gpu, q->start);
        snprintf(cdi, sizeof(cdi), "migsched.io/mig=%s", dev);
        ann = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "migsched.io/instance-uuid", q->inst_uuid,
                        "migsched.io/profile", q->profile, "migsched.io/placement", place,
                        "migsched.io/gpu-uuid", q->gpu_uuid, "migsched.io/job", job_id,
                        "cdi.k8s.io/migsched", cdi);
        if (ann != NULL && q->ninst > 1)
            json_object_set_new(ann, "migsched.io/gpus", json_integer(q->ninst));
    }
    patch = ann != NULL ? json_pack("{s:{s:s,s:O}}", "metadata", "uid", b.uid, "annotations", ann) : NULL;
    body = patch != NULL ? json_dumps(patch, JSON_COMPACT) : NULL;
    if (body == NULL || !pod_path(b.ns, b.name, "", path, sizeof(path))) {
        snprintf(why, sizeof(why), "migsched: out of memory");
        goto fail;
    }
    if (ms_kube_request(d->kube, "PATCH", path, body, &hs, &resp, err, sizeof(err)) != 0 || hs != 200) {
        api_why("annotating the pod", hs, resp, err, why, sizeof(why));
        goto fail;
    }
    patched = true;
    free(body);
    free(resp);
    resp = NULL;
    /* 4. bind */
    body = NULL;
    {
        json_t *bo = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
                               "Binding", "metadata", "name", b.name, "namespace", b.ns, "uid", b.uid,
                               "target", "apiVersion", "v1", "kind", "Node", "name", b.node);

        body = bo != NULL ? json_dumps(bo, JSON_COMPACT) : NULL;
        json_decref(bo);
    }
    if (body == NULL || !pod_path(b.ns, b.name, "/binding", path, sizeof(path))) {
        snprintf(why, sizeof(why), "migsched: out of memory");
        goto fail;
    }
    if (ms_kube_request(d->kube, "POST", path, body, &hs, &resp, err, sizeof(err)) != 0 ||
        (hs != 200 && hs != 201 && hs != 202)) {
        api_why("binding the pod", hs, resp, err, why, sizeof(why));
        /* 409: bound already. By an earlier attempt of ours whose answer
         * kube-scheduler did not wait for (its httpTimeout)? Then this is
         * success: rolling back would take the running pod's instance. */
        if (hs != 409 || !bound_to(d, &b, job_id))
            goto fail;
    }
    svc_log("info", "pod bound",
            json_pack("{s:s,s:s,s:s,s:s,s:s,s:f}", "pod", b.name, "namespace", b.ns, "node", b.node, "job",
                      job_id, "instance", q->inst_uuid, "seconds", svc_mono() - t0));
    *status = 200;
    *out = svc_ext_bind_reply(NULL);
    goto out;
fail:
    svc_log("warn", "bind failed; rolled back",
            json_pack("{s:s,s:s,s:s,s:s}", "pod", b.name, "namespace", b.ns, "node", b.node, "why", why));
    if (patched && pod_path(b.ns, b.name, "", path, sizeof(path))) {
        /* merge patch: null removes the annotations we wrote */
        json_t *un = json_pack("{s:{s:{s:n,s:n,s:n,s:n,s:n,s:n,s:n}}}", "metadata", "annotations",
                               "migsched.io/instance-uuid", "migsched.io/profile", "migsched.io/placement",
                               "migsched.io/gpu-uuid", "migsched.io/job", "cdi.k8s.io/migsched",
                               "migsched.io/gpus");
        char *ub = un != NULL ? json_dumps(un, JSON_COMPACT) : NULL;
        char *r2 = NULL;
        long s2;

        if (ub != NULL)
            (void)ms_kube_request(d->kube, "PATCH", path, ub, &s2, &r2, err, sizeof(err));
        free(ub);
        free(r2);
        json_decref(un);
    }
    rollback(d, b.uid, job_id);
    *status = 200;
    *out = svc_ext_bind_reply(why);
out:
    json_decref(ann);
    json_decref(patch);
    free(body);
    free(resp);
    svc_ext_msg_free(q);
    svc_ext_bind_free(&b);
}

/* --- the pod watch ------------------------------------------------------ */

typedef struct watch {
    svc_t *d;
    char **uids;
    int n, cap;
    double list_t;
} watch_t;

static void post_release(svc_t *d, const char *uid, bool finished, bool ours)
{
    ext_msg_t *e = msg_new(EXT_RELEASE);
    int status;
    char *body = NULL;

    if (e == NULL || (e->bind.uid = strdup(uid)) == NULL) {
        svc_ext_msg_free(e);
        return;
    }
    e->finished = finished;
    e->scan = ours;
    e = svc__ext_call(d, e, &status, &body);
    svc_ext_msg_free(e);
    free(body);
}

static void on_pod(void *ctx, const char *type, json_t *pod)
{
    watch_t *w = ctx;
    json_t *md = json_object_get(pod, "metadata");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    bool ours = json_object_get(json_object_get(md, "annotations"), "migsched.io/job") != NULL;
    bool done = phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);

    if (strcmp(type, "SYNCED") == 0) {
        ext_msg_t *e = msg_new(EXT_RESYNC);
        int status;
        char *body = NULL;

        if (e != NULL) {
            e->uids = w->uids;
            e->nuids = w->n;
            e->list_t = w->list_t;
            w->uids = NULL;
            w->n = w->cap = 0;
            e = svc__ext_call(w->d, e, &status, &body);
            svc_ext_msg_free(e);
            free(body);
        }
        /* a relist's snapshot is taken after this: jobs submitted before
         * now and missing from it are gone */
        w->list_t = svc_now();
        return;
    }
    if (uid == NULL)
        return;
    if (strcmp(type, "LIST") == 0) {
        if (!done) {
            if (w->n == w->cap) {
                int cap = w->cap ? w->cap * 2 : 256;
                char **v = realloc(w->uids, (size_t)cap * sizeof(*v));

                if (v == NULL)
                    return;
                w->uids = v;
                w->cap = cap;
            }
            if ((w->uids[w->n] = strdup(uid)) != NULL)
                w->n++;
        }
        return;
    }
    if (strcmp(type, "DELETED") == 0)
        post_release(w->d, uid, false, ours);
    else if (done && ours)
        post_release(w->d, uid, true, true);
}

static void *watch_main(void *arg)
{
    svc_t *d = arg;
    watch_t w;
    int i;

    memset(&w, 0, sizeof(w));
    w.d = d;
    w.list_t = svc_now();
    (void)ms_kube_watch(d->kube, "/api/v1/pods", NULL, on_pod, &w, &d->watch_stop);
    for (i = 0; i < w.n; i++)
        free(w.uids[i]);
    free(w.uids);
    return NULL;
}

int svc_ext_kube_open(svc_t *d)
{
    ms_kube_cfg_t kc;
    char err[512] = "";

    if (!d->cfg->kube)
        return 0;
    memset(&kc, 0, sizeof(kc));
    kc.api = d->cfg->kube_api;
    kc.token_file = d->cfg->kube_token_file;
    kc.ca_file = d->cfg->kube_ca;
    kc.kubeconfig = d->cfg->kubeconfig;
    if (ms_kube_open(&kc, &d->kube, err, sizeof(err)) != 0) {
        fprintf(stderr, "migschedd: Kubernetes: %s\n", err[0] ? err : "out of memory");
        return -1;
    }
    svc_log("info", "kubernetes", json_pack("{s:s}", "server", ms_kube_server(d->kube)));
    return 0;
}

int svc_ext_watch_start(svc_t *d)
{
    if (d->kube == NULL)
        return 0;
    d->watch_stop = 0;
    if (pthread_create(&d->watch_th, NULL, watch_main, d) != 0)
        return -1;
    d->watching = true;
    return 0;
}

void svc_ext_watch_stop(svc_t *d)
{
    if (!d->watching)
        return;
    d->watch_stop = 1;
    pthread_join(d->watch_th, NULL);
    d->watching = false;
}

void svc_ext_kube_close(svc_t *d)
{
    ms_kube_close(d->kube);
    d->kube = NULL;
}
