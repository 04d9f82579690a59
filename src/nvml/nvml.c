/* nvml.c - the NVML executor: load the library, errors, and the device,
 * profile and instance calls its other files share (nvml_int.h); reading
 * GPUs is nvml_read.c, creating and destroying instances nvml_ops.c. See
 * nvml.h for what the module owns and its invariants; nvml_err.c for the
 * error table.
 *
 * Every NVML call goes through a pointer resolved at open; a failing call
 * is reported with the function's name, the GPU index, NVML's code and our
 * message, and mapped to an ms_status_t (ms_nvml_rc_status).
 */
#include "nvml/nvml_int.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- errors ------------------------------------------------------------- */


ms_status_t ms__nvml_set_err(ms_nvml_err_t *err, ms_status_t st, ms_nvml_kind_t kind, int rc,
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

void ms__nvml_clear_err(ms_nvml_err_t *err)
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
int ms__nvml_resolve(void *dl, const char *name, void *fnptr, size_t size)
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
    if (!ms__nvml_resolve(nv->dl, #name, &nv->name, sizeof(nv->name))) {                     \
        put(err, errlen, "%s lacks %s (driver too old for MIG management?)", path, #name); \
        dlclose(nv->dl);                                                             \
        free(nv);                                                                    \
        return MS_ENOTSUP;                                                           \
    }
    MS_NVML_SYMBOLS(MS__NVML_RESOLVE)
#undef MS__NVML_RESOLVE
    if (!ms__nvml_resolve(nv->dl, "nvmlDeviceGetGpuInstanceProfileInfoV", &nv->profile_v,
                 sizeof(nv->profile_v)) &&
        !ms__nvml_resolve(nv->dl, "nvmlDeviceGetGpuInstanceProfileInfo", &nv->profile_v1,
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

ms_status_t ms__nvml_get_dev(ms_nvml_t *nv, int gpu, nvmlDevice_t *dev, ms_nvml_err_t *err)
{
    nvmlReturn_t rc;

    ms__nvml_clear_err(err);
    if (nv == NULL || gpu < 0 || gpu >= nv->ngpu)
        return ms__nvml_set_err(err, MS_ENOENT, MS_NVML_K_NOT_FOUND, 0, NULL,
                       "GPU %d: no such GPU (NVML reports %d)", gpu, nv != NULL ? nv->ngpu : 0);
    rc = nv->nvmlDeviceGetHandleByIndex_v2((unsigned)gpu, dev);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetHandleByIndex_v2", "GPU %d", gpu);
    return MS_OK;
}

/* GI profile info as a v2 struct, from whichever call the driver has (the
 * v1 answer has no name: name stays ""). */
nvmlReturn_t ms__nvml_profile_v2(ms_nvml_t *nv, nvmlDevice_t dev, unsigned idx,
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
const char *ms__nvml_profile_call(const ms_nvml_t *nv)
{
    return nv->profile_v != NULL ? "nvmlDeviceGetGpuInstanceProfileInfoV"
                                 : "nvmlDeviceGetGpuInstanceProfileInfo";
}

/* Absent profile or past the driver's last index: skip while enumerating. */
int ms__nvml_absent(nvmlReturn_t rc)
{
    return rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT;
}

/* The CI profile index of a full-size CI in a GI of this many compute slices. */
int ms__nvml_ci_full_index(unsigned slices)
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
ms_status_t ms__nvml_list_gis(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, unsigned id,
                              unsigned max, nvmlGpuInstance_t *gis, unsigned *n,
                              ms_nvml_err_t *err)
{
    nvmlReturn_t rc;

    if (max > MS_NVML_MAX_GIS)
        return ms__nvml_set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: profile ID %u allows %u instances, more than %d", gpu, id, max,
                       MS_NVML_MAX_GIS);
    *n = max;
    rc = nv->nvmlDeviceGetGpuInstances(dev, id, gis, n);
    if (rc != NVML_SUCCESS)
        return MS__NVML_FAIL(err, rc, "nvmlDeviceGetGpuInstances", "GPU %d: listing profile ID %u", gpu, id);
    if (*n > max)
        return ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                       "GPU %d: driver listed %u instances of profile ID %u, at most %u expected",
                       gpu, *n, id, max);
    return MS_OK;
}

ms_status_t ms__nvml_each_ci(ms_nvml_t *nv, int gpu, nvmlGpuInstance_t gi, ms__nvml_ci_fn fn,
                             void *ctx, ms_nvml_err_t *err)
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
        if (ms__nvml_absent(rc))
            continue;
        if (rc != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlGpuInstanceGetComputeInstanceProfileInfo",
                             "GPU %d: CI profile %u", gpu, idx);
        if (info.instanceCount > MS_NVML_MAX_CIS)
            return ms__nvml_set_err(err, MS_ERANGE, MS_NVML_K_LIBRARY, 0, NULL,
                           "GPU %d: CI profile %u allows %u instances, more than %d", gpu, idx,
                           info.instanceCount, MS_NVML_MAX_CIS);
        n = info.instanceCount;
        rc = nv->nvmlGpuInstanceGetComputeInstances(gi, info.id, cis, &n);
        if (rc != NVML_SUCCESS)
            return MS__NVML_FAIL(err, rc, "nvmlGpuInstanceGetComputeInstances",
                             "GPU %d: listing CI profile ID %u", gpu, info.id);
        if (n > info.instanceCount)
            return ms__nvml_set_err(err, MS_ESTATE, MS_NVML_K_LIBRARY, 0, NULL,
                           "GPU %d: driver listed %u CIs of profile ID %u, at most %u expected",
                           gpu, n, info.id, info.instanceCount);
        for (i = 0; i < n; i++)
            if ((st = fn(nv, cis[i], ctx, err)) != MS_OK)
                return st;
    }
    return MS_OK;
}
