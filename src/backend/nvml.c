/* nvml.c - the nvml backend (backend.h): real GPUs through src/nvml/
 * (dlopen of libnvidia-ml.so.1, or the library MIGSCHEDD_NVML_LIB names:
 * the tests' fake). Global GPU g is NVML device g; at open every configured
 * GPU must exist, be the configured model and, on a MIG node, have MIG
 * enabled (migsched never changes MIG mode). The hardware is the truth for
 * which GIs exist: the inventory is read from NVML at open and each CREATE
 * and DESTROY is executed there first; what runs on an instance (the job
 * tag) is our own knowledge, kept in STATE_DIR/nvml-inventory.json like the
 * sim's inventory (inv_file.c). A placement the hardware refuses fails the
 * op with MS_ENOFIT (the scheduler rolls back).
 *
 * Any thread (backend.h); the driver calls run under the inventory's
 * mutex: one node, one driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "nvml/nvml.h"

typedef struct nv_be {
    ms__inv_t inv;
    ms_nvml_t *nv;
    const ms_geom_t **geom;        /* [ngpus] */
} nv_be_t;

static void nv_close(void *impl)
{
    nv_be_t *b = impl;

    if (b == NULL)
        return;
    ms__inv_fini(&b->inv);
    free(b->geom);
    ms_nvml_close(b->nv);
    free(b);
}

/* The GIs of GPU g into the inventory, with the job tags of the tag file
 * where they match. */
static ms_status_t load_gpu(nv_be_t *b, int g, const ms_binst_t *tags, int ntags, ms_diag_t *why)
{
    ms_nvml_inventory_t hw;
    ms_nvml_err_t e;
    const ms_model_t *m = ms_geom_model(b->geom[g]);
    int i, t;

    if (ms_nvml_inventory(b->nv, g, &hw, &e) != MS_OK) {
        if (e.kind == MS_NVML_K_UNSUPPORTED)
            return MS_OK;   /* MIG off: a whole or time-sliced GPU holds no GI */
        ms_diag_set(why, NULL, 0, "", "GPU %d: cannot read its instances: %.200s", g, e.msg);
        return e.st != MS_OK ? e.st : MS_EIO;
    }
    for (i = 0; i < hw.ngi; i++) {
        const ms_nvml_gi_t *gi = &hw.gi[i];
        int k = gi->prof >= 0 ? ms_geom_profile_find(b->geom[g], m->profiles[gi->prof].name) : -1;
        ms_binst_t *in;

        if (k < 0) {
            /* a GI migsched cannot describe: left alone, its slices stay
             * taken (creates there fail, and the scheduler is told) */
            ms_log("warn", "nvml: a GPU instance of a profile migsched does not use",
                   json_pack("{s:i,s:i,s:i}", "gpu", g, "start", (int)gi->start, "profile_id",
                             (int)gi->profile_id));
            continue;
        }
        if (ms__inv_add(&b->inv, g, (int)gi->start, k, NULL) != MS_OK) {
            ms_diag_set(why, NULL, 0, "", "out of memory");
            return MS_ENOMEM;
        }
        in = &b->inv.v[b->inv.n - 1];
        snprintf(in->uuid, sizeof(in->uuid), "%.47s", gi->nci > 0 ? gi->ci[0].uuid : "");
        in->gi_id = (uint16_t)gi->id;
        in->ci_id = (uint16_t)(gi->nci > 0 ? gi->ci[0].id : 0);
        for (t = 0; t < ntags; t++)
            if (tags[t].gpu == g && tags[t].start == (int8_t)gi->start && tags[t].prof == k)
                snprintf(in->job, sizeof(in->job), "%s", tags[t].job);
    }
    return MS_OK;
}

/* The hardware's GIs replace what the tag file loaded, keeping its tags;
 * time-slice slots are ours alone and stay as the file has them. */
static ms_status_t load_hw(nv_be_t *b, ms_diag_t *why)
{
    ms_binst_t *tags = b->inv.v;
    int ntags = b->inv.n, g, t;
    ms_status_t st = MS_OK;

    b->inv.v = NULL;
    b->inv.n = b->inv.cap = 0;
    for (g = 0; g < b->inv.ngpus && st == MS_OK; g++)
        st = load_gpu(b, g, tags, ntags, why);
    for (t = 0; t < ntags && st == MS_OK; t++)
        if (tags[t].start < 0 && ms__inv_add(&b->inv, tags[t].gpu, -1, tags[t].prof, tags[t].job) != MS_OK) {
            ms_diag_set(why, NULL, 0, "", "out of memory");
            st = MS_ENOMEM;
        }
    free(tags);
    if (st == MS_OK && ms__inv_compact(&b->inv) != 0) {
        ms_diag_set(why, b->inv.path, 0, "", "cannot write nvml-inventory.json");
        st = MS_EIO;
    }
    return st;
}

/* Every configured GPU exists, is its model and, on a MIG node, has MIG on. */
static ms_status_t check_gpus(nv_be_t *b, const ms_backend_cfg_t *cfg, ms_diag_t *why)
{
    int g;

    if (ms_nvml_gpu_count(b->nv) < cfg->ngpus) {
        ms_diag_set(why, NULL, 0, "", "the nodes have %d GPUs, NVML reports %d on this machine", cfg->ngpus,
                    ms_nvml_gpu_count(b->nv));
        return MS_EINVAL;
    }
    for (g = 0; g < cfg->ngpus; g++) {
        ms_nvml_gpu_t gi;
        ms_nvml_err_t ne;
        const ms_model_t *want = ms_geom_model(cfg->gpu_geom[g]);

        b->geom[g] = cfg->gpu_geom[g];
        if (ms_nvml_gpu_info(b->nv, g, &gi, &ne) != MS_OK) {
            ms_diag_set(why, NULL, 0, "", "GPU %d: %.200s", g, ne.msg);
            return ne.st != MS_OK ? ne.st : MS_EIO;
        }
        if (gi.model != want) {
            ms_diag_set(why, NULL, 0, "", "GPU %d is a %.96s, the nodes say %s", g, gi.name, want->name);
            return MS_EINVAL;
        }
        if (cfg->gpu_mig != NULL && cfg->gpu_mig[g] && gi.mig_current != 1) {
            ms_diag_set(why, NULL, 0, "",
                        "GPU %d: MIG is disabled; migschedd never changes MIG mode (enable it with "
                        "nvidia-smi -mig 1, or give the node :whole)", g);
            return MS_EINVAL;
        }
        snprintf(b->inv.gpu_uuid[g], sizeof(b->inv.gpu_uuid[g]), "%.47s", gi.uuid);
    }
    return MS_OK;
}

static ms_status_t nv_open(const ms_backend_cfg_t *cfg, void **impl, ms_diag_t *why)
{
    nv_be_t *b = calloc(1, sizeof(*b));
    const char *lib = getenv("MIGSCHEDD_NVML_LIB");
    char e[256];
    ms_status_t st;

    *impl = NULL;
    if (b == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    if ((st = ms__inv_init(&b->inv, cfg->ngpus, cfg->state_dir, "nvml-inventory", why)) != MS_OK) {
        nv_close(b);
        return st;
    }
    if ((b->geom = calloc((size_t)(cfg->ngpus > 0 ? cfg->ngpus : 1), sizeof(*b->geom))) == NULL ||
        cfg->gpu_geom == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        nv_close(b);
        return MS_ENOMEM;
    }
    if ((st = ms_nvml_open(lib != NULL && lib[0] != '\0' ? lib : NULL, &b->nv, e, sizeof(e))) != MS_OK) {
        ms_diag_set(why, NULL, 0, "", "%s", e);
        nv_close(b);
        return st;
    }
    if ((st = check_gpus(b, cfg, why)) != MS_OK || (st = ms__inv_load(&b->inv, why)) != MS_OK ||
        (st = load_hw(b, why)) != MS_OK) {
        nv_close(b);
        return st;
    }
    *impl = b;
    return MS_OK;
}

/* The driver's failure as a status: a refusal is MS_ENOFIT. */
static ms_status_t nvml_failed(const ms_nvml_err_t *e, ms_diag_t *why)
{
    ms_diag_set(why, NULL, 0,
                e->kind == MS_NVML_K_REFUSED    ? MS_BACKEND_REFUSED
                : e->kind == MS_NVML_K_GPU_LOST ? MS_BACKEND_GPU_LOST
                                                : "",
                "nvml: %.240s", e->msg);
    if (e->kind == MS_NVML_K_REFUSED)
        return MS_ENOFIT;
    return e->st != MS_OK && e->st != MS_ENOFIT ? e->st : MS_EIO;
}

/* CREATE on the hardware (inv.mu held). */
static ms_status_t hw_create(nv_be_t *b, const ms_op_t *op, ms_diag_t *why)
{
    const ms_profile_t *p = ms_geom_profile(b->geom[op->gpu], op->prof);
    ms_nvml_err_t e;
    ms_nvml_gi_t gi;
    ms_binst_t *in;

    if (ms__inv_find(&b->inv, op->gpu, op->start, NULL) >= 0) {
        ms_diag_set(why, NULL, 0, "", "an instance exists at that start");
        return MS_EEXIST;
    }
    if (ms_nvml_create(b->nv, op->gpu, p, (unsigned)op->start, &gi, &e) != MS_OK)
        return nvml_failed(&e, why);
    if (ms__inv_add(&b->inv, op->gpu, op->start, op->prof, NULL) != MS_OK) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    in = &b->inv.v[b->inv.n - 1];
    snprintf(in->uuid, sizeof(in->uuid), "%.47s", gi.nci > 0 ? gi.ci[0].uuid : "");
    in->gi_id = (uint16_t)gi.id;
    in->ci_id = (uint16_t)(gi.nci > 0 ? gi.ci[0].id : 0);
    return MS_OK;
}

/* DESTROY on the hardware (inv.mu held); force: whatever job runs on it. */
static ms_status_t hw_destroy(nv_be_t *b, const ms_backend_op_t *bop, ms_diag_t *why)
{
    const ms_op_t *op = &bop->op;
    ms_nvml_err_t e;
    ms_status_t st;
    int i = ms__inv_find(&b->inv, op->gpu, op->start, bop->force ? bop->job : NULL);

    if (bop->force && i >= 0 && op->start < 0) {   /* a slot: ours alone */
        ms__inv_del(&b->inv, i);
        return MS_OK;
    }
    if (i < 0 || op->start < 0) {
        ms_diag_set(why, NULL, 0, "", "no such instance");
        return MS_ENOENT;
    }
    if (b->inv.v[i].job[0] != '\0' && !bop->force) {
        ms_diag_set(why, NULL, 0, "", "the instance runs a job");
        return MS_ESTATE;
    }
    b->inv.v[i].job[0] = '\0';
    st = ms_nvml_destroy(b->nv, op->gpu, ms_geom_profile(b->geom[op->gpu], b->inv.v[i].prof),
                         (unsigned)op->start, &e);
    if (st != MS_OK && st != MS_ENOENT)   /* ENOENT: gone already */
        return nvml_failed(&e, why);
    ms__inv_del(&b->inv, i);
    return MS_OK;
}

static ms_status_t nv_run(void *impl, const ms_backend_op_t *op, ms_diag_t *why)
{
    nv_be_t *b = impl;
    ms_status_t st;

    if (op->op.gpu < 0 || op->op.gpu >= b->inv.ngpus) {
        ms_diag_set(why, NULL, 0, "gpu", "no such GPU");
        return MS_EINVAL;
    }
    pthread_mutex_lock(&b->inv.mu);
    if (op->op.kind == MS_OP_CREATE)
        st = hw_create(b, &op->op, why);
    else if (op->op.kind == MS_OP_DESTROY)
        st = hw_destroy(b, op, why);
    else
        st = ms__inv_apply(&b->inv, op, why);   /* the rest is tags */
    if (st == MS_OK &&
        ms__inv_persist(&b->inv, op->op.gpu, op->op.kind == MS_OP_MOVE ? op->op.from_gpu : -1) != 0) {
        ms_diag_set(why, NULL, 0, "", "cannot write the inventory file");
        st = MS_EIO;
    }
    pthread_mutex_unlock(&b->inv.mu);
    return st;
}

static ms_status_t nv_inventory(void *impl, ms_binst_t **out, int *n, ms_diag_t *why)
{
    return ms__inv_copy(&((nv_be_t *)impl)->inv, out, n, why);
}

/* The hardware names its own instances: nothing to adopt. */
static ms_status_t nv_adopt_uuid(void *impl, int gpu, int start, const char *uuid, ms_diag_t *why)
{
    (void)impl;
    (void)gpu;
    (void)start;
    if (uuid == NULL || uuid[0] == '\0' || strlen(uuid) >= sizeof(((ms_binst_t *)0)->uuid)) {
        ms_diag_set(why, NULL, 0, "", "not an instance uuid");
        return MS_EINVAL;
    }
    return MS_OK;
}

static const char *nv_gpu_uuid(const void *impl, int gpu)
{
    return ms__inv_gpu_uuid(&((const nv_be_t *)impl)->inv, gpu);
}

static void nv_inst_uuid(void *impl, int gpu, int start, const char *job, char *buf, size_t len)
{
    ms__inv_inst_uuid(&((nv_be_t *)impl)->inv, gpu, start, job, buf, len);
}

/* Does the driver still see the GPU? (under the inventory's mutex: one
 * driver call at a time) */
static ms_status_t nv_probe(void *impl, int gpu, double timeout_s, ms_diag_t *why)
{
    nv_be_t *b = impl;
    ms_nvml_gpu_t info;
    ms_nvml_err_t e;
    ms_status_t st;

    (void)timeout_s;
    if (gpu < 0 || gpu >= b->inv.ngpus) {
        ms_diag_set(why, NULL, 0, "gpu", "no such GPU");
        return MS_EINVAL;
    }
    pthread_mutex_lock(&b->inv.mu);
    st = ms_nvml_gpu_info(b->nv, gpu, &info, &e);
    pthread_mutex_unlock(&b->inv.mu);
    return st == MS_OK ? MS_OK : nvml_failed(&e, why);
}

const ms_backend_ops_t ms_backend_nvml = {
    .name = "nvml",
    .open = nv_open,
    .close = nv_close,
    .inventory = nv_inventory,
    .create = nv_run,
    .destroy = nv_run,
    .start = nv_run,
    .stop = nv_run,
    .move = nv_run,
    .adopt_uuid = nv_adopt_uuid,
    .gpu_uuid = nv_gpu_uuid,
    .inst_uuid = nv_inst_uuid,
    .probe = nv_probe,
};
