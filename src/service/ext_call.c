/* ext_call.c - any thread but the loop's: an extender message to the loop,
 * waited for (svc_call), which the extender's workers, the pod watch and
 * kctl's takeover use; and a GET of the API server the workers read pods
 * with (ext_bind.c, ext_evict.c).
 */
#include <stdlib.h>

#include "kube/kube.h"
#include "service/extender_int.h"

json_t *svc_ext_get_json(svc_t *d, const char *path, long timeout_ms, long *status)
{
    char err[256], *resp = NULL;
    long hs = 0;
    json_t *o = NULL;

    if (ms_kube_request_within(d->kube, "GET", path, NULL, timeout_ms, &hs, &resp, err, sizeof(err)) != 0)
        hs = 0;
    else if (hs == 200 && resp != NULL)
        o = json_loads(resp, 0, NULL);
    free(resp);
    if (status != NULL)
        *status = hs;
    return o;
}

ext_msg_t *svc_ext_call(svc_t *d, ext_msg_t *e, int *status, char **body)
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
