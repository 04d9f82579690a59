/* ext_kube.c - the main thread: the extender's Kubernetes side opened and
 * closed: the API-server client (src/kube/: --kube-api, --kubeconfig or
 * in-cluster), the pod watch thread (ext_watch.c) and the nudge thread
 * (ext_nudge.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "service/extender_int.h"

int svc_ext_kube_open(svc_t *d)
{
    ms_kube_cfg_t kc;
    char err[512] = "";

    if (!d->cfg->kube)
        return 0;
    {
        const char *fail = getenv("MIGSCHEDD_EXT_FAIL"), *bind = "stall-before-binding:",
                   *evict = "stall-before-eviction:";

        if (fail != NULL && strncmp(fail, bind, strlen(bind)) == 0)
            snprintf(d->ext_stall_bind, sizeof(d->ext_stall_bind), "%s", fail + strlen(bind));
        if (fail != NULL && strncmp(fail, evict, strlen(evict)) == 0)
            snprintf(d->ext_stall_evict, sizeof(d->ext_stall_evict), "%s", fail + strlen(evict));
    }
    memset(&kc, 0, sizeof(kc));
    kc.api = d->cfg->kube_api;
    kc.token_file = d->cfg->kube_token_file;
    kc.ca_file = d->cfg->kube_ca;
    kc.kubeconfig = d->cfg->kubeconfig;
    if (ms_kube_open(&kc, &d->kube, err, sizeof(err)) != 0) {
        fprintf(stderr, "migschedd: Kubernetes: %s\n", err[0] ? err : "out of memory");
        return -1;
    }
    ms_log("info", "kubernetes", json_pack("{s:s}", "server", ms_kube_server(d->kube)));
    return 0;
}

void svc_ext_kube_close(svc_t *d)
{
    ms_kube_close(d->kube);
    d->kube = NULL;
}

int svc_ext_watch_start(svc_t *d)
{
    struct svc_ext_watch *w;

    if (d->kube == NULL)
        return 0;
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return -1;
    d->watch = w;   /* before the thread reads it */
    if (pthread_create(&w->th, NULL, svc_ext_watch_main, d) != 0) {
        d->watch = NULL;
        free(w);
        return -1;
    }
    return svc_ext_nudger_start(d);   /* on failure, svc_ext_watch_stop stops the watch */
}

void svc_ext_watch_stop(svc_t *d)
{
    if (d->watch == NULL)
        return;
    d->watch->stop = 1;
    pthread_join(d->watch->th, NULL);
    svc_ext_nudger_stop(d);
    free(d->watch);
    d->watch = NULL;
}
