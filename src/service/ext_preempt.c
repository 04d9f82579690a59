/* ext_preempt.c - the loop thread: preemption for pods (--preempt with
 * --kube; docs/kubernetes.md, "Preemption").
 *
 * kube-scheduler holds the pods' queue, so a pod that fits nowhere is not
 * queued here: its filter, finding no room on any node it was given, asks
 * ms_sched_victims_for for the cheapest victims by MIG geometry among the
 * bound pods of lower priority on those nodes (the same rules as a queued
 * job's preemption: grace, rate limit, tenants' guarantees). The victims'
 * pods are evicted through the Eviction API by the worker that answered
 * the filter, after its answer (ext_evict.c): the set counted against its
 * PodDisruptionBudgets and a dry run of every eviction first, so a set a
 * budget cannot give is given up whole rather than half evicted. Their deletion comes back
 * through the pod watch and frees their instances like any pod's; then
 * kube-scheduler tries the preemptor again and the filter finds the room.
 * A victim's instance is never stopped under its pod: the pod's
 * controller (Job, Deployment) makes its replacement, which queues in
 * kube-scheduler like any pod.
 *
 * Meanwhile the preemptor does not search again (preempt_wait), and a pod
 * whose eviction was refused is no victim for REFUSED_S (the ring
 * svc_ext_t.refused).
 *
 * kube-scheduler tries the preemptor again on a cluster event only, and
 * what makes its room is ours: so the preemptor's pod is nudged
 * (ext_nudge.c) when the set is given up (a refusal), when the last of its
 * victims is released here (each victim's entry names its preemptor until
 * then), and when its wait runs out with the victims still there
 * (svc_ext_tick); each time its wait ends, so its next filter searches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"

#define WAIT_S 30.0      /* a preemptor's evictions: no new search before this */
#define REFUSED_S 30.0   /* a pod whose eviction a PDB refused: no victim for this long */

static bool refused(const svc_ext_t *x, const char *uid, double now)
{
    int i;

    for (i = 0; i < x->nrefused; i++)
        if (x->refused[i].until > now && strcmp(x->refused[i].uid, uid) == 0)
            return true;
    return false;
}

static void refuse(svc_ext_t *x, const char *uid, double until)
{
    int i;

    for (i = 0; i < x->nrefused; i++)
        if (strcmp(x->refused[i].uid, uid) == 0) {
            x->refused[i].until = until;
            return;
        }
    i = x->nrefused < SVC_EXT_REFUSED ? x->nrefused++ : x->refused_next;
    x->refused_next = (i + 1) % SVC_EXT_REFUSED;
    snprintf(x->refused[i].uid, sizeof(x->refused[i].uid), "%s", uid);
    x->refused[i].until = until;
}

/* The pod a job runs for: "ns/name" and uid from its labels; false for a
 * job that is no pod's (a /v1/jobs job, an adopted foreign instance). */
static bool pod_of(const svc_job_t *j, const char **pod, const char **uid)
{
    *pod = json_string_value(json_object_get(j->req.labels, "k8s.pod"));
    *uid = json_string_value(json_object_get(j->req.labels, "k8s.uid"));
    return *pod != NULL && *uid != NULL && strchr(*pod, '/') != NULL && strlen(*uid) < SVC_EXT_UID_MAX;
}

typedef struct veto_ctx {
    svc_t *d;
    double now;
} veto_ctx_t;

/* ms_sched_victims_for's veto: only a pod's job, and not one refused. */
static bool may_evict(void *ctx, int32_t slot)
{
    veto_ctx_t *c = ctx;
    const svc_job_t *j = svc_jobs_by_slot(&c->d->jobs, slot);
    const char *pod, *uid;

    return j != NULL && pod_of(j, &pod, &uid) && !refused(c->d->ext, uid, c->now);
}

static bool victim_fill(const svc_t *d, int32_t slot, ext_victim_t *v)
{
    const svc_job_t *j = svc_jobs_by_slot(&d->jobs, slot);
    ms_sched_job_info_t info;
    const char *pod, *uid, *slash;

    if (j == NULL || !pod_of(j, &pod, &uid))
        return false;
    slash = strchr(pod, '/');
    if ((size_t)(slash - pod) >= sizeof(v->ns) || strlen(slash + 1) >= sizeof(v->name))
        return false;
    memcpy(v->ns, pod, (size_t)(slash - pod));
    v->ns[slash - pod] = '\0';
    snprintf(v->name, sizeof(v->name), "%s", slash + 1);
    snprintf(v->uid, sizeof(v->uid), "%s", uid);
    snprintf(v->job, sizeof(v->job), "%s", j->id);
    v->tenant = ms_sched_job(d->sched, slot, &info) == MS_OK ? info.tenant : 0;
    return true;
}

void svc_ext_preempt(svc_t *d, ext_pod_t *p, const svc_ext_pod_t *pod, const ms_sched_req_t *r,
                     const char *const *names, int n, svc_ext_verdict_t *v, const int *idx, ext_msg_t *e,
                     double now)
{
    ms_sched_preemption_t out;
    veto_ctx_t vc = { d, now };
    ms_diag_t diag;
    const char *node;
    char path[1200];
    int i;

    if (!d->cfg->qcfg.preempt || d->kube == NULL || pod->never_preempts || n <= 0)
        return;
    if (now < p->preempt_wait) {   /* its victims are going: say so on their node */
        node = ms_sched_node(d->sched, p->preempt_node)->name;
        snprintf(e->why, sizeof(e->why), "migsched: no room now; %d pod(s) of lower priority are being evicted "
                 "on this node", p->preempt_n);
        for (i = 0; i < n; i++)
            if (strcmp(names[i], node) == 0)
                v[idx[i]].reason = e->why;
        return;
    }
    ms_diag_clear(&diag);
    if (ms_sched_victims_for(d->sched, r, names, n, now, may_evict, &vc, &out, &diag) != MS_OK)
        return;
    if ((e->evict = calloc((size_t)out.nvictims, sizeof(*e->evict))) == NULL)
        return;
    for (i = 0; i < out.nvictims; i++)
        if (!victim_fill(d, out.victims[i], &e->evict[e->nevict]))
            break;
        else
            e->nevict++;
    if (e->nevict < out.nvictims) {   /* the veto let through no job without a pod: a bug */
        free(e->evict);
        e->evict = NULL;
        e->nevict = 0;
        return;
    }
    p->preempt_wait = now + WAIT_S;
    p->preempt_node = out.node;
    p->preempt_n = out.nvictims;
    p->preempt_left = 0;
    free(p->preempt_path);
    p->preempt_path = svc_ext_pod_path(pod->ns, pod->name, "", path, sizeof(path)) ? strdup(path) : NULL;
    node = ms_sched_node(d->sched, out.node)->name;
    snprintf(e->why, sizeof(e->why), "migsched: no room now; evicting %d pod(s) of lower priority on this node",
             out.nvictims);
    for (i = 0; i < n; i++)
        if (strcmp(names[i], node) == 0)
            v[idx[i]].reason = e->why;
    ms_log("info", "preempting: evicting pods for a pod of higher priority",
           json_pack("{s:s, s:s, s:i, s:s, s:i}", "pod", pod->name, "node", node, "gpu", (int)out.gpu, "victim",
                     e->evict[0].name, "victims", out.nvictims));
}

/* An evicted victim's pod v whose release the watch has not brought yet:
 * it names its preemptor p, which counts it. */
static void awaited(svc_t *d, ext_pod_t *p, const char *uid)
{
    ext_pod_t *v = p != NULL ? svc_ext_pod_find(d->ext, uid) : NULL;
    int st = v != NULL ? svc_ext_job_state(d, v->job) : -1;

    if (v == NULL || v->job == NULL || svc_job_terminal(st))
        return;
    free(v->preemptor);
    if ((v->preemptor = strdup(p->uid)) != NULL)
        p->preempt_left++;
}

/* EXT_EVICTED: e->evict's outcomes; bind.uid the preemptor's uid, job_id
 * the id its job gets. */
void svc_ext_h_evicted(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now)
{
    ext_pod_t *p = e->bind.uid != NULL ? svc_ext_pod_find(d->ext, e->bind.uid) : NULL;
    bool again = false;
    int i, gone = 0;

    for (i = 0; i < e->nevict; i++) {
        ext_victim_t *v = &e->evict[i];

        if (v->code == 429) {
            refuse(d->ext, v->uid, now + REFUSED_S);
            again = true;
        } else if (v->dry_refused) {
            again = true;   /* another's refusal: this one was never asked */
        } else if (v->code == 200 || v->code == 201) {
            svc_event_add(d, v->job, "preempted", e->job_id, now);
            gone++;
            awaited(d, p, v->uid);
            if (v->tenant >= 0 && v->tenant < (int)(sizeof(d->met.preempted) / sizeof(d->met.preempted[0])))
                d->met.preempted[v->tenant]++;
        } else if (v->code == 404) {   /* gone already, as wanted */
            gone++;
        } else {
            again = true;
        }
        if (v->code != 200 && v->code != 201)
            ms_log(v->code == 429 || v->dry_refused ? "info" : "warn", "preempting: eviction not done",
                   json_pack("{s:s, s:s, s:I, s:b, s:s}", "pod", v->name, "ns", v->ns, "status", (json_int_t)v->code,
                             "dry_run_refused", v->dry_refused, "budget", v->pdb));
    }
    /* a set given up: the preemptor searches again at its next filter,
     * without the refused pods; victims released already (the watch came
     * first): its room is there */
    if (p != NULL && (again || (gone > 0 && p->preempt_left == 0))) {
        p->preempt_wait = 0;
        (void)svc_ext_nudge(d, p->preempt_path, p->uid, SVC_EXT_PREEMPT_RETRY,
                            again ? "eviction refused" : "victims gone");
    }
    svc_ext_reply(m, 200, strdup("{}"));
}

/* A preemptor still without a job of its own (none, or an old one ended):
 * the one a nudge is for. */
static bool unplaced(const svc_t *d, const ext_pod_t *p)
{
    return p->job == NULL || svc_job_terminal(svc_ext_job_state(d, p->job));
}

void svc_ext_victim_gone(svc_t *d, ext_pod_t *v)
{
    ext_pod_t *p;

    if (v->preemptor == NULL)
        return;
    p = svc_ext_pod_find(d->ext, v->preemptor);
    free(v->preemptor);
    v->preemptor = NULL;
    if (p != NULL && p->preempt_left > 0 && --p->preempt_left == 0) {
        p->preempt_wait = 0;
        if (unplaced(d, p))
            (void)svc_ext_nudge(d, p->preempt_path, p->uid, SVC_EXT_PREEMPT_RETRY, "victims gone");
    }
}

void svc_ext_preempt_tick(svc_t *d, ext_pod_t *p, double now)
{
    if (p->preempt_wait <= 0 || now < p->preempt_wait)
        return;
    p->preempt_wait = 0;
    p->preempt_left = 0;   /* its victims' releases, if they come, nudge nobody */
    if (unplaced(d, p))
        (void)svc_ext_nudge(d, p->preempt_path, p->uid, SVC_EXT_PREEMPT_RETRY, "eviction wait over");
}
