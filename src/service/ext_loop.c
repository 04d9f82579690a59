/* ext_loop.c - the loop thread: the Kubernetes scheduler extender's
 * handlers (SVC_M_EXT messages, the message table's last row) and its tick.
 *
 * Every call goes through the loop (which owns ms_sched), like every API
 * call; a pod becomes an ordinary job of the table ("k8s-<uid>", its
 * request the /v1/jobs body svc_ext_job_body writes, labels k8s.pod and
 * k8s.uid), so /v1/jobs, /v1/cluster, the store, the events and the
 * restart rules see it as they see any job.
 *
 *   filter      the pod's earlier reservation (if any) is released; nodes
 *               migschedd does not manage, or that can never host the pod
 *               (no such profile, too small, not time-sliced for a
 *               gpu-share, too few GPUs for a gang) are
 *               FailedAndUnresolvable; ms_sched_node_scores tells the
 *               others apart (-1: FailedNodes, no room now); then
 *               ms_sched_reserve holds the best placement among the
 *               best-scored nodes (one scoring pass), for --extender-ttl
 *               seconds, so the filters and prioritizes of other pods see
 *               it at once; the scores are kept (ext_score.c). Once
 *               held, only the held node and the next best ones pass
 *               (--extender-filter-nodes, 16): kube-scheduler scores and
 *               prioritizes what passes, and at 5,000 nodes writing,
 *               reading and scoring every node that has room was half a
 *               MIG pod's scheduling cycle (docs/performance.md); the
 *               others, and the nodes with no room now, are in neither
 *               list, as kube-scheduler's own percentageOfNodesToScore
 *               leaves nodes unscored.
 *   prioritize  the filter's scores while nothing changed since, else
 *               ms_sched_node_scores (0..10, FragCost after and
 *               utilisation after); the node of the pod's own reservation
 *               gets 10 and the others at most 9, so the scheduler's
 *               choice and migschedd's agree unless other plugins outweigh
 *               it.
 *   bind        the reservation, when it is on the node kube-scheduler
 *               chose, becomes a start (ms_sched_bind); otherwise it is
 *               released and the pod reserved on that node alone (the
 *               scheduler may pick any node that passed); a node with no
 *               room by now answers Error, and kube-scheduler retries.
 *   state       where a bound pod's job stands (the worker polls it).
 *   release     a pod went away or completed (the watch), or a bind is
 *               rolled back.
 *   resync      after a (re)list: jobs of pods missing from it are freed.
 *   adopt       a new leader takes over bound pods (ext_adopt.c).
 * A reservation that no bind follows expires with the scheduler's tick
 * (the extender is never told that a scheduling attempt was given up).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"
#include "service/tenants.h"

/* Release whatever the pod holds now: a reservation is cancelled; a
 * running instance is finished (pod completed) or cancelled (deleted). A
 * starting one cannot be stopped yet: it is released when it runs. */
void svc_ext_release(svc_t *d, ext_pod_t *p, bool finished, double now)
{
    svc_job_t *j = p->job;
    int st = svc_ext_job_state(d, j);

    p->want_release = false;
    if (j != NULL && j->slot >= 0 && (st == MS_JOB_STARTING || st == MS_JOB_MIGRATING)) {
        p->want_release = true;
        p->release_finished = finished;
        return;
    }
    if (j != NULL && j->slot >= 0 && !svc_job_terminal(st)) {
        if (st == MS_JOB_RUNNING && finished)
            (void)ms_sched_finished(d->sched, j->slot, now);
        else
            (void)ms_sched_cancel(d->sched, j->slot, now);
        svc_loop_mark(d, j);
    }
    svc_ext_victim_gone(d, p);   /* its room is free in the scheduler's view */
}

/* The filter turned the pod down, or held it: remember since when it
 * waits for room (its API path, for svc_ext_room_freed), or forget it. */
static void note_wait(svc_t *d, ext_pod_t *p, const svc_ext_pod_t *pod, double now)
{
    char path[1200];

    if (svc_ext_pod_holds(d, p)) {
        free(p->wait_path);
        p->wait_path = NULL;
    } else if (p->wait_path == NULL && svc_ext_pod_path(pod->ns, pod->name, "", path, sizeof(path))) {
        p->wait_path = strdup(path);   /* NULL (out of memory): no nudge, as before */
        p->wait_since = now;
    }
}

#define ROOM_NUDGES 2   /* pods nudged when room frees */

void svc_ext_room_freed(svc_t *d, const ext_pod_t *gone)
{
    ext_pod_t *pick[ROOM_NUDGES];
    int n = 0, k;
    size_t i;

    if (d->ext == NULL)
        return;
    /* the longest waiting first, at most ROOM_NUDGES: each retry that finds
     * no room is turned down again and waits for the next release; the
     * other waiting pods are retried by kube-scheduler on the same cluster
     * event, or on the next one. O(pods in the map). */
    for (i = 0; i < d->ext->cap; i++) {
        ext_pod_t *p = d->ext->slots[i];

        if (p == NULL || p == EXT_TOMB || p == gone || p->wait_path == NULL ||
            svc_ext_pod_holds(d, p))
            continue;
        if (n == ROOM_NUDGES && p->wait_since >= pick[n - 1]->wait_since)
            continue;
        k = n < ROOM_NUDGES ? n++ : n - 1;
        for (; k > 0 && pick[k - 1]->wait_since > p->wait_since; k--)
            pick[k] = pick[k - 1];
        pick[k] = p;
    }
    for (k = 0; k < n; k++) {
        (void)svc_ext_nudge(d, pick[k]->wait_path, pick[k]->uid, SVC_EXT_RETRY, "room freed");
        free(pick[k]->wait_path);   /* turned down again: noted again */
        pick[k]->wait_path = NULL;
    }
}

/* A new job for the pod, reserved on nodes[n] (n > 0). */
static svc_job_t *reserve(svc_t *d, ext_pod_t *p, const svc_ext_pod_t *pod, const char *const *nodes,
                          int n, double now, ms_diag_t *diag)
{
    svc_job_t *j;
    svc_err_t err;
    /* a namespace (or label value) that is no declared tenant: the default
     * tenant (docs/kubernetes.md, "Tenants and priority") */
    char *body = svc_ext_job_body(pod, svc_tenant_declared(d, pod->tenant)), *id = NULL, *canon = NULL;
    char idbuf[SVC_EXT_ID_MAX];
    ms_sched_req_t r;
    int32_t slot = -1;
    ms_status_t st;

    if (body == NULL)
        return NULL;
    do {
        p->gen++;
        svc_ext_job_id(pod->uid, "", p->gen, idbuf, sizeof(idbuf));
    } while (svc_jobs_find(&d->jobs, idbuf) != NULL);
    if ((j = calloc(1, sizeof(*j))) == NULL || (j->id = strdup(idbuf)) == NULL) {
        free(j);
        free(body);
        return NULL;
    }
    if (svc_req_parse(body, strlen(body), &id, &j->req, &canon, &err) != 0) {
        ms_diag_set(diag, NULL, 0, err.field, "%s", err.msg);
        free(body);
        svc_job_free(j);
        return NULL;
    }
    free(body);
    free(id);
    j->body = canon;
    j->slot = -1;
    j->place.node = -1;
    j->submit_t = now;
    j->state = MS_JOB_QUEUED;
    svc_job_sched_req(j, &r);
    if (svc_table_reserve(d) != 0) {
        ms_diag_set(diag, NULL, 0, "", "out of memory");
        svc_job_free(j);
        return NULL;
    }
    st = ms_sched_reserve(d->sched, &r, nodes, n, d->ext->ttl_s, now, &slot, diag);
    if (st != MS_OK) {
        svc_job_free(j);
        return NULL;
    }
    svc_table_add(d, j, slot);
    svc_loop_mark(d, j);
    p->job = j;
    p->expires = now + d->ext->ttl_s;
    return j;
}

/* Can this node ever host the pod? NULL yes, else why not (one string for
 * like nodes: kube-scheduler counts reasons). */
static const char *never(const svc_t *d, int node, const svc_ext_pod_t *pod)
{
    const ms_node_spec_t *ns = ms_sched_node(d->sched, node);
    const ms_model_t *m = ms_geom_model(ns->geom);
    int cs = 0;
    double mem = pod->mem_gb;

    if (pod->share)
        return ns->mode == MS_NODE_TIMESLICE ? NULL : "migsched: node does not time-slice its GPUs";
    if (ns->mode == MS_NODE_TIMESLICE)
        return "migsched: node time-slices its GPUs (no MIG instances)";
    if (pod->gang > ns->ngpus)
        return "migsched: node has fewer GPUs than the gang";
    if (pod->profile != NULL && ms_geom_profile_find(ns->geom, pod->profile) < 0) {
        const char *s = pod->profile, *g;
        char *end;

        cs = (int)strtol(s, &end, 10);
        if (end == s || *end != 'g')
            return "migsched: no such MIG profile";
        g = end + 1;
        if (*g == '.') {
            mem = strtod(g + 1, &end);
            if (end == g + 1 || strcmp(end, "gb") != 0)
                return "migsched: no such MIG profile";
        } else if (*g != '\0') {
            return "migsched: no such MIG profile";
        }
    }
    if (cs > ms_geom_compute(ns->geom))
        return "migsched: node's GPUs have fewer compute slices than asked";
    if (mem > (double)m->mem_gb)
        return "migsched: node's GPUs have less memory than asked";
    return NULL;
}

/* --- filter, prioritize, bind ------------------------------------------- */

/* The hold goes to one of the first TOP_TIES best-scored nodes. */
#define TOP_TIES 8

/* The filter's verdicts from its scores (-1: no room now), and the hold:
 * it reuses the scores and goes to the best-scored nodes (the first
 * TOP_TIES of them; the restricted-placement rule picks among those), not
 * to a second scoring of every passing node; to all of them only if none
 * of those can take it after all. pass: room for nk names. */
static bool hold_best(svc_t *d, ext_pod_t *p, const svc_ext_pod_t *pod, const ms_sched_req_t *r,
                      svc_ext_verdict_t *v, const int *idx, const char **known, const int *scores, int nk,
                      const char **pass, double now)
{
    int i, npass = 0, top = -1;
    ms_diag_t diag;
    svc_job_t *held = NULL;
    const char *why;

    for (i = 0; i < nk; i++)
        if (scores[i] > top)
            top = scores[i];
    for (i = 0; i < nk && npass < TOP_TIES; i++)
        if (top >= 0 && scores[i] == top)
            pass[npass++] = known[i];
    if (npass > 0) {
        ms_diag_clear(&diag);
        held = reserve(d, p, pod, pass, npass, now, &diag);
    }
    if (npass > 0 && held == NULL) {
        for (npass = 0, i = 0; i < nk; i++)
            if (scores[i] >= 0)
                pass[npass++] = known[i];
        ms_diag_clear(&diag);
        held = reserve(d, p, pod, pass, npass, now, &diag);
    }
    if (held != NULL) {
        for (i = 0; i < nk; i++)
            if (scores[i] < 0)
                v[idx[i]].reason = pod->gang > 1 ? "migsched: not enough free GPUs now"
                                                 : "migsched: no room for the instance now";
        return true;
    }
    /* nothing held: a tenant at its limit waits for its tenant, not for
     * room; say so (else kube-scheduler's message reads as a full cluster) */
    why = nk > 0 && ms_sched_tenant_holds(d->sched, r) ? "migsched: the pod's tenant is at its limit (docs/tenants.md)"
          : pod->gang > 1                              ? "migsched: not enough free GPUs now"
                                                       : "migsched: no room for the instance now";
    for (i = 0; i < nk; i++)
        v[idx[i]].reason = why;
    return false;
}

/* After a hold: only the held node and the next best scored, at most
 * keep in all, pass; the others with room are omitted, and so are the
 * nodes with no room now (the pod is schedulable: kube-scheduler reads
 * their reasons only for one that is not). Those that never can host it
 * keep theirs: they show a node set that is not what its operator meant.
 * Scores are 0..10, so the cut is found by counting, O(n). */
static void offer_best(svc_t *d, const ext_pod_t *p, svc_ext_verdict_t *v, int n, const int *idx,
                       const char **known, const int *scores, int nk, int keep)
{
    const char *held = svc_ext_job_node(d, p->job);
    int count[11] = { 0 }, i, cut, above = 0, ties;

    if (keep <= 0)
        return;
    for (i = 0; i < nk; i++)
        if (scores[i] >= 0 && strcmp(known[i], held) != 0)
            count[scores[i] > 10 ? 10 : scores[i]]++;
    /* cut: the lowest score still offered; ties: how many of it fit */
    for (cut = 10; cut > 0 && above + count[cut] < keep - 1; cut--)
        above += count[cut];
    ties = keep - 1 - above;
    for (i = 0; i < nk; i++) {
        svc_ext_verdict_t *w = &v[idx[i]];
        int s = scores[i] > 10 ? 10 : scores[i];

        if (strcmp(known[i], held) == 0)
            continue;
        if (s < 0 || s < cut || (s == cut && ties-- <= 0))
            w->omitted = true;
    }
    for (i = 0; i < n; i++)
        if (v[i].reason != NULL && !v[i].unresolvable)
            v[i].omitted = true;
}

static void h_filter(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    svc_ext_args_t *a = &e->args;
    svc_ext_verdict_t *v = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*v));
    const char **known = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*known));
    const char **pass = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*pass));
    int *idx = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*idx));
    int *scores = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*scores));
    int *nidx = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*nidx));
    int i, nk = 0;
    ext_pod_t *p;
    ms_sched_req_t r;
    ms_diag_t diag;
    ms_status_t st;
    char *err = NULL, why[400], *body = NULL;

    svc_ext_scores_drop(d->ext);   /* whatever path this filter takes */
    if (v == NULL || known == NULL || pass == NULL || idx == NULL || scores == NULL || nidx == NULL)
        goto oom;
    for (i = 0; i < a->nnodes; i++)
        v[i].node = a->nodes[i];
    if (a->pod.bad != NULL) {
        for (i = 0; i < a->nnodes; i++) {
            v[i].reason = a->pod.bad;
            v[i].unresolvable = true;
        }
        goto done;
    }
    if ((p = svc_ext_pod_find(d->ext, a->pod.uid)) == NULL && (p = svc_ext_pod_add(d->ext, a->pod.uid)) == NULL)
        goto oom;
    if (svc_ext_pod_holds(d, p)) {
        /* bound already (a retry after a lost reply): only its node */
        const char *on = svc_ext_job_node(d, p->job);

        for (i = 0; i < a->nnodes; i++)
            if (strcmp(a->nodes[i], on) != 0)
                v[i].reason = "migsched: the pod runs on another node";
        goto done;
    }
    if (p->job != NULL)
        svc_ext_release(d, p, false, now);   /* an earlier attempt's reservation */
    for (i = 0; i < a->nnodes; i++) {
        int node = ms_sched_node_find(d->sched, a->nodes[i]);

        if (node < 0) {
            v[i].reason = "migsched: node not managed by migschedd";
            v[i].unresolvable = true;
        } else if ((v[i].reason = never(d, node, &a->pod)) != NULL) {
            v[i].unresolvable = true;
        } else {
            idx[nk] = i;
            nidx[nk] = node;
            known[nk++] = a->nodes[i];
        }
    }
    if (nk > 0) {
        svc_req_t q;
        svc_err_t se;
        char *id = NULL, *canon = NULL;

        if ((body = svc_ext_job_body(&a->pod, svc_tenant_declared(d, a->pod.tenant))) == NULL)
            goto oom;
        if (svc_req_parse(body, strlen(body), &id, &q, &canon, &se) != 0) {
            /* what the pod asks for is not a request the daemon takes (a
             * profile name too long to be one): its reason, everywhere */
            if (se.code >= 500)
                goto oom;
            snprintf(why, sizeof(why), "migsched: the pod's request is not one migschedd takes: %.60s: %.200s",
                     se.field, se.msg);
            for (i = 0; i < nk; i++) {
                v[idx[i]].reason = why;
                v[idx[i]].unresolvable = true;
            }
            goto done;
        }
        {
            svc_job_t tmp;

            memset(&tmp, 0, sizeof(tmp));
            tmp.req = q;
            tmp.id = a->pod.uid;
            svc_job_sched_req(&tmp, &r);   /* r points into q until it is freed */
            r.id = NULL;
            ms_diag_clear(&diag);
            st = ms_sched_node_scores_kept(d->sched, &r, known, nk, scores, &diag);
        }
        free(id);
        free(canon);
        if (st == MS_ENOENT) {
            /* a product name no GPU model of the cluster has: the library's
             * diagnostic names the nearest profiles (issue 20, defect 19) */
            snprintf(why, sizeof(why), "migsched: %.380s", diag.msg[0] ? diag.msg : "no such profile");
            for (i = 0; i < nk; i++) {
                v[idx[i]].reason = why;
                v[idx[i]].unresolvable = true;
            }
            nk = 0;
        } else if (st == MS_ENOFIT || st == MS_EINVAL) {
            for (i = 0; i < nk; i++) {
                v[idx[i]].reason = "migsched: no GPU of these nodes can host the request";
                v[idx[i]].unresolvable = true;
            }
            nk = 0;
        } else if (st != MS_OK) {
            svc_req_free(&q);
            err = "migsched: scoring failed";
            goto done;
        }
        if (hold_best(d, p, &a->pod, &r, v, idx, known, scores, nk, pass, now))
            offer_best(d, p, v, a->nnodes, idx, known, scores, nk, d->cfg->ext_filter_nodes);
        else
            svc_ext_preempt(d, p, &a->pod, &r, known, nk, v, idx, e, now);   /* --preempt */
        note_wait(d, p, &a->pod, now);
        svc_req_free(&q);
        /* after the hold: the prioritize that follows takes these */
        if (svc_ext_scores_put(d, a->pod.uid, body, nidx, scores, nk, now) != 0)
            svc_ext_scores_drop(d->ext);
    }
done:
    svc_ext_reply(m, 200, svc_ext_filter_reply(v, a->nnodes, err));
    free(v);
    free(known);
    free((void *)pass);
    free(idx);
    free(nidx);
    free(scores);
    free(body);
    return;
oom:
    free(v);
    free(known);
    free((void *)pass);
    free(idx);
    free(nidx);
    free(scores);
    free(body);
    svc_ext_reply(m, 200, svc_ext_filter_reply(NULL, 0, "migsched: out of memory"));
}

static void h_prioritize(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    svc_ext_args_t *a = &e->args;
    int n = a->nnodes, i, nk = 0;
    int *scores = calloc((size_t)(n > 0 ? n : 1), sizeof(*scores));
    int *ks = calloc((size_t)(n > 0 ? n : 1), sizeof(*ks));
    int *idx = calloc((size_t)(n > 0 ? n : 1), sizeof(*idx));
    int *nidx = calloc((size_t)(n > 0 ? n : 1), sizeof(*nidx));
    const char **known = calloc((size_t)(n > 0 ? n : 1), sizeof(*known));
    ext_pod_t *p = a->pod.bad == NULL ? svc_ext_pod_find(d->ext, a->pod.uid) : NULL;
    const char *mine = p != NULL && p->job != NULL && svc_ext_job_state(d, p->job) == MS_JOB_RESERVED
                           ? svc_ext_job_node(d, p->job) : "";

    if (scores == NULL || ks == NULL || idx == NULL || nidx == NULL || known == NULL) {
        free(scores);
        free(ks);
        free(idx);
        free(nidx);
        free(known);
        svc_ext_reply(m, 500, NULL);
        return;
    }
    for (i = 0; i < n; i++)
        if ((nidx[nk] = ms_sched_node_find(d->sched, a->nodes[i])) >= 0) {
            idx[nk] = i;
            known[nk++] = a->nodes[i];
        }
    if (nk > 0 && a->pod.bad == NULL) {
        svc_req_t q;
        svc_err_t se;
        char *body = svc_ext_job_body(&a->pod, svc_tenant_declared(d, a->pod.tenant)), *id = NULL;
        char *canon = NULL;

        if (body != NULL && svc_ext_scores_get(d, a->pod.uid, body, nidx, nk, ks, now)) {
            /* the filter's scores, still exact (ext_score.c) */
            for (i = 0; i < nk; i++)
                scores[idx[i]] = ks[i] < 0 ? 0 : ks[i] > 9 ? 9 : ks[i];
        } else if (body != NULL && svc_req_parse(body, strlen(body), &id, &q, &canon, &se) == 0) {
            svc_job_t tmp;
            ms_sched_req_t r;
            ms_diag_t diag;

            memset(&tmp, 0, sizeof(tmp));
            tmp.req = q;
            svc_job_sched_req(&tmp, &r);
            r.id = NULL;
            ms_diag_clear(&diag);
            if (ms_sched_node_scores_kept(d->sched, &r, known, nk, ks, &diag) == MS_OK)
                for (i = 0; i < nk; i++)
                    scores[idx[i]] = ks[i] < 0 ? 0 : ks[i] > 9 ? 9 : ks[i];
            svc_req_free(&q);
        }
        free(body);
        free(id);
        free(canon);
    }
    for (i = 0; i < n; i++)
        if (mine[0] != '\0' && strcmp(a->nodes[i], mine) == 0)
            scores[i] = 10;
    svc_ext_reply(m, 200, svc_ext_prioritize_reply((const char *const *)a->nodes, scores, n));
    free(scores);
    free(ks);
    free(idx);
    free(nidx);
    free(known);
}

static void h_bind(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    svc_ext_bind_t *b = &e->bind;
    ext_pod_t *p = svc_ext_pod_find(d->ext, b->uid);
    int st = p != NULL ? svc_ext_job_state(d, p->job) : -1;
    char why[300];

    e->ok = false;
    if (p != NULL && svc_job_live(st) && strcmp(svc_ext_job_node(d, p->job), b->node) == 0) {
        e->ok = true;   /* bound already: a retried bind */
    } else if (p != NULL && st == MS_JOB_RESERVED && strcmp(svc_ext_job_node(d, p->job), b->node) == 0) {
        e->ok = ms_sched_bind(d->sched, p->job->slot, now) == MS_OK;
        svc_loop_mark(d, p->job);
    } else {
        ms_diag_t diag;
        const char *node = b->node;

        if (p == NULL) {
            snprintf(why, sizeof(why), "migsched: no filter call came for pod %.63s/%.120s", b->ns, b->name);
            goto fail;
        }
        if (svc_job_live(st)) {
            snprintf(why, sizeof(why), "migsched: the pod runs on node %.120s already", svc_ext_job_node(d, p->job));
            goto fail;
        }
        if (ms_sched_node_find(d->sched, node) < 0) {
            snprintf(why, sizeof(why), "migsched: node %.120s is not managed by migschedd", node);
            goto fail;
        }
        /* kube-scheduler chose another node than the held one, or the hold
         * expired: hold on that node alone, then bind */
        svc_ext_release(d, p, false, now);
        if (p->job == NULL) {
            snprintf(why, sizeof(why), "migsched: no filter call came for pod %.63s/%.120s", b->ns, b->name);
            goto fail;
        }
        /* the request is the one its filter parsed, kept in its job */
        {
            svc_job_t *old = p->job;
            ms_sched_req_t r;
            svc_job_t *j;

            ms_diag_clear(&diag);
            svc_job_sched_req(old, &r);
            j = calloc(1, sizeof(*j));
            if (j == NULL) {
                snprintf(why, sizeof(why), "migsched: out of memory");
                goto fail;
            }
            char idbuf[SVC_EXT_ID_MAX];

            do {
                p->gen++;
                svc_ext_job_id(b->uid, "", p->gen, idbuf, sizeof(idbuf));
            } while (svc_jobs_find(&d->jobs, idbuf) != NULL);
            if ((j->id = strdup(idbuf)) == NULL || (j->body = strdup(old->body)) == NULL) {
                svc_job_free(j);
                snprintf(why, sizeof(why), "migsched: out of memory");
                goto fail;
            }
            {
                svc_err_t se;
                char *id = NULL, *canon = NULL;

                if (svc_req_parse(j->body, strlen(j->body), &id, &j->req, &canon, &se) != 0) {
                    svc_job_free(j);
                    snprintf(why, sizeof(why), "migsched: %s", se.msg);
                    goto fail;
                }
                free(id);
                free(canon);
            }
            j->slot = -1;
            j->place.node = -1;
            j->submit_t = now;
            j->state = MS_JOB_QUEUED;
            svc_job_sched_req(j, &r);
            {
                int32_t slot = -1;

                if (svc_table_reserve(d) != 0) {
                    svc_job_free(j);
                    snprintf(why, sizeof(why), "migsched: out of memory");
                    goto fail;
                }
                if (ms_sched_reserve(d->sched, &r, &node, 1, d->ext->ttl_s, now, &slot, &diag) != MS_OK) {
                    svc_job_free(j);
                    snprintf(why, sizeof(why), "migsched: node %.120s has no room for the pod now", node);
                    goto fail;
                }
                svc_table_add(d, j, slot);
                p->job = j;
                e->ok = ms_sched_bind(d->sched, slot, now) == MS_OK;
                svc_loop_mark(d, j);
            }
        }
    }
    if (!e->ok) {
        snprintf(why, sizeof(why), "migsched: cannot start the instance on %.120s", b->node);
        goto fail;
    }
    snprintf(e->job_id, sizeof(e->job_id), "%s", p->job->id);
    svc_ext_reply(m, 200, svc_ext_bind_reply(NULL));
    return;
fail:
    snprintf(e->why, sizeof(e->why), "%s", why);
    svc_ext_reply(m, 200, svc_ext_bind_reply(why));
}

/* Where a bound pod's job stands (the HTTP side polls this while it waits
 * for the instance). */
static void h_state(svc_t *d, svc_msg_t *m, ext_msg_t *e)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, e->job_id);
    ms_sched_job_info_t info;

    e->state = -1;
    if (j != NULL) {
        e->state = svc_ext_job_state(d, j);
        if (j->slot >= 0 && ms_sched_job(d->sched, j->slot, &info) == MS_OK && info.ninst > 0) {
            const ms_geom_t *g = NULL;
            int node, group, local;

            ms_sched_gpu_where(d->sched, info.inst[0].gpu, &node, &group, &local);
            (void)ms_sched_gpu(d->sched, info.inst[0].gpu, &g);
            snprintf(e->node, sizeof(e->node), "%s", ms_sched_node(d->sched, node)->name);
            e->gpu = info.inst[0].gpu - ms_sched_node_first_gpu(d->sched, node);
            e->start = info.inst[0].start;
            e->ninst = info.ninst;
            svc_ext_places(d, &info, e->places, sizeof(e->places));
            snprintf(e->profile, sizeof(e->profile), "%s",
                     g != NULL && info.inst[0].prof >= 0 ? ms_geom_profile(g, info.inst[0].prof)->name : "");
            snprintf(e->gpu_uuid, sizeof(e->gpu_uuid), "%s", ms_backend_gpu_uuid(d->be, info.inst[0].gpu));
            e->inst_uuid[0] = '\0';
            if (info.inst[0].start >= 0)
                ms_backend_inst_uuid(d->be, info.inst[0].gpu, info.inst[0].start, j->id, e->inst_uuid,
                                      sizeof(e->inst_uuid));
        }
        snprintf(e->why, sizeof(e->why), "%s", j->reason);
    }
    svc_ext_reply(m, 200, strdup("{}"));
}

/* A pod went away or completed (the watch), or a bind is rolled back. */
static void h_release(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    ext_pod_t *p = svc_ext_pod_find(d->ext, e->bind.uid != NULL ? e->bind.uid : "");
    size_t k;

    if (p == NULL && e->bind.uid != NULL && e->scan) {
        /* not seen since a restart: its job, by label */
        for (k = d->jobs.n; k-- > 0;) {
            svc_job_t *j = d->jobs.v[k];
            const char *u = json_string_value(json_object_get(j->req.labels, "k8s.uid"));

            if (u != NULL && strcmp(u, e->bind.uid) == 0 && !svc_job_terminal(j->state)) {
                if ((p = svc_ext_pod_add(d->ext, e->bind.uid)) != NULL)
                    p->job = j;
                break;
            }
        }
    }
    if (p != NULL && (!e->rollback || (p->job != NULL && strcmp(p->job->id, e->job_id) == 0))) {
        bool held = svc_ext_pod_holds(d, p);

        svc_ext_release(d, p, e->finished, now);
        if (held && !p->want_release)
            svc_ext_room_freed(d, p);   /* before p may go: it is not nudged */
        if (!p->want_release && !e->rollback)
            svc_ext_pod_del(d->ext, p);
    }
    svc_ext_reply(m, 200, strdup("{}"));
}

/* The pod list after a (re)list: jobs of k8s pods that are not in it went
 * away while nobody watched. */
static void h_resync(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    size_t k;
    int i;
    bool freed = false;

    for (k = 0; k < d->jobs.n; k++) {
        svc_job_t *j = d->jobs.v[k];
        const char *u = json_string_value(json_object_get(j->req.labels, "k8s.uid"));
        bool seen = false;
        ext_pod_t *p;

        if (u == NULL || svc_job_terminal(j->state) || j->slot < 0 || !svc_job_live(svc_ext_job_state(d, j)) ||
            j->submit_t >= e->list_t)
            continue;   /* (a pod bound after the list began is not in it) */
        for (i = 0; i < e->nuids && !seen; i++)
            seen = strcmp(e->uids[i], u) == 0;
        if (seen)
            continue;
        if ((p = svc_ext_pod_find(d->ext, u)) == NULL && (p = svc_ext_pod_add(d->ext, u)) != NULL)
            p->job = j;
        if (p != NULL && p->job == j) {
            svc_ext_release(d, p, false, now);
            freed = true;
        }
    }
    if (freed)
        svc_ext_room_freed(d, NULL);
    svc_ext_reply(m, 200, strdup("{}"));
}

void svc_ext_handle(svc_t *d, svc_msg_t *m, double now)
{
    ext_msg_t *e = m->ext;

    switch (e != NULL ? e->verb : -1) {
    case EXT_FILTER: h_filter(d, m, e, now); break;
    case EXT_PRIORITIZE: h_prioritize(d, m, e, now); break;
    case EXT_BIND: h_bind(d, m, e, now); break;
    case EXT_STATE: h_state(d, m, e); break;
    case EXT_RELEASE: h_release(d, m, e, now); break;
    case EXT_RESYNC: h_resync(d, m, e, now); break;
    case EXT_ADOPT: svc_ext_h_adopt(d, m, e, now); break;
    case EXT_EVICTED: svc_ext_h_evicted(d, m, e, now); break;
    default: svc_ext_reply(m, 500, strdup("{\"error\":{\"message\":\"unknown extender message\"}}"));
    }
}

/* Reservations the scheduler's tick expires: mark their jobs so that the
 * table and store follow; pods whose release waited for a start;
 * preemptors whose wait for their victims ran out (ext_preempt.c). */
void svc_ext_tick(svc_t *d, double now)
{
    size_t i;
    bool freed = false;

    if (d->ext == NULL)
        return;
    for (i = 0; i < d->ext->cap; i++) {
        ext_pod_t *p = d->ext->slots[i];
        int st;

        if (p == NULL || p == EXT_TOMB)
            continue;
        svc_ext_preempt_tick(d, p, now);
        if (p->job == NULL)
            continue;
        st = svc_ext_job_state(d, p->job);
        if (st != p->job->state) {
            /* e.g. its hold expired in ms_sched_tick: room nobody else sees
             * freed (once: the table follows before the next tick) */
            freed |= !p->job->dirty && svc_job_live(p->job->state) && !svc_job_live(st);
            svc_loop_mark(d, p->job);
        }
        if (p->want_release && !svc_job_live(st)) {
            p->want_release = false;
            svc_ext_pod_del(d->ext, p);
        } else if (p->want_release && st == MS_JOB_RUNNING) {
            svc_ext_release(d, p, p->release_finished, now);
            freed = true;
            if (!p->want_release)
                svc_ext_pod_del(d->ext, p);
        }
    }
    if (freed)
        svc_ext_room_freed(d, NULL);
}
