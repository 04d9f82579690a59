/* canon_ref.h - the canonical request as jansson writes it: the object
 * built with json_pack and dumped with JSON_COMPACT | JSON_SORT_KEYS, as
 * api.c wrote it before it wrote the text itself, and as the stores of
 * those versions hold it. test_render.c and fuzz_svc_request.c compare
 * svc_req_parse's canonical form with it byte for byte: a retried
 * submission is compared with the stored form as text. */
#ifndef MIGSCHED_TEST_CANON_REF_H
#define MIGSCHED_TEST_CANON_REF_H

#include "service/svc.h"

static inline char *canon_ref(const svc_req_t *req)
{
    /* "tenant" and "checkpoint_s" only when given ("s*" and "o*" leave a
     * NULL out): a body without them has the form stores held before them. */
    json_t *c = json_pack("{s:s?,s:o,s:s?,s:s,s:i,s:i,s:b,s:f,s:f,s:O,s:s*,s:o*}", "profile", req->profile,
                          "mem_gb", req->mem_gb > 0 ? json_real(req->mem_gb) : json_null(), "model", req->model,
                          "isolation", req->isolation == MS_ISO_MIG ? "mig" : "any", "gang", req->gang,
                          "priority", req->priority, "migratable", req->migratable, "duration_s",
                          req->duration_s, "estimate_s", req->estimate_s, "labels", req->labels, "tenant",
                          req->tenant, "checkpoint_s",
                          req->checkpoint_s > 0 ? json_real(req->checkpoint_s) : NULL);
    char *s = c != NULL ? json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    json_decref(c);
    return s;
}

#endif
