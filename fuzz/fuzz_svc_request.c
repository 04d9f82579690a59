/* fuzz_svc_request.c - migschedd's POST /v1/jobs body parser (src/service/
 * api.c): any body is accepted or refused with a 4xx naming a field, and an
 * accepted body's canonical form parses to itself (the idempotency check of
 * a retried submission compares canonical forms). */
#include "fuzz.h"

#include "service/svc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *id = NULL, *canon = NULL, *id2 = NULL, *canon2 = NULL;
    svc_req_t req, req2;
    svc_err_t err, err2;

    memset(&err, 0, sizeof(err));
    if (svc_req_parse((const char *)data, size, &id, &req, &canon, &err) != 0) {
        if (id != NULL || canon != NULL || err.code < 400 || err.code > 500)
            abort();   /* a refusal leaves nothing behind and says why */
        return 0;
    }
    if (canon == NULL)
        abort();
    memset(&err2, 0, sizeof(err2));
    if (svc_req_parse(canon, strlen(canon), &id2, &req2, &canon2, &err2) != 0)
        abort();   /* the canonical form is itself a valid request */
    if (strcmp(canon, canon2) != 0)
        abort();   /* and canonical */
    free(id);
    free(id2);
    free(canon);
    free(canon2);
    svc_req_free(&req);
    svc_req_free(&req2);
    return 0;
}
