/* nvml_ops.c - the NVML executor's changes: create and destroy a GPU
 * instance (with its full compute instance) at an explicit placement, a
 * failed create leaving nothing behind, and the one guarded MIG mode call
 * (nvml.h). */
#include "nvml/nvml_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- create / destroy ---------------------------------------------------- */

static ms_status_t destroy_ci(ms_nvml_t *nv, nvmlComputeInstance_t ci, void *ctx,
                              ms_nvml_err_t *err)
{
    const int *gpu = ctx;
    nvmlReturn_t rc = nv->nvmlComputeInstanceDestroy(ci);

    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlComputeInstanceDestroy", "GPU %d", *gpu);
    return MS_OK;
}

/* After a failed step of a create: destroy what was made, keep the first
 * error in err and note a failed rollback in it. */
static void rollback(ms_nvml_t *nv, int gpu, nvmlGpuInstance_t gi, nvmlComputeInstance_t ci,
                     unsigned gi_id, unsigned start, ms_nvml_err_t *err)
{
    nvmlReturn_t rc = NVML_SUCCESS;
    const char *call = NULL;

    if (ci != NULL && (rc = nv->nvmlComputeInstanceDestroy(ci)) != NVML_SUCCESS)
        call = "nvmlComputeInstanceDestroy";
    if (call == NULL && (rc = nv->nvmlGpuInstanceDestroy(gi)) != NVML_SUCCESS)
        call = "nvmlGpuInstanceDestroy";
    if (call != NULL && err != NULL) {
        size_t len = strlen(err->msg);
        err->ghost = 1;
        if (len + 1 < sizeof(err->msg))
            snprintf(err->msg + len, sizeof(err->msg) - len,
                     "; rollback failed (%s: %s): GI %u at slice %u on GPU %d is left over",
                     call, ms_nvml_rc_name(rc), gi_id, start, gpu);
    }
}

/* The profile's driver info by its enum index, checked against our table. */
static ms_status_t checked_profile(ms_nvml_t *nv, int gpu, nvmlDevice_t dev,
                                   const ms_profile_t *p, nvmlGpuInstanceProfileInfo_v2_t *info,
                                   ms_nvml_err_t *err)
{
    nvmlReturn_t rc = ms__nvml_profile_v2(nv, dev, p->nvml_index, info);

    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, ms__nvml_profile_call(nv),
                         "GPU %d: profile %s (index 0x%x)", gpu, p->name, p->nvml_index);
    if (info->id != p->gi_id)
        return ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_INVALID, 0, NULL,
                       "GPU %d: profile %s has ID %u on this driver, migsched's table says %u "
                       "(run `migsched nvml-probe`)", gpu, p->name, info->id, p->gi_id);
    return MS_OK;
}

static ms_status_t find_uuid(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, ms_nvml_gi_t *gi,
                             ms_nvml_err_t *err)
{
    ms_nvml_inventory_t *inv = malloc(sizeof(*inv));
    ms_status_t st;

    if (inv == NULL)
        return ms__nvml_set_err(err, MS_ENOMEM, MS_NVML_K_LIBRARY, 0, NULL, "out of memory");
    inv->ngi = 1;
    inv->gi[0] = *gi;
    st = ms__nvml_attach_uuids(nv, gpu, dev, inv, err);
    if (st == MS_OK)
        *gi = inv->gi[0];
    free(inv);
    return st;
}

ms_status_t ms_nvml_create(ms_nvml_t *nv, int gpu, const ms_profile_t *p, unsigned start,
                           ms_nvml_gi_t *out, ms_nvml_err_t *err)
{
    nvmlGpuInstanceProfileInfo_v2_t info;
    nvmlComputeInstanceProfileInfo_t ciinfo;
    nvmlGpuInstancePlacement_t pl;
    nvmlGpuInstanceInfo_t giinfo;
    nvmlComputeInstanceInfo_t cinfo;
    nvmlGpuInstance_t gi = NULL;
    nvmlComputeInstance_t ci = NULL;
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    ms_nvml_gi_t res;
    ms_status_t st;
    int cidx;

    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    if (p == NULL || start >= MS_MAX_WIDTH)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_INVALID, 0, NULL,
                       "GPU %d: no profile, or start %u past the widest axis", gpu, start);
    if ((st = ms__nvml_mig_enabled(nv, gpu, dev, err)) != MS_OK)
        return st;
    if ((st = checked_profile(nv, gpu, dev, p, &info, err)) != MS_OK)
        return st;
    pl.start = start;
    pl.size = p->msize;
    rc = nv->nvmlDeviceCreateGpuInstanceWithPlacement(dev, info.id, &pl, &gi);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceCreateGpuInstanceWithPlacement",
                         "GPU %d: creating %s at %u:%u", gpu, p->name, pl.start, pl.size);
    memset(&giinfo, 0, sizeof(giinfo));
    rc = nv->nvmlGpuInstanceGetInfo(gi, &giinfo);
    if (rc != NVML_SUCCESS) {
        st = MS__NVML_FAIL(err, rc, "nvmlGpuInstanceGetInfo", "GPU %d: new %s at %u", gpu, p->name, start);
        rollback(nv, gpu, gi, NULL, 0, start, err);
        return st;
    }
    if (giinfo.placement.start != start || giinfo.placement.size != p->msize) {
        st = ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                     "GPU %d: %s asked at %u:%u, the driver placed it at %u:%u", gpu, p->name,
                     start, p->msize, giinfo.placement.start, giinfo.placement.size);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    cidx = ms__nvml_ci_full_index(info.sliceCount);
    if (cidx < 0) {
        st = ms__nvml_set_err(err, MS_ENOTSUP, MS_NVML_K_UNSUPPORTED, 0, NULL,
                     "GPU %d: no full-size CI profile for a %u-slice GI", gpu, info.sliceCount);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    memset(&ciinfo, 0, sizeof(ciinfo));
    rc = nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
        gi, (unsigned)cidx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ciinfo);
    if (rc != NVML_SUCCESS) {
        st = MS__NVML_FAIL(err, rc, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
                       "GPU %d: GI %u (%s at %u)", gpu, giinfo.id, p->name, start);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    rc = nv->nvmlGpuInstanceCreateComputeInstance(gi, ciinfo.id, &ci);
    if (rc != NVML_SUCCESS) {
        st = MS__NVML_FAIL(err, rc, "nvmlGpuInstanceCreateComputeInstance",
                       "GPU %d: CI in GI %u (%s at %u)", gpu, giinfo.id, p->name, start);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    memset(&cinfo, 0, sizeof(cinfo));
    rc = nv->nvmlComputeInstanceGetInfo_v2(ci, &cinfo);
    if (rc != NVML_SUCCESS) {
        st = MS__NVML_FAIL(err, rc, "nvmlComputeInstanceGetInfo_v2",
                       "GPU %d: CI in GI %u (%s at %u)", gpu, giinfo.id, p->name, start);
        rollback(nv, gpu, gi, ci, giinfo.id, start, err);
        return st;
    }
    memset(&res, 0, sizeof(res));
    res.id = giinfo.id;
    res.profile_id = giinfo.profileId;
    res.prof = ms__nvml_profile_index(p);
    res.start = giinfo.placement.start;
    res.size = giinfo.placement.size;
    res.nci = 1;
    res.ci[0].id = cinfo.id;
    res.ci[0].profile_id = cinfo.profileId;
    res.ci[0].start = cinfo.placement.start;
    res.ci[0].size = cinfo.placement.size;
    if ((st = find_uuid(nv, gpu, dev, &res, err)) != MS_OK) {
        rollback(nv, gpu, gi, ci, giinfo.id, start, err);
        return st;
    }
    if (out != NULL)
        *out = res;
    return MS_OK;
}

ms_status_t ms_nvml_destroy(ms_nvml_t *nv, int gpu, const ms_profile_t *p, unsigned start,
                            ms_nvml_err_t *err)
{
    nvmlGpuInstanceProfileInfo_v2_t info;
    nvmlGpuInstance_t gis[MS_NVML_MAX_GIS], target = NULL;
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    unsigned n = 0, i, id = 0;
    ms_status_t st;

    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    if (p == NULL)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_INVALID, 0, NULL, "GPU %d: no profile", gpu);
    if ((st = ms__nvml_mig_enabled(nv, gpu, dev, err)) != MS_OK)
        return st;
    if ((st = checked_profile(nv, gpu, dev, p, &info, err)) != MS_OK)
        return st;
    if ((st = ms__nvml_list_gis(nv, gpu, dev, info.id, info.instanceCount, gis, &n, err)) != MS_OK)
        return st;
    for (i = 0; i < n && target == NULL; i++) {
        nvmlGpuInstanceInfo_t gi;

        memset(&gi, 0, sizeof(gi));
        rc = nv->nvmlGpuInstanceGetInfo(gis[i], &gi);
        if (rc != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlGpuInstanceGetInfo", "GPU %d: %s", gpu, p->name);
        if (gi.placement.start == start) {
            target = gis[i];
            id = gi.id;
        }
    }
    if (target == NULL)
        return ms__nvml_set_err(err, MS_ENOENT, MS_NVML_K_NOT_FOUND, 0, NULL,
                       "GPU %d: no %s instance at slice %u", gpu, p->name, start);
    if ((st = ms__nvml_each_ci(nv, gpu, target, destroy_ci, &gpu, err)) != MS_OK)
        return st;
    rc = nv->nvmlGpuInstanceDestroy(target);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlGpuInstanceDestroy", "GPU %d: GI %u (%s at %u)", gpu, id,
                         p->name, start);
    return MS_OK;
}

/* --- MIG mode: never on a default path ----------------------------------- */

ms_status_t ms_nvml_set_mig_mode(ms_nvml_t *nv, int gpu, int enable, unsigned confirm,
                                 int *activation, ms_nvml_err_t *err)
{
    nvmlDevice_t dev;
    nvmlReturn_t rc, act = NVML_SUCCESS;
    ms_status_t st;

    ms__nvml_clear_err(err);
    if (confirm != MS_NVML_MODE_CHANGE_OK)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: refusing to change MIG mode without MS_NVML_MODE_CHANGE_OK", gpu);
    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    if (nv->set_mig == NULL &&
        !ms__nvml_resolve(nv->dl, "nvmlDeviceSetMigMode", &nv->set_mig, sizeof(nv->set_mig)))
        return ms__nvml_set_err(err, MS_ENOTSUP, MS_NVML_K_DRIVER, 0, NULL,
                       "the NVML library lacks nvmlDeviceSetMigMode");
    rc = nv->set_mig(dev, enable ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, &act);
    if (activation != NULL)
        *activation = (int)act;
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceSetMigMode", "GPU %d: %s MIG", gpu,
                         enable ? "enabling" : "disabling");
    return MS_OK;
}
