/* nvml.c - the NVML executor: load the library, read GPUs, create and
 * destroy instances at explicit placements. See nvml.h for what the module
 * owns and its invariants; nvml_err.c for the error table.
 *
 * Every NVML call goes through a pointer resolved at open; a failing call
 * is reported with the function's name, the GPU index, NVML's code and our
 * message, and mapped to an ms_status_t (ms_nvml_rc_status).
 */
#include "nvml/nvml.h"
#include "nvml/nvml_api.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ms_nvml {
    void *dl;
    int ngpu;
#define MS__NVML_FIELD(ret, name, params) ms_pfn_##name name;
    MS_NVML_SYMBOLS(MS__NVML_FIELD)
#undef MS__NVML_FIELD
    /* one of the two profile calls (nvml_api.h): V preferred, else v1 */
    ms_pfn_nvmlDeviceGetGpuInstanceProfileInfoV profile_v;
    ms_pfn_nvmlDeviceGetGpuInstanceProfileInfo profile_v1;
    ms_pfn_nvmlDeviceSetMigMode set_mig;   /* looked up on first confirmed use */
};

/* --- errors ------------------------------------------------------------- */

static ms_status_t set_err(ms_nvml_err_t *err, ms_status_t st, ms_nvml_kind_t kind, int rc,
                           const char *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

static ms_status_t set_err(ms_nvml_err_t *err, ms_status_t st, ms_nvml_kind_t kind, int rc,
                           const char *call, const char *fmt, ...)
{
    va_list ap;
    size_t len;

    if (err == NULL)
        return st;
    err->st = st;
    err->kind = kind;
    err->nvml_rc = rc;
    err->ghost = 0;
    snprintf(err->call, sizeof(err->call), "%s", call != NULL ? call : "");
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    len = strlen(err->msg);
    if (rc != 0 && len + 1 < sizeof(err->msg))
        snprintf(err->msg + len, sizeof(err->msg) - len, ": %s: %s (%s)", call,
                 ms_nvml_rc_text(rc), ms_nvml_rc_name(rc));
    return st;
}

/* An NVML call failed: map its code. ctx names the GPU and the step. */
#define NVML_FAIL(err, rc, call, ...) \
    set_err((err), ms_nvml_rc_status(rc), ms_nvml_rc_kind(rc), (int)(rc), (call), __VA_ARGS__)

static void clear_err(ms_nvml_err_t *err)
{
    if (err != NULL)
        memset(err, 0, sizeof(*err));
}

/* --- open / close -------------------------------------------------------- */

static void put(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void put(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;

    if (buf == NULL || n == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

/* dlsym returns an object pointer; ISO C has no cast to a function
 * pointer, POSIX guarantees the representation, so copy the bytes. */
static int resolve(void *dl, const char *name, void *fnptr, size_t size)
{
    void *sym;

    dlerror();
    sym = dlsym(dl, name);
    if (sym == NULL || size != sizeof(sym))
        return 0;
    memcpy(fnptr, &sym, size);
    return 1;
}

ms_status_t ms_nvml_open(const char *libpath, ms_nvml_t **out, char *err, size_t errlen)
{
    const char *path = libpath != NULL ? libpath : MS_NVML_DEFAULT_LIB;
    ms_nvml_t *nv;
    nvmlReturn_t rc;
    unsigned count = 0;

    put(err, errlen, "%s", "");
    if (out == NULL)
        return MS_EINVAL;
    *out = NULL;
    nv = calloc(1, sizeof(*nv));
    if (nv == NULL) {
        put(err, errlen, "out of memory");
        return MS_ENOMEM;
    }
    dlerror();
    nv->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (nv->dl == NULL) {
        const char *why = dlerror();
        put(err, errlen, "cannot load %s: %s (is the NVIDIA driver installed?)", path,
            why != NULL ? why : "unknown dlopen error");
        free(nv);
        return MS_ENOENT;
    }
#define MS__NVML_RESOLVE(ret, name, params)                                          \
    if (!resolve(nv->dl, #name, &nv->name, sizeof(nv->name))) {                     \
        put(err, errlen, "%s lacks %s (driver too old for MIG management?)", path, #name); \
        dlclose(nv->dl);                                                             \
        free(nv);                                                                    \
        return MS_ENOTSUP;                                                           \
    }
    MS_NVML_SYMBOLS(MS__NVML_RESOLVE)
#undef MS__NVML_RESOLVE
    if (!resolve(nv->dl, "nvmlDeviceGetGpuInstanceProfileInfoV", &nv->profile_v,
                 sizeof(nv->profile_v)) &&
        !resolve(nv->dl, "nvmlDeviceGetGpuInstanceProfileInfo", &nv->profile_v1,
                 sizeof(nv->profile_v1))) {
        put(err, errlen, "%s lacks nvmlDeviceGetGpuInstanceProfileInfo(V) (driver too old for "
            "MIG management?)", path);
        dlclose(nv->dl);
        free(nv);
        return MS_ENOTSUP;
    }
    rc = nv->nvmlInit_v2();
    if (rc != NVML_SUCCESS) {
        put(err, errlen, "nvmlInit_v2 failed: %s (%s)", ms_nvml_rc_text(rc), ms_nvml_rc_name(rc));
        dlclose(nv->dl);
        free(nv);
        return ms_nvml_rc_status(rc);
    }
    rc = nv->nvmlDeviceGetCount_v2(&count);
    if (rc != NVML_SUCCESS || count > 4096) {
        if (rc != NVML_SUCCESS)
            put(err, errlen, "nvmlDeviceGetCount_v2 failed: %s (%s)", ms_nvml_rc_text(rc),
                ms_nvml_rc_name(rc));
        else
            put(err, errlen, "nvmlDeviceGetCount_v2 reports %u GPUs, more than 4096", count);
        nv->nvmlShutdown();
        dlclose(nv->dl);
        free(nv);
        return rc != NVML_SUCCESS ? ms_nvml_rc_status(rc) : MS_ERANGE;
    }
    nv->ngpu = (int)count;
    *out = nv;
    return MS_OK;
}

void ms_nvml_close(ms_nvml_t *nv)
{
    if (nv == NULL)
        return;
    nv->nvmlShutdown();
    dlclose(nv->dl);
    free(nv);
}

int ms_nvml_gpu_count(const ms_nvml_t *nv)
{
    return nv != NULL ? nv->ngpu : 0;
}

/* --- helpers -------------------------------------------------------------- */

static ms_status_t get_dev(ms_nvml_t *nv, int gpu, nvmlDevice_t *dev, ms_nvml_err_t *err)
{
    nvmlReturn_t rc;

    clear_err(err);
    if (nv == NULL || gpu < 0 || gpu >= nv->ngpu)
        return set_err(err, MS_ENOENT, MS_NVML_K_NOT_FOUND, 0, NULL,
                       "GPU %d: no such GPU (NVML reports %d)", gpu, nv != NULL ? nv->ngpu : 0);
    rc = nv->nvmlDeviceGetHandleByIndex_v2((unsigned)gpu, dev);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetHandleByIndex_v2", "GPU %d", gpu);
    return MS_OK;
}

/* GI profile info as a v2 struct, from whichever call the driver has (the
 * v1 answer has no name: name stays ""). */
static nvmlReturn_t profile_v2(ms_nvml_t *nv, nvmlDevice_t dev, unsigned idx,
                               nvmlGpuInstanceProfileInfo_v2_t *info)
{
    nvmlGpuInstanceProfileInfo_t v1;
    nvmlReturn_t rc;

    memset(info, 0, sizeof(*info));
    if (nv->profile_v != NULL) {
        info->version = nvmlGpuInstanceProfileInfo_v2;
        rc = nv->profile_v(dev, idx, info);
        info->name[sizeof(info->name) - 1] = '\0';
        return rc;
    }
    memset(&v1, 0, sizeof(v1));
    rc = nv->profile_v1(dev, idx, &v1);
    info->id = v1.id;
    info->isP2pSupported = v1.isP2pSupported;
    info->sliceCount = v1.sliceCount;
    info->instanceCount = v1.instanceCount;
    info->multiprocessorCount = v1.multiprocessorCount;
    info->copyEngineCount = v1.copyEngineCount;
    info->decoderCount = v1.decoderCount;
    info->encoderCount = v1.encoderCount;
    info->jpegCount = v1.jpegCount;
    info->ofaCount = v1.ofaCount;
    info->memorySizeMB = v1.memorySizeMB;
    return rc;
}

/* The name of the profile call in use, for messages. */
static const char *profile_call(const ms_nvml_t *nv)
{
    return nv->profile_v != NULL ? "nvmlDeviceGetGpuInstanceProfileInfoV"
                                 : "nvmlDeviceGetGpuInstanceProfileInfo";
}

/* Absent profile or past the driver's last index: skip while enumerating. */
static int absent(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT;
}

/* The CI profile index of a full-size CI in a GI of this many compute slices. */
static int ci_full_index(unsigned slices)
{
    switch (slices) {
    case 1: return NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
    case 2: return NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE;
    case 3: return NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE;
    case 4: return NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE;
    case 6: return NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE;
    case 7: return NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE;
    case 8: return NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE;
    default: return -1;
    }
}

/* GIs of one profile ID. NVML has no count query here; the buffer must
 * hold the profile's instanceCount, which the caller checked. */
static ms_status_t list_gis(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, unsigned id,
                            unsigned max, nvmlGpuInstance_t *gis, unsigned *n,
                            ms_nvml_err_t *err)
{
    nvmlReturn_t rc;

    if (max > MS_NVML_MAX_GIS)
        return set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: profile ID %u allows %u instances, more than %d", gpu, id, max,
                       MS_NVML_MAX_GIS);
    *n = max;
    rc = nv->nvmlDeviceGetGpuInstances(dev, id, gis, n);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstances", "GPU %d: listing profile ID %u", gpu, id);
    if (*n > max)
        return set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: driver listed %u instances of profile ID %u, at most %u expected",
                       gpu, *n, id, max);
    return MS_OK;
}

/* Call fn(ci) for every CI of a GI, over every CI profile the GI supports. */
typedef ms_status_t (*ci_fn)(ms_nvml_t *nv, nvmlComputeInstance_t ci, void *ctx,
                             ms_nvml_err_t *err);

static ms_status_t each_ci(ms_nvml_t *nv, int gpu, nvmlGpuInstance_t gi, ci_fn fn, void *ctx,
                           ms_nvml_err_t *err)
{
    unsigned idx;

    for (idx = 0; idx < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; idx++) {
        nvmlComputeInstanceProfileInfo_t info;
        nvmlComputeInstance_t cis[MS_NVML_MAX_CIS];
        unsigned n = 0, i;
        nvmlReturn_t rc;
        ms_status_t st;

        memset(&info, 0, sizeof(info));
        rc = nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
            gi, idx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info);
        if (absent(rc))
            continue;
        if (rc != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
                             "GPU %d: CI profile %u", gpu, idx);
        if (info.instanceCount > MS_NVML_MAX_CIS)
            return set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                           "GPU %d: CI profile %u allows %u instances, more than %d", gpu, idx,
                           info.instanceCount, MS_NVML_MAX_CIS);
        n = info.instanceCount;
        rc = nv->nvmlGpuInstanceGetComputeInstances(gi, info.id, cis, &n);
        if (rc != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlGpuInstanceGetComputeInstances",
                             "GPU %d: listing CI profile ID %u", gpu, info.id);
        if (n > info.instanceCount)
            return set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                           "GPU %d: driver listed %u CIs of profile ID %u, at most %u expected",
                           gpu, n, info.id, info.instanceCount);
        for (i = 0; i < n; i++)
            if ((st = fn(nv, cis[i], ctx, err)) != MS_OK)
                return st;
    }
    return MS_OK;
}

/* --- reading ------------------------------------------------------------- */

ms_status_t ms_nvml_gpu_info(ms_nvml_t *nv, int gpu, ms_nvml_gpu_t *out, ms_nvml_err_t *err)
{
    nvmlDevice_t dev;
    nvmlReturn_t rc;
    unsigned cur = 0, pend = 0;
    ms_status_t st;

    if (out == NULL)
        return set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    memset(out, 0, sizeof(*out));
    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = nv->nvmlDeviceGetName(dev, out->name, sizeof(out->name));
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetName", "GPU %d", gpu);
    out->name[sizeof(out->name) - 1] = '\0';
    rc = nv->nvmlDeviceGetUUID(dev, out->uuid, sizeof(out->uuid));
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetUUID", "GPU %d", gpu);
    out->uuid[sizeof(out->uuid) - 1] = '\0';
    rc = nv->nvmlDeviceGetMigMode(dev, &cur, &pend);
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
        cur = pend = NVML_DEVICE_MIG_DISABLE;   /* a GPU without MIG */
    } else if (rc != NVML_SUCCESS) {
        return NVML_FAIL(err, rc, "nvmlDeviceGetMigMode", "GPU %d", gpu);
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
        return set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    memset(out, 0, sizeof(*out));
    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = profile_v2(nv, dev, index, &info);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, profile_call(nv),
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
        return set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    *n = 0;
    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = nv->nvmlDeviceGetGpuInstancePossiblePlacements_v2(dev, profile_id, NULL, &count);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
                         "GPU %d: counting placements of profile ID %u", gpu, profile_id);
    if (count > MS_NVML_MAX_PLACEMENTS || (int)count > cap)
        return set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: profile ID %u has %u placements, room for %d", gpu, profile_id,
                       count, cap < MS_NVML_MAX_PLACEMENTS ? cap : MS_NVML_MAX_PLACEMENTS);
    if (count == 0)
        return MS_OK;
    rc = nv->nvmlDeviceGetGpuInstancePossiblePlacements_v2(dev, profile_id, buf, &count);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
                         "GPU %d: placements of profile ID %u", gpu, profile_id);
    if (count > MS_NVML_MAX_PLACEMENTS || (int)count > cap)
        return set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
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
static int profile_index(const ms_profile_t *p)
{
    int n, i, k;
    const ms_model_t *m = ms_models(&n);

    for (i = 0; i < n; i++)
        for (k = 0; k < m[i].nprofiles; k++)
            if (&m[i].profiles[k] == p)
                return k;
    return -1;
}

static ms_status_t mig_enabled(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, ms_nvml_err_t *err)
{
    unsigned cur = 0, pend = 0;
    nvmlReturn_t rc = nv->nvmlDeviceGetMigMode(dev, &cur, &pend);

    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetMigMode", "GPU %d", gpu);
    if (cur != NVML_DEVICE_MIG_ENABLE)
        return set_err(err, MS_ENOTSUP, MS_NVML_K_UNSUPPORTED, 0, NULL,
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
        return NVML_FAIL(err, rc, "nvmlComputeInstanceGetInfo_v2", "GPU %d: GI %u", c->gpu, c->gi->id);
    if (c->gi->nci >= MS_NVML_MAX_CIS)
        return set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
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
static ms_status_t attach_uuids(ms_nvml_t *nv, int gpu, nvmlDevice_t dev,
                                ms_nvml_inventory_t *inv, ms_nvml_err_t *err)
{
    unsigned max = 0, i;
    nvmlReturn_t rc = nv->nvmlDeviceGetMaxMigDeviceCount(dev, &max);

    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetMaxMigDeviceCount", "GPU %d", gpu);
    for (i = 0; i < max; i++) {
        nvmlDevice_t mig;
        unsigned gid = 0, cid = 0;
        char uuid[MS_NVML_UUID_LEN];
        int g, c;

        rc = nv->nvmlDeviceGetMigDeviceHandleByIndex(dev, i, &mig);
        if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
            continue;   /* no MIG device at this index */
        if (rc != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlDeviceGetMigDeviceHandleByIndex", "GPU %d: MIG device %u", gpu, i);
        if ((rc = nv->nvmlDeviceGetGpuInstanceId(mig, &gid)) != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstanceId", "GPU %d: MIG device %u", gpu, i);
        if ((rc = nv->nvmlDeviceGetComputeInstanceId(mig, &cid)) != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlDeviceGetComputeInstanceId", "GPU %d: MIG device %u", gpu, i);
        if ((rc = nv->nvmlDeviceGetUUID(mig, uuid, sizeof(uuid))) != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlDeviceGetUUID", "GPU %d: MIG device %u", gpu, i);
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
        return set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no output");
    out->ngi = 0;
    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    rc = nv->nvmlDeviceGetName(dev, name, sizeof(name));
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceGetName", "GPU %d", gpu);
    name[sizeof(name) - 1] = '\0';
    model = ms_nvml_model_for_name(name);
    if ((st = mig_enabled(nv, gpu, dev, err)) != MS_OK)
        return st;
    for (idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
        nvmlGpuInstanceProfileInfo_v2_t info;
        nvmlGpuInstance_t gis[MS_NVML_MAX_GIS];
        unsigned n = 0, i;

        rc = profile_v2(nv, dev, idx, &info);
        if (absent(rc))
            continue;
        if (rc != NVML_SUCCESS)
            return NVML_FAIL(err, rc, profile_call(nv),
                             "GPU %d: profile index 0x%x", gpu, idx);
        if ((st = list_gis(nv, gpu, dev, info.id, info.instanceCount, gis, &n, err)) != MS_OK)
            return st;
        for (i = 0; i < n; i++) {
            nvmlGpuInstanceInfo_t gi;
            ms_nvml_gi_t *e;
            ci_collect_t cc;
            int dup = 0, k;

            memset(&gi, 0, sizeof(gi));
            rc = nv->nvmlGpuInstanceGetInfo(gis[i], &gi);
            if (rc != NVML_SUCCESS)
                return NVML_FAIL(err, rc, "nvmlGpuInstanceGetInfo", "GPU %d: profile ID %u", gpu, info.id);
            for (k = 0; k < out->ngi; k++)
                dup |= out->gi[k].id == gi.id;
            if (dup)
                continue;   /* two indices naming one profile ID */
            if (out->ngi >= MS_NVML_MAX_GIS)
                return set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
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
            if ((st = each_ci(nv, gpu, gis[i], collect_ci, &cc, err)) != MS_OK)
                return st;
        }
    }
    if ((st = attach_uuids(nv, gpu, dev, out, err)) != MS_OK)
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

    clear_err(err);
    if (g == NULL || inv == NULL || out == NULL)
        return set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL, "no geometry, inventory or output");
    m = ms_geom_model(g);
    for (i = 0; i < inv->ngi; i++) {
        const ms_nvml_gi_t *gi = &inv->gi[i];
        int active = -1;

        for (k = 0; gi->prof >= 0 && gi->prof < m->nprofiles && k < ms_geom_nprofiles(g); k++)
            if (ms_geom_profile(g, k) == &m->profiles[gi->prof])
                active = k;
        if (active < 0)
            return set_err(err, MS_ESTATE, MS_NVML_K_INVALID, 0, NULL,
                           "GI %u (profile ID %u at %u) is not an active profile of %s", gi->id,
                           gi->profile_id, gi->start, m->name);
        s = gi->start < MS_MAX_WIDTH ? ms_state_place(g, s, active, (int)gi->start) : MS_STATE_NONE;
        if (s == MS_STATE_NONE)
            return set_err(err, MS_ESTATE, MS_NVML_K_INVALID, 0, NULL,
                           "GI %u (%s at %u) does not fit beside the GIs before it", gi->id,
                           m->profiles[gi->prof].name, gi->start);
    }
    *out = s;
    return MS_OK;
}

/* --- create / destroy ---------------------------------------------------- */

static ms_status_t destroy_ci(ms_nvml_t *nv, nvmlComputeInstance_t ci, void *ctx,
                              ms_nvml_err_t *err)
{
    const int *gpu = ctx;
    nvmlReturn_t rc = nv->nvmlComputeInstanceDestroy(ci);

    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlComputeInstanceDestroy", "GPU %d", *gpu);
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
    nvmlReturn_t rc = profile_v2(nv, dev, p->nvml_index, info);

    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, profile_call(nv),
                         "GPU %d: profile %s (index 0x%x)", gpu, p->name, p->nvml_index);
    if (info->id != p->gi_id)
        return set_err(err, MS_ESTATE, MS_NVML_K_INVALID, 0, NULL,
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
        return set_err(err, MS_ENOMEM, MS_NVML_K_LIBRARY, 0, NULL, "out of memory");
    inv->ngi = 1;
    inv->gi[0] = *gi;
    st = attach_uuids(nv, gpu, dev, inv, err);
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

    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    if (p == NULL || start >= MS_MAX_WIDTH)
        return set_err(err, MS_EINVAL, MS_NVML_K_INVALID, 0, NULL,
                       "GPU %d: no profile, or start %u past the widest axis", gpu, start);
    if ((st = mig_enabled(nv, gpu, dev, err)) != MS_OK)
        return st;
    if ((st = checked_profile(nv, gpu, dev, p, &info, err)) != MS_OK)
        return st;
    pl.start = start;
    pl.size = p->msize;
    rc = nv->nvmlDeviceCreateGpuInstanceWithPlacement(dev, info.id, &pl, &gi);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceCreateGpuInstanceWithPlacement",
                         "GPU %d: creating %s at %u:%u", gpu, p->name, pl.start, pl.size);
    memset(&giinfo, 0, sizeof(giinfo));
    rc = nv->nvmlGpuInstanceGetInfo(gi, &giinfo);
    if (rc != NVML_SUCCESS) {
        st = NVML_FAIL(err, rc, "nvmlGpuInstanceGetInfo", "GPU %d: new %s at %u", gpu, p->name, start);
        rollback(nv, gpu, gi, NULL, 0, start, err);
        return st;
    }
    if (giinfo.placement.start != start || giinfo.placement.size != p->msize) {
        st = set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                     "GPU %d: %s asked at %u:%u, the driver placed it at %u:%u", gpu, p->name,
                     start, p->msize, giinfo.placement.start, giinfo.placement.size);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    cidx = ci_full_index(info.sliceCount);
    if (cidx < 0) {
        st = set_err(err, MS_ENOTSUP, MS_NVML_K_UNSUPPORTED, 0, NULL,
                     "GPU %d: no full-size CI profile for a %u-slice GI", gpu, info.sliceCount);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    memset(&ciinfo, 0, sizeof(ciinfo));
    rc = nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(
        gi, (unsigned)cidx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ciinfo);
    if (rc != NVML_SUCCESS) {
        st = NVML_FAIL(err, rc, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
                       "GPU %d: GI %u (%s at %u)", gpu, giinfo.id, p->name, start);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    rc = nv->nvmlGpuInstanceCreateComputeInstance(gi, ciinfo.id, &ci);
    if (rc != NVML_SUCCESS) {
        st = NVML_FAIL(err, rc, "nvmlGpuInstanceCreateComputeInstance",
                       "GPU %d: CI in GI %u (%s at %u)", gpu, giinfo.id, p->name, start);
        rollback(nv, gpu, gi, NULL, giinfo.id, start, err);
        return st;
    }
    memset(&cinfo, 0, sizeof(cinfo));
    rc = nv->nvmlComputeInstanceGetInfo_v2(ci, &cinfo);
    if (rc != NVML_SUCCESS) {
        st = NVML_FAIL(err, rc, "nvmlComputeInstanceGetInfo_v2",
                       "GPU %d: CI in GI %u (%s at %u)", gpu, giinfo.id, p->name, start);
        rollback(nv, gpu, gi, ci, giinfo.id, start, err);
        return st;
    }
    memset(&res, 0, sizeof(res));
    res.id = giinfo.id;
    res.profile_id = giinfo.profileId;
    res.prof = profile_index(p);
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

    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    if (p == NULL)
        return set_err(err, MS_EINVAL, MS_NVML_K_INVALID, 0, NULL, "GPU %d: no profile", gpu);
    if ((st = mig_enabled(nv, gpu, dev, err)) != MS_OK)
        return st;
    if ((st = checked_profile(nv, gpu, dev, p, &info, err)) != MS_OK)
        return st;
    if ((st = list_gis(nv, gpu, dev, info.id, info.instanceCount, gis, &n, err)) != MS_OK)
        return st;
    for (i = 0; i < n && target == NULL; i++) {
        nvmlGpuInstanceInfo_t gi;

        memset(&gi, 0, sizeof(gi));
        rc = nv->nvmlGpuInstanceGetInfo(gis[i], &gi);
        if (rc != NVML_SUCCESS)
            return NVML_FAIL(err, rc, "nvmlGpuInstanceGetInfo", "GPU %d: %s", gpu, p->name);
        if (gi.placement.start == start) {
            target = gis[i];
            id = gi.id;
        }
    }
    if (target == NULL)
        return set_err(err, MS_ENOENT, MS_NVML_K_NOT_FOUND, 0, NULL,
                       "GPU %d: no %s instance at slice %u", gpu, p->name, start);
    if ((st = each_ci(nv, gpu, target, destroy_ci, &gpu, err)) != MS_OK)
        return st;
    rc = nv->nvmlGpuInstanceDestroy(target);
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlGpuInstanceDestroy", "GPU %d: GI %u (%s at %u)", gpu, id,
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

    clear_err(err);
    if (confirm != MS_NVML_MODE_CHANGE_OK)
        return set_err(err, MS_EINVAL, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: refusing to change MIG mode without MS_NVML_MODE_CHANGE_OK", gpu);
    if ((st = get_dev(nv, gpu, &dev, err)) != MS_OK)
        return st;
    if (nv->set_mig == NULL &&
        !resolve(nv->dl, "nvmlDeviceSetMigMode", &nv->set_mig, sizeof(nv->set_mig)))
        return set_err(err, MS_ENOTSUP, MS_NVML_K_DRIVER, 0, NULL,
                       "the NVML library lacks nvmlDeviceSetMigMode");
    rc = nv->set_mig(dev, enable ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, &act);
    if (activation != NULL)
        *activation = (int)act;
    if (rc != NVML_SUCCESS)
        return NVML_FAIL(err, rc, "nvmlDeviceSetMigMode", "GPU %d: %s MIG", gpu,
                         enable ? "enabling" : "disabling");
    return MS_OK;
}
