/* dp_msg.c - the device plugin's resources and messages (dp.h), without
 * I/O: what each call of the kubelet decodes to and what the agent
 * answers. Fuzzed by fuzz/fuzz_dp_msg.c; every decoder takes any bytes.
 *
 * A resource's slots are "<id>-<n>", n = 0 .. count-1 in decimal without
 * leading zeros, so a slot names its resource and the kubelet's device ids
 * of two resources never collide. A container's CDI device is its lowest
 * slot: Allocate and PreStartContainer see the same set of ids and so agree
 * on it without remembering anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dp.h"
#include "deviceplugin/v1beta1/api.pb-c.h"
#include "podresources/v1/api.pb-c.h"

static int pack(const ProtobufCMessage *m, ms_rpc_buf_t *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);

    out->len = 0;
    if ((out->data = malloc(n > 0 ? n : 1)) == NULL)
        return MS_RPC_INTERNAL;
    out->len = protobuf_c_message_pack(m, out->data);
    return MS_RPC_OK;
}

/* A resource name's part after the prefix: a Kubernetes qualified name
 * (alphanumerics, '-', '_', '.', starting and ending alphanumeric), and
 * short enough for a slot id and a socket name. */
static bool name_ok(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 40)
        return false;
    for (i = 0; i < n; i++) {
        char c = s[i];
        bool an = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

        if (!an && c != '-' && c != '_' && c != '.')
            return false;
        if (!an && (i == 0 || i == n - 1))
            return false;
    }
    return true;
}

typedef struct resv {
    ag_dp_res_t *v;
    int n, cap;
} resv_t;

/* Add count slots to the resource id (created when new). */
static int add(resv_t *rv, const char *id, long count)
{
    int i;

    for (i = 0; i < rv->n && strcmp(rv->v[i].id, id) != 0; i++)
        ;
    if (i == rv->n) {
        if (rv->n == rv->cap) {
            int cap = rv->cap > 0 ? rv->cap * 2 : 16;
            ag_dp_res_t *v = realloc(rv->v, (size_t)cap * sizeof(*v));

            if (v == NULL)
                return -1;
            rv->v = v;
            rv->cap = cap;
        }
        memset(&rv->v[i], 0, sizeof(rv->v[i]));
        snprintf(rv->v[i].id, sizeof(rv->v[i].id), "%s", id);
        snprintf(rv->v[i].name, sizeof(rv->v[i].name), AG_DP_PREFIX "%s", id);
        rv->n++;
    }
    count += rv->v[i].count;
    rv->v[i].count = (int)(count < AG_DP_MAX_SLOTS ? count : AG_DP_MAX_SLOTS);
    return 0;
}

/* One GPU's contribution to mig-<name>: the most of that profile it can
 * run (a time-sliced GPU runs up to its replicas of anything). */
static int add_profile(resv_t *rv, const char *name, int most)
{
    char id[48];

    if (name == NULL || !name_ok(name))
        return 0;   /* "1g.5gb+me": no Kubernetes resource can be named so */
    snprintf(id, sizeof(id), "mig-%s", name);
    return add(rv, id, most);
}

int ag_dp_resources(const ag_t *a, ag_dp_res_t **out, int *n)
{
    resv_t rv = { NULL, 0, 0 };
    int g, k, rep = a->replicas > 0 ? a->replicas : 1;

    for (g = 0; g < a->ngpus; g++) {
        const ms_model_t *m = ms_geom_model(a->geom[g]);

        for (k = 0; k < ms_geom_nprofiles(a->geom[g]); k++) {
            const ms_profile_t *p = ms_geom_profile(a->geom[g], k);
            int most = p->max_count > rep ? p->max_count : rep;
            bool dup = false;
            int j;

            /* a generic name shared by two profiles counts once per GPU */
            for (j = 0; j < k && !dup; j++)
                dup = p->generic != NULL && ms_geom_profile(a->geom[g], j)->generic != NULL &&
                      strcmp(ms_geom_profile(a->geom[g], j)->generic, p->generic) == 0;
            if (add_profile(&rv, p->name, most) != 0 || (!dup && add_profile(&rv, p->generic, most) != 0))
                goto fail;
        }
        if (add(&rv, "mem-gb", (long)m->mem_gb * rep) != 0 || (a->replicas > 0 && add(&rv, "gpu-share", rep) != 0))
            goto fail;
    }
    *out = rv.v;
    *n = rv.n;
    return 0;
fail:
    free(rv.v);
    return -1;
}

int ag_dp_slot(const ag_dp_res_t *r, const char *id)
{
    size_t k = strlen(r->id);
    long v = 0;
    const char *p;

    if (id == NULL || strncmp(id, r->id, k) != 0 || id[k] != '-')
        return -1;
    p = id + k + 1;
    if (*p == '\0' || (*p == '0' && p[1] != '\0'))
        return -1;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || v > AG_DP_MAX_SLOTS)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v < r->count ? (int)v : -1;
}

/* The lowest slot of ids, or -1 with msg when one is not r's (or none). */
static int lowest(const ag_dp_res_t *r, char **ids, size_t n, char *msg, size_t msglen)
{
    int key = -1;
    size_t i;

    if (n == 0) {
        snprintf(msg, msglen, "no device ids for %s", r->name);
        return -1;
    }
    for (i = 0; i < n; i++) {
        int s = ag_dp_slot(r, ids[i]);

        if (s < 0) {
            snprintf(msg, msglen, "device id '%.64s' is not a slot of %s", ids[i] != NULL ? ids[i] : "", r->name);
            return -1;
        }
        if (key < 0 || s < key)
            key = s;
    }
    return key;
}

int ag_dp_options(ms_rpc_buf_t *out)
{
    V1beta1__DevicePluginOptions o;

    v1beta1__device_plugin_options__init(&o);
    o.pre_start_required = 1;
    o.get_preferred_allocation_available = 1;
    return pack(&o.base, out);
}

int ag_dp_list(const ag_dp_res_t *r, ms_rpc_buf_t *out)
{
    V1beta1__ListAndWatchResponse resp;
    V1beta1__Device *devs = calloc((size_t)(r->count > 0 ? r->count : 1), sizeof(*devs));
    V1beta1__Device **ptrs = calloc((size_t)(r->count > 0 ? r->count : 1), sizeof(*ptrs));
    char (*ids)[64] = calloc((size_t)(r->count > 0 ? r->count : 1), sizeof(*ids));
    int i, rc = MS_RPC_INTERNAL;

    v1beta1__list_and_watch_response__init(&resp);
    if (devs == NULL || ptrs == NULL || ids == NULL)
        goto out;
    for (i = 0; i < r->count; i++) {
        V1beta1__Device d;

        v1beta1__device__init(&d);
        snprintf(ids[i], sizeof(ids[i]), "%s-%d", r->id, i);
        devs[i] = d;
        devs[i].id = ids[i];
        devs[i].health = (char *)(uintptr_t)"Healthy";
        ptrs[i] = &devs[i];
    }
    resp.n_devices = (size_t)r->count;
    resp.devices = ptrs;
    rc = pack(&resp.base, out);
out:
    free(devs);
    free(ptrs);
    free(ids);
    return rc;
}

int ag_dp_preferred(const ag_dp_res_t *r, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg,
                    size_t msglen)
{
    V1beta1__PreferredAllocationRequest *rq = v1beta1__preferred_allocation_request__unpack(NULL, len, req);
    V1beta1__PreferredAllocationResponse resp;
    V1beta1__ContainerPreferredAllocationResponse *cr = NULL, **cp = NULL;
    char ***pick = NULL;
    size_t c, nc, i;
    int rc = MS_RPC_INTERNAL;

    v1beta1__preferred_allocation_response__init(&resp);
    if (rq == NULL) {
        snprintf(msg, msglen, "PreferredAllocationRequest: not a valid message");
        return MS_RPC_INVALID_ARGUMENT;
    }
    nc = rq->n_container_requests;
    cr = calloc(nc > 0 ? nc : 1, sizeof(*cr));
    cp = calloc(nc > 0 ? nc : 1, sizeof(*cp));
    pick = calloc(nc > 0 ? nc : 1, sizeof(*pick));
    if (cr == NULL || cp == NULL || pick == NULL)
        goto out;
    for (c = 0; c < nc; c++) {
        const V1beta1__ContainerPreferredAllocationRequest *q = rq->container_requests[c];
        V1beta1__ContainerPreferredAllocationResponse z;
        size_t want = q->allocation_size > 0 ? (size_t)q->allocation_size : 0, got = 0;
        int s, best;

        v1beta1__container_preferred_allocation_response__init(&z);
        cr[c] = z;
        cp[c] = &cr[c];
        if (want > q->n_available_deviceids)
            want = q->n_available_deviceids;
        if (want < q->n_must_include_deviceids)
            want = q->n_must_include_deviceids;
        if ((pick[c] = calloc(want > 0 ? want : 1, sizeof(char *))) == NULL)
            goto out;
        for (i = 0; i < q->n_must_include_deviceids && got < want; i++) {
            if (ag_dp_slot(r, q->must_include_deviceids[i]) < 0) {
                snprintf(msg, msglen, "must-include id '%.64s' is not a slot of %s", q->must_include_deviceids[i],
                         r->name);
                rc = MS_RPC_INVALID_ARGUMENT;
                goto out;
            }
            pick[c][got++] = q->must_include_deviceids[i];
        }
        /* then the lowest-numbered available slots: few spec files, stable ids */
        while (got < want) {
            size_t at = 0;
            bool taken;

            best = -1;
            for (i = 0; i < q->n_available_deviceids; i++) {
                size_t j;

                if ((s = ag_dp_slot(r, q->available_deviceids[i])) < 0 || (best >= 0 && s >= best))
                    continue;
                for (j = 0, taken = false; j < got && !taken; j++)
                    taken = strcmp(pick[c][j], q->available_deviceids[i]) == 0;
                if (!taken) {
                    best = s;
                    at = i;
                }
            }
            if (best < 0)
                break;
            pick[c][got++] = q->available_deviceids[at];
        }
        cr[c].n_deviceids = got;
        cr[c].deviceids = pick[c];
    }
    resp.n_container_responses = nc;
    resp.container_responses = cp;
    rc = pack(&resp.base, out);
out:
    if (pick != NULL)
        for (c = 0; c < nc; c++)
            free(pick[c]);
    free(pick);
    free(cr);
    free(cp);
    v1beta1__preferred_allocation_request__free_unpacked(rq, NULL);
    return rc;
}

int ag_dp_allocate(const ag_dp_res_t *r, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg,
                   size_t msglen)
{
    V1beta1__AllocateRequest *rq = v1beta1__allocate_request__unpack(NULL, len, req);
    V1beta1__AllocateResponse resp;
    V1beta1__ContainerAllocateResponse *cr = NULL, **cp = NULL;
    V1beta1__CDIDevice *dev = NULL, **dp = NULL;
    char (*names)[128] = NULL;
    size_t c, nc;
    int rc = MS_RPC_INTERNAL;

    v1beta1__allocate_response__init(&resp);
    if (rq == NULL) {
        snprintf(msg, msglen, "AllocateRequest: not a valid message");
        return MS_RPC_INVALID_ARGUMENT;
    }
    nc = rq->n_container_requests;
    if (nc == 0) {
        snprintf(msg, msglen, "AllocateRequest: no container requests");
        rc = MS_RPC_INVALID_ARGUMENT;
        goto out;
    }
    cr = calloc(nc, sizeof(*cr));
    cp = calloc(nc, sizeof(*cp));
    dev = calloc(nc, sizeof(*dev));
    dp = calloc(nc, sizeof(*dp));
    names = calloc(nc, sizeof(*names));
    if (cr == NULL || cp == NULL || dev == NULL || dp == NULL || names == NULL)
        goto out;
    for (c = 0; c < nc; c++) {
        const V1beta1__ContainerAllocateRequest *q = rq->container_requests[c];
        V1beta1__ContainerAllocateResponse z;
        V1beta1__CDIDevice d;
        int key = lowest(r, q->devices_ids, q->n_devices_ids, msg, msglen);

        v1beta1__container_allocate_response__init(&z);
        v1beta1__cdidevice__init(&d);
        if (key < 0) {
            rc = MS_RPC_INVALID_ARGUMENT;
            goto out;
        }
        snprintf(names[c], sizeof(names[c]), AG_DP_CDI_KIND "=%s-%d", r->id, key);
        dev[c] = d;
        dev[c].name = names[c];
        dp[c] = &dev[c];
        cr[c] = z;
        cr[c].n_cdi_devices = 1;
        cr[c].cdi_devices = &dp[c];
        cp[c] = &cr[c];
    }
    resp.n_container_responses = nc;
    resp.container_responses = cp;
    rc = pack(&resp.base, out);
out:
    free(cr);
    free(cp);
    free(dev);
    free(dp);
    free(names);
    v1beta1__allocate_request__free_unpacked(rq, NULL);
    return rc;
}

int ag_dp_prestart_key(const ag_dp_res_t *r, const uint8_t *req, size_t len, int *key, char *msg,
                       size_t msglen)
{
    V1beta1__PreStartContainerRequest *rq = v1beta1__pre_start_container_request__unpack(NULL, len, req);

    if (rq == NULL) {
        snprintf(msg, msglen, "PreStartContainerRequest: not a valid message");
        return MS_RPC_INVALID_ARGUMENT;
    }
    *key = lowest(r, rq->devices_ids, rq->n_devices_ids, msg, msglen);
    v1beta1__pre_start_container_request__free_unpacked(rq, NULL);
    return *key < 0 ? MS_RPC_INVALID_ARGUMENT : MS_RPC_OK;
}

int ag_dp_register_req(const ag_dp_res_t *r, const char *endpoint, ms_rpc_buf_t *out)
{
    V1beta1__RegisterRequest rq;
    V1beta1__DevicePluginOptions o;

    v1beta1__register_request__init(&rq);
    v1beta1__device_plugin_options__init(&o);
    o.pre_start_required = 1;
    o.get_preferred_allocation_available = 1;
    rq.version = (char *)(uintptr_t)AG_DP_VERSION;
    rq.endpoint = (char *)(uintptr_t)endpoint;
    rq.resource_name = (char *)(uintptr_t)r->name;
    rq.options = &o;
    return pack(&rq.base, out);
}

static bool copy_name(char *dst, size_t len, const char *src)
{
    if (src == NULL || src[0] == '\0' || strlen(src) >= len)
        return false;
    memcpy(dst, src, strlen(src) + 1);
    return true;
}

int ag_dp_owner(const ag_dp_res_t *r, int key, const uint8_t *resp, size_t len, ag_dp_owner_t *out)
{
    V1__ListPodResourcesResponse *m = v1__list_pod_resources_response__unpack(NULL, len, resp);
    size_t p, c, d, i;
    int rc = 1;

    if (m == NULL)
        return -1;
    for (p = 0; p < m->n_pod_resources && rc == 1; p++) {
        const V1__PodResources *pr = m->pod_resources[p];

        for (c = 0; c < pr->n_containers && rc == 1; c++) {
            const V1__ContainerResources *cr = pr->containers[c];

            for (d = 0; d < cr->n_devices && rc == 1; d++) {
                const V1__ContainerDevices *cd = cr->devices[d];

                if (cd->resource_name == NULL || strcmp(cd->resource_name, r->name) != 0)
                    continue;
                for (i = 0; i < cd->n_device_ids && rc == 1; i++) {
                    if (ag_dp_slot(r, cd->device_ids[i]) != key)
                        continue;
                    rc = copy_name(out->ns, sizeof(out->ns), pr->namespace_) &&
                                 copy_name(out->pod, sizeof(out->pod), pr->name) &&
                                 copy_name(out->container, sizeof(out->container), cr->name)
                             ? 0
                             : -1;
                }
            }
        }
    }
    v1__list_pod_resources_response__free_unpacked(m, NULL);
    return rc;
}
