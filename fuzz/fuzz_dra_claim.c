/* fuzz_dra_claim.c - migsched-agent as a DRA driver (src/agent/dra_claim.c,
 * dra_names.c): what the kubelet and the API server send it. The first
 * byte picks the reader: 'c' a ResourceClaim as the API server answers it
 * (JSON), 'p' / 'u' a NodePrepareResourcesRequest /
 * NodeUnprepareResourcesRequest (protobuf), 'n' a device name (against
 * two A100-40GB GPUs, MIG on and off); the rest is the input. Contracts: a
 * refusal says why; an accepted claim has at most AG_DRA_MAX_RESULTS
 * results, each with a device and a request that are DNS labels; accepted
 * claim references have a namespace, a name and a uid; an accepted device
 * name is the name the driver publishes for what it parsed to. */
#include "fuzz.h"

#include "agent/dra.h"

static bool label(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

static void check_claim(const uint8_t *d, size_t n)
{
    ag_dra_claim_t c;
    char why[512] = "";
    int i;

    if (ag_dra_claim_decode((const char *)d, n, "mig.migsched.io", "node-1", &c, why, sizeof(why)) != 0) {
        if (why[0] == '\0')
            abort();
        return;
    }
    if (c.n < 0 || c.n > AG_DRA_MAX_RESULTS || c.uid[0] == '\0' || c.name[0] == '\0' || c.ns[0] == '\0')
        abort();
    for (i = 0; i < c.n; i++)
        if (!label(c.res[i].device) || !label(c.res[i].request))
            abort();
}

static void check_refs(const uint8_t *d, size_t n, bool prepare)
{
    ag_dra_ref_t *r = NULL;
    char msg[256] = "";
    int k, i, code = ag_dra_refs_decode(d, n, prepare, &r, &k, msg, sizeof(msg));

    if (code != MS_RPC_OK) {
        if (r != NULL || msg[0] == '\0')
            abort();
        return;
    }
    for (i = 0; i < k; i++)
        if (r[i].ns[0] == '\0' || r[i].name[0] == '\0' || r[i].uid[0] == '\0')
            abort();
    free(r);
}

static void check_name(const uint8_t *d, size_t n)
{
    static ms_geom_t *g;
    ag_dra_gpu_t gpus[2];
    ag_dra_dev_t dev;
    char *s = fuzz_string(d, n), why[256] = "", again[64];

    if (s == NULL)
        return;
    if (g == NULL && ms_geom_create(ms_model_find("A100-40GB"), 0, &g) != MS_OK)
        abort();
    gpus[0] = (ag_dra_gpu_t){ g, true, 0, "GPU-0" };
    gpus[1] = (ag_dra_gpu_t){ g, false, 0, "GPU-1" };
    if (ag_dra_parse(gpus, 2, s, &dev, why, sizeof(why)) != 0) {
        if (why[0] == '\0')
            abort();
    } else {
        if (dev.kind == AG_DRA_MIG ? ag_dra_name_mig(g, dev.gpu, dev.prof, dev.start, again, sizeof(again))
                                   : ag_dra_name_gpu(dev.gpu, again, sizeof(again)))
            abort();
        if (strcmp(again, s) != 0)
            abort();
    }
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    switch (data[0]) {
    case 'c':
        check_claim(data + 1, size - 1);
        break;
    case 'p':
    case 'u':
        check_refs(data + 1, size - 1, data[0] == 'p');
        break;
    default:
        check_name(data + 1, size - 1);
        break;
    }
    return 0;
}
