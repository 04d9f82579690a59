/* fuzz_svc_request.c - migschedd's POST /v1/jobs body parser (src/service/
 * api.c): any body is accepted or refused with a 4xx naming a field, and an
 * accepted body's canonical form parses to itself (the idempotency check of
 * a retried submission compares canonical forms) and is byte for byte what
 * jansson writes for it (tests/service/canon_ref.h: the form older stores
 * hold). The job's JSON, written
 * as text around the canonical body (svc_job_render), parses back with the
 * canonical request and its labels, and with the input as its reason
 * wherever the input is a string jansson takes. An accepted body's id and
 * profile keep the rules (docs/api.md, "Errors"): the rest is a 400. */
#include "fuzz.h"

#include "service/svc.h"

#include "../tests/service/canon_ref.h"

static void check_render(const char *canon, const uint8_t *data, size_t size)
{
    json_t *want = json_loads(canon, 0, NULL), *got, *reason = json_stringn((const char *)data, size);
    svc_jview_t v;
    char *text;

    memset(&v, 0, sizeof(v));
    v.state = MS_JOB_QUEUED;
    v.submit_t = 1764612345.125;
    v.place.node = -1;
    /* a reason with no NUL that is valid UTF-8 (json_stringn checks both) */
    if (reason != NULL && strlen(json_string_value(reason)) == size && size > 0)
        v.reason = (char *)(uintptr_t)json_string_value(reason);
    text = svc_job_text("fuzz-1", canon, &v, NULL);
    if (want == NULL || text == NULL || (got = json_loads(text, 0, NULL)) == NULL)
        abort();
    if (!json_equal(json_object_get(got, "request"), want) ||
        !json_equal(json_object_get(got, "labels"), json_object_get(want, "labels")) ||
        (v.reason != NULL && !json_equal(json_object_get(got, "reason"), reason)))
        abort();
    json_decref(got);
    json_decref(want);
    json_decref(reason);
    free(text);
}

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
    if ((id != NULL && !svc_id_valid(id)) || (req.profile != NULL && !svc_profile_syntax(req.profile)))
        abort();   /* an id or a profile the rules refuse ("..", "3g.") is a 400 */
    {
        char *want = canon_ref(&req);

        if (want == NULL || strcmp(canon, want) != 0)
            abort();   /* not what jansson writes */
        free(want);
    }
    memset(&err2, 0, sizeof(err2));
    if (svc_req_parse(canon, strlen(canon), &id2, &req2, &canon2, &err2) != 0)
        abort();   /* the canonical form is itself a valid request */
    if (strcmp(canon, canon2) != 0)
        abort();   /* and canonical */
    check_render(canon, data, size);
    free(id);
    free(id2);
    free(canon);
    free(canon2);
    svc_req_free(&req);
    svc_req_free(&req2);
    return 0;
}
