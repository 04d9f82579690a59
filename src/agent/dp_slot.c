/* dp_slot.c - PreStartContainer: which pod holds a slot, which instances
 * migschedd bound it to, and the slot's CDI spec (dp.h).
 *
 * On a resource's server thread, before every start of a container that
 * holds slots of that resource:
 *   1. the slot's spec file is removed first, so a spec never outlives a
 *      lookup that failed (the runtime then refuses the container: it is
 *      retried by the kubelet, never started without its instance);
 *   2. the kubelet's pod-resources API (List) names the pod and container
 *      holding the slot: the kubelet's own record, the only exact answer
 *      (the device-plugin API does not say which pod it serves);
 *   3. the API server gives that pod: it must be bound to this node, and
 *      its annotation migsched.io/job names migschedd's job;
 *   4. the inventory gives the instances tagged with that job (a gang has
 *      several); the annotation migsched.io/instance-uuid must be one of
 *      them;
 *   5. the spec CDI_DIR/migsched.slot-<slot>.json: kind migsched.io/slot,
 *      one device named by the slot, with the instances' device nodes and
 *      NVIDIA_VISIBLE_DEVICES (MIG uuids, or the GPU uuids of whole GPUs
 *      and time-slice slots).
 * Each step's failure is FAILED_PRECONDITION (or UNAVAILABLE when a peer
 * did not answer) with a message the kubelet puts in the pod's events.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/dp.h"

#define LOOKUP_TIMEOUT_S 10.0
#define SLOT_PREFIX "migsched.slot-"

int ag_dp_slot_path(const ag_t *a, const ag_dp_res_t *r, int key, char *buf, size_t len)
{
    return (size_t)snprintf(buf, len, "%s/" SLOT_PREFIX "%s-%d.json", a->cfg->cdi_dir, r->id, key) < len ? 0 : -1;
}

/* Step 2: the kubelet's record of who holds slot key. */
static int owner_of(ag_t *a, const ag_dp_res_t *r, int key, ag_dp_owner_t *o, char *msg, size_t msglen)
{
    ms_rpc_buf_t resp = { NULL, 0 };
    char target[4200], err[512];
    int code, found;

    snprintf(target, sizeof(target), "unix://%s", a->cfg->dp->pod_resources);
    code = ms_rpc_call(target, "/v1.PodResourcesLister/List", NULL, 0, LOOKUP_TIMEOUT_S, &resp, err, sizeof(err));
    if (code != MS_RPC_OK) {
        snprintf(msg, msglen, "the kubelet's pod-resources API did not answer: %s", err);
        return MS_RPC_UNAVAILABLE;
    }
    found = ag_dp_owner(r, key, resp.data, resp.len, o);
    ms_rpc_buf_free(&resp);
    if (found < 0) {
        snprintf(msg, msglen, "the kubelet's pod-resources answer is not a valid message");
        return MS_RPC_INTERNAL;
    }
    if (found > 0) {
        snprintf(msg, msglen, "the kubelet reports no container holding %s-%d", r->id, key);
        return MS_RPC_FAILED_PRECONDITION;
    }
    return MS_RPC_OK;
}

/* Step 3: the pod's job (and instance), checked bound to this node. */
static int job_of(ag_t *a, ms_kube_t *kube, const ag_dp_owner_t *o, char *job, size_t joblen, char *inst,
                  size_t instlen, char *msg, size_t msglen)
{
    char ns[800], name[800], path[2000], err[256], *body = NULL;
    json_t *pod, *ann;
    const char *node, *j, *u;
    long status = 0;
    int code = MS_RPC_FAILED_PRECONDITION;

    if (!ms_kube_escape(o->ns, ns, sizeof(ns)) || !ms_kube_escape(o->pod, name, sizeof(name))) {
        snprintf(msg, msglen, "pod %s/%s: name too long", o->ns, o->pod);
        return MS_RPC_INTERNAL;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
    if (ms_kube_request(kube, "GET", path, NULL, &status, &body, err, sizeof(err)) != 0 || status != 200) {
        free(body);
        if (status == 0) {
            snprintf(msg, msglen, "pod %s/%s: the API server did not answer: %s", o->ns, o->pod, err);
            return MS_RPC_UNAVAILABLE;
        }
        snprintf(msg, msglen, "pod %s/%s: the API server answered %ld", o->ns, o->pod, status);
        return MS_RPC_FAILED_PRECONDITION;
    }
    pod = json_loads(body, 0, NULL);
    free(body);
    node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    j = json_string_value(json_object_get(ann, "migsched.io/job"));
    u = json_string_value(json_object_get(ann, "migsched.io/instance-uuid"));
    if (pod == NULL)
        snprintf(msg, msglen, "pod %s/%s: the API server's answer is not JSON", o->ns, o->pod);
    else if (node == NULL || strcmp(node, a->cfg->node_name) != 0)
        snprintf(msg, msglen, "pod %s/%s is bound to node %s, not to %s", o->ns, o->pod, node != NULL ? node : "(none)",
                 a->cfg->node_name);
    else if (j == NULL || j[0] == '\0' || !ag_job_valid(j))
        snprintf(msg, msglen, "pod %s/%s has no migsched.io/job annotation: migschedd did not bind it", o->ns,
                 o->pod);
    else {
        snprintf(job, joblen, "%s", j);
        snprintf(inst, instlen, "%s", u != NULL ? u : "");
        code = MS_RPC_OK;
    }
    json_decref(pod);
    return code;
}

/* Append the nodes of in that nodes does not have yet (a gang's GPUs share
 * nvidiactl and the uvm nodes). */
static int merge_nodes(const ag_t *a, const ms_binst_t *in, json_t *nodes)
{
    json_t *mine = json_array(), *x, *y;
    size_t i, j;
    int rc = -1;

    if (mine == NULL || ag_cdi_nodes(a, in, mine) != 0)
        goto out;
    json_array_foreach(mine, i, x) {
        bool have = false;

        json_array_foreach(nodes, j, y)
            have = have || json_equal(json_object_get(x, "path"), json_object_get(y, "path"));
        if (!have && json_array_append(nodes, x) != 0)
            goto out;
    }
    rc = 0;
out:
    json_decref(mine);
    return rc;
}

/* Step 4: the job's instances as container edits. */
static int edits_of(ag_t *a, const char *job, const char *inst, json_t *nodes, char *vis, size_t vislen, char *msg,
                    size_t msglen)
{
    ms_binst_t *inv = NULL;
    int n = 0, i, found = 0, code = MS_RPC_OK;
    bool inst_seen = inst[0] == '\0';
    size_t at = 0;

    pthread_mutex_lock(&a->mu);
    if (ms_backend_inventory(a->be, &inv, &n, NULL) != MS_OK) {
        pthread_mutex_unlock(&a->mu);
        snprintf(msg, msglen, "out of memory");
        return MS_RPC_INTERNAL;
    }
    for (i = 0; i < n && code == MS_RPC_OK; i++) {
        const char *uuid = inv[i].start >= 0 ? inv[i].uuid : ms_backend_gpu_uuid(a->be, inv[i].gpu);

        if (strcmp(inv[i].job, job) != 0)
            continue;
        if (uuid == NULL || uuid[0] == '\0') {
            snprintf(msg, msglen, "job %s: its instance on GPU %d has no uuid yet", job, (int)inv[i].gpu);
            code = MS_RPC_FAILED_PRECONDITION;
            break;
        }
        inst_seen = inst_seen || strcmp(uuid, inst) == 0 ||
                    (inv[i].start < 0 && strcmp(ms_backend_gpu_uuid(a->be, inv[i].gpu), inst) == 0);
        if (merge_nodes(a, &inv[i], nodes) != 0) {
            snprintf(msg, msglen, "out of memory");
            code = MS_RPC_INTERNAL;
            break;
        }
        at += (size_t)snprintf(vis + at, at < vislen ? vislen - at : 0, "%s%s", found > 0 ? "," : "", uuid);
        found++;
    }
    pthread_mutex_unlock(&a->mu);
    free(inv);
    if (code != MS_RPC_OK)
        return code;
    if (found == 0) {
        snprintf(msg, msglen, "job %s has no instance on this node (migschedd bound it to %s)", job,
                 inst[0] ? inst : "a slot");
        return MS_RPC_FAILED_PRECONDITION;
    }
    if (at >= vislen) {
        snprintf(msg, msglen, "job %s: too many instances", job);
        return MS_RPC_INTERNAL;
    }
    if (!inst_seen) {
        snprintf(msg, msglen, "job %s: the pod's instance %s is not among the job's instances here (%s)", job, inst,
                 vis);
        return MS_RPC_FAILED_PRECONDITION;
    }
    return MS_RPC_OK;
}

int ag_dp_prestart(ag_t *a, ms_kube_t *kube, const ag_dp_res_t *r, const uint8_t *req, size_t len, char *msg,
                   size_t msglen)
{
    ag_dp_owner_t o;
    char path[4200], job[128], inst[64], vis[2048], env[2100], dev[64], podname[520], *text = NULL;
    json_t *nodes = NULL, *spec;
    int key, code;

    if ((code = ag_dp_prestart_key(r, req, len, &key, msg, msglen)) != MS_RPC_OK)
        return code;
    if (ag_dp_slot_path(a, r, key, path, sizeof(path)) != 0) {
        snprintf(msg, msglen, "the CDI directory's path is too long");
        return MS_RPC_INTERNAL;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        snprintf(msg, msglen, "%s: cannot remove the slot's old spec: %s", path, strerror(errno));
        return MS_RPC_INTERNAL;
    }
    if ((code = owner_of(a, r, key, &o, msg, msglen)) != MS_RPC_OK ||
        (code = job_of(a, kube, &o, job, sizeof(job), inst, sizeof(inst), msg, msglen)) != MS_RPC_OK)
        return code;
    if ((nodes = json_array()) == NULL) {
        snprintf(msg, msglen, "out of memory");
        return MS_RPC_INTERNAL;
    }
    if ((code = edits_of(a, job, inst, nodes, vis, sizeof(vis), msg, msglen)) != MS_RPC_OK) {
        json_decref(nodes);
        return code;
    }
    snprintf(env, sizeof(env), "NVIDIA_VISIBLE_DEVICES=%s", vis);
    snprintf(dev, sizeof(dev), "%s-%d", r->id, key);
    snprintf(podname, sizeof(podname), "%s/%s", o.ns, o.pod);
    spec = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:[{s:s,s:{s:[s],s:o}}]}", "cdiVersion", "0.6.0", "kind",
                     AG_DP_CDI_KIND, "annotations", "migsched.io/pod", podname, "migsched.io/container",
                     o.container, "migsched.io/job", job, "devices", "name", dev, "containerEdits", "env", env,
                     "deviceNodes", nodes);
    if (spec != NULL)
        text = json_dumps(spec, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(spec);
    if (text == NULL) {
        snprintf(msg, msglen, "out of memory");
        return MS_RPC_INTERNAL;
    }
    snprintf(path, sizeof(path), SLOT_PREFIX "%s-%d.json", r->id, key);
    if (ag_cdi_write_file(a, path, text) != 0) {
        snprintf(msg, msglen, "cannot write the slot's CDI spec %s in %s: %s", path, a->cfg->cdi_dir, strerror(errno));
        free(text);
        return MS_RPC_INTERNAL;
    }
    free(text);
    ms_log("info", "device delivered",
            json_pack("{s:s,s:s,s:s,s:s,s:s}", "pod", podname, "container", o.container, "slot", dev, "job", job,
                      "devices", vis));
    return MS_RPC_OK;
}
