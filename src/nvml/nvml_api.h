/* nvml_api.h - this project's own declarations of the NVML interface it uses.
 *
 * Written from the NVML API reference (docs.nvidia.com/deploy/nvml-api,
 * group "Multi Instance GPU Management") and shared/reference/mig-hardware.md
 * §2; NVIDIA's nvml.h is neither installed nor copied. Only the types,
 * constants and entry points migsched needs are declared, with the names and
 * binary layout of the real library so that a pointer resolved by dlsym()
 * from libnvidia-ml.so.1 can be called through these types.
 *
 * Which symbol version is bound (the driver exports several):
 *   nvmlInit_v2, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
 *   nvmlDeviceGetGpuInstancePossiblePlacements_v2, nvmlComputeInstanceGetInfo_v2
 *     the versioned names that the unversioned macros of nvml.h resolve to;
 *   nvmlDeviceGetGpuInstanceProfileInfoV with nvmlGpuInstanceProfileInfo_v2_t
 *     (version word nvmlGpuInstanceProfileInfo_v2) where the driver has it:
 *     the v2 struct carries the driver's profile name, which the probe
 *     compares with our tables. The R470 reference does not list it, the
 *     R515 one does, so where it is missing the v1 call
 *     nvmlDeviceGetGpuInstanceProfileInfo is bound instead (no name);
 *   nvmlGpuInstanceGetComputeInstanceProfileInfo (v1 struct): the V variant
 *     adds only a name, which nothing here needs.
 * Every other symbol is in the R470 MIG reference already.
 *
 * This header is shared by src/nvml/nvml.c (which calls through pointers,
 * never links against NVML) and by the fake driver tests/nvml/fake_nvml.c
 * (which defines the functions), so the two cannot disagree on a signature.
 */
#ifndef MIGSCHED_NVML_API_H
#define MIGSCHED_NVML_API_H

#include <stddef.h>

/* --- return codes (stable numeric ABI, mig-hardware.md §2.3) ------------ */
typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* --- opaque handles ----------------------------------------------------- */
typedef struct nvmlDevice_st *nvmlDevice_t;            /* a GPU or a MIG device */
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;

/* --- buffer sizes ------------------------------------------------------- */
#define NVML_DEVICE_NAME_BUFFER_SIZE    64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96   /* enough for nvmlDeviceGetName */
#define NVML_DEVICE_UUID_BUFFER_SIZE    80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96   /* enough for nvmlDeviceGetUUID */

/* --- MIG mode ----------------------------------------------------------- */
#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE  0x1

/* --- GPU-instance profile enum indices (argument of ...ProfileInfo) ------ */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE       0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE       0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE       0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE       0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE       0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE       0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE       0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1  0x7   /* 1g+me */
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1  0x8   /* 2g+me */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2  0x9   /* 1g, double memory */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX   0xA
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX   0xB
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX   0xC
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME 0xD
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME 0xE
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME 0xF
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME 0x10
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE_GFX   0x11
/* NVML 13's count; older drivers answer INVALID_ARGUMENT past their own. */
#define NVML_GPU_INSTANCE_PROFILE_COUNT         0x12

/* --- compute-instance profile enum indices ------------------------------ */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE     0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE     0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE     0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE     0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE     0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE     0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE     0x6
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE_NVL 0x8
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT       0x9

#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT  0x1

/* --- structs ------------------------------------------------------------ */

/* Where a GI sits: start and size in memory slices. */
typedef struct nvmlGpuInstancePlacement_st {
    unsigned int start;
    unsigned int size;
} nvmlGpuInstancePlacement_t;

/* v1 of the GI profile description (no version word, no name). */
typedef struct nvmlGpuInstanceProfileInfo_st {
    unsigned int id;
    unsigned int isP2pSupported;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int copyEngineCount;
    unsigned int decoderCount;
    unsigned int encoderCount;
    unsigned int jpegCount;
    unsigned int ofaCount;
    unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

/* v2 of the GI profile description (the v1 struct with a leading version
 * word and a trailing name). */
typedef struct nvmlGpuInstanceProfileInfo_v2_st {
    unsigned int version;             /* set to nvmlGpuInstanceProfileInfo_v2 */
    unsigned int id;                  /* profile ID: what create/placement take */
    unsigned int isP2pSupported;
    unsigned int sliceCount;          /* compute slices */
    unsigned int instanceCount;       /* most GIs of this profile per GPU */
    unsigned int multiprocessorCount;
    unsigned int copyEngineCount;
    unsigned int decoderCount;
    unsigned int encoderCount;
    unsigned int jpegCount;
    unsigned int ofaCount;
    unsigned long long memorySizeMB;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
} nvmlGpuInstanceProfileInfo_v2_t;

/* The version word of a versioned struct: its size, and the version in the
 * top byte (the same rule as NVML's NVML_STRUCT_VERSION). */
#define MS_NVML_STRUCT_VERSION(type, ver) \
    ((unsigned int)(sizeof(type) | ((unsigned int)(ver) << 24U)))
#define nvmlGpuInstanceProfileInfo_v2 \
    MS_NVML_STRUCT_VERSION(nvmlGpuInstanceProfileInfo_v2_t, 2)

typedef struct nvmlGpuInstanceInfo_st {
    nvmlDevice_t device;
    unsigned int id;                  /* GI id, unique per GPU while it lives */
    unsigned int profileId;
    nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

/* Where a CI sits inside its GI: start and size in compute slices. */
typedef struct nvmlComputeInstancePlacement_st {
    unsigned int start;
    unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
    unsigned int id;
    unsigned int sliceCount;
    unsigned int instanceCount;
    unsigned int multiprocessorCount;
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceInfo_st {
    nvmlDevice_t device;
    nvmlGpuInstance_t gpuInstance;
    unsigned int id;
    unsigned int profileId;
    nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

/* The real library's layouts on LP64 (x86-64, aarch64), by field count and
 * natural alignment; a mismatch here would make every call through dlsym
 * corrupt memory, so it fails the build instead. */
#if defined(__LP64__)
_Static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8, "placement layout");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48, "GI profile v1 size");
_Static_assert(offsetof(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB) == 48, "GI profile v2 layout");
_Static_assert(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152, "GI profile v2 size");
_Static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24, "GI info layout");
_Static_assert(sizeof(nvmlComputeInstanceProfileInfo_t) == 36, "CI profile layout");
_Static_assert(sizeof(nvmlComputeInstanceInfo_t) == 32, "CI info layout");
#endif

/* --- entry points ------------------------------------------------------- *
 * X(return type, name, parameter list). Each becomes a prototype (which the
 * fake driver defines) and a pointer type ms_pfn_<name> (which nvml.c fills
 * from dlsym). MS_NVML_SYMBOLS are resolved at open and all must exist. */
#define MS_NVML_SYMBOLS(X)                                                            \
    X(nvmlReturn_t, nvmlInit_v2, (void))                                              \
    X(nvmlReturn_t, nvmlShutdown, (void))                                             \
    X(const char *, nvmlErrorString, (nvmlReturn_t result))                           \
    X(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned int *deviceCount))               \
    X(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2,                                    \
      (unsigned int index, nvmlDevice_t *device))                                     \
    X(nvmlReturn_t, nvmlDeviceGetName,                                                \
      (nvmlDevice_t device, char *name, unsigned int length))                         \
    X(nvmlReturn_t, nvmlDeviceGetUUID,                                                \
      (nvmlDevice_t device, char *uuid, unsigned int length))                         \
    X(nvmlReturn_t, nvmlDeviceGetMigMode,                                             \
      (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode))    \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstancePossiblePlacements_v2,                    \
      (nvmlDevice_t device, unsigned int profileId,                                   \
       nvmlGpuInstancePlacement_t *placements, unsigned int *count))                  \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstances,                                        \
      (nvmlDevice_t device, unsigned int profileId,                                   \
       nvmlGpuInstance_t *gpuInstances, unsigned int *count))                         \
    X(nvmlReturn_t, nvmlGpuInstanceGetInfo,                                           \
      (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info))                   \
    X(nvmlReturn_t, nvmlDeviceCreateGpuInstanceWithPlacement,                         \
      (nvmlDevice_t device, unsigned int profileId,                                   \
       const nvmlGpuInstancePlacement_t *placement, nvmlGpuInstance_t *gpuInstance))  \
    X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfo,                     \
      (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,  \
       nvmlComputeInstanceProfileInfo_t *info))                                       \
    X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstance,                             \
      (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                         \
       nvmlComputeInstance_t *computeInstance))                                       \
    X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstances,                               \
      (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                         \
       nvmlComputeInstance_t *computeInstances, unsigned int *count))                 \
    X(nvmlReturn_t, nvmlComputeInstanceGetInfo_v2,                                    \
      (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t *info))       \
    X(nvmlReturn_t, nvmlComputeInstanceDestroy, (nvmlComputeInstance_t computeInstance)) \
    X(nvmlReturn_t, nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gpuInstance))          \
    X(nvmlReturn_t, nvmlDeviceGetMaxMigDeviceCount,                                   \
      (nvmlDevice_t device, unsigned int *count))                                     \
    X(nvmlReturn_t, nvmlDeviceGetMigDeviceHandleByIndex,                              \
      (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice))             \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id)) \
    X(nvmlReturn_t, nvmlDeviceGetComputeInstanceId,                                   \
      (nvmlDevice_t device, unsigned int *id))

/* GI profile info: the first of these that the library has is bound (the
 * versioned one, else v1); one of them must exist. */
#define MS_NVML_PROFILE_SYMBOLS(X)                                                    \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfoV,                             \
      (nvmlDevice_t device, unsigned int profile,                                     \
       nvmlGpuInstanceProfileInfo_v2_t *info))                                        \
    X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfo,                              \
      (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info))

/* Changing MIG mode is never part of a default path: this symbol is looked
 * up only when ms_nvml_set_mig_mode() is called with its explicit flag.
 * activationStatus receives why the change is pending (IN_USE,
 * RESET_REQUIRED) when the call itself succeeds. */
#define MS_NVML_MODE_SYMBOLS(X)                                                       \
    X(nvmlReturn_t, nvmlDeviceSetMigMode,                                             \
      (nvmlDevice_t device, unsigned int mode, nvmlReturn_t *activationStatus))

#define MS__NVML_DECLARE(ret, name, params) \
    ret name params;                        \
    typedef ret(*ms_pfn_##name) params;
MS_NVML_SYMBOLS(MS__NVML_DECLARE)
MS_NVML_PROFILE_SYMBOLS(MS__NVML_DECLARE)
MS_NVML_MODE_SYMBOLS(MS__NVML_DECLARE)
#undef MS__NVML_DECLARE

#endif
