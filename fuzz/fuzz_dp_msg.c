/* fuzz_dp_msg.c - migsched-agent's kubelet device plugin (src/agent/
 * dp_msg.c): the kubelet's messages as protobuf bytes. The first byte
 * picks the decoder: 'a' AllocateRequest, 'p' PreferredAllocationRequest,
 * 's' PreStartContainerRequest, 'l' a pod-resources ListPodResourcesResponse
 * (the lookup of who holds a slot); the rest is the message. Contracts: a
 * decoder answers OK with a message that decodes again, or a refusal with a
 * reason; an Allocate answer names, for each container, one CDI device that
 * is a slot of the resource; a PreStart key is a slot; a lookup finds a
 * holder with names, or none. */
#include "fuzz.h"

#include "agent/dp.h"
#include "deviceplugin/v1beta1/api.pb-c.h"

static const ag_dp_res_t RES = { "migsched.io/mig-1g.5gb", "mig-1g.5gb", 14 };

static void check_allocate(const uint8_t *d, size_t n)
{
    ms_rpc_buf_t out = { NULL, 0 };
    char msg[256] = "";
    V1beta1__AllocateResponse *r;
    size_t i;
    int code = ag_dp_allocate(&RES, d, n, &out, msg, sizeof(msg));

    if (code != MS_RPC_OK) {
        if (code != MS_RPC_INVALID_ARGUMENT || msg[0] == '\0' || out.data != NULL)
            abort();
        return;
    }
    if ((r = v1beta1__allocate_response__unpack(NULL, out.len, out.data)) == NULL)
        abort();
    for (i = 0; i < r->n_container_responses; i++) {
        const char *name;

        if (r->container_responses[i]->n_cdi_devices != 1)
            abort();
        name = r->container_responses[i]->cdi_devices[0]->name;
        if (strncmp(name, AG_DP_CDI_KIND "=", strlen(AG_DP_CDI_KIND) + 1) != 0 ||
            ag_dp_slot(&RES, name + strlen(AG_DP_CDI_KIND) + 1) < 0)
            abort();
    }
    v1beta1__allocate_response__free_unpacked(r, NULL);
    ms_rpc_buf_free(&out);
}

static void check_preferred(const uint8_t *d, size_t n)
{
    ms_rpc_buf_t out = { NULL, 0 };
    char msg[256] = "";
    V1beta1__PreferredAllocationResponse *r;
    int code = ag_dp_preferred(&RES, d, n, &out, msg, sizeof(msg));

    if (code != MS_RPC_OK) {
        if ((code != MS_RPC_INVALID_ARGUMENT && code != MS_RPC_INTERNAL) || msg[0] == '\0')
            abort();
        return;
    }
    if ((r = v1beta1__preferred_allocation_response__unpack(NULL, out.len, out.data)) == NULL)
        abort();
    v1beta1__preferred_allocation_response__free_unpacked(r, NULL);
    ms_rpc_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ag_dp_owner_t o;
    char msg[256];
    int key, rc;

    if (size == 0)
        return 0;
    switch (data[0]) {
    case 'a':
        check_allocate(data + 1, size - 1);
        break;
    case 'p':
        check_preferred(data + 1, size - 1);
        break;
    case 's':
        msg[0] = '\0';
        if (ag_dp_prestart_key(&RES, data + 1, size - 1, &key, msg, sizeof(msg)) == MS_RPC_OK) {
            if (key < 0 || key >= RES.count)
                abort();
        } else if (msg[0] == '\0')
            abort();
        break;
    case 'l':
        for (key = 0; key < 3; key++) {
            memset(&o, 0, sizeof(o));
            rc = ag_dp_owner(&RES, key, data + 1, size - 1, &o);
            if (rc < -1 || rc > 1 || (rc == 0 && (o.ns[0] == '\0' || o.pod[0] == '\0' || o.container[0] == '\0')))
                abort();
        }
        break;
    default:
        break;
    }
    return 0;
}
