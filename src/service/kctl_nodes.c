/* kctl_nodes.c - the kctl thread: the node MIG layout loop, while this
 * replica leads. It observes the nodes the cluster policy marks as GPU
 * Operator nodes and their pods from the API server, gives the controller
 * (src/control/nodecfg.c) the demand of unschedulable nvidia.com/mig-*
 * pods, and carries out its actions: cordon with our annotation, set
 * nvidia.com/mig.config and clear nvidia.com/mig.config.state in one
 * patch, evict through the Eviction API when told, uncordon.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/kctl_int.h"

#define ANNOT_CORDON "migsched.io/cordoned"
#define LABEL_CONFIG "nvidia.com/mig.config"
#define LABEL_STATE "nvidia.com/mig.config.state"

int svc_kctl_cmp_node(const void *a, const void *b)
{
    return strcmp((*(const svc_kctl_node_t *const *)a)->name, (*(const svc_kctl_node_t *const *)b)->name);
}

static const svc_kctl_node_t *managed(const svc_kctl_t *c, const char *name)
{
    svc_kctl_node_t key = { name, NULL, 0 };
    const svc_kctl_node_t *kp = &key, **hit;

    if (!name)
        return NULL;
    hit = bsearch(&kp, c->byname, (size_t)c->cfg.nnodes, sizeof(*c->byname), svc_kctl_cmp_node);
    return hit ? *hit : NULL;
}

/* Sum of a pod's requests (and limits where no request) named with prefix;
 * calls fn for each such resource name and count. Returns true when the pod
 * asks for any GPU resource (nvidia.com/ or migsched.io/). */
static bool pod_gpu(json_t *pod, void (*fn)(void *, const char *, long), void *ctx)
{
    json_t *ctrs = json_object_get(json_object_get(pod, "spec"), "containers"), *ctr;
    size_t i;
    bool gpu = false;

    json_array_foreach(ctrs, i, ctr) {
        json_t *res = json_object_get(ctr, "resources");
        json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
        json_t *set = json_object_size(req) ? req : lim, *v;
        const char *k;

        json_object_foreach(set, k, v) {
            char *end;
            long n;
            if (strncmp(k, "nvidia.com/", 11) != 0 && strncmp(k, "migsched.io/", 12) != 0)
                continue;
            gpu = true;
            if (!json_is_string(v))
                continue;
            errno = 0;
            n = strtol(json_string_value(v), &end, 10);
            if (fn && !errno && *end == '\0' && n > 0)
                fn(ctx, k, n);
        }
    }
    return gpu;
}

static bool pod_unschedulable(json_t *pod)
{
    json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions"), *cd;
    size_t i;

    json_array_foreach(conds, i, cd) {
        const char *type = json_string_value(json_object_get(cd, "type"));
        const char *st = json_string_value(json_object_get(cd, "status"));
        const char *why = json_string_value(json_object_get(cd, "reason"));
        if (type && strcmp(type, "PodScheduled") == 0)
            return st && strcmp(st, "False") == 0 && why && strcmp(why, "Unschedulable") == 0;
    }
    return false;
}

typedef struct demand_ctx {
    svc_kctl_t *c;
} demand_ctx_t;

/* An unschedulable pod's nvidia.com/mig-<profile> requests become demand
 * of the first model that has a layout with that profile. */
static void add_demand(void *ctx, const char *res, long n)
{
    svc_kctl_t *c = ((demand_ctx_t *)ctx)->c;
    const char *p = res + strlen("nvidia.com/mig-");
    int i, j, slices = 0;

    if (strncmp(res, "nvidia.com/mig-", 15) != 0)
        return;
    while (*p >= '0' && *p <= '9' && slices < 100)
        slices = slices * 10 + (*p++ - '0');
    if (*p != 'g')
        return;
    for (i = 0; i < c->cfg.nlayouts; i++) {
        const svc_kctl_layout_t *L = &c->cfg.layouts[i];
        for (j = 0; j < L->n; j++) {
            char name[64];
            size_t k;
            /* the device plugin writes '+' of a profile name as '.' */
            snprintf(name, sizeof(name), "%s", L->prof[j]);
            for (k = 0; name[k]; k++)
                if (name[k] == '+')
                    name[k] = '.';
            if (strcmp(name, res + 15) == 0) {
                if (n > 1000000)
                    n = 1000000;
                (void)ms_nodecfg_demand(c->nc, L->model, slices, (int)n);
                return;
            }
        }
    }
}

static json_t *node_patch(const ms_nodecfg_act_t *a)
{
    switch (a->kind) {
    case MS_NODECFG_CORDON:
        return json_pack("{s:{s:b}, s:{s:{s:s}}}", "spec", "unschedulable", 1, "metadata",
                         "annotations", ANNOT_CORDON, "true");
    case MS_NODECFG_UNCORDON:
        return json_pack("{s:{s:b}, s:{s:{s:n}}}", "spec", "unschedulable", 0, "metadata",
                         "annotations", ANNOT_CORDON);
    case MS_NODECFG_SET_CONFIG:
        /* clearing the state in the same patch: a "success" seen later is
         * mig-manager's answer to this label, not a stale one */
        return json_pack("{s:{s:{s:s, s:n}}}", "metadata", "labels", LABEL_CONFIG, a->config,
                         LABEL_STATE);
    case MS_NODECFG_EVICT:
        break;
    }
    return NULL;
}

static void evict_gpu_pods(svc_kctl_t *c, json_t *pods, const char *node)
{
    json_t *pod;
    size_t i;

    json_array_foreach(pods, i, pod) {
        json_t *meta = json_object_get(pod, "metadata"), *body;
        const char *nn = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        char path[1024], ens[256], ename[512];

        if (!nn || strcmp(nn, node) != 0 || !name || !ns || !pod_gpu(pod, NULL, NULL))
            continue;
        if (!ms_kube_escape(ns, ens, sizeof(ens)) || !ms_kube_escape(name, ename, sizeof(ename)))
            continue;
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", ens, ename);
        body = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1", "kind", "Eviction",
                         "metadata", "name", name, "namespace", ns);
        if (body)
            (void)svc_kctl_api_write(c, "POST", path, body, "eviction refused", true, NULL, 0);
        json_decref(body);
    }
}

void svc_kctl_nodes_round(svc_kctl_t *c)
{
    long status;
    json_t *nodes = NULL, *pods = NULL, *items, *it;
    int *gpu_pods = NULL;
    const ms_nodecfg_act_t *acts;
    demand_ctx_t dc = { c };
    int nacts = 0, i;
    size_t k;

    nodes = svc_kctl_api_json(c, "GET", "/api/v1/nodes", NULL, INFINITY, &status);
    if (status != 200 || !nodes)
        goto out;
    pods = svc_kctl_api_json(c, "GET", "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed",
                    NULL, INFINITY, &status);
    if (status != 200 || !pods)
        goto out;
    if (!(gpu_pods = calloc((size_t)c->cfg.nnodes, sizeof(*gpu_pods))))
        goto out;
    items = json_object_get(pods, "items");
    json_array_foreach(items, k, it) {
        const char *nn = json_string_value(json_object_get(json_object_get(it, "spec"), "nodeName"));
        const svc_kctl_node_t *m;
        if (nn && nn[0]) {
            if ((m = managed(c, nn)) && pod_gpu(it, NULL, NULL))
                gpu_pods[m - c->cfg.nodes]++;
        } else if (pod_unschedulable(it)) {
            pod_gpu(it, add_demand, &dc);
        }
    }
    items = json_object_get(nodes, "items");
    json_array_foreach(items, k, it) {
        json_t *meta = json_object_get(it, "metadata");
        json_t *labels = json_object_get(meta, "labels"), *ann = json_object_get(meta, "annotations");
        const svc_kctl_node_t *m = managed(c, json_string_value(json_object_get(meta, "name")));
        ms_nodecfg_obs_t o;
        ms_diag_t diag;
        if (!m)
            continue;
        memset(&o, 0, sizeof(o));
        o.name = m->name;
        o.model = m->model;
        o.ngpus = m->ngpus;
        o.config = json_string_value(json_object_get(labels, LABEL_CONFIG));
        o.config_state = json_string_value(json_object_get(labels, LABEL_STATE));
        o.unschedulable = json_is_true(json_object_get(json_object_get(it, "spec"), "unschedulable"));
        o.cordoned_by_us = json_object_get(ann, ANNOT_CORDON) != NULL;
        o.gpu_pods = gpu_pods[m - c->cfg.nodes];
        if (ms_nodecfg_observe(c->nc, &o, &diag) != MS_OK)
            ms_log("warn", "node not observed", json_pack("{s:s, s:s}", "node", m->name, "error", diag.msg));
    }
    if (ms_nodecfg_step(c->nc, svc_clock_wall(c->clock), &acts, &nacts) != MS_OK)
        goto out;
    for (i = 0; i < nacts; i++) {
        const ms_nodecfg_act_t *a = &acts[i];
        static const char *const kind[] = { "", "cordon", "set-config", "evict", "uncordon" };
        char path[600], en[512];
        json_t *body;

        if (!svc_kctl_is_leader(c))
            break;                       /* lost the Lease mid-round: stop writing */
        ms_log("info", "node layout action",
                json_pack("{s:s, s:s, s:s, s:s}", "node", a->node, "action", kind[a->kind],
                          "config", a->config ? a->config : "", "reason", a->reason));
        if (a->kind == MS_NODECFG_EVICT) {
            evict_gpu_pods(c, pods, a->node);
            continue;
        }
        if (!ms_kube_escape(a->node, en, sizeof(en)) || !(body = node_patch(a)))
            continue;
        snprintf(path, sizeof(path), "/api/v1/nodes/%s", en);
        (void)svc_kctl_api_write(c, "PATCH", path, body, "node patch refused", true, NULL, 0);
        json_decref(body);
    }
out:
    free(gpu_pods);
    json_decref(nodes);
    json_decref(pods);
}
