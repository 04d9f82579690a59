/* nvml_read.c - the NVML executor's reading: a GPU's identity and MIG
 * mode, its profiles and their possible placements, and its inventory of
 * GPU and compute instances with their MIG device UUIDs (nvml.h). */
#include "nvml/nvml_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- reading ------------------------------------------------------------- */

ms_status_t ms_nvml_gpu_info(ms_nvml_t *nv, int gpu, ms_nvml_gpu_t *out, ms_nvml_err_t *err)
{
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    unsigned cur = 0, pend = 0;
    ms_status_t st;

    if (out == NULL)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    memset(out, 0, sizeof(*out));
    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = nv->nvmlDeviceGetName(dev, out->name, sizeof(out->name));
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetName", "GPU %d", gpu);
    out->name[sizeof(out->name) - 1] = '\0';
    rc = nv->nvmlDeviceGetUUID(dev, out->uuid, sizeof(out->uuid));
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetUUID", "GPU %d", gpu);
    out->uuid[sizeof(out->uuid) - 1] = '\0';
    rc = nv->nvmlDeviceGetMigMode(dev, &cur, &pend);
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
        cur = pend = NVML_DEVICE_MIG_DISABLE;   /* a GPU without MIG */
    } else if (rc != NVML_SUCCESS) {
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetMigMode", "GPU %d", gpu);
    }
    out->mig_current = cur == NVML_DEVICE_MIG_ENABLE;
    out->mig_pending = pend == NVML_DEVICE_MIG_ENABLE;
    out->model = ms_nvml_model_for_name(out->name);
    return MS_OK;
}

ms_status_t ms_nvml_profile_info(ms_nvml_t *nv, int gpu, unsigned index,
                                 ms_nvml_profile_t *out, ms_nvml_err_t *err)
{
    nvmlGpuInstanceProfileInfo_v2_t info;
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    ms_status_t st;

    if (out == NULL)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    memset(out, 0, sizeof(*out));
    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = ms__nvml_profile_v2(nv, dev, index, &info);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, ms__nvml_profile_call(nv),
                         "GPU %d: profile index 0x%x", gpu, index);
    out->index = index;
    out->id = info.id;
    out->slices = info.sliceCount;
    out->instances = info.instanceCount;
    out->memory_mb = info.memorySizeMB;
    memcpy(out->name, info.name, sizeof(out->name));
    out->name[sizeof(out->name) - 1] = '\0';
    return MS_OK;
}

ms_status_t ms_nvml_placements(ms_nvml_t *nv, int gpu, unsigned profile_id,
                               ms_nvml_placement_t *out, int cap, int *n, ms_nvml_err_t *err)
{
    nvmlGpuInstancePlacement_t buf[MS_NVML_MAX_PLACEMENTS];
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    unsigned count = 0, i;
    ms_status_t st;

    if (n == NULL || (out == NULL && cap > 0) || cap < 0)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    *n = 0;
    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = nv->nvmlDeviceGetGpuInstancePossiblePlacements_v2(dev, profile_id, NULL, &count);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
                         "GPU %d: counting placements of profile ID %u", gpu, profile_id);
    if (count > MS_NVML_MAX_PLACEMENTS || (int)count > cap)
        return ms__nvml_set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: profile ID %u has %u placements, room for %d", gpu, profile_id,
                       count, cap < MS_NVML_MAX_PLACEMENTS ? cap : MS_NVML_MAX_PLACEMENTS);
    if (count == 0)
        return MS_OK;
    rc = nv->nvmlDeviceGetGpuInstancePossiblePlacements_v2(dev, profile_id, buf, &count);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
                         "GPU %d: placements of profile ID %u", gpu, profile_id);
    if (count > MS_NVML_MAX_PLACEMENTS || (int)count > cap)
        return ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: profile ID %u placements grew between calls", gpu, profile_id);
    for (i = 0; i < count; i++) {
        out[i].start = buf[i].start;
        out[i].size = buf[i].size;
    }
    *n = (int)count;
    return MS_OK;
}

static int profile_of_id(const ms_model_t *m, unsigned id)
{
    int k;

    if (m == NULL)
        return -1;
    for (k = 0; k < m->nprofiles; k++)
        if (m->profiles[k].gi_id == id)
            return k;
    return -1;
}

/* p's index in its model's table; -1 if p is not in any (a caller's copy). */
int ms__nvml_profile_index(const ms_profile_t *p)
{
    int n, i, k;
    const ms_model_t *m = ms_models(&n);

    for (i = 0; i < n; i++)
        for (k = 0; k < m[i].nprofiles; k++)
            if (&m[i].profiles[k] == p)
                return k;
    return -1;
}

ms_status_t ms__nvml_mig_enabled(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, ms_nvml_err_t *err)
{
    unsigned cur = 0, pend = 0;
    nvmlReturn_t rc = nv->nvmlDeviceGetMigMode(dev, &cur, &pend);

    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetMigMode", "GPU %d", gpu);
    if (cur != NVML_DEVICE_MIG_ENABLE)
        return ms__nvml_set_err(err, MS_ENOTSUP, MS_NVML_K_UNSUPPORTED, 0, NULL,
                       "GPU %d: MIG mode is disabled%s (migsched never changes it; "
                       "see docs/nvml.md)", gpu,
                       pend == NVML_DEVICE_MIG_ENABLE ? " (enable pending a GPU reset)" : "");
    return MS_OK;
}

typedef struct ci_collect {
    int gpu;
    ms_nvml_gi_t *gi;
} ci_collect_t;

static ms_status_t collect_ci(ms_nvml_t *nv, nvmlComputeInstance_t ci, void *ctx,
                              ms_nvml_err_t *err)
{
    ci_collect_t *c = ctx;
    nvmlComputeInstanceInfo_t info;
    nvmlReturn_t rc;
    ms_nvml_ci_t *e;

    memset(&info, 0, sizeof(info));
    rc = nv->nvmlComputeInstanceGetInfo_v2(ci, &info);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlComputeInstanceGetInfo_v2", "GPU %d: GI %u", c->gpu, c->gi->id);
    if (c->gi->nci >= MS_NVML_MAX_CIS)
        return ms__nvml_set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: GI %u has more than %d CIs", c->gpu, c->gi->id, MS_NVML_MAX_CIS);
    e = &c->gi->ci[c->gi->nci++];
    e->id = info.id;
    e->profile_id = info.profileId;
    e->start = info.placement.start;
    e->size = info.placement.size;
    e->uuid[0] = '\0';
    return MS_OK;
}

/* Attach MIG device UUIDs (one MIG device per CI) to the inventory. */
ms_status_t ms__nvml_attach_uuids(ms_nvml_t *nv, int gpu, nvmlDevice_t dev,
                                  ms_nvml_inventory_t *inv, ms_nvml_err_t *err)
{
    unsigned max = 0, i;
    nvmlReturn_t rc = nv->nvmlDeviceGetMaxMigDeviceCount(dev, &max);

    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetMaxMigDeviceCount", "GPU %d", gpu);
    for (i = 0; i < max; i++) {
        nvmlDevice_t mig;
        unsigned gid = 0, cid = 0;
        char uuid[MS_NVML_UUID_LEN];
        int g, c;

        rc = nv->nvmlDeviceGetMigDeviceHandleByIndex(dev, i, &mig);
        if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
            continue;   /* no MIG device at this index */
        if (rc != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlDeviceGetMigDeviceHandleByIndex", "GPU %d: MIG device %u", gpu, i);
        if ((rc = nv->nvmlDeviceGetGpuInstanceId(mig, &gid)) != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstanceId", "GPU %d: MIG device %u", gpu, i);
        if ((rc = nv->nvmlDeviceGetComputeInstanceId(mig, &cid)) != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlDeviceGetComputeInstanceId", "GPU %d: MIG device %u", gpu, i);
        if ((rc = nv->nvmlDeviceGetUUID(mig, uuid, sizeof(uuid))) != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlDeviceGetUUID", "GPU %d: MIG device %u", gpu, i);
        uuid[sizeof(uuid) - 1] = '\0';
        for (g = 0; g < inv->ngi; g++)
            if (inv->gi[g].id == gid)
                for (c = 0; c < inv->gi[g].nci; c++)
                    if (inv->gi[g].ci[c].id == cid)
                        memcpy(inv->gi[g].ci[c].uuid, uuid, sizeof(uuid));
    }
    return MS_OK;
}

static int cmp_gi_start(const void *a, const void *b)
{
    const ms_nvml_gi_t *x = a, *y = b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

ms_status_t ms_nvml_inventory(ms_nvml_t *nv, int gpu, ms_nvml_inventory_t *out,
                              ms_nvml_err_t *err)
{
    nvmlDevice_t dev;
    char name[MS_NVML_NAME_LEN];
    const ms_model_t *model;
    unsigned idx;
    nvmlReturn_t rc;
    ms_status_t st;

    if (out == NULL)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    out->ngi = 0;
    if ((st = ms__nvml_get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = nv->nvmlDeviceGetName(dev, name, sizeof(name));
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetName", "GPU %d", gpu);
    name[sizeof(name) - 1] = '\0';
    model = ms_nvml_model_for_name(name);
    if ((st = ms__nvml_mig_enabled(nv, gpu, dev, err)) != MS_OK)
        return st;
    for (idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
        nvmlGpuInstanceProfileInfo_v2_t info;
        nvmlGpuInstance_t gis[MS_NVML_MAX_GIS];
        unsigned n = 0, i;

        rc = ms__nvml_profile_v2(nv, dev, idx, &info);
        if (ms__nvml_absent(rc))
            continue;
        if (rc != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, ms__nvml_profile_call(nv),
                             "GPU %d: profile index 0x%x", gpu, idx);
        if ((st = ms__nvml_list_gis(nv, gpu, dev, info.id, info.instanceCount, gis, &n, err)) != MS_OK)
            return st;
        for (i = 0; i < n; i++) {
            nvmlGpuInstanceInfo_t gi;
            ms_nvml_gi_t *e;
            ci_collect_t cc;
            int dup = 0, k;

            memset(&gi, 0, sizeof(gi));
            rc = nv->nvmlGpuInstanceGetInfo(gis[i], &gi);
            if (rc != NVML_SUCCESS)
                return MS__NVML_FAIL(err, rc, "nvmlGpuInstanceGetInfo", "GPU %d: profile ID %u", gpu, info.id);
            for (k = 0; k < out->ngi; k++)
                dup |= out->gi[k].id == gi.id;
            if (dup)
                continue;   /* two indices naming one profile ID */
            if (out->ngi >= MS_NVML_MAX_GIS)
                return ms__nvml_set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                               "GPU %d: more than %d GPU instances", gpu, MS_NVML_MAX_GIS);
            e = &out->gi[out->ngi++];
            memset(e, 0, sizeof(*e));
            e->id = gi.id;
            e->profile_id = gi.profileId;
            e->prof = profile_of_id(model, gi.profileId);
            e->start = gi.placement.start;
            e->size = gi.placement.size;
            cc.gpu = gpu;
            cc.gi = e;
            if ((st = ms__nvml_each_ci(nv, gpu, gis[i], collect_ci, &cc, err)) != MS_OK)
                return st;
        }
    }
    if ((st = ms__nvml_attach_uuids(nv, gpu, dev, out, err)) != MS_OK)
        return st;
    qsort(out->gi, (size_t)out->ngi, sizeof(out->gi[0]), cmp_gi_start);
    return MS_OK;
}

ms_status_t ms_nvml_inventory_state(const ms_geom_t *g, const ms_nvml_inventory_t *inv,
                                    ms_state_t *out, ms_nvml_err_t *err)
{
    const ms_model_t *m;
    ms_state_t s = ms_geom_empty_state();
    int i, k;

    ms__nvml_clear_err(err);
    if (g == NULL || inv == NULL || out == NULL)
        return ms__nvml_set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no geometry, inventory or output");
    m = ms_geom_model(g);
    for (i = 0; i < inv->ngi; i++) {
        const ms_nvml_gi_t *gi = &inv->gi[i];
        int active = -1;

        for (k = 0; gi->prof >= 0 && gi->prof < m->nprofiles && k < ms_geom_nprofiles(g); k++)
            if (ms_geom_profile(g, k) == &m->profiles[gi->prof])
                active = k;
        if (active < 0)
            return ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_INVALID, 0, NULL,
                           "GI %u (profile ID %u at %u) is not an active profile of %s", gi->id,
                           gi->profile_id, gi->start, m->name);
        s = gi->start < MS_MAX_WIDTH ? ms_state_place(g, s, active, (int)gi->start) : MS_STATE_NONE;
        if (s == MS_STATE_NONE)
            return ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_INVALID, 0, NULL,
                           "GI %u (%s at %u) does not fit beside the GIs before it", gi->id,
                           m->profiles[gi->prof].name, gi->start);
    }
    *out = s;
    return MS_OK;
}
