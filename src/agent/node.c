/* node.c - the main thread, at start-up: the node's GPUs: from --node-spec
 * COUNTxMODEL[:mig|:timeslice=R|:whole] (the
 * scheduler's node syntax without the name), or discovered from NVML (each
 * GPU's model from its name, MIG on or off as the driver reports it). The
 * agent never changes MIG mode: a GPU with MIG off is a whole GPU here, and
 * creates on it are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "nvml/nvml.h"

static int alloc_gpus(ag_t *a, int n)
{
    size_t k = (size_t)(n > 0 ? n : 1);

    a->ngpus = n;
    a->geom = calloc(k, sizeof(*a->geom));
    a->mig = calloc(k, sizeof(*a->mig));
    a->model = calloc(k, sizeof(*a->model));
    return a->geom != NULL && a->mig != NULL && a->model != NULL ? 0 : -1;
}

static int from_spec(ag_t *a)
{
    const ms_node_spec_t *nd;
    ms_diag_t diag;
    size_t len = strlen(a->cfg->node_spec) + 8;
    char *text = malloc(len);
    int g;

    if (text == NULL || ms_cluster_spec_create(&a->spec) != MS_OK) {
        free(text);
        fprintf(stderr, "migsched-agent: out of memory\n");
        return -1;
    }
    snprintf(text, len, "node=%s", a->cfg->node_spec);
    ms_diag_clear(&diag);
    if (ms_cluster_spec_add(a->spec, text, 0, &diag) != MS_OK) {
        fprintf(stderr, "migsched-agent: --node-spec %s: %s%s%s\n", a->cfg->node_spec, diag.field,
                diag.field[0] ? ": " : "", diag.msg[0] ? diag.msg : "COUNTxMODEL[:mig|:timeslice=R|:whole]");
        free(text);
        return -1;
    }
    free(text);
    nd = ms_cluster_spec_nodes(a->spec);
    /* a time-sliced node: whole GPUs (MIG off) whose slots migschedd tags
     * with jobs; the replicas size its device-plugin slots (dp.h) */
    if (nd[0].mode == MS_NODE_TIMESLICE)
        a->replicas = nd[0].replicas > 0 ? nd[0].replicas : 1;
    if (alloc_gpus(a, nd[0].ngpus) != 0) {
        fprintf(stderr, "migsched-agent: out of memory\n");
        return -1;
    }
    for (g = 0; g < a->ngpus; g++) {
        a->geom[g] = nd[0].geom;
        a->mig[g] = nd[0].mode == MS_NODE_MIG;
        snprintf(a->model[g], sizeof(a->model[g]), "%s", ms_geom_model(nd[0].geom)->name);
    }
    return 0;
}

static int from_nvml(ag_t *a)
{
    const char *lib = getenv("MIGSCHEDD_NVML_LIB");
    ms_nvml_t *nv;
    char e[256];
    int g, rc = -1;

    if (ms_nvml_open(lib != NULL && lib[0] != '\0' ? lib : NULL, &nv, e, sizeof(e)) != MS_OK) {
        fprintf(stderr, "migsched-agent: discovering the GPUs: %s (or give --node-spec)\n", e);
        return -1;
    }
    if (ms_nvml_gpu_count(nv) < 1) {
        fprintf(stderr, "migsched-agent: NVML reports no GPU on this node\n");
        goto out;
    }
    if (alloc_gpus(a, ms_nvml_gpu_count(nv)) != 0 ||
        (a->own = calloc((size_t)a->ngpus, sizeof(*a->own))) == NULL) {
        fprintf(stderr, "migsched-agent: out of memory\n");
        goto out;
    }
    for (g = 0; g < a->ngpus; g++) {
        ms_nvml_gpu_t gi;
        ms_nvml_err_t ne;

        if (ms_nvml_gpu_info(nv, g, &gi, &ne) != MS_OK) {
            fprintf(stderr, "migsched-agent: GPU %d: %s\n", g, ne.msg);
            goto out;
        }
        if (gi.model == NULL) {
            fprintf(stderr, "migsched-agent: GPU %d is a %s, not a model migsched knows (migsched models)\n", g,
                    gi.name);
            goto out;
        }
        if (ms_geom_create(gi.model, 0, &a->own[g]) != MS_OK) {
            fprintf(stderr, "migsched-agent: GPU %d: cannot build the %s geometry\n", g, gi.model->name);
            goto out;
        }
        a->geom[g] = a->own[g];
        a->mig[g] = gi.mig_current == 1;
        snprintf(a->model[g], sizeof(a->model[g]), "%s", gi.model->name);
    }
    rc = 0;
out:
    ms_nvml_close(nv);
    return rc;
}

int ag_node_init(ag_t *a)
{
    if (a->cfg->node_spec != NULL)
        return from_spec(a);
    if (strcmp(a->cfg->backend, "nvml") != 0) {
        fprintf(stderr, "migsched-agent: --backend %s needs --node-spec COUNTxMODEL[:mig|:whole]\n",
                a->cfg->backend);
        return -1;
    }
    return from_nvml(a);
}

void ag_node_free(ag_t *a)
{
    int g;

    if (a->own != NULL)
        for (g = 0; g < a->ngpus; g++)
            ms_geom_destroy(a->own[g]);
    free(a->own);
    free(a->geom);
    free(a->mig);
    free(a->model);
    ms_cluster_spec_destroy(a->spec);
    a->own = NULL;
    a->geom = NULL;
    a->mig = NULL;
    a->model = NULL;
    a->spec = NULL;
}
