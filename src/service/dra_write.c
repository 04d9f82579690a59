/* dra_write.c - the writer threads: every write the DRA allocator makes to
 * the API server, off the loop (each may take the API server's time), and
 * each outcome back to the loop as a message.
 *
 *   ALLOC    per claim: its metadata (the delete-protection finalizer
 *            that kube-controller-manager's claim cleanup needs, and our
 *            annotation) with the resourceVersion decided on, then its
 *            status (the allocation) with the version that update
 *            returned, so nobody's write between our read and ours is
 *            overwritten (a 409 makes the loop decide again); then the
 *            pod's gate removed (read, patch with its version, again on a
 *            conflict);
 *   UNGATE   the gate alone;
 *   DEALLOC  an expired allocation cleared, then the finalizer and our
 *            annotation removed;
 *   RULE     a DeviceTaintRule (AlreadyExists is fine);
 *   EVENT    an event on a pod.
 * Only the leader writes: leadership is checked before every request, and
 * the request must be sent and answered before the leadership ends (at
 * most 30 s): call().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "kube/kube.h"
#include "service/dra_int.h"

/* The failpoint stall-before-status: 5 s between the leadership check of
 * a claim's status write and its request, to an absolute deadline on the
 * monotonic clock, so that a process frozen (kill -STOP) past it goes on
 * at once when continued, as a stale leader whose check passed. */
static void stall_before_status(svc_dra_t *x, dra_work_t *w, const char *path)
{
    const char *pre = x->stall_status_prefix, *name = strstr(path, "/resourceclaims/"), *end;
    size_t n;

    if (pre[0] == '\0' || name == NULL)
        return;
    name += strlen("/resourceclaims/");
    end = strchr(name, '/');
    n = strlen(pre);
    if (end == NULL || strcmp(end, "/status") != 0 || strncmp(name, pre, n) != 0 || (size_t)(end - name) < n)
        return;
    ms_log("warning", "dra: failpoint stall-before-status: the writer sleeps 5 s",
           json_pack("{s:s,s:s,s:s#}", "pod", w->pod_name, "namespace", w->pod_ns, "claim", name, (int)(end - name)));
    ms_clock_sleep(5.0);
    ms_log("warning", "dra: failpoint stall-before-status: the writer goes on",
           json_pack("{s:s#}", "claim", name, (int)(end - name)));
}

/* Said when a write is refused for want of the leadership, since it is the
 * only trace of a stale writer stopped. */
static void not_leader(dra_work_t *w, const char *method, const char *path, const char *when)
{
    snprintf(w->why, sizeof(w->why), "not the leader");
    ms_log("warning", "dra: write refused: not the leader",
           json_pack("{s:s,s:s,s:s}", "method", method, "path", path, "when", when));
}

/* One request; the answer parsed into *resp when it is JSON. It must be
 * sent while this replica leads: checked first, then carried to the API
 * client as the request's deadline, which it reads again just before the
 * transfer (and curl during it). A writer held up between the check and
 * the request (descheduled, frozen past its Lease) then sends nothing,
 * although its resourceVersion may still be good: the new leader may
 * have given the device to another claim. */
static long call(svc_dra_t *x, dra_work_t *w, const char *method, const char *path, const char *body, json_t **resp)
{
    char err[256], *text = NULL;
    long status = 0;
    double now = svc_clock_mono(x->d->clock), until = dra_lead_until(x), deadline;
    int rc;

    if (resp != NULL)
        *resp = NULL;
    if (now >= until) {
        not_leader(w, method, path, "before the request");
        return 0;
    }
    deadline = svc_clock_real_deadline(x->d->clock, until, 30.0);
    stall_before_status(x, w, path);
    rc = ms_kube_request_by(x->d->kube, method, path, body, deadline, &status, &text, err, sizeof(err));
    if (rc == MS_KUBE_LATE) {
        not_leader(w, method, path, "the leadership ended before the request was sent");
        return 0;
    }
    if (rc != 0) {
        snprintf(w->why, sizeof(w->why), "%s %s: %s", method, path, err);
        return 0;
    }
    if (status >= 300) {
        json_t *o = text != NULL ? json_loads(text, 0, NULL) : NULL;
        const char *msg = json_string_value(json_object_get(o, "message"));

        snprintf(w->why, sizeof(w->why), "%s %s: %ld %.200s", method, path, status, msg != NULL ? msg : "");
        json_decref(o);
    } else if (resp != NULL && text != NULL) {
        *resp = json_loads(text, 0, NULL);
    }
    free(text);
    w->status = status;
    return status;
}

static const char *rv_of(json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

/* One claim's finalizer and allocation. */
static void write_claim(svc_dra_t *x, dra_work_t *w, dra_wclaim_t *c)
{
    char *path = dra_strf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", c->ns, c->name);
    char *spath = path != NULL ? dra_strf("%s/status", path) : NULL, *body = NULL;
    json_t *resp = NULL;
    const char *rv, *uid;

    c->ok = false;
    if (spath == NULL || c->rv == NULL || (body = dra_out_with_rv(c->meta, c->rv)) == NULL) {
        snprintf(c->why, sizeof(c->why), "out of memory");
        goto out;
    }
    if (call(x, w, "PATCH", path, body, &resp) != 200 || (rv = rv_of(resp)) == NULL) {
        snprintf(c->why, sizeof(c->why), "%.199s", w->why);
        goto out;
    }
    uid = json_string_value(json_object_get(json_object_get(resp, "metadata"), "uid"));
    if (json_object_get(json_object_get(resp, "status"), "allocation") != NULL || uid == NULL ||
        strcmp(uid, c->uid) != 0) {
        snprintf(c->why, sizeof(c->why), "claim %s was allocated or replaced meanwhile", c->name);
        goto out;
    }
    free(body);
    if ((body = dra_out_status(rv, c->alloc)) == NULL) {
        snprintf(c->why, sizeof(c->why), "out of memory");
        goto out;
    }
    json_decref(resp);
    if (x->die_between_writes) {   /* a test's kill -9 with the metadata written, the allocation not */
        ms_log("warning", "dra: failpoint between-writes: exiting",
               json_pack("{s:s,s:s,s:s}", "pod", w->pod_name, "namespace", w->pod_ns, "claim", c->name));
        _exit(137);
    }
    if (call(x, w, "PATCH", spath, body, &resp) != 200) {
        snprintf(c->why, sizeof(c->why), "%.199s", w->why);
        goto out;
    }
    c->ok = true;
out:
    json_decref(resp);
    free(body);
    free(path);
    free(spath);
}

/* Remove our gate from the pod, keeping the others as they are now. */
static bool ungate(svc_dra_t *x, dra_work_t *w)
{
    char *path = dra_strf("/api/v1/namespaces/%s/pods/%s", w->pod_ns, w->pod_name);
    int attempt;
    bool ok = false;

    for (attempt = 0; path != NULL && attempt < 5 && !ok; attempt++) {
        json_t *pod = NULL, *gates;
        char *others[DRA_MAX_GATES], *body;
        const char *uid;
        size_t i;
        int n = 0;
        bool ours = false;

        if (call(x, w, "GET", path, NULL, &pod) != 200 || pod == NULL)
            break;
        uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
        gates = json_object_get(json_object_get(pod, "spec"), "schedulingGates");
        for (i = 0; i < json_array_size(gates) && n < DRA_MAX_GATES; i++) {
            const char *g = json_string_value(json_object_get(json_array_get(gates, i), "name"));

            if (g != NULL && strcmp(g, SVC_DRA_GATE) == 0)
                ours = true;
            else if (g != NULL)
                others[n++] = (char *)(uintptr_t)g;
        }
        if (uid == NULL || strcmp(uid, w->pod_uid) != 0 || !ours) {   /* replaced, or ungated already */
            json_decref(pod);
            ok = uid != NULL && strcmp(uid, w->pod_uid) == 0;
            break;
        }
        body = dra_out_ungate(rv_of(pod), others, n);
        ok = body != NULL && call(x, w, "PATCH", path, body, NULL) == 200;
        free(body);
        json_decref(pod);
        if (!ok && w->status != 409)
            break;   /* only a conflict is worth another read */
    }
    free(path);
    return ok;
}

static void dealloc(svc_dra_t *x, dra_work_t *w)
{
    char *spath = dra_strf("%s/status", w->path), *body = dra_out_status(w->body, NULL), *meta = NULL;
    json_t *resp = NULL;
    const char *rv;

    w->ok = spath != NULL && body != NULL && call(x, w, "PATCH", spath, body, &resp) == 200 &&
            (rv = rv_of(resp)) != NULL && (meta = dra_out_with_rv(w->patch, rv)) != NULL &&
            call(x, w, "PATCH", w->path, meta, NULL) == 200;
    json_decref(resp);
    free(spath);
    free(body);
    free(meta);
}

void dra_write_run(svc_dra_t *x, dra_work_t *w)
{
    int i;

    w->ok = false;
    switch (w->kind) {
    case DRA_W_ALLOC:
        w->ok = true;
        for (i = 0; i < w->ncl; i++) {
            write_claim(x, w, &w->cl[i]);
            w->ok = w->ok && w->cl[i].ok;
        }
        if (w->ok)
            w->t_done = svc_clock_mono(x->d->clock);
        if (w->ok && w->ungate && x->die_before_ungate) {
            ms_log("warning", "dra: failpoint before-ungate: exiting",
                   json_pack("{s:s,s:s,s:s}", "pod", w->pod_name, "namespace", w->pod_ns, "claim", w->cl[0].name));
            _exit(137);
        }
        if (w->ok && w->ungate)
            w->ungated = ungate(x, w);
        break;
    case DRA_W_UNGATE:
        w->ok = w->ungated = ungate(x, w);
        break;
    case DRA_W_DEALLOC:
        dealloc(x, w);
        break;
    case DRA_W_RULE:
        w->ok = call(x, w, "POST", w->path, w->body, NULL) == 201 || w->status == 409;
        if (!w->ok)
            ms_log("error", "dra: cannot write the DeviceTaintRule", json_pack("{s:s}", "why", w->why));
        break;
    case DRA_W_EVENT:
        w->ok = call(x, w, "POST", w->path, w->body, NULL) == 201;
        break;
    default:
        break;
    }
}

void *dra_write_main(void *arg)
{
    svc_dra_t *x = arg;
    svc_qlink_t *l;

    while ((l = svc_queue_pop(&x->wq)) != NULL) {
        dra_work_t *w = SVC_QITEM(l, dra_work_t, link);
        dra_msg_t *m;

        dra_write_run(x, w);
        if (w->kind == DRA_W_EVENT || (m = calloc(1, sizeof(*m))) == NULL) {
            dra_work_free(w);
            continue;
        }
        m->kind = DRA_M_WRITTEN;
        m->okind = -1;
        m->work = w;
        if (svc_queue_push(&x->q, &m->link) != 0)
            dra_msg_free(m);
    }
    return NULL;
}
