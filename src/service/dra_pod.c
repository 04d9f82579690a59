/* dra_pod.c - pods as the allocator reads them, and the webhook's
 * AdmissionReview (any thread; pure, fuzzed by fuzz/fuzz_dra.c).
 *
 * Of a pod only what placement needs: identity, node, phase, scheduling
 * gates, and its claims: spec.resourceClaims (a claim by name, or a
 * template whose claim the resource-claim controller creates and names in
 * status.resourceClaimStatuses).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

static int bad(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A string member of at most max bytes into *out (NULL when absent and not
 * needed): 0 or -1. */
static int str(json_t *o, const char *k, size_t max, bool need, char **out, const char *field, char *why, size_t wl)
{
    json_t *v = json_object_get(o, k);
    const char *s;

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return need ? bad(why, wl, "%s%s: missing", field, k) : 0;
    if ((s = json_string_value(v)) == NULL || strlen(s) > max || (need && s[0] == '\0'))
        return bad(why, wl, "%s%s: not a string of 1..%zu characters", field, k, max);
    if ((*out = strdup(s)) == NULL)
        return bad(why, wl, "out of memory");
    return 0;
}

void dra_pod_free(dra_pod_t *p)
{
    int i;

    if (p == NULL)
        return;
    free(p->uid);
    free(p->ns);
    free(p->name);
    free(p->rv);
    free(p->node);
    for (i = 0; i < p->ngates; i++)
        free(p->gates[i]);
    free(p->gates);
    for (i = 0; i < p->npc; i++) {
        free(p->pc[i].name);
        free(p->pc[i].claim);
        free(p->pc[i].tmpl);
    }
    free(p->pc);
    memset(p, 0, sizeof(*p));
}

static int parse_gates(json_t *sp, dra_pod_t *p, char *why, size_t wl)
{
    json_t *a = json_object_get(sp, "schedulingGates");
    size_t i;

    if (a == NULL || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > DRA_MAX_GATES)
        return bad(why, wl, "spec.schedulingGates: not a list of at most %d", DRA_MAX_GATES);
    if (json_array_size(a) > 0 && (p->gates = calloc(json_array_size(a), sizeof(*p->gates))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < json_array_size(a); i++) {
        char f[48];

        snprintf(f, sizeof(f), "spec.schedulingGates[%zu].", i);
        if (str(json_array_get(a, i), "name", DRA_NAME_MAX, true, &p->gates[i], f, why, wl) != 0)
            return -1;
        p->ngates = (int)i + 1;
    }
    return 0;
}

static int parse_claims(json_t *sp, json_t *st, dra_pod_t *p, char *why, size_t wl)
{
    json_t *a = json_object_get(sp, "resourceClaims"), *sa = json_object_get(st, "resourceClaimStatuses");
    size_t i, k;

    if (a == NULL || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) > DRA_MAX_PODCLAIMS)
        return bad(why, wl, "spec.resourceClaims: not a list of at most %d", DRA_MAX_PODCLAIMS);
    if (json_array_size(a) > 0 && (p->pc = calloc(json_array_size(a), sizeof(*p->pc))) == NULL)
        return bad(why, wl, "out of memory");
    for (i = 0; i < json_array_size(a); i++) {
        json_t *e = json_array_get(a, i);
        dra_podclaim_t *c = &p->pc[i];
        char f[48];

        snprintf(f, sizeof(f), "spec.resourceClaims[%zu].", i);
        p->npc = (int)i + 1;
        if (str(e, "name", 63, true, &c->name, f, why, wl) != 0 ||
            str(e, "resourceClaimName", DRA_NAME_MAX, false, &c->claim, f, why, wl) != 0 ||
            str(e, "resourceClaimTemplateName", DRA_NAME_MAX, false, &c->tmpl, f, why, wl) != 0)
            return -1;
        if ((c->claim == NULL) == (c->tmpl == NULL))
            return bad(why, wl, "%s: exactly one of resourceClaimName and resourceClaimTemplateName", f);
    }
    if (json_is_array(sa)) {
        p->pc_status = true;
        for (k = 0; k < json_array_size(sa) && k < 2 * DRA_MAX_PODCLAIMS; k++) {
            json_t *e = json_array_get(sa, k);
            const char *n = json_string_value(json_object_get(e, "name"));
            const char *cn = json_string_value(json_object_get(e, "resourceClaimName"));

            for (i = 0; n != NULL && cn != NULL && strlen(cn) <= DRA_NAME_MAX && i < (size_t)p->npc; i++)
                if (p->pc[i].tmpl != NULL && p->pc[i].claim == NULL && strcmp(p->pc[i].name, n) == 0 &&
                    (p->pc[i].claim = strdup(cn)) == NULL)
                    return bad(why, wl, "out of memory");
        }
    }
    return 0;
}

/* spec.priority: what the Priority admission plugin wrote from the pod's
 * PriorityClass, clamped as the extender's pods' (svc_ext_pod_priority). */
static int parse_priority(json_t *sp, dra_pod_t *p, char *why, size_t wl)
{
    if (svc_ext_pod_priority(json_object_get(sp, "priority"), &p->priority) != 0)
        return bad(why, wl, "spec.priority: must be an integer");
    return 0;
}

/* need_ids: the uid and namespace are required (the watch's pods; a pod
 * under admission may have neither yet). */
static int parse_pod(json_t *o, dra_pod_t *p, bool need_ids, char *why, size_t wl)
{
    json_t *md = json_object_get(o, "metadata"), *sp = json_object_get(o, "spec"), *st = json_object_get(o, "status");
    const char *phase;

    memset(p, 0, sizeof(*p));
    if (!json_is_object(md) || !json_is_object(sp))
        return bad(why, wl, "Pod: metadata or spec missing");
    if (str(md, "uid", 64, need_ids, &p->uid, "metadata.", why, wl) != 0 ||
        str(md, "namespace", 63, need_ids, &p->ns, "metadata.", why, wl) != 0 ||
        str(md, "name", DRA_NAME_MAX, false, &p->name, "metadata.", why, wl) != 0 ||
        str(md, "resourceVersion", 64, false, &p->rv, "metadata.", why, wl) != 0 ||
        str(sp, "nodeName", DRA_NAME_MAX, false, &p->node, "spec.", why, wl) != 0 ||
        parse_gates(sp, p, why, wl) != 0 || parse_claims(sp, st, p, why, wl) != 0 ||
        parse_priority(sp, p, why, wl) != 0) {
        dra_pod_free(p);
        return -1;
    }
    if (need_ids && p->name == NULL) {
        dra_pod_free(p);
        return bad(why, wl, "metadata.name: missing");
    }
    phase = json_string_value(json_object_get(st, "phase"));
    p->done = phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    p->deleting = json_object_get(md, "deletionTimestamp") != NULL && !json_is_null(json_object_get(md, "deletionTimestamp"));
    return 0;
}

int dra_parse_pod(json_t *o, dra_pod_t *p, char *why, size_t wl)
{
    return parse_pod(o, p, true, why, wl);
}

void dra_review_free(dra_review_t *r)
{
    if (r == NULL)
        return;
    free(r->uid);
    dra_pod_free(&r->pod);
    memset(r, 0, sizeof(*r));
}

int dra_parse_review(const char *body, size_t len, dra_review_t *r, char *why, size_t wl)
{
    json_error_t je;
    json_t *o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je), *rq, *kind, *ob, *sp;
    const char *api, *k, *op, *grp, *ns;
    int i;

    memset(r, 0, sizeof(*r));
    if (o == NULL)
        return bad(why, wl, "not JSON: %s (line %d)", je.text, je.line);
    api = json_string_value(json_object_get(o, "apiVersion"));
    k = json_string_value(json_object_get(o, "kind"));
    rq = json_object_get(o, "request");
    if (api == NULL || strcmp(api, "admission.k8s.io/v1") != 0 || k == NULL || strcmp(k, "AdmissionReview") != 0 ||
        !json_is_object(rq)) {
        json_decref(o);
        return bad(why, wl, "not an admission.k8s.io/v1 AdmissionReview with a request");
    }
    if (str(rq, "uid", 128, true, &r->uid, "request.", why, wl) != 0) {
        json_decref(o);
        return -1;
    }
    kind = json_object_get(rq, "kind");
    op = json_string_value(json_object_get(rq, "operation"));
    grp = json_string_value(json_object_get(kind, "group"));
    k = json_string_value(json_object_get(kind, "kind"));
    ob = json_object_get(rq, "object");
    r->is_pod_create = op != NULL && strcmp(op, "CREATE") == 0 && k != NULL && strcmp(k, "Pod") == 0 &&
                       (grp == NULL || grp[0] == '\0') && json_is_object(ob);
    if (r->is_pod_create) {
        if (parse_pod(ob, &r->pod, false, why, wl) != 0) {
            dra_review_free(r);
            json_decref(o);
            return -1;
        }
        /* the namespace of a pod being created is the request's */
        ns = json_string_value(json_object_get(rq, "namespace"));
        if (r->pod.ns == NULL && ns != NULL && strlen(ns) <= 63 && (r->pod.ns = strdup(ns)) == NULL) {
            dra_review_free(r);
            json_decref(o);
            return bad(why, wl, "out of memory");
        }
        sp = json_object_get(ob, "spec");
        r->has_gates = json_is_array(json_object_get(sp, "schedulingGates"));
        for (i = 0; i < r->pod.ngates; i++)
            if (strcmp(r->pod.gates[i], SVC_DRA_GATE) == 0)
                r->has_ours = true;
    }
    json_decref(o);
    return 0;
}
