/* recover.c - the main thread, at start-up: what a lost or damaged store
 * means for the instances the backend runs (docs/operations.md).
 *
 * Outside Kubernetes the store is the only record of who owns what, so
 * when it is lost or damaged (acknowledged commits missing: store_meta.c)
 * or the backend runs instances of jobs it does not know, start-up stops
 * with the reason unless --recovery adopt says to go on: then the store is
 * taken as it is and each unknown instance is adopted as a running job of
 * its own (labelled migsched.io/recovered; own.c), which its user can
 * cancel. Either way no instance is destroyed for being unknown.
 *
 * In Kubernetes mode (--kube) the store is a cache: the API server says
 * which pod owns which instance, so a damaged cache is only noted.
 */
#include <stdio.h>
#include <string.h>

#include "service/own.h"
#include "service/svc.h"

int svc_recover_check(svc_t *d, const ms_binst_t *inv, int n)
{
    char dmg[400] = "", what[300] = "";
    bool damaged = svc_store_damaged(d->store, dmg, sizeof(dmg));
    int unknown = 0, first = -1, i;

    for (i = 0; i < n; i++)
        if (inv[i].job[0] != '\0' && !ms_backend_tag_foreign(inv[i].job) &&
            svc_jobs_find(&d->jobs, inv[i].job) == NULL) {
            unknown++;
            if (first < 0)
                first = i;
        }
    if (!damaged && unknown == 0)
        return 0;
    if (unknown > 0)
        snprintf(what, sizeof(what),
                 "the backend runs %d instance%s of jobs the store does not know (the first: job %.64s on GPU %d): "
                 "the store was lost or replaced, or another scheduler uses these GPUs", unknown,
                 unknown == 1 ? "" : "s", inv[first].job, (int)inv[first].gpu);
    if (!d->cfg->recovery_adopt) {
        snprintf(d->start_why, sizeof(d->start_why),
                 "%.300s%s%.200s; nothing was changed. Start with --recovery adopt to go on with the store as it is and "
                 "adopt what the backend runs (each unknown instance becomes a running job labelled "
                 "migsched.io/recovered), or see docs/operations.md", dmg, damaged && unknown > 0 ? "; " : "",
                 what);
        return -1;
    }
    ms_log("warn", "recovery: going on with the store as it is, adopting what the backend runs",
           json_pack("{s:s,s:s,s:i}", "store", damaged ? dmg : "sound", "backend", what, "unknown_instances",
                     unknown));
    if (damaged && svc_store_accept(d->store) != 0) {
        snprintf(d->start_why, sizeof(d->start_why), "cannot write migschedd.acked in the state directory");
        return -1;
    }
    return 0;
}

int svc_recover_cache(svc_t *d)
{
    char dmg[400];

    if (!svc_store_damaged(d->store, dmg, sizeof(dmg)))
        return 0;
    ms_log("info", "the store is a cache in Kubernetes mode: going on without what it lost",
           json_pack("{s:s}", "store", dmg));
    return svc_store_accept(d->store);
}
