/* extender.c - the Kubernetes scheduler extender's daemon side.
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
 *               ms_sched_reserve holds the best placement among those that
 *               pass, for --extender-ttl seconds, so the filters and
 *               prioritizes of other pods see it at once.
 *   prioritize  ms_sched_node_scores (0..10, FragCost after and
 *               utilisation after); the node of the pod's own reservation
 *               gets 10 and the others at most 9, so the scheduler's
 *               choice and migschedd's agree unless other plugins outweigh
 *               it.
 *   bind        the reservation, when it is on the node kube-scheduler
 *               chose, becomes a start (ms_sched_bind); otherwise it is
 *               released and the pod reserved on that node alone (the
 *               scheduler may pick any node that passed); a node with no
 *               room by now answers Error, and kube-scheduler retries.
 * A reservation that no bind follows expires with the scheduler's tick
 * (the extender is never told that a scheduling attempt was given up).
 *
 * With --kube-* (extender_kube.c) bind does more, on an extender worker (http.c): it
 * waits until the instance exists, annotates the pod, POSTs the Binding and
 * rolls back on any failure; a pod watch frees the instances of pods that
 * complete or go away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender.h"
#include "service/extender_int.h"
#include "service/kctl.h"

/* --- the pod map: uid -> entry ------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static ext_pod_t *pod_find(svc_ext_t *x, const char *uid)
{
    size_t i;

    if (x->cap == 0)
        return NULL;
    for (i = hash_str(uid) & (x->cap - 1); x->slots[i] != NULL; i = (i + 1) & (x->cap - 1))
        if (x->slots[i] != EXT_TOMB && strcmp(x->slots[i]->uid, uid) == 0)
            return x->slots[i];
    return NULL;
}

static int pod_grow(svc_ext_t *x)
{
    size_t cap = x->cap ? x->cap * 2 : 1024, i, j;
    ext_pod_t **v = calloc(cap, sizeof(*v));

    if (v == NULL)
        return -1;
    for (i = 0; i < x->cap; i++) {
        ext_pod_t *p = x->slots[i];

        if (p == NULL || p == EXT_TOMB)
            continue;
        for (j = hash_str(p->uid) & (cap - 1); v[j] != NULL; j = (j + 1) & (cap - 1))
            ;
        v[j] = p;
    }
    free(x->slots);
    x->slots = v;
    x->cap = cap;
    x->used = x->n;
    return 0;
}

static ext_pod_t *pod_add(svc_ext_t *x, const char *uid)
{
    ext_pod_t *p;
    size_t i;

    if ((x->used + 1) * 2 > x->cap && pod_grow(x) != 0)
        return NULL;
    if ((p = calloc(1, sizeof(*p))) == NULL || (p->uid = strdup(uid)) == NULL) {
        free(p);
        return NULL;
    }
    for (i = hash_str(uid) & (x->cap - 1); x->slots[i] != NULL && x->slots[i] != EXT_TOMB;
         i = (i + 1) & (x->cap - 1))
        ;
    if (x->slots[i] == NULL)
        x->used++;
    x->slots[i] = p;
    x->n++;
    return p;
}

static void pod_del(svc_ext_t *x, ext_pod_t *p)
{
    size_t i;

    for (i = hash_str(p->uid) & (x->cap - 1); x->slots[i] != NULL; i = (i + 1) & (x->cap - 1))
        if (x->slots[i] == p) {
            x->slots[i] = EXT_TOMB;
            x->n--;
            break;
        }
    free(p->uid);
    free(p);
}

int svc_ext_init(svc_t *d)
{
    if ((d->ext = calloc(1, sizeof(*d->ext))) == NULL)
        return -1;
    d->ext->ttl_s = d->cfg->ext_ttl_s > 0 ? d->cfg->ext_ttl_s : 30.0;
    return 0;
}

void svc_ext_free(svc_t *d)
{
    size_t i;

    if (d->ext == NULL)
        return;
    for (i = 0; i < d->ext->cap; i++)
        if (d->ext->slots[i] != NULL && d->ext->slots[i] != EXT_TOMB) {
            free(d->ext->slots[i]->uid);
            free(d->ext->slots[i]);
        }
    free(d->ext->slots);
    free(d->ext);
    d->ext = NULL;
}

void svc_ext_msg_free(void *p)
{
    ext_msg_t *e = p;
    int i;

    if (e == NULL)
        return;
    svc_ext_args_free(&e->args);
    svc_ext_bind_free(&e->bind);
    for (i = 0; i < e->nuids; i++)
        free(e->uids[i]);
    free(e->uids);
    json_decref(e->pods);
    free(e);
}

/* --- helpers ------------------------------------------------------------ */

static bool live(int st)
{
    return st == MS_JOB_STARTING || st == MS_JOB_RUNNING || st == MS_JOB_MIGRATING;
}

static bool terminal(int st)
{
    return st == MS_JOB_DONE || st == MS_JOB_CANCELLED || st == MS_JOB_FAILED;
}

static void reply(svc_msg_t *m, int status, char *body)
{
    m->status = body != NULL ? status : 500;
    m->body = body != NULL ? body : strdup("{\"error\":{\"message\":\"out of memory\"}}");
}

/* The pod's job's node name ("" none). */
static const char *job_node(const svc_t *d, const svc_job_t *j)
{
    ms_sched_job_info_t info;
    int node, group, local;

    if (j == NULL || j->slot < 0 || ms_sched_job(d->sched, j->slot, &info) != MS_OK || info.ninst <= 0)
        return "";
    ms_sched_gpu_where(d->sched, info.inst[0].gpu, &node, &group, &local);
    return ms_sched_node(d->sched, node)->name;
}

static int job_state(const svc_t *d, const svc_job_t *j)
{
    ms_sched_job_info_t info;

    if (j == NULL)
        return -1;
    if (j->slot >= 0 && ms_sched_job(d->sched, j->slot, &info) == MS_OK)
        return (int)info.state;
    return j->state;
}

/* Release whatever the pod holds now: a reservation is cancelled; a
 * running instance is finished (pod completed) or cancelled (deleted). A
 * starting one cannot be stopped yet: it is released when it runs. */
static void release(svc_t *d, ext_pod_t *p, bool finished, double now)
{
    svc_job_t *j = p->job;
    int st = job_state(d, j);

    p->want_release = false;
    if (j == NULL || j->slot < 0 || terminal(st))
        return;
    if (st == MS_JOB_STARTING || st == MS_JOB_MIGRATING) {
        p->want_release = true;
        p->release_finished = finished;
        return;
    }
    if (st == MS_JOB_RUNNING && finished)
        (void)ms_sched_finished(d->sched, j->slot, now);
    else
        (void)ms_sched_cancel(d->sched, j->slot, now);
    svc_loop_mark(j);
}

/* A new job for the pod, reserved on nodes[n] (n > 0). */
static svc_job_t *reserve(svc_t *d, ext_pod_t *p, const svc_ext_pod_t *pod, const char *const *nodes,
                          int n, double now, ms_diag_t *diag)
{
    svc_job_t *j;
    svc_err_t err;
    char *body = svc_ext_job_body(pod), *id = NULL, *canon = NULL, idbuf[160];
    ms_sched_req_t r;
    int32_t slot = -1;
    ms_status_t st;

    if (body == NULL)
        return NULL;
    do {
        p->gen++;
        if (p->gen == 1)
            snprintf(idbuf, sizeof(idbuf), "k8s-%s", pod->uid);
        else
            snprintf(idbuf, sizeof(idbuf), "k8s-%s.%d", pod->uid, p->gen);
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
    svc_loop_mark(j);
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

static void h_filter(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    svc_ext_args_t *a = &e->args;
    svc_ext_verdict_t *v = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*v));
    const char **known = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*known));
    int *idx = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*idx));
    int *scores = calloc((size_t)(a->nnodes > 0 ? a->nnodes : 1), sizeof(*scores));
    int i, nk = 0, npass = 0;
    ext_pod_t *p;
    ms_sched_req_t r;
    ms_diag_t diag;
    ms_status_t st;
    char *err = NULL;

    if (v == NULL || known == NULL || idx == NULL || scores == NULL)
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
    if ((p = pod_find(d->ext, a->pod.uid)) == NULL && (p = pod_add(d->ext, a->pod.uid)) == NULL)
        goto oom;
    if (p->job != NULL && live(job_state(d, p->job))) {
        /* bound already (a retry after a lost reply): only its node */
        const char *on = job_node(d, p->job);

        for (i = 0; i < a->nnodes; i++)
            if (strcmp(a->nodes[i], on) != 0)
                v[i].reason = "migsched: the pod runs on another node";
        goto done;
    }
    if (p->job != NULL)
        release(d, p, false, now);   /* an earlier attempt's reservation */
    for (i = 0; i < a->nnodes; i++) {
        int node = ms_sched_node_find(d->sched, a->nodes[i]);

        if (node < 0) {
            v[i].reason = "migsched: node not managed by migschedd";
            v[i].unresolvable = true;
        } else if ((v[i].reason = never(d, node, &a->pod)) != NULL) {
            v[i].unresolvable = true;
        } else {
            idx[nk] = i;
            known[nk++] = a->nodes[i];
        }
    }
    if (nk > 0) {
        svc_req_t q;
        svc_err_t se;
        char *body = svc_ext_job_body(&a->pod), *id = NULL, *canon = NULL;

        if (body == NULL || svc_req_parse(body, strlen(body), &id, &q, &canon, &se) != 0) {
            free(body);
            goto oom;
        }
        {
            svc_job_t tmp;

            memset(&tmp, 0, sizeof(tmp));
            tmp.req = q;
            tmp.id = a->pod.uid;
            svc_job_sched_req(&tmp, &r);
            r.id = NULL;
            ms_diag_clear(&diag);
            st = ms_sched_node_scores(d->sched, &r, known, nk, scores, &diag);
        }
        svc_req_free(&q);
        free(body);
        free(id);
        free(canon);
        if (st == MS_ENOFIT || st == MS_EINVAL) {
            for (i = 0; i < nk; i++) {
                v[idx[i]].reason = "migsched: no GPU of these nodes can host the request";
                v[idx[i]].unresolvable = true;
            }
            nk = 0;
        } else if (st != MS_OK) {
            err = "migsched: scoring failed";
            goto done;
        }
        for (i = 0; i < nk; i++) {
            if (scores[i] < 0) {
                v[idx[i]].reason = a->pod.gang > 1 ? "migsched: not enough free GPUs now"
                                                   : "migsched: no room for the instance now";
            } else {
                known[npass++] = known[i];
            }
        }
        if (npass > 0) {
            ms_diag_clear(&diag);
            if (reserve(d, p, &a->pod, known, npass, now, &diag) == NULL) {
                for (i = 0; i < nk; i++)
                    if (v[idx[i]].reason == NULL)
                        v[idx[i]].reason = "migsched: no room for the instance now";
            }
        }
    }
done:
    reply(m, 200, svc_ext_filter_reply(v, a->nnodes, err));
    free(v);
    free(known);
    free(idx);
    free(scores);
    return;
oom:
    free(v);
    free(known);
    free(idx);
    free(scores);
    reply(m, 200, svc_ext_filter_reply(NULL, 0, "migsched: out of memory"));
}

static void h_prioritize(svc_t *d, svc_msg_t *m, ext_msg_t *e)
{
    svc_ext_args_t *a = &e->args;
    int n = a->nnodes, i, nk = 0;
    int *scores = calloc((size_t)(n > 0 ? n : 1), sizeof(*scores));
    int *ks = calloc((size_t)(n > 0 ? n : 1), sizeof(*ks));
    int *idx = calloc((size_t)(n > 0 ? n : 1), sizeof(*idx));
    const char **known = calloc((size_t)(n > 0 ? n : 1), sizeof(*known));
    ext_pod_t *p = a->pod.bad == NULL ? pod_find(d->ext, a->pod.uid) : NULL;
    const char *mine = p != NULL && p->job != NULL && job_state(d, p->job) == MS_JOB_RESERVED
                           ? job_node(d, p->job) : "";

    if (scores == NULL || ks == NULL || idx == NULL || known == NULL) {
        free(scores);
        free(ks);
        free(idx);
        free(known);
        reply(m, 500, NULL);
        return;
    }
    for (i = 0; i < n; i++)
        if (ms_sched_node_find(d->sched, a->nodes[i]) >= 0) {
            idx[nk] = i;
            known[nk++] = a->nodes[i];
        }
    if (nk > 0 && a->pod.bad == NULL) {
        svc_req_t q;
        svc_err_t se;
        char *body = svc_ext_job_body(&a->pod), *id = NULL, *canon = NULL;

        if (body != NULL && svc_req_parse(body, strlen(body), &id, &q, &canon, &se) == 0) {
            svc_job_t tmp;
            ms_sched_req_t r;
            ms_diag_t diag;

            memset(&tmp, 0, sizeof(tmp));
            tmp.req = q;
            svc_job_sched_req(&tmp, &r);
            r.id = NULL;
            ms_diag_clear(&diag);
            if (ms_sched_node_scores(d->sched, &r, known, nk, ks, &diag) == MS_OK)
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
    reply(m, 200, svc_ext_prioritize_reply((const char *const *)a->nodes, scores, n));
    free(scores);
    free(ks);
    free(idx);
    free(known);
}

static void h_bind(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    svc_ext_bind_t *b = &e->bind;
    ext_pod_t *p = pod_find(d->ext, b->uid);
    int st = p != NULL ? job_state(d, p->job) : -1;
    char why[300];

    e->ok = false;
    if (p != NULL && live(st) && strcmp(job_node(d, p->job), b->node) == 0) {
        e->ok = true;   /* bound already: a retried bind */
    } else if (p != NULL && st == MS_JOB_RESERVED && strcmp(job_node(d, p->job), b->node) == 0) {
        e->ok = ms_sched_bind(d->sched, p->job->slot, now) == MS_OK;
        svc_loop_mark(p->job);
    } else {
        ms_diag_t diag;
        const char *node = b->node;

        if (p == NULL) {
            snprintf(why, sizeof(why), "migsched: no filter call came for pod %.63s/%.120s", b->ns, b->name);
            goto fail;
        }
        if (live(st)) {
            snprintf(why, sizeof(why), "migsched: the pod runs on node %.120s already", job_node(d, p->job));
            goto fail;
        }
        if (ms_sched_node_find(d->sched, node) < 0) {
            snprintf(why, sizeof(why), "migsched: node %.120s is not managed by migschedd", node);
            goto fail;
        }
        /* kube-scheduler chose another node than the held one, or the hold
         * expired: hold on that node alone, then bind */
        release(d, p, false, now);
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
            do {
                p->gen++;
                snprintf(why, sizeof(why), "k8s-%s.%d", b->uid, p->gen);
            } while (svc_jobs_find(&d->jobs, why) != NULL);
            if ((j->id = strdup(why)) == NULL || (j->body = strdup(old->body)) == NULL) {
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
                svc_loop_mark(j);
            }
        }
    }
    if (!e->ok) {
        snprintf(why, sizeof(why), "migsched: cannot start the instance on %.120s", b->node);
        goto fail;
    }
    snprintf(e->job_id, sizeof(e->job_id), "%s", p->job->id);
    reply(m, 200, svc_ext_bind_reply(NULL));
    return;
fail:
    snprintf(e->why, sizeof(e->why), "%s", why);
    reply(m, 200, svc_ext_bind_reply(why));
}

/* Where a bound pod's job stands (the HTTP side polls this while it waits
 * for the instance). */
static void h_state(svc_t *d, svc_msg_t *m, ext_msg_t *e)
{
    svc_job_t *j = svc_jobs_find(&d->jobs, e->job_id);
    ms_sched_job_info_t info;

    e->state = -1;
    if (j != NULL) {
        e->state = job_state(d, j);
        if (j->slot >= 0 && ms_sched_job(d->sched, j->slot, &info) == MS_OK && info.ninst > 0) {
            const ms_geom_t *g = NULL;
            int node, group, local;

            ms_sched_gpu_where(d->sched, info.inst[0].gpu, &node, &group, &local);
            (void)ms_sched_gpu(d->sched, info.inst[0].gpu, &g);
            snprintf(e->node, sizeof(e->node), "%s", ms_sched_node(d->sched, node)->name);
            e->gpu = info.inst[0].gpu - ms_sched_node_first_gpu(d->sched, node);
            e->start = info.inst[0].start;
            e->ninst = info.ninst;
            snprintf(e->profile, sizeof(e->profile), "%s",
                     g != NULL && info.inst[0].prof >= 0 ? ms_geom_profile(g, info.inst[0].prof)->name : "");
            snprintf(e->gpu_uuid, sizeof(e->gpu_uuid), "%s", svc_backend_gpu_uuid(d->be, info.inst[0].gpu));
            e->inst_uuid[0] = '\0';
            if (info.inst[0].start >= 0)
                svc_backend_inst_uuid(d->be, info.inst[0].gpu, info.inst[0].start, j->id, e->inst_uuid,
                                      sizeof(e->inst_uuid));
        }
        snprintf(e->why, sizeof(e->why), "%s", j->reason);
    }
    reply(m, 200, strdup("{}"));
}

/* A pod went away or completed (the watch), or a bind is rolled back. */
static void h_release(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    ext_pod_t *p = pod_find(d->ext, e->bind.uid != NULL ? e->bind.uid : "");
    size_t k;

    if (p == NULL && e->bind.uid != NULL && e->scan) {
        /* not seen since a restart: its job, by label */
        for (k = d->jobs.n; k-- > 0;) {
            svc_job_t *j = d->jobs.v[k];
            const char *u = json_string_value(json_object_get(j->req.labels, "k8s.uid"));

            if (u != NULL && strcmp(u, e->bind.uid) == 0 && !terminal(j->state)) {
                if ((p = pod_add(d->ext, e->bind.uid)) != NULL)
                    p->job = j;
                break;
            }
        }
    }
    if (p != NULL && (!e->rollback || (p->job != NULL && strcmp(p->job->id, e->job_id) == 0))) {
        release(d, p, e->finished, now);
        if (!p->want_release && !e->rollback)
            pod_del(d->ext, p);
    }
    reply(m, 200, strdup("{}"));
}

/* The pod list after a (re)list: jobs of k8s pods that are not in it went
 * away while nobody watched. */
static void h_resync(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    size_t k;
    int i;

    for (k = 0; k < d->jobs.n; k++) {
        svc_job_t *j = d->jobs.v[k];
        const char *u = json_string_value(json_object_get(j->req.labels, "k8s.uid"));
        bool seen = false;
        ext_pod_t *p;

        if (u == NULL || terminal(j->state) || j->slot < 0 || !live(job_state(d, j)) ||
            j->submit_t >= e->list_t)
            continue;   /* (a pod bound after the list began is not in it) */
        for (i = 0; i < e->nuids && !seen; i++)
            seen = strcmp(e->uids[i], u) == 0;
        if (seen)
            continue;
        if ((p = pod_find(d->ext, u)) == NULL && (p = pod_add(d->ext, u)) != NULL)
            p->job = j;
        if (p != NULL && p->job == j)
            release(d, p, false, now);
    }
    reply(m, 200, strdup("{}"));
}

static void h_adopt(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now);

void svc_ext_handle(svc_t *d, svc_msg_t *m, double now)
{
    ext_msg_t *e = m->ext;

    switch (e != NULL ? e->verb : -1) {
    case EXT_FILTER: h_filter(d, m, e, now); break;
    case EXT_PRIORITIZE: h_prioritize(d, m, e); break;
    case EXT_BIND: h_bind(d, m, e, now); break;
    case EXT_STATE: h_state(d, m, e); break;
    case EXT_RELEASE: h_release(d, m, e, now); break;
    case EXT_RESYNC: h_resync(d, m, e, now); break;
    case EXT_ADOPT: h_adopt(d, m, e, now); break;
    default: reply(m, 500, strdup("{\"error\":{\"message\":\"unknown extender message\"}}"));
    }
}

/* Reservations the scheduler's tick expires: mark their jobs so that the
 * table and store follow; pods whose release waited for a start. */
void svc_ext_tick(svc_t *d, double now)
{
    size_t i;

    if (d->ext == NULL)
        return;
    for (i = 0; i < d->ext->cap; i++) {
        ext_pod_t *p = d->ext->slots[i];
        int st;

        if (p == NULL || p == EXT_TOMB || p->job == NULL)
            continue;
        st = job_state(d, p->job);
        if (st != p->job->state)
            svc_loop_mark(p->job);   /* e.g. its hold expired in ms_sched_tick */
        if (p->want_release && !live(st)) {
            p->want_release = false;
            pod_del(d->ext, p);
        } else if (p->want_release && st == MS_JOB_RUNNING) {
            release(d, p, p->release_finished, now);
            if (!p->want_release)
                pod_del(d->ext, p);
        }
    }
}

/* --- the HTTP side ------------------------------------------------------ */

bool svc_ext_is_read(const svc_msg_t *m)
{
    const ext_msg_t *e = m->ext;

    return e != NULL && e->verb == EXT_STATE;
}

ext_msg_t *svc__ext_call(svc_t *d, ext_msg_t *e, int *status, char **body)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        svc_ext_msg_free(e);
        *status = 500;
        *body = NULL;
        return NULL;
    }
    m->kind = SVC_M_EXT;
    m->ext = e;
    svc_call(d, m);
    *status = m->status;
    *body = m->body;
    m->body = NULL;
    e = m->ext;
    m->ext = NULL;
    svc_msg_free(m);
    return e;   /* the caller frees it */
}

void svc_ext_http(svc_t *d, const char *verb, const char *body, size_t len, int *status, char **out)
{
    ext_msg_t *e = calloc(1, sizeof(*e));
    svc_err_t err;
    int rc;

    *out = NULL;
    if (e == NULL) {
        *status = 500;
        return;
    }
    memset(&err, 0, sizeof(err));
    if (!svc_ext_serving(d)) {
        /* a standby (its /readyz says 503, so a Service sends nothing here) */
        svc_ext_msg_free(e);
        svc_err_set(&err, 503, "", "migsched: this replica is a standby; the leader serves the extender");
        *status = err.code;
        *out = svc_err_body(&err);
        return;
    }
    if (strcmp(verb, "filter") == 0 || strcmp(verb, "prioritize") == 0) {
        e->verb = verb[0] == 'f' ? EXT_FILTER : EXT_PRIORITIZE;
        rc = svc_ext_parse_args(body, len, &e->args, &err);
    } else if (strcmp(verb, "bind") == 0) {
        e->verb = EXT_BIND;
        rc = svc_ext_parse_bind(body, len, &e->bind, &err);
    } else {
        svc_err_set(&err, 404, "", "no such extender verb (filter, prioritize, bind)");
        rc = -1;
    }
    if (rc != 0) {
        svc_ext_msg_free(e);
        *status = err.code;
        *out = svc_err_body(&err);
        return;
    }
    if (e->verb == EXT_BIND && d->kube != NULL) {
        svc__ext_kube_bind(d, e, status, out);   /* frees e */
        return;
    }
    e = svc__ext_call(d, e, status, out);
    svc_ext_msg_free(e);
}

/* --- failover: a new leader adopts what another replica bound ------------ */

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

/* Adopt one bound pod; NULL, or why not. */
static const char *adopt_pod(svc_t *d, json_t *pod, double now, char *why, size_t wlen)
{
    json_t *md = json_object_get(pod, "metadata"), *ann = json_object_get(md, "annotations");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *place = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "placement"));
    const char *pname = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "profile"));
    const char *jid = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "job"));
    const char *iuuid = json_string_value(json_object_get(ann, SVC_EXT_PREFIX "instance-uuid"));
    svc_ext_pod_t pp;
    svc_err_t err;
    ext_pod_t *p;
    svc_job_t *j = NULL;
    ms_sched_req_t r;
    const ms_geom_t *g = NULL;
    char node[256], idbuf[160], *body = NULL, *id = NULL, *canon = NULL;
    int ni, gpu, start, gg, prof, k;
    svc_binst_t *inv = NULL;
    bool have = false;
    const char *bwhy;
    ms_op_t op;
    ms_diag_t diag;

    if (uid == NULL || place == NULL || pname == NULL)
        return NULL;                           /* not one of ours: nothing to adopt */
    p = pod_find(d->ext, uid);
    if (p != NULL && p->job != NULL && live(job_state(d, p->job)))
        return NULL;                           /* this replica runs it already */
    if (!parse_placement(place, node, sizeof(node), &gpu, &start)) {
        snprintf(why, wlen, "placement '%.100s' is not node/gpu/start", place);
        return why;
    }
    if ((ni = ms_sched_node_find(d->sched, node)) < 0 || gpu >= ms_sched_node(d->sched, ni)->ngpus) {
        snprintf(why, wlen, "placement %.100s: no such node or GPU here", place);
        return why;
    }
    gg = ms_sched_node_first_gpu(d->sched, ni) + gpu;
    if (ms_sched_gpu(d->sched, gg, &g) == NULL || g == NULL || (prof = ms_geom_profile_find(g, pname)) < 0) {
        snprintf(why, wlen, "profile %.40s is not one of node %.100s's", pname, node);
        return why;
    }
    memset(&pp, 0, sizeof(pp));
    memset(&err, 0, sizeof(err));
    if (svc_ext_parse_pod(pod, &pp, &err) != 0 || pp.bad != NULL || pp.gang > 1) {
        snprintf(why, wlen, "%s", pp.gang > 1 ? "gang pods are not adopted (their GPUs are not annotated)"
                                              : pp.bad != NULL ? pp.bad : err.msg);
        svc_ext_pod_free(&pp);
        return why;
    }
    body = svc_ext_job_body(&pp);
    svc_ext_pod_free(&pp);
    if (jid != NULL && strlen(jid) < sizeof(idbuf) && svc_jobs_find(&d->jobs, jid) == NULL)
        snprintf(idbuf, sizeof(idbuf), "%s", jid);
    else
        for (k = 2;; k++) {
            snprintf(idbuf, sizeof(idbuf), "k8s-%.120s.a%d", uid, k);
            if (svc_jobs_find(&d->jobs, idbuf) == NULL)
                break;
        }
    if (body == NULL || (j = calloc(1, sizeof(*j))) == NULL || (j->id = strdup(idbuf)) == NULL ||
        svc_req_parse(body, strlen(body), &id, &j->req, &canon, &err) != 0) {
        snprintf(why, wlen, "cannot make its job: %s", err.msg[0] ? err.msg : "out of memory");
        goto fail;
    }
    j->body = canon;
    canon = NULL;
    j->slot = -1;
    j->place.node = -1;
    j->submit_t = now;
    j->start_t = now;
    j->state = MS_JOB_RUNNING;
    /* the instance: the hardware's (an agent's) when it has it, else the
     * in-process backend plays the node's agent and creates it */
    if (svc_backend_inventory(d->be, &inv, &k) == 0) {
        int i;
        for (i = 0; i < k && !have; i++)
            have = inv[i].gpu == gg && inv[i].start == start;
        free(inv);
    }
    if (!have && start >= 0 && svc_backend_create(d->be, gg, prof, start) != 0) {
        snprintf(why, wlen, "the backend cannot create %.40s at %.100s", pname, place);
        goto fail;
    }
    memset(&op, 0, sizeof(op));
    op.kind = MS_OP_START;
    op.gpu = gg;
    op.start = (int8_t)start;
    op.prof = (int8_t)prof;
    op.job = -1;
    if (svc_backend_op(d->be, &op, j->id, pname, &bwhy) != 0) {
        snprintf(why, wlen, "the backend cannot start it at %.100s: %.100s", place, bwhy);
        goto fail;
    }
    if (start >= 0 && iuuid != NULL && iuuid[0] != '\0')
        (void)svc_backend_adopt_uuid(d->be, gg, start, iuuid);
    svc_job_sched_req(j, &r);
    ms_diag_clear(&diag);
    if (svc_table_reserve(d) != 0) {
        snprintf(why, wlen, "out of memory");
        goto fail;
    }
    if (ms_sched_adopt(d->sched, gg, prof, start, &r, now, &diag) != MS_OK) {
        snprintf(why, wlen, "the scheduler cannot adopt it at %.100s: %.120s", place, diag.msg);
        goto fail;
    }
    svc_table_add(d, j, ms_sched_find(d->sched, j->id));
    svc_loop_mark(j);
    if (p == NULL)
        p = pod_add(d->ext, uid);
    if (p != NULL)
        p->job = j;
    free(body);
    free(id);
    return NULL;
fail:
    free(body);
    free(id);
    free(canon);
    svc_job_free(j);
    return why;
}

static void h_adopt(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    json_t *pod;
    size_t i;
    int adopted = 0, failed = 0;
    char why[300];

    json_array_foreach(e->pods, i, pod) {
        json_t *spec = json_object_get(pod, "spec");
        const char *nn = json_string_value(json_object_get(spec, "nodeName"));
        const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
        int before = (int)d->jobs.n;
        const char *bad;

        if (nn == NULL || nn[0] == '\0' ||
            (phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)))
            continue;
        if ((bad = adopt_pod(d, pod, now, why, sizeof(why))) != NULL) {
            failed++;
            svc_log("warn", "pod not adopted",
                    json_pack("{s:s?, s:s}", "pod",
                              json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")),
                              "why", bad));
        } else if ((int)d->jobs.n > before) {
            adopted++;
        }
    }
    e->ok = failed == 0;
    e->gpu = adopted;
    svc_log("info", "took over bound pods", json_pack("{s:i, s:i}", "adopted", adopted, "failed", failed));
    reply(m, 200, strdup("{}"));
}

int svc_ext_adopt(svc_t *d)
{
    ext_msg_t *e;
    char err[256], *resp = NULL, *body = NULL;
    long hs = 0;
    json_t *list;
    int status, rc;

    err[0] = '\0';
    if (d->kube == NULL || d->ext == NULL)
        return 0;
    if (ms_kube_request(d->kube, "GET", "/api/v1/pods", NULL, &hs, &resp, err, sizeof(err)) != 0 ||
        hs != 200 || resp == NULL || (list = json_loads(resp, 0, NULL)) == NULL) {
        free(resp);
        svc_log("warn", "cannot list pods to take over", json_pack("{s:i, s:s}", "status", (int)hs, "error", err));
        return -1;
    }
    free(resp);
    if ((e = calloc(1, sizeof(*e))) == NULL) {
        json_decref(list);
        return -1;
    }
    e->verb = EXT_ADOPT;
    e->pods = json_incref(json_object_get(list, "items"));
    json_decref(list);
    if (e->pods == NULL)
        e->pods = json_array();
    e = svc__ext_call(d, e, &status, &body);
    free(body);
    /* a pod that cannot be adopted is logged, not fatal: one bad pod must
     * not keep the cluster without a leader */
    rc = e != NULL ? 0 : -1;
    svc_ext_msg_free(e);
    return rc;
}

bool svc_ext_serving(const svc_t *d)
{
    if (d->kctl == NULL)
        return !d->cfg->leader_elect;     /* before the election starts or after it ended */
    return svc_kctl_is_leader(d->kctl);
}
