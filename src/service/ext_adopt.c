/* ext_adopt.c - the loop thread: EXT_ADOPT, a new leader's takeover of the
 * pods another replica bound (the pod list comes from ext_takeover.c, on
 * the kctl thread, which first read every agent's inventory afresh). A
 * bound, unfinished pod that carries migsched.io/placement (a gang's
 * migsched.io/placements: every GPU) becomes a running job on its
 * instances: the backend's when it has them, else the in-process backend
 * plays the node's agent and creates them. A pod that cannot be adopted is
 * logged and skipped. What no pod claimed is then held in the view
 * (own.c: destroyed only after --unowned-grace, another owner's never).
 * Last, the pods the old leader's filter turned down are nudged
 * (nudge_waiting): what it promised them (an eviction under way, room
 * about to free) may never come, and kube-scheduler keeps them until a
 * cluster event or five minutes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"
#include "service/tenants.h"
#include "service/own.h"


/* "node/gpu/start" -> its parts; false when malformed. */
static bool parse_placement(const char *s, char *node, size_t len, int *gpu, int *start)
{
    const char *b = strrchr(s, '/'), *a;
    char *end;
    long g, st;

    if (b == NULL || b == s)
        return false;
    for (a = b - 1; a > s && *a != '/'; a--)
        ;
    if (*a != '/' || a == s || (size_t)(a - s) >= len)
        return false;
    memcpy(node, s, (size_t)(a - s));
    node[a - s] = '\0';
    g = strtol(a + 1, &end, 10);
    if (end != b || g < 0 || g > 4096)
        return false;
    st = strtol(b + 1, &end, 10);
    if (*end != '\0' || end == b + 1 || st < -1 || st > 16)
        return false;
    *gpu = (int)g;
    *start = (int)st;
    return true;
}

/* The pod's instance b (b->job its job) on the backend: taken as it is
 * when the fresh inventory inv[0..n) has it with the job, started when it
 * is idle, created first when missing (the in-process backend playing the
 * node's agent); another job's instance there is an error. Then the uuid
 * the old leader gave it. 0, or -1 with why. */
static int pod_instance(svc_t *d, const ms_binst_t *b, const char *pname, const char *iuuid,
                        const ms_binst_t *inv, int n, char *why, size_t wlen)
{
    const ms_binst_t *have = NULL;
    ms_backend_op_t op;
    ms_diag_t bwhy;
    int i;

    for (i = 0; i < n && have == NULL; i++)
        if (inv[i].gpu == b->gpu && inv[i].start == b->start)
            have = &inv[i];
    if (have != NULL && strcmp(have->job, b->job) == 0)
        return 0;
    if (have != NULL && have->job[0] != '\0') {
        snprintf(why, wlen, "GPU %d at slice %d runs %.100s", (int)b->gpu, (int)b->start, have->job);
        return -1;
    }
    memset(&op, 0, sizeof(op));
    op.op.gpu = b->gpu;
    op.op.start = b->start;
    op.op.prof = b->prof;
    op.op.job = -1;
    op.profile = pname;
    if (have == NULL && b->start >= 0) {
        op.op.kind = MS_OP_CREATE;
        op.job = "";
        op.force = true;   /* as start-up's own creates */
        if (ms_backend_run(d->be, &op, &bwhy) != MS_OK) {
            snprintf(why, wlen, "the backend cannot create %.40s on GPU %d: %.150s", pname, (int)b->gpu, bwhy.msg);
            return -1;
        }
    }
    op.op.kind = MS_OP_START;
    op.job = b->job;
    op.force = false;
    if (ms_backend_run(d->be, &op, &bwhy) != MS_OK) {
        snprintf(why, wlen, "the backend cannot start it on GPU %d: %.150s", (int)b->gpu, bwhy.msg);
        return -1;
    }
    if (b->start >= 0 && iuuid != NULL && iuuid[0] != '\0')
        (void)ms_backend_adopt_uuid(d->be, b->gpu, b->start, iuuid, &bwhy);
    return 0;
}

/* The pod's instances from its annotations: migsched.io/placements (a
 * gang's every GPU) or migsched.io/placement; *n of them into b[0..max).
 * NULL, or why not. */
static const char *pod_places(svc_t *d, json_t *ann, const char *pname, int gang, ms_binst_t *b, int max, int *n,
                              char *why, size_t wlen)
{
    const char *list = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "placements"));
    const char *one = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "placement"));
    char buf[600], *save = NULL, *tok;

    *n = 0;
    if (gang > 1 && (list == NULL || list[0] == '\0')) {
        snprintf(why, wlen, "a gang pod without migsched.io/placements (bound by an older migschedd)");
        return why;
    }
    snprintf(buf, sizeof(buf), "%s", gang > 1 ? list : one);
    for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        const ms_geom_t *g = NULL;
        char node[256];
        int ni, gpu, start, prof;

        if (*n == max || !parse_placement(tok, node, sizeof(node), &gpu, &start)) {
            snprintf(why, wlen, "placement '%.100s' is not node/gpu/start", tok);
            return why;
        }
        if ((ni = ms_sched_node_find(d->sched, node)) < 0 || gpu >= ms_sched_node(d->sched, ni)->ngpus) {
            snprintf(why, wlen, "placement %.100s: no such node or GPU here", tok);
            return why;
        }
        memset(&b[*n], 0, sizeof(b[*n]));
        b[*n].gpu = ms_sched_node_first_gpu(d->sched, ni) + gpu;
        if (ms_sched_gpu(d->sched, b[*n].gpu, &g) == NULL || g == NULL || (prof = ms_geom_profile_find(g, pname)) < 0) {
            snprintf(why, wlen, "profile %.40s is not one of node %.100s's", pname, node);
            return why;
        }
        b[*n].start = (int8_t)start;
        b[*n].prof = (int8_t)prof;
        (*n)++;
    }
    if (*n != (gang > 1 ? gang : 1)) {
        snprintf(why, wlen, "%d placements for a gang of %d", *n, gang > 1 ? gang : 1);
        return why;
    }
    return NULL;
}

/* A new job for the pod, id jid when free (else one made from the uid). */
static svc_job_t *pod_job(svc_t *d, const svc_ext_pod_t *pp, const char *uid, const char *jid, double now,
                          char *why, size_t wlen)
{
    /* a namespace (or label value) that is no declared tenant: the default
     * tenant (docs/kubernetes.md, "Tenants and priority") */
    char *body = svc_ext_job_body(pp, svc_tenant_declared(d, pp->tenant)), *id = NULL, *canon = NULL;
    char idbuf[160];
    svc_job_t *j = NULL;
    svc_err_t err;
    int k;

    memset(&err, 0, sizeof(err));
    if (jid != NULL && svc_id_valid(jid) && strlen(jid) < sizeof(idbuf) && svc_jobs_find(&d->jobs, jid) == NULL)
        snprintf(idbuf, sizeof(idbuf), "%s", jid);
    else
        for (k = 2;; k++) {
            svc_ext_job_id(uid, "a", k, idbuf, sizeof(idbuf));
            if (svc_jobs_find(&d->jobs, idbuf) == NULL)
                break;
        }
    if (body == NULL || (j = calloc(1, sizeof(*j))) == NULL || (j->id = strdup(idbuf)) == NULL ||
        svc_req_parse(body, strlen(body), &id, &j->req, &canon, &err) != 0) {
        snprintf(why, wlen, "cannot make its job: %s", err.msg[0] ? err.msg : "out of memory");
        svc_job_free(j);
        j = NULL;
    } else {
        j->body = canon;
        canon = NULL;
        j->slot = -1;
        j->place.node = -1;
        j->submit_t = now;
        j->start_t = now;
        j->state = MS_JOB_RUNNING;
    }
    free(body);
    free(id);
    free(canon);
    return j;
}

#define MAX_PLACES 16

/* Adopt one bound pod, all its instances (a gang's too); NULL, or why not. */
static const char *adopt_pod(svc_t *d, json_t *pod, const ms_binst_t *inv, int ninv, double now, bool *took,
                             char *why, size_t wlen)
{
    json_t *md = json_object_get(pod, "metadata"), *ann = json_object_get(md, "annotations");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *place = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "placement"));
    const char *pname = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "profile"));
    const char *jid = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "job"));
    const char *iuuid = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "instance-uuid"));
    ms_binst_t b[MAX_PLACES];
    svc_ext_pod_t pp;
    svc_err_t err;
    ext_pod_t *p;
    svc_job_t *j, *old;
    int n = 0, k;

    if (uid == NULL || place == NULL || pname == NULL)
        return NULL;                           /* not one of ours: nothing to adopt */
    p = svc_ext_pod_find(d->ext, uid);
    if (p != NULL && svc_ext_pod_holds(d, p)) {
        *took = true;
        return NULL;                           /* this replica runs it already */
    }
    memset(&pp, 0, sizeof(pp));
    memset(&err, 0, sizeof(err));
    if (svc_ext_parse_pod(pod, d->cfg->k8s_tenant_label, &pp, &err) != 0 || pp.bad != NULL) {
        snprintf(why, wlen, "%s", pp.bad != NULL ? pp.bad : err.msg);
        svc_ext_pod_free(&pp);
        return why;
    }
    if (pod_places(d, ann, pname, (int)pp.gang, b, MAX_PLACES, &n, why, wlen) != NULL) {
        svc_ext_pod_free(&pp);
        return why;
    }
    old = jid != NULL ? svc_jobs_find(&d->jobs, jid) : NULL;
    if (old != NULL && old->slot >= 0 && svc_job_live(svc_ext_job_state(d, old))) {
        svc_ext_pod_free(&pp);
        j = old;                               /* in the view already */
        goto map;
    }
    /* its job: this replica's own from the past (the store's cache), or new */
    j = old != NULL ? old : pod_job(d, &pp, uid, jid, now, why, wlen);
    svc_ext_pod_free(&pp);
    if (j == NULL)
        return why;
    for (k = 0; k < n; k++) {
        snprintf(b[k].job, sizeof(b[k].job), "%s", j->id);
        if (pod_instance(d, &b[k], pname, k == 0 ? iuuid : NULL, inv, ninv, why, wlen) != 0)
            goto fail;
    }
    if ((old != NULL ? svc_own_adopt(d, j, b, n, now, why, wlen) : svc_own_adopt_new(d, j, b, n, now, why, wlen)) != 0)
        goto fail;
map:
    *took = true;
    if (p == NULL)
        p = svc_ext_pod_add(d->ext, uid);
    if (p != NULL)
        p->job = j;
    return NULL;
fail:
    if (old == NULL)
        svc_job_free(j);
    return why;
}

#define TAKEOVER_NUDGES 256   /* at most, a takeover: one write each */

/* The pending pods whose PodScheduled condition carries our filter's
 * reason ("migsched: ..."): each is nudged (migsched.io/retry), so that
 * kube-scheduler asks this leader. The old leader may have answered "being
 * evicted" for evictions it never sent (it lost the Lease before them:
 * tests/k8s/test_e2e_stale_evict.sh), or "no room now" before room freed
 * that it would have nudged for. How many were queued. */
static int nudge_waiting(svc_t *d, json_t *pods)
{
    json_t *pod, *c;
    size_t i, k;
    int n = 0;

    json_array_foreach(pods, i, pod) {
        json_t *md = json_object_get(pod, "metadata"), *status = json_object_get(pod, "status");
        const char *nn = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
        const char *ns = json_string_value(json_object_get(md, "namespace"));
        const char *name = json_string_value(json_object_get(md, "name"));
        char path[1200];
        bool ours = false;

        if ((nn != NULL && nn[0] != '\0') || json_object_get(md, "deletionTimestamp") != NULL)
            continue;
        json_array_foreach(json_object_get(status, "conditions"), k, c) {
            const char *type = json_string_value(json_object_get(c, "type"));
            const char *st = json_string_value(json_object_get(c, "status"));
            const char *msg = json_string_value(json_object_get(c, "message"));

            ours |= type != NULL && strcmp(type, "PodScheduled") == 0 && st != NULL && strcmp(st, "False") == 0 &&
                    msg != NULL && strstr(msg, "migsched: ") != NULL;
        }
        if (!ours || n == TAKEOVER_NUDGES || ns == NULL || name == NULL ||
            !svc_ext_pod_path(ns, name, "", path, sizeof(path)))
            continue;
        n += svc_ext_nudge_when_leading(d, path, json_string_value(json_object_get(md, "uid")), SVC_EXT_RETRY,
                           "a new leader took over");
    }
    return n;
}

void svc_ext_h_adopt(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    json_t *pod;
    size_t i;
    int adopted = 0, failed = 0, ninv = 0;
    ms_binst_t *inv = NULL;
    ms_diag_t bwhy;
    char why[300];

    /* the backend's inventory, read afresh by the takeover (ext_takeover.c) */
    if (ms_backend_inventory(d->be, &inv, &ninv, &bwhy) != MS_OK) {
        ms_log("error", "takeover: no inventory; nothing adopted", json_pack("{s:s}", "why", bwhy.msg));
        e->ok = false;
        svc_ext_reply(m, 503, strdup("{}"));
        return;
    }
    json_array_foreach(e->pods, i, pod) {
        json_t *spec = json_object_get(pod, "spec");
        const char *nn = json_string_value(json_object_get(spec, "nodeName"));
        const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
        bool took = false;
        const char *bad;

        if (nn == NULL || nn[0] == '\0' ||
            (phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)))
            continue;
        if ((bad = adopt_pod(d, pod, inv, ninv, now, &took, why, sizeof(why))) != NULL) {
            failed++;
            ms_log("warn", "pod not adopted",
                    json_pack("{s:s?, s:s}", "pod",
                              json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")),
                              "why", bad));
        } else if (took) {
            adopted++;
        }
    }
    /* what no pod claimed: held, and destroyed only after the grace period */
    svc_own_takeover(d, inv, ninv, now);
    free(inv);
    e->ok = failed == 0;
    e->gpu = adopted;
    ms_log("info", "took over bound pods",
           json_pack("{s:i, s:i, s:i}", "adopted", adopted, "failed", failed, "nudged", nudge_waiting(d, e->pods)));
    svc_ext_reply(m, 200, strdup("{}"));
}
