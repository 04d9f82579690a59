/* ext_args_ref.h - svc_ext_parse_args (NodeNames read from the raw body,
 * ext_names.c) against svc_ext_parse_args_tree (every byte through
 * jansson): the same answer for any body - accepted with the same pod and
 * names, or refused with the same status, field and message. test_extender
 * runs it on generated bodies; fuzz_extender.c on the fuzzer's. */
#ifndef MIGSCHED_TEST_EXT_ARGS_REF_H
#define MIGSCHED_TEST_EXT_ARGS_REF_H

#include <stdbool.h>
#include <string.h>

#include "service/extender.h"

static inline bool ext_str_same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static inline bool ext_pod_same(const svc_ext_pod_t *a, const svc_ext_pod_t *b)
{
    return ext_str_same(a->uid, b->uid) && ext_str_same(a->name, b->name) && ext_str_same(a->ns, b->ns) &&
           ext_str_same(a->profile, b->profile) && a->mem_gb == b->mem_gb && a->share == b->share &&
           a->gang == b->gang && a->priority == b->priority && a->never_preempts == b->never_preempts &&
           ext_str_same(a->tenant, b->tenant) && ext_str_same(a->bad, b->bad);
}

/* Both parsers on body: true when they agree. *accepted: they accepted it. */
static inline bool ext_args_same(const char *body, size_t len, const char *label, bool *accepted)
{
    svc_ext_args_t f, t;
    svc_err_t ef, et;
    int rf, rt, i;
    bool same;

    memset(&ef, 0, sizeof(ef));
    memset(&et, 0, sizeof(et));
    rf = svc_ext_parse_args(body, len, label, &f, &ef);
    rt = svc_ext_parse_args_tree(body, len, label, &t, &et);
    *accepted = rf == 0;
    if (rf != rt)
        same = false;
    else if (rf != 0)
        same = ef.code == et.code && strcmp(ef.field, et.field) == 0 && strcmp(ef.msg, et.msg) == 0 &&
               f.nodes == NULL && f.names_buf == NULL && f.pod.uid == NULL;
    else {
        same = f.nnodes == t.nnodes && ext_pod_same(&f.pod, &t.pod);
        for (i = 0; same && i < f.nnodes; i++)
            same = strcmp(f.nodes[i], t.nodes[i]) == 0;
    }
    if (rf == 0)
        svc_ext_args_free(&f);
    if (rt == 0)
        svc_ext_args_free(&t);
    return same;
}

#endif
