/* nvml.h - the NVML executor: migsched's only door to real MIG hardware.
 *
 * What this module owns
 *   - loading libnvidia-ml.so.1 at run time (dlopen/dlsym; nothing links
 *     against NVML, so migsched builds and runs where no driver exists);
 *   - reading a GPU: name, UUID, MIG mode, which migsched model it is, the
 *     GPU instances (GIs) on it with their compute instances (CIs) and MIG
 *     device UUIDs, and the placements the driver allows per profile;
 *   - carrying out the two plan steps that touch hardware: create one
 *     schedulable instance (a GI at an explicit placement plus one
 *     full-size CI) and destroy one (its CIs, then the GI);
 *   - turning every NVML return code into an ms_status_t, a kind the
 *     scheduler can act on, and a one-line message (nvml_err.c).
 *
 * Invariants
 *   - Nothing here prints, exits or keeps a global: all state is in the
 *     ms_nvml_t, errors go to the caller's ms_nvml_err_t.
 *   - MIG mode is never changed by any function but ms_nvml_set_mig_mode(),
 *     and that one refuses unless the caller passes MS_NVML_MODE_CHANGE_OK;
 *     its symbol is not even looked up before.
 *   - A create either leaves a GI with one CI, or leaves the GPU as it was:
 *     when the CI (or anything after the GI) fails, the GI is destroyed
 *     again, and if that also fails the error says so (err->ghost).
 *   - Instances are named by (GPU, profile, start), the identity that
 *     survives a restart; GI and CI ids are reported but may be reused.
 *   - Placements always come from the caller (the scheduler's plan); the
 *     driver is never asked to choose one.
 *
 * Thread safety: after ms_nvml_open() an ms_nvml_t is read-only (function
 * pointers and the GPU count), except the MIG-mode pointer resolved on the
 * first ms_nvml_set_mig_mode(); NVML itself is thread-safe. Concurrent
 * steps on one GPU (a create racing a destroy) are the caller's to
 * serialise: the daemon executes one plan step per GPU at a time.
 */
#ifndef MIGSCHED_NVML_H
#define MIGSCHED_NVML_H

#include <stddef.h>

#include "migsched/geometry.h"
#include "migsched/status.h"

#define MS_NVML_DEFAULT_LIB  "libnvidia-ml.so.1"
#define MS_NVML_NAME_LEN     96   /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define MS_NVML_UUID_LEN     96   /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define MS_NVML_MAX_GIS      16   /* more than any GPU's GIs (7) */
#define MS_NVML_MAX_CIS      8    /* more than any GI's CIs (7) */
#define MS_NVML_MAX_PLACEMENTS 16 /* more than any profile's starts (12) */
#define MS_NVML_PROFILE_INDICES 0x12 /* NVML_GPU_INSTANCE_PROFILE_COUNT */

/* What the caller should do about a failure. */
typedef enum ms_nvml_kind {
    MS_NVML_K_NONE = 0,    /* no error */
    MS_NVML_K_REFUSED,     /* the hardware refused: slices occupied or resources
                              exhausted. Tell the scheduler; retrying is useless. */
    MS_NVML_K_INVALID,     /* an argument the driver rejects: a placement or
                              profile that is not legal on this GPU */
    MS_NVML_K_UNSUPPORTED, /* not here: MIG disabled, profile absent, driver too old */
    MS_NVML_K_PERMISSION,  /* needs root or the mig/config capability */
    MS_NVML_K_BUSY,        /* in use, reset required, not ready: retry later */
    MS_NVML_K_GPU_LOST,    /* the GPU is gone: mark it unhealthy */
    MS_NVML_K_NOT_FOUND,   /* no such GPU, instance or device */
    MS_NVML_K_DRIVER,      /* driver failure: not loaded, version mismatch, timeout */
    MS_NVML_K_LIBRARY      /* our side: dlopen/dlsym, memory, an inconsistent answer */
} ms_nvml_kind_t;

/* A failure, filled by every function below on error (err may be NULL). */
typedef struct ms_nvml_err {
    ms_status_t st;        /* what the function returned */
    ms_nvml_kind_t kind;
    int nvml_rc;           /* the NVML return code, 0 if NVML did not fail */
    char call[64];         /* the NVML function that failed, "" if none */
    int ghost;             /* 1: a rollback failed and a GI may be left over */
    char msg[320];         /* one line: what failed, on which GPU, and why */
} ms_nvml_err_t;

/* The error table (nvml_err.c): for any NVML return code, its symbolic
 * name ("NVML_ERROR_GPU_IS_LOST"), our message, the ms_status_t it maps to
 * and its kind. Unknown codes map to MS_EIO / MS_NVML_K_DRIVER. */
const char *ms_nvml_rc_name(int rc);
const char *ms_nvml_rc_text(int rc);
ms_status_t ms_nvml_rc_status(int rc);
ms_nvml_kind_t ms_nvml_rc_kind(int rc);
const char *ms_nvml_kind_name(ms_nvml_kind_t k);   /* "refused", "gpu-lost", ... */

typedef struct ms_nvml ms_nvml_t;

/* Load the library (NULL: "libnvidia-ml.so.1" from the loader's path),
 * resolve every symbol it needs and call nvmlInit_v2. On failure *out is
 * NULL, err (errlen > 0) holds one line, and the status is MS_ENOENT (no
 * library), MS_ENOTSUP (a symbol missing: driver too old) or the mapping
 * of nvmlInit_v2's code. OUT out: free with ms_nvml_close(). */
ms_status_t ms_nvml_open(const char *libpath, ms_nvml_t **out, char *err, size_t errlen);
/* nvmlShutdown and dlclose; NULL-safe. */
void ms_nvml_close(ms_nvml_t *nv);

/* Number of GPUs NVML reports (fixed at open). */
int ms_nvml_gpu_count(const ms_nvml_t *nv);

typedef struct ms_nvml_gpu {
    char name[MS_NVML_NAME_LEN];   /* "NVIDIA A100-SXM4-40GB" */
    char uuid[MS_NVML_UUID_LEN];   /* "GPU-..." */
    int mig_current;               /* 1 enabled, 0 disabled */
    int mig_pending;               /* the mode after the next activation */
    const ms_model_t *model;       /* migsched's model, NULL if not one of ours */
} ms_nvml_gpu_t;

ms_status_t ms_nvml_gpu_info(ms_nvml_t *nv, int gpu, ms_nvml_gpu_t *out, ms_nvml_err_t *err);

/* migsched's model for an NVML device name, NULL if none (nvml_model.c):
 * "NVIDIA H100 80GB HBM3" -> H100-80GB. Pure; exposed for tests. */
const ms_model_t *ms_nvml_model_for_name(const char *nvml_name);

typedef struct ms_nvml_placement {
    unsigned start, size;          /* memory slices */
} ms_nvml_placement_t;

/* What the driver says about one GI profile enum index. */
typedef struct ms_nvml_profile {
    unsigned index;                /* NVML_GPU_INSTANCE_PROFILE_* */
    unsigned id;                   /* profile ID (create/placement calls) */
    unsigned slices;               /* compute slices */
    unsigned instances;            /* most per GPU */
    unsigned long long memory_mb;
    char name[MS_NVML_NAME_LEN];   /* "3g.20gb"; "" from a driver without the V call */
} ms_nvml_profile_t;

/* Profile info by enum index. MS_ENOTSUP (kind UNSUPPORTED) when this GPU
 * or driver lacks the profile or MIG is disabled, MS_EINVAL past the
 * driver's last index. */
ms_status_t ms_nvml_profile_info(ms_nvml_t *nv, int gpu, unsigned index,
                                 ms_nvml_profile_t *out, ms_nvml_err_t *err);

/* Every placement the driver allows for a profile ID, whether or not MIG is
 * enabled or the slices are free (nvmlDeviceGetGpuInstancePossiblePlacements_v2).
 * Fills out[0..*n-1]; MS_ERANGE if there are more than cap. */
ms_status_t ms_nvml_placements(ms_nvml_t *nv, int gpu, unsigned profile_id,
                               ms_nvml_placement_t *out, int cap, int *n,
                               ms_nvml_err_t *err);

typedef struct ms_nvml_ci {
    unsigned id;                   /* CI id within its GI */
    unsigned profile_id;
    unsigned start, size;          /* compute slices within the GI */
    char uuid[MS_NVML_UUID_LEN];   /* "MIG-..."; "" if NVML lists no MIG device */
} ms_nvml_ci_t;

typedef struct ms_nvml_gi {
    unsigned id;                   /* GI id (reused after destroy) */
    unsigned profile_id;           /* NVML profile ID */
    int prof;                      /* index into model->profiles, -1 if not ours */
    unsigned start, size;          /* placement, memory slices */
    int nci;
    ms_nvml_ci_t ci[MS_NVML_MAX_CIS];
} ms_nvml_gi_t;

typedef struct ms_nvml_inventory {
    int ngi;                       /* sorted by start */
    ms_nvml_gi_t gi[MS_NVML_MAX_GIS];
} ms_nvml_inventory_t;

/* Every GI on the GPU (of any profile, ours or not), its CIs and their MIG
 * device UUIDs. MS_ENOTSUP (kind UNSUPPORTED) if MIG is disabled. */
ms_status_t ms_nvml_inventory(ms_nvml_t *nv, int gpu, ms_nvml_inventory_t *out,
                              ms_nvml_err_t *err);

/* The geometry state of an inventory: the state number of g (built for the
 * GPU's model) that the inventory's GIs make, for the scheduler to resume
 * from after a restart. Pure. MS_ESTATE if a GI's profile is not active in
 * g or the GIs do not form a valid layout (err->msg says which GI). */
ms_status_t ms_nvml_inventory_state(const ms_geom_t *g, const ms_nvml_inventory_t *inv,
                                    ms_state_t *out, ms_nvml_err_t *err);

/* Create one schedulable instance of profile p (a profile of the GPU's
 * model) at memory slice start: the GI with that explicit placement, then
 * one CI of the GI's full size. The driver's profile ID for p's enum index
 * must equal p->gi_id, or nothing is created (MS_ESTATE: our table is wrong
 * for this GPU). Occupied slices give MS_ENOFIT with kind REFUSED. On any
 * failure after the GI exists the GI is destroyed again. out (may be NULL)
 * receives the new GI with its CI and MIG UUID. */
ms_status_t ms_nvml_create(ms_nvml_t *nv, int gpu, const ms_profile_t *p, unsigned start,
                           ms_nvml_gi_t *out, ms_nvml_err_t *err);

/* Destroy the GI of profile p at start (its CIs first, then the GI).
 * MS_ENOENT if there is none. */
ms_status_t ms_nvml_destroy(ms_nvml_t *nv, int gpu, const ms_profile_t *p, unsigned start,
                            ms_nvml_err_t *err);

/* The only way to change MIG mode. Refuses (MS_EINVAL) unless confirm ==
 * MS_NVML_MODE_CHANGE_OK. Needs root; may reset the GPU. *activation (may
 * be NULL) receives NVML's activation status (0, IN_USE, RESET_REQUIRED). */
#define MS_NVML_MODE_CHANGE_OK 0x4D49474Du   /* "MIGM" */
ms_status_t ms_nvml_set_mig_mode(ms_nvml_t *nv, int gpu, int enable, unsigned confirm,
                                 int *activation, ms_nvml_err_t *err);

#endif
