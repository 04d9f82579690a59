/* ext_call.c - any thread but the loop's: an extender message to the loop,
 * waited for (svc_call). The extender's workers, the pod watch and kctl's
 * takeover use it.
 */
#include <stdlib.h>

#include "service/extender_int.h"

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
