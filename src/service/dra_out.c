/* dra_out.c - what the allocator writes to the API server (any thread;
 * pure): the webhook's answer, merge patches of claims and pods, the
 * DeviceTaintRule that fences kube-scheduler's allocator, events.
 *
 * Every patch of an object carries the resourceVersion the decision was
 * made on, so a concurrent writer's change makes it a 409 Conflict instead
 * of being overwritten (a JSON merge patch with metadata.resourceVersion
 * is a precondition, as an update is).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"
#include "service/kctl.h"

#define FINALIZER "resource.kubernetes.io/delete-protection"
#define ANNOTATION "migsched.io/dra-allocator"

static char *dump(json_t *o)
{
    char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

    json_decref(o);
    return s;
}

/* --- the webhook's answer ----------------------------------------------------- */

static char *base64(const char *in, size_t n)
{
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i, o = 0;
    char *s = malloc(4 * ((n + 2) / 3) + 1);

    if (s == NULL)
        return NULL;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)in[i] << 16 | (unsigned)(unsigned char)in[i + 1] << 8 |
                     (unsigned char)in[i + 2];

        s[o++] = T[v >> 18 & 63];
        s[o++] = T[v >> 12 & 63];
        s[o++] = T[v >> 6 & 63];
        s[o++] = T[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)(unsigned char)in[i] << 16 | (i + 1 < n ? (unsigned)(unsigned char)in[i + 1] << 8 : 0);

        s[o++] = T[v >> 18 & 63];
        s[o++] = T[v >> 12 & 63];
        s[o++] = i + 1 < n ? T[v >> 6 & 63] : '=';
        s[o++] = '=';
    }
    s[o] = '\0';
    return s;
}

char *dra_out_review(const dra_review_t *r, bool gate)
{
    json_t *resp = json_pack("{s:s,s:b}", "uid", r->uid != NULL ? r->uid : "", "allowed", 1), *patch;
    char *ptext, *b64;

    if (resp == NULL)
        return NULL;
    if (gate && r->is_pod_create && !r->has_ours) {
        /* add to the list when there is one, else make it */
        patch = r->has_gates ? json_pack("[{s:s,s:s,s:{s:s}}]", "op", "add", "path", "/spec/schedulingGates/-",
                                         "value", "name", SVC_DRA_GATE)
                             : json_pack("[{s:s,s:s,s:[{s:s}]}]", "op", "add", "path", "/spec/schedulingGates",
                                         "value", "name", SVC_DRA_GATE);
        if ((ptext = dump(patch)) == NULL) {
            json_decref(resp);
            return NULL;
        }
        b64 = base64(ptext, strlen(ptext));
        free(ptext);
        if (b64 == NULL || json_object_set_new(resp, "patchType", json_string("JSONPatch")) != 0 ||
            json_object_set_new(resp, "patch", json_string(b64)) != 0) {
            free(b64);
            json_decref(resp);
            return NULL;
        }
        free(b64);
    }
    return dump(json_pack("{s:s,s:s,s:o}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "response",
                          resp));
}

/* --- claims -------------------------------------------------------------------- */

static json_t *strv(char *const *v, int n, const char *skip, const char *add_one)
{
    json_t *a = json_array();
    int i;

    for (i = 0; a != NULL && i < n; i++)
        if ((skip == NULL || strcmp(v[i], skip) != 0) && json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    if (a != NULL && add_one != NULL && json_array_append_new(a, json_string(add_one)) != 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

json_t *dra_out_claim_meta(const dra_claim_t *c, const char *identity)
{
    bool has = false;
    int i;

    for (i = 0; i < c->nfin; i++)
        has = has || strcmp(c->fin[i], FINALIZER) == 0;
    return json_pack("{s:{s:o,s:{s:s}}}", "metadata", "finalizers", strv(c->fin, c->nfin, NULL, has ? NULL : FINALIZER),
                     "annotations", ANNOTATION, identity);
}

json_t *dra_out_claim_unmeta(const dra_claim_t *c)
{
    return json_pack("{s:{s:o,s:{s:n}}}", "metadata", "finalizers", strv(c->fin, c->nfin, FINALIZER, NULL),
                     "annotations", ANNOTATION);
}

char *dra_out_with_rv(json_t *patch, const char *rv)
{
    json_t *md = json_object_get(patch, "metadata");

    if (!json_is_object(md) || rv == NULL || json_object_set_new(md, "resourceVersion", json_string(rv)) != 0)
        return NULL;
    return json_dumps(patch, JSON_COMPACT);
}

json_t *dra_out_allocation(const dra_out_result_t *res, int n, const char *node, json_t *config, double now_wall)
{
    json_t *results = json_array(), *al;
    char ts[48];
    int i;

    if (results == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        if (json_array_append_new(results, json_pack("{s:s,s:s,s:s,s:s}", "request", res[i].request, "driver",
                                                     res[i].driver, "pool", res[i].pool, "device", res[i].device)) != 0) {
            json_decref(results);
            return NULL;
        }
    /* allocationTimestamp: kube-scheduler's PreBind sets it on an
     * allocation that lacks it, and the API server refuses that change to
     * an allocation already set (docs/dra.md, "The allocationTimestamp
     * trap"): without it the pod is never bound */
    svc_kctl_time_format(now_wall, ts, sizeof(ts));
    al = json_pack("{s:{s:o},s:{s:[{s:[{s:s,s:s,s:[s]}]}]},s:s}", "devices", "results", results, "nodeSelector",
                   "nodeSelectorTerms", "matchFields", "key", "metadata.name", "operator", "In", "values", node,
                   "allocationTimestamp", ts);
    if (al != NULL && config != NULL && json_array_size(config) > 0 &&
        json_object_set(json_object_get(al, "devices"), "config", config) != 0) {
        json_decref(al);
        return NULL;
    }
    return al;
}

char *dra_out_status(const char *rv, json_t *alloc)
{
    return dump(json_pack("{s:{s:s?},s:{s:O?}}", "metadata", "resourceVersion", rv, "status", "allocation", alloc));
}

json_t *dra_out_config(json_t *const class_cfg[], const char *const class_req[], int ncls, json_t *claim_cfg)
{
    json_t *out = json_array(), *e, *c;
    size_t i;
    int k;

    for (k = 0; out != NULL && k < ncls; k++)
        json_array_foreach(class_cfg[k], i, e) {
            if (!json_is_object(e) || (c = json_deep_copy(e)) == NULL)
                continue;
            if (json_object_set_new(c, "source", json_string("FromClass")) != 0 ||
                json_object_set_new(c, "requests", json_pack("[s]", class_req[k])) != 0 ||
                json_array_append_new(out, c) != 0) {
                json_decref(out);
                return NULL;
            }
        }
    json_array_foreach(claim_cfg, i, e) {
        if (out == NULL || !json_is_object(e) || (c = json_deep_copy(e)) == NULL)
            continue;
        if (json_object_set_new(c, "source", json_string("FromClaim")) != 0 || json_array_append_new(out, c) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* --- pods, rules, events ---------------------------------------------------------- */

char *dra_out_ungate(const char *rv, char *const *gates, int ngates)
{
    json_t *g = json_null(), *a;
    int i;

    if (ngates > 0) {
        if ((g = json_array()) == NULL)
            return NULL;
        for (i = 0; i < ngates; i++)
            if ((a = json_pack("{s:s}", "name", gates[i])) == NULL || json_array_append_new(g, a) != 0) {
                json_decref(g);
                return NULL;
            }
    }
    return dump(json_pack("{s:{s:s?},s:{s:o}}", "metadata", "resourceVersion", rv, "spec", "schedulingGates", g));
}

char *dra_out_taint_rule(const char *name, const char *driver)
{
    return dump(json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:{s:s},s:{s:s,s:s,s:s}}}", "apiVersion", "resource.k8s.io/v1",
                          "kind", "DeviceTaintRule", "metadata", "name", name, "labels", "app.kubernetes.io/managed-by",
                          "migschedd", "spec", "deviceSelector", "driver", driver, "taint", "key",
                          "migsched.io/managed", "value", "true", "effect", "NoSchedule"));
}

char *dra_out_taint_rule_named(const char *driver)
{
    char name[128];

    snprintf(name, sizeof(name), "migsched-fence-%s", driver);
    return dra_out_taint_rule(name, driver);
}

char *dra_out_event(const char *ns, const char *pod, const char *uid, const char *reason, const char *msg,
                    double now_wall)
{
    char ts[48], gen[128];

    svc_kctl_time_format(now_wall, ts, sizeof(ts));
    snprintf(gen, sizeof(gen), "%.100s.", pod);
    return dump(json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,"
                          "s:s,s:s}",
                          "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace", ns,
                          "involvedObject", "apiVersion", "v1", "kind", "Pod", "namespace", ns, "name", pod, "uid", uid,
                          "reason", reason, "message", msg, "type", "Warning", "source", "component", "migschedd",
                          "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "reportingComponent", "migschedd",
                          "action", "Allocate"));
}

char *dra_strf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}
