/* ext_takeover.c - the kctl thread: a replica that just became the leader
 * takes over the pods another one bound, before it serves: every agent's
 * inventory read afresh (issue 20, defect 2: the copy read at start-up is
 * the past), then the pods listed. kctl.c calls
 * svc_ext_takeover through its takeover callback (main.c wires it), so
 * kctl knows nothing of the extender: this lists the pods from the API
 * server and posts them to the loop (EXT_ADOPT, ext_adopt.c), which adopts
 * each bound, unfinished pod that carries migsched.io/placement.
 */
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "service/extender_int.h"

#define TAKEOVER_READ_S 10.0   /* each agent has this long to answer */

/* Every agent's inventory read afresh (the copy this replica holds is the
 * past: another leader acted since). 0, or -1 when a node's could not be
 * read: nothing is decided without it, the takeover is tried again. */
static int fresh_inventory(svc_t *d)
{
    int ng = ms_sched_ngpus(d->sched), g;   /* (fixed once built) */
    bool *stale = calloc((size_t)ng + 1, sizeof(*stale));
    ms_diag_t why;
    int rc = 0;

    if (stale == NULL)
        return -1;
    for (g = 0; g < ng; g++)
        stale[g] = true;
    ms_diag_clear(&why);
    if (ms_backend_refresh(d->be, stale, ng, TAKEOVER_READ_S, &why) != MS_OK)
        rc = -1;
    for (g = 0; g < ng && rc == 0; g++)
        rc = stale[g] ? -1 : 0;
    if (rc != 0)
        ms_log("warn", "cannot take over: a node's inventory cannot be read; trying again",
               json_pack("{s:s}", "why", why.msg[0] ? why.msg : "its agent does not answer"));
    free(stale);
    return rc;
}

int svc_ext_takeover(void *ctx)
{
    svc_t *d = ctx;
    ext_msg_t *e;
    char err[256], *resp = NULL, *body = NULL;
    long hs = 0;
    json_t *list;
    int status, rc;

    err[0] = '\0';
    if (d->kube == NULL || d->ext == NULL)
        return 0;
    if (fresh_inventory(d) != 0)
        return -1;
    if (ms_kube_request(d->kube, "GET", "/api/v1/pods", NULL, &hs, &resp, err, sizeof(err)) != 0 ||
        hs != 200 || resp == NULL || (list = json_loads(resp, 0, NULL)) == NULL) {
        free(resp);
        ms_log("warn", "cannot list pods to take over", json_pack("{s:i, s:s}", "status", (int)hs, "error", err));
        return -1;
    }
    free(resp);
    if ((e = svc_ext_msg_new(EXT_ADOPT)) == NULL) {
        json_decref(list);
        return -1;
    }
    e->pods = json_incref(json_object_get(list, "items"));
    json_decref(list);
    if (e->pods == NULL)
        e->pods = json_array();
    e = svc_ext_call(d, e, &status, &body);
    free(body);
    /* a pod that cannot be adopted is logged, not fatal: one bad pod must
     * not keep the cluster without a leader */
    rc = e != NULL && status == 200 ? 0 : -1;
    svc_ext_msg_free(e);
    return rc;
}
