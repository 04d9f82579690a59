/* ext_evict.c - an extender worker, after it answered a filter: the
 * evictions of the victims ext_preempt.c picked (docs/kubernetes.md,
 * "Preemption"), through the Eviction API, so the API server checks each
 * pod's PodDisruptionBudgets (429 when an eviction would break one):
 *   0. the victims' namespaces' budgets, counted against the set
 *      (ext_pdb.c): each eviction is checked alone against its budget as it
 *      stands, so a set taking three pods from a budget that allows one
 *      would pass every dry run; if a budget cannot give its victims, none
 *      is evicted (what cannot be read is left to the dry runs);
 *   1. a dry run (?dryRun=All) of every eviction: if any is refused, none
 *      is made (a set half evicted frees nothing and loses work);
 *   2. the evictions, each within CALL_MS, one after the other, stopping
 *      at the first refused: each dry run was checked against the budget
 *      as it stood, so a PDB that allows fewer disruptions than the set
 *      takes from it refuses one of them now; the ones evicted before it
 *      are gone (their PDBs allowed it), the rest are kept. An eviction
 *      not answered (or a 5xx) is settled by the pod's state (settle);
 *   3. the outcomes to the loop (EXT_EVICTED), which notes the refusals
 *      and the preemptions.
 * Only the leader evicts: the worker checks before each step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "service/extender_int.h"

#define CALL_MS 5000L

/* One Eviction, dry or not: its HTTP status (0: no answer). */
static long evict_one(svc_t *d, const ext_victim_t *v, bool dry)
{
    char path[1200], err[256], *resp = NULL;
    json_t *o;
    char *body;
    long status = 0;
    double deadline;
    int rc;

    if (!svc_ext_pod_path(v->ns, v->name, dry ? "/eviction?dryRun=All" : "/eviction", path, sizeof(path)))
        return 0;
    /* the uid precondition: a pod of the same name made since is not evicted */
    o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1", "kind", "Eviction", "metadata",
                  "name", v->name, "namespace", v->ns, "deleteOptions", "preconditions", "uid", v->uid);
    body = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (body == NULL)
        return 0;
    /* not sent once this replica's leadership has ended (as 0: no answer) */
    deadline = svc_ext_write_deadline(d, CALL_MS * 1e-3);
    if (!dry)
        svc_ext_stall(d->ext_stall_evict, v->name, v->ns, "failpoint stall-before-eviction: the eviction sleeps 5 s");
    rc = ms_kube_request_by(d->kube, "POST", path, body, deadline, &status, &resp, err, sizeof(err));
    if (rc == MS_KUBE_LATE)
        ms_log("warn", "eviction not sent: this replica's leadership ended before it",
               json_pack("{s:s,s:s,s:b}", "pod", v->name, "namespace", v->ns, "dry_run", dry));
    if (rc != 0)
        status = 0;
    free(resp);
    free(body);
    return status;
}

/* A real eviction's outcome that was not told (no answer, a 5xx): the
 * pod's own state says whether it landed. Gone, replaced by a pod of
 * another UID, or being deleted: landed (200; an eviction deletes the pod,
 * and one was just sent); there and not being deleted: it did not (code
 * kept); the pod unread: unknown (code kept). Without this a lost reply
 * gave the preemptor's set up and searched again while its victim was
 * going, and the preemption went uncounted. */
static long settle(svc_t *d, const ext_victim_t *v, long code)
{
    char path[1200];
    long status;
    json_t *o, *md;
    const char *uid;

    if ((code != 0 && code < 500) || !svc_ext_pod_path(v->ns, v->name, "", path, sizeof(path)))
        return code;
    if ((o = svc_ext_get_json(d, path, CALL_MS, &status)) == NULL)
        return status == 404 ? 200 : code;
    md = json_object_get(o, "metadata");
    uid = json_string_value(json_object_get(md, "uid"));
    if (uid != NULL && (strcmp(uid, v->uid) != 0 || json_is_string(json_object_get(md, "deletionTimestamp"))))
        code = 200;   /* replaced, or being deleted */
    json_decref(o);
    return code;
}

/* Step 0: true when the budgets refuse the set (the refused victims get
 * code 429 and their budget's name). */
static bool budgets_refuse(svc_t *d, ext_msg_t *e)
{
    json_t **pods = calloc((size_t)e->nevict, sizeof(*pods)), **labels = calloc((size_t)e->nevict, sizeof(*labels));
    bool *refuse = calloc((size_t)e->nevict, sizeof(*refuse)), *done = calloc((size_t)e->nevict, sizeof(*done));
    const char **by = calloc((size_t)e->nevict, sizeof(*by));
    char ens[200], path[1200];
    json_t **pdbs = calloc((size_t)e->nevict, sizeof(*pdbs));
    int i, k, nref = 0;

    if (pods == NULL || labels == NULL || refuse == NULL || done == NULL || by == NULL || pdbs == NULL)
        goto out;
    for (i = 0; i < e->nevict; i++)
        if (svc_ext_pod_path(e->evict[i].ns, e->evict[i].name, "", path, sizeof(path)) &&
            (pods[i] = svc_ext_get_json(d, path, CALL_MS, NULL)) != NULL)
            labels[i] = json_object_get(json_object_get(pods[i], "metadata"), "labels");
    /* one list per namespace, counted over that namespace's victims */
    for (i = 0; i < e->nevict; i++) {
        json_t *sub[MS_MAX_INST];
        bool r[MS_MAX_INST];
        const char *b[MS_MAX_INST];
        int idx[MS_MAX_INST], n = 0;

        if (done[i] || !ms_kube_escape(e->evict[i].ns, ens, sizeof(ens)))
            continue;
        for (k = i; k < e->nevict && n < MS_MAX_INST; k++)
            if (!done[k] && strcmp(e->evict[k].ns, e->evict[i].ns) == 0) {
                done[k] = true;
                idx[n] = k;
                sub[n] = labels[k];
                r[n] = false;
                b[n++] = NULL;
            }
        snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets", ens);
        if ((pdbs[i] = svc_ext_get_json(d, path, CALL_MS, NULL)) == NULL)
            continue;   /* unread: the dry runs decide */
        if (svc_ext_pdb_refuse(json_object_get(pdbs[i], "items"), sub, n, r, b) > 0)
            for (k = 0; k < n; k++)
                if (r[k]) {
                    refuse[idx[k]] = true;
                    by[idx[k]] = b[k];
                }
    }
    for (i = 0; i < e->nevict; i++)
        if (refuse[i]) {
            e->evict[i].code = 429;   /* as the API server would answer */
            /* a copy: the name lives in pdbs[] */
            snprintf(e->evict[i].pdb, sizeof(e->evict[i].pdb), "%s", by[i] != NULL ? by[i] : "?");
            nref++;
        }
out:
    for (i = 0; pods != NULL && i < e->nevict; i++)
        json_decref(pods[i]);
    for (i = 0; pdbs != NULL && i < e->nevict; i++)
        json_decref(pdbs[i]);
    free(pods);
    free(labels);
    free(refuse);
    free(done);
    free(by);
    free(pdbs);
    return nref > 0;
}

void svc_ext_evict(svc_t *d, ext_msg_t *e)
{
    int i, status;
    bool refused = false;
    char *body = NULL;

    if (d->kube == NULL || !svc_ext_serving(d)) {
        svc_ext_msg_free(e);
        return;
    }
    if (budgets_refuse(d, e)) {
        for (i = 0; i < e->nevict; i++)
            e->evict[i].dry_refused = true;
        goto tell;
    }
    for (i = 0; i < e->nevict; i++) {
        e->evict[i].code = evict_one(d, &e->evict[i], true);
        /* 404: gone already, which is what an eviction wants */
        refused |= e->evict[i].code != 200 && e->evict[i].code != 201 && e->evict[i].code != 404;
    }
    if (refused)
        for (i = 0; i < e->nevict; i++)
            e->evict[i].dry_refused = true;
    else
        for (i = 0; i < e->nevict; i++) {
            long c = e->evict[i].code =
                svc_ext_serving(d) ? settle(d, &e->evict[i], evict_one(d, &e->evict[i], false)) : 0;

            if (c != 200 && c != 201 && c != 404) {
                for (i++; i < e->nevict; i++)
                    e->evict[i].code = 0;   /* not asked: no answer */
                break;
            }
        }
tell:
    /* the outcomes to the loop, in the same message */
    e->verb = EXT_EVICTED;
    e->bind.uid = e->args.pod.uid;   /* moved: the message frees it once */
    e->args.pod.uid = NULL;
    svc_ext_job_id(e->bind.uid != NULL ? e->bind.uid : "", NULL, 1, e->job_id, sizeof(e->job_id));
    e = svc_ext_call(d, e, &status, &body);
    free(body);
    svc_ext_msg_free(e);
}
