/* nvml_int.h - private to src/nvml/: the handle and the helpers the
 * executor's files share (nvml.c: open, errors, device and profile calls;
 * nvml_read.c: GPU info, placements, inventory; nvml_ops.c: create,
 * destroy, MIG mode). Not installed. */
#ifndef MIGSCHED_NVML_INT_H
#define MIGSCHED_NVML_INT_H

#include <stddef.h>

#include "nvml/nvml.h"
#include "nvml/nvml_api.h"

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

/* --- errors (nvml.c) --------------------------------------------------- */

/* Fill err (NULL-safe) and return st; a non-zero NVML code rc adds the
 * call, NVML's text and its name to the message. */
ms_status_t ms__nvml_set_err(ms_nvml_err_t *err, ms_status_t st, ms_nvml_kind_t kind, int rc,
                             const char *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* An NVML call failed: map its code. ctx names the GPU and the step. */
#define MS__NVML_FAIL(err, rc, call, ...)                                                   \
    ms__nvml_set_err((err), ms_nvml_rc_status(rc), ms_nvml_rc_kind(rc), (int)(rc), (call), \
                     __VA_ARGS__)
void ms__nvml_clear_err(ms_nvml_err_t *err);

/* --- calls (nvml.c) ---------------------------------------------------- */

/* dlsym into a function pointer of size bytes: 1, or 0 if absent. */
int ms__nvml_resolve(void *dl, const char *name, void *fnptr, size_t size);
ms_status_t ms__nvml_get_dev(ms_nvml_t *nv, int gpu, nvmlDevice_t *dev, ms_nvml_err_t *err);
/* GI profile info as a v2 struct, from whichever call the driver has. */
nvmlReturn_t ms__nvml_profile_v2(ms_nvml_t *nv, nvmlDevice_t dev, unsigned idx,
                                 nvmlGpuInstanceProfileInfo_v2_t *info);
/* The name of the profile call in use, for messages. */
const char *ms__nvml_profile_call(const ms_nvml_t *nv);
/* Absent profile or past the driver's last index: skip while enumerating. */
int ms__nvml_absent(nvmlReturn_t rc);
/* The CI profile index of a full-size CI in a GI of this many compute slices. */
int ms__nvml_ci_full_index(unsigned slices);
/* GIs of one profile ID, at most max, into gis[*n]. */
ms_status_t ms__nvml_list_gis(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, unsigned id,
                              unsigned max, nvmlGpuInstance_t *gis, unsigned *n,
                              ms_nvml_err_t *err);
/* Call fn(ci) for every CI of a GI, over every CI profile the GI supports. */
typedef ms_status_t (*ms__nvml_ci_fn)(ms_nvml_t *nv, nvmlComputeInstance_t ci, void *ctx,
                             ms_nvml_err_t *err);
ms_status_t ms__nvml_each_ci(ms_nvml_t *nv, int gpu, nvmlGpuInstance_t gi, ms__nvml_ci_fn fn,
                             void *ctx, ms_nvml_err_t *err);

/* --- reading (nvml_read.c) --------------------------------------------- */

/* p's index in its model's table; -1 if p is not in any (a caller's copy). */
int ms__nvml_profile_index(const ms_profile_t *p);
/* MS_OK if MIG mode is on for GPU gpu, else an error saying so. */
ms_status_t ms__nvml_mig_enabled(ms_nvml_t *nv, int gpu, nvmlDevice_t dev, ms_nvml_err_t *err);
/* Attach MIG device UUIDs (one MIG device per CI) to the inventory. */
ms_status_t ms__nvml_attach_uuids(ms_nvml_t *nv, int gpu, nvmlDevice_t dev,
                                  ms_nvml_inventory_t *inv, ms_nvml_err_t *err);

#endif
