/* ext_podjob.c - a pod as a /v1/jobs request (any thread; no daemon
 * state): the body the extender submits for a pod it places, which is the
 * job's canonical request too, so that a restarted daemon or a new leader
 * reads it back like any job's and compares it as text. Fields that say
 * nothing (priority 0, the default tenant, no checkpoints) are left out,
 * so a pod without them is the same request as before they existed.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "service/extender.h"

char *svc_ext_job_body(const svc_ext_pod_t *p, bool with_tenant)
{
    json_t *o = json_object(), *labels = json_object();
    char pod[320];
    char *s = NULL;

    if (o == NULL || labels == NULL)
        goto out;
    snprintf(pod, sizeof(pod), "%.63s/%.253s", p->ns, p->name);
    if (json_object_set_new(labels, "k8s.pod", json_string(pod)) != 0 ||
        json_object_set_new(labels, "k8s.uid", json_string(p->uid)) != 0)
        goto out;
    if (p->share)
        json_object_set_new(o, "profile", json_string("1g"));
    else if (p->profile != NULL)
        json_object_set_new(o, "profile", json_string(p->profile));
    else
        json_object_set_new(o, "mem_gb", json_real(p->mem_gb));
    json_object_set_new(o, "isolation", json_string(p->share ? "any" : "mig"));
    if (p->gang > 1)
        json_object_set_new(o, "gang", json_integer(p->gang));
    /* only when they say something, so that a pod without them is the same
     * request as before (a takeover compares stored bodies) */
    if (p->priority != 0)
        json_object_set_new(o, "priority", json_integer(p->priority));
    if (with_tenant && p->tenant != NULL && strcmp(p->tenant, "default") != 0)
        json_object_set_new(o, "tenant", json_string(p->tenant));
    if (p->checkpoint_s > 0)
        json_object_set_new(o, "checkpoint_s", json_real(p->checkpoint_s));
    json_object_set(o, "labels", labels);
    s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
out:
    json_decref(labels);
    json_decref(o);
    return s;
}
