/* fuzz_extender.c - the scheduler extender's wire parser (src/service/
 * extender_json.c): any body is accepted or refused with a 4xx naming a
 * field and leaving nothing behind; an accepted pod that the extender can
 * serve becomes a /v1/jobs body that itself parses; the replies rendered
 * from what was parsed are JSON; the job ids made from a pod's uid keep the
 * daemon's id rules, whole (issue 20, defect 16). The input is tried as
 * ExtenderArgs and as ExtenderBindingArgs. As ExtenderArgs, the daemon's
 * parser (NodeNames read from the raw body, ext_names.c) must answer as
 * the one that reads every byte with jansson: the same pod and names, or
 * the same error (tests/service/ext_args_ref.h). */
#include "fuzz.h"

#include <jansson.h>

#include "service/extender.h"
#include "service/extender_int.h"
#include "../tests/service/ext_args_ref.h"

/* Every id svc_ext_job_id makes of uid is valid and whole (its buffer has
 * room to spare: a cut would end it before the tag), and the same uid makes
 * the same id (a restart finds its pod's instance). */
static void check_ids(const char *uid)
{
    static const struct {
        const char *tag;
        int gen;
    } K[] = { { NULL, 1 }, { NULL, 2 }, { "a", 2 }, { "a", 2147483647 } };
    char id[SVC_EXT_ID_MAX + 32], again[SVC_EXT_ID_MAX];
    size_t i;

    for (i = 0; i < sizeof(K) / sizeof(K[0]); i++) {
        svc_ext_job_id(uid, K[i].tag, K[i].gen, id, sizeof(id));
        if (strlen(id) >= SVC_EXT_ID_MAX || !svc_id_valid(id))
            abort();
        svc_ext_job_id(uid, K[i].tag, K[i].gen, again, sizeof(again));
        if (strcmp(id, again) != 0)
            abort();
    }
}

static void must_be_json(char *s)
{
    json_t *o;

    if (s == NULL)
        return;   /* out of memory, or a name jansson refused to encode */
    if ((o = json_loads(s, 0, NULL)) == NULL)
        abort();
    json_decref(o);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    svc_ext_args_t a;
    svc_ext_bind_t b;
    svc_err_t err;
    bool ok;

    if (!ext_args_same((const char *)data, size, size % 2 ? "team" : NULL, &ok))
        abort();
    memset(&err, 0, sizeof(err));
    /* odd sizes read the tenant from a label (--k8s-tenant-label), even
     * ones from the namespace */
    if (svc_ext_parse_args((const char *)data, size, size % 2 ? "team" : NULL, &a, &err) == 0) {
        svc_ext_verdict_t *v = calloc((size_t)a.nnodes + 1, sizeof(*v));
        int *scores = calloc((size_t)a.nnodes + 1, sizeof(*scores));
        int i;

        if (a.pod.uid == NULL || a.pod.name == NULL || a.pod.ns == NULL || a.pod.gang < 1)
            abort();
        check_ids(a.pod.uid);
        if (a.pod.bad == NULL) {
            /* without the tenant: the loop adds it only for a declared
             * tenant, whose name is valid; a fuzzed namespace need not be */
            char *body = svc_ext_job_body(&a.pod, false), *id = NULL, *canon = NULL;
            svc_req_t req;
            svc_err_t e2;

            if (body != NULL) {
                if (svc_req_parse(body, strlen(body), &id, &req, &canon, &e2) != 0)
                    abort();   /* a pod we serve is a valid job */
                free(id);
                free(canon);
                svc_req_free(&req);
                free(body);
            }
        }
        if (v != NULL && scores != NULL) {
            for (i = 0; i < a.nnodes; i++) {
                v[i].node = a.nodes[i];
                v[i].reason = i % 3 == 0 ? NULL : "no room";
                v[i].unresolvable = i % 3 == 2;
                scores[i] = i % 11;
            }
            must_be_json(svc_ext_filter_reply(v, a.nnodes, a.pod.bad));
            must_be_json(svc_ext_prioritize_reply((const char *const *)a.nodes, scores, a.nnodes));
        }
        free(v);
        free(scores);
        svc_ext_args_free(&a);
    } else if (err.code < 400 || err.code > 500 || a.nodes != NULL || a.pod.uid != NULL) {
        abort();
    }
    memset(&err, 0, sizeof(err));
    if (svc_ext_parse_bind((const char *)data, size, &b, &err) == 0) {
        if (b.name == NULL || b.ns == NULL || b.uid == NULL || b.node == NULL)
            abort();
        must_be_json(svc_ext_bind_reply(b.node));
        svc_ext_bind_free(&b);
    } else if (err.code < 400 || err.code > 500 || b.uid != NULL) {
        abort();
    }
    return 0;
}
