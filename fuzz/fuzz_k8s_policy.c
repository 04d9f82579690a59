/* fuzz_k8s_policy.c - the cluster policy reader of `migsched k8s-config`
 * (src/k8sconf/): a policy that reads has nodes, each with both labels,
 * and every writer runs on it. */
#include "fuzz.h"

#include "k8sconf/k8sconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size), *w;
    ms_k8s_cfg_t *c = NULL;
    ms_diag_t d;
    ms_status_t st;
    int i;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    st = ms_k8s_cfg_read_stream(f, "fuzz", &c, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st != MS_OK) {
        if (c != NULL)
            abort();
        return 0;
    }
    if (ms_k8s_cfg_nnodes(c) < 1)
        abort();
    for (i = 0; i < ms_k8s_cfg_nnodes(c); i++) {
        const ms_k8s_node_t *n = ms_k8s_cfg_node(c, i);
        if (n->mig_config == NULL || n->plugin_config == NULL || n->model == NULL)
            abort();
    }
    if ((w = fopen("/dev/null", "w")) != NULL) {
        if (ms_k8s_write_mig_parted(w, c) != MS_OK || ms_k8s_write_labels(w, c) != MS_OK ||
            ms_k8s_write_configmaps(w, c, "gpu-operator") != MS_OK)
            abort();
        fclose(w);
    }
    ms_k8s_cfg_free(c);
    return 0;
}
