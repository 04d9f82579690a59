/* dra_claim.c - the DRA driver's messages (dra.h), pure: the kubelet's
 * requests (protobuf), the ResourceClaim (JSON from the API server), and
 * the answers. Every decoder takes any bytes (fuzz/fuzz_dra_claim.c) and
 * refuses with a sentence that names the field. No I/O, no globals; any
 * thread (the DRA service's, in the agent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dra.h"
#include "dra/v1/api.pb-c.h"
#include "pluginregistration/v1/api.pb-c.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest prep_req_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest unprep_req_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim claim_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse prep_resp_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry prep_entry_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse prep_one_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device dev_t_;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse unprep_resp_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry unprep_entry_t;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse unprep_one_t;

static int pack(const ProtobufCMessage *m, ms_rpc_buf_t *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);

    out->len = 0;
    if ((out->data = malloc(n > 0 ? n : 1)) == NULL)
        return MS_RPC_INTERNAL;
    out->len = protobuf_c_message_pack(m, out->data);
    return MS_RPC_OK;
}

/* Lower-case alphanumerics and '-' (and '.' when dots), starting and
 * ending alphanumeric, 1..max characters: a DNS label / subdomain. */
static bool dns_ok(const char *s, size_t max, bool dots)
{
    size_t i, n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n > max)
        return false;
    for (i = 0; i < n; i++) {
        char c = s[i];
        bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

        if (!an && c != '-' && !(dots && c == '.'))
            return false;
        if (!an && (i == 0 || i == n - 1))
            return false;
    }
    return true;
}

/* A uid: 1..63 of [A-Za-z0-9-] (a UUID in practice). */
static bool uid_ok(const char *s)
{
    size_t i, n = s != NULL ? strlen(s) : 0;

    if (n == 0 || n > 63)
        return false;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '-'))
            return false;
    return true;
}

/* --- the kubelet's requests --------------------------------------------- */

int ag_dra_refs_decode(const uint8_t *req, size_t len, bool prepare, ag_dra_ref_t **out, int *n, char *msg,
                       size_t msglen)
{
    prep_req_t *p = NULL;
    unprep_req_t *u = NULL;
    claim_t **claims;
    size_t nc, i;
    ag_dra_ref_t *v;
    int rc = MS_RPC_INVALID_ARGUMENT;

    *out = NULL;
    *n = 0;
    if (prepare)
        p = k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__unpack(NULL, len, req);
    else
        u = k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__unpack(NULL, len, req);
    if (p == NULL && u == NULL) {
        snprintf(msg, msglen, "%s: not a valid message",
                 prepare ? "NodePrepareResourcesRequest" : "NodeUnprepareResourcesRequest");
        return MS_RPC_INVALID_ARGUMENT;
    }
    claims = p != NULL ? p->claims : u->claims;
    nc = p != NULL ? p->n_claims : u->n_claims;
    if ((v = calloc(nc > 0 ? nc : 1, sizeof(*v))) == NULL) {
        snprintf(msg, msglen, "out of memory");
        rc = MS_RPC_INTERNAL;
        goto out;
    }
    for (i = 0; i < nc; i++) {
        const claim_t *c = claims[i];

        if (!dns_ok(c->namespace_, 63, false)) {
            snprintf(msg, msglen, "claims[%zu].namespace: '%.63s' is not a namespace name", i, c->namespace_);
            goto out;
        }
        if (!dns_ok(c->name, 253, true)) {
            snprintf(msg, msglen, "claims[%zu].name: '%.63s' is not a ResourceClaim name", i, c->name);
            goto out;
        }
        if (!uid_ok(c->uid)) {
            snprintf(msg, msglen, "claims[%zu].uid: '%.63s' is not a uid", i, c->uid);
            goto out;
        }
        snprintf(v[i].ns, sizeof(v[i].ns), "%s", c->namespace_);
        snprintf(v[i].name, sizeof(v[i].name), "%s", c->name);
        snprintf(v[i].uid, sizeof(v[i].uid), "%s", c->uid);
    }
    *out = v;
    *n = (int)nc;
    v = NULL;
    rc = MS_RPC_OK;
out:
    free(v);
    if (p != NULL)
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__free_unpacked(p, NULL);
    if (u != NULL)
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__free_unpacked(u, NULL);
    return rc;
}

/* --- the ResourceClaim ---------------------------------------------------- */

/* A string member of o into buf (1..len-1 chars): 0, 1 absent, -1 wrong. */
static int get_str(const json_t *o, const char *key, char *buf, size_t len)
{
    json_t *v = json_object_get(o, key);
    const char *s;

    if (v == NULL || json_is_null(v))
        return 1;
    if (!json_is_string(v) || (s = json_string_value(v)) == NULL || strlen(s) != json_string_length(v) ||
        strlen(s) >= len)
        return -1;
    memcpy(buf, s, strlen(s) + 1);
    return 0;
}

static int fail(char *why, size_t whylen, const char *field, const char *what)
{
    snprintf(why, whylen, "ResourceClaim %s: %s", field, what);
    return -1;
}

static int decode_result(const json_t *r, size_t i, const char *driver, const char *pool, ag_dra_claim_t *out,
                         char *why, size_t whylen)
{
    char drv[64], pl[254], field[64], *slash;
    ag_dra_result_t *res;
    json_t *admin;

    snprintf(field, sizeof(field), "status.allocation.devices.results[%zu]", i);
    if (!json_is_object(r))
        return fail(why, whylen, field, "is not an object");
    if (get_str(r, "driver", drv, sizeof(drv)) != 0 || !dns_ok(drv, 63, true))
        return fail(why, whylen, field, "has no valid driver");
    if (strcmp(drv, driver) != 0)
        return 0;   /* another driver's device: not ours to prepare */
    if (out->n == AG_DRA_MAX_RESULTS)
        return fail(why, whylen, field, "is one result too many");
    res = &out->res[out->n];
    memset(res, 0, sizeof(*res));
    if (get_str(r, "pool", pl, sizeof(pl)) != 0)
        return fail(why, whylen, field, "has no valid pool");
    if (strcmp(pl, pool) != 0) {
        snprintf(why, whylen, "ResourceClaim %s: device of pool '%.64s', not of this node's pool '%.64s'", field, pl,
                 pool);
        return -1;
    }
    if (get_str(r, "device", res->device, sizeof(res->device)) != 0 || !dns_ok(res->device, 63, false))
        return fail(why, whylen, field, "has no valid device name");
    if (get_str(r, "request", res->request, sizeof(res->request)) != 0)
        return fail(why, whylen, field, "has no valid request name");
    if ((slash = strchr(res->request, '/')) != NULL)
        *slash = '\0';   /* a subrequest: the kubelet matches the base name */
    if (!dns_ok(res->request, 63, false))
        return fail(why, whylen, field, "has no valid request name");
    if (get_str(r, "shareID", res->share_id, sizeof(res->share_id)) < 0 ||
        (res->share_id[0] != '\0' && !uid_ok(res->share_id)))
        return fail(why, whylen, field, "has an invalid shareID");
    admin = json_object_get(r, "adminAccess");
    if (admin != NULL && !json_is_null(admin) && !json_is_boolean(admin))
        return fail(why, whylen, field, "adminAccess is not a boolean");
    if (json_is_true(admin))
        return fail(why, whylen, field, "asks for admin access, which this driver does not give");
    out->n++;
    return 0;
}

int ag_dra_claim_decode(const char *json, size_t len, const char *driver, const char *pool, ag_dra_claim_t *out,
                        char *why, size_t whylen)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je), *meta, *alloc, *devs, *res, *cfg, *x;
    size_t i;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (root == NULL || !json_is_object(root)) {
        snprintf(why, whylen, "ResourceClaim: not a JSON object (%s)", root == NULL ? je.text : "");
        goto out;
    }
    meta = json_object_get(root, "metadata");
    if (get_str(meta, "namespace", out->ns, sizeof(out->ns)) != 0 || !dns_ok(out->ns, 63, false) ||
        get_str(meta, "name", out->name, sizeof(out->name)) != 0 || !dns_ok(out->name, 253, true) ||
        get_str(meta, "uid", out->uid, sizeof(out->uid)) != 0 || !uid_ok(out->uid)) {
        fail(why, whylen, "metadata", "has no valid namespace, name and uid");
        goto out;
    }
    alloc = json_object_get(json_object_get(root, "status"), "allocation");
    if (!json_is_object(alloc)) {
        fail(why, whylen, "status.allocation", "missing: the claim is not allocated");
        goto out;
    }
    devs = json_object_get(alloc, "devices");
    if (devs != NULL && !json_is_object(devs)) {
        fail(why, whylen, "status.allocation.devices", "is not an object");
        goto out;
    }
    res = json_object_get(devs, "results");
    if (res != NULL && !json_is_array(res)) {
        fail(why, whylen, "status.allocation.devices.results", "is not an array");
        goto out;
    }
    json_array_foreach(res, i, x)
        if (decode_result(x, i, driver, pool, out, why, whylen) != 0)
            goto out;
    cfg = json_object_get(devs, "config");
    if (cfg != NULL && !json_is_array(cfg)) {
        fail(why, whylen, "status.allocation.devices.config", "is not an array");
        goto out;
    }
    json_array_foreach(cfg, i, x) {
        const char *d = json_string_value(json_object_get(json_object_get(x, "opaque"), "driver"));

        if (d != NULL && strcmp(d, driver) == 0) {
            snprintf(why, whylen, "ResourceClaim status.allocation.devices.config[%zu]: %s takes no device "
                     "configuration", i, driver);
            goto out;
        }
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* --- answers ------------------------------------------------------------- */

/* One claim's NodePrepareResourceResponse; the pointers borrow ans. */
static int fill_one(const ag_dra_answer_t *a, prep_one_t *one, dev_t_ *devs, dev_t_ **dp, char **names)
{
    int i;

    k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(one);
    if (a->error[0] != '\0') {
        one->error = (char *)(uintptr_t)a->error;
        return 0;
    }
    for (i = 0; i < a->n; i++) {
        dev_t_ z;

        k8s__io__kubelet__pkg__apis__dra__v1__device__init(&z);
        devs[i] = z;
        names[2 * i] = (char *)(uintptr_t)a->dev[i].request;
        names[2 * i + 1] = (char *)(uintptr_t)a->dev[i].cdi;
        devs[i].n_request_names = 1;
        devs[i].request_names = &names[2 * i];
        devs[i].pool_name = (char *)(uintptr_t)a->dev[i].pool;
        devs[i].device_name = (char *)(uintptr_t)a->dev[i].device;
        devs[i].n_cdi_device_ids = 1;
        devs[i].cdi_device_ids = &names[2 * i + 1];
        if (a->dev[i].share_id[0] != '\0')
            devs[i].share_id = (char *)(uintptr_t)a->dev[i].share_id;
        dp[i] = &devs[i];
    }
    one->n_devices = (size_t)a->n;
    one->devices = dp;
    return 0;
}

int ag_dra_prepare_resp(const ag_dra_answer_t *ans, int n, ms_rpc_buf_t *out)
{
    size_t k = (size_t)(n > 0 ? n : 1), m = k * AG_DRA_MAX_RESULTS;
    prep_resp_t resp;
    prep_entry_t *e = calloc(k, sizeof(*e)), **ep = calloc(k, sizeof(*ep));
    prep_one_t *one = calloc(k, sizeof(*one));
    dev_t_ *devs = calloc(m, sizeof(*devs)), **dp = calloc(m, sizeof(*dp));
    char **names = calloc(2 * m, sizeof(*names));
    int i, rc = MS_RPC_INTERNAL;

    k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__init(&resp);
    if (e == NULL || ep == NULL || one == NULL || devs == NULL || dp == NULL || names == NULL)
        goto out;
    for (i = 0; i < n; i++) {
        size_t at = (size_t)i * AG_DRA_MAX_RESULTS;

        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&e[i]);
        fill_one(&ans[i], &one[i], devs + at, dp + at, names + 2 * at);
        e[i].key = (char *)(uintptr_t)ans[i].uid;
        e[i].value = &one[i];
        ep[i] = &e[i];
    }
    resp.n_claims = (size_t)n;
    resp.claims = ep;
    rc = pack(&resp.base, out);
out:
    free(e);
    free(ep);
    free(one);
    free(devs);
    free(dp);
    free(names);
    return rc;
}

int ag_dra_unprepare_resp(const ag_dra_answer_t *ans, int n, ms_rpc_buf_t *out)
{
    size_t k = (size_t)(n > 0 ? n : 1);
    unprep_resp_t resp;
    unprep_entry_t *e = calloc(k, sizeof(*e)), **ep = calloc(k, sizeof(*ep));
    unprep_one_t *one = calloc(k, sizeof(*one));
    int i, rc = MS_RPC_INTERNAL;

    k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__init(&resp);
    if (e == NULL || ep == NULL || one == NULL)
        goto out;
    for (i = 0; i < n; i++) {
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(&e[i]);
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&one[i]);
        if (ans[i].error[0] != '\0')
            one[i].error = (char *)(uintptr_t)ans[i].error;
        e[i].key = (char *)(uintptr_t)ans[i].uid;
        e[i].value = &one[i];
        ep[i] = &e[i];
    }
    resp.n_claims = (size_t)n;
    resp.claims = ep;
    rc = pack(&resp.base, out);
out:
    free(e);
    free(ep);
    free(one);
    return rc;
}

int ag_dra_info_resp(const char *driver, const char *endpoint, ms_rpc_buf_t *out)
{
    Pluginregistration__PluginInfo info;
    char *versions[1] = { (char *)(uintptr_t)AG_DRA_SERVICE };

    pluginregistration__plugin_info__init(&info);
    info.type = (char *)(uintptr_t)"DRAPlugin";
    info.name = (char *)(uintptr_t)driver;
    info.endpoint = (char *)(uintptr_t)endpoint;
    info.n_supported_versions = 1;
    info.supported_versions = versions;
    return pack(&info.base, out);
}

int ag_dra_status_decode(const uint8_t *req, size_t len, bool *ok, char *err, size_t errlen)
{
    Pluginregistration__RegistrationStatus *s = pluginregistration__registration_status__unpack(NULL, len, req);

    if (s == NULL)
        return -1;
    *ok = s->plugin_registered != 0;
    snprintf(err, errlen, "%s", s->error != NULL ? s->error : "");
    pluginregistration__registration_status__free_unpacked(s, NULL);
    return 0;
}
