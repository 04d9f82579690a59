/* nvml_err.c - every NVML return code: its name, our message, the
 * ms_status_t it maps to and what the caller should do (ms_nvml_kind_t).
 *
 * The messages are ours, written for an operator reading a daemon log; we
 * never rely on nvmlErrorString(), which the driver may not have when the
 * failure is that the driver is missing. Codes the table does not know
 * (newer drivers add some) map to MS_EIO / MS_NVML_K_DRIVER.
 */
#include "nvml/nvml.h"
#include "nvml/nvml_api.h"

#include <stddef.h>

typedef struct rc_row {
    int rc;
    const char *name;
    ms_status_t st;
    ms_nvml_kind_t kind;
    const char *text;
} rc_row_t;

#define R(code, st, kind, text) { NVML_##code, "NVML_" #code, MS_##st, MS_NVML_K_##kind, text }

static const rc_row_t ROWS[] = {
    R(SUCCESS, OK, NONE, "success"),
    R(ERROR_UNINITIALIZED, ESTATE, LIBRARY, "NVML was not initialised (nvmlInit_v2 not called or failed)"),
    R(ERROR_INVALID_ARGUMENT, EINVAL, INVALID, "the driver rejected an argument (profile, placement or handle not valid on this GPU)"),
    R(ERROR_NOT_SUPPORTED, ENOTSUP, UNSUPPORTED, "not supported on this GPU (MIG disabled, or the profile does not exist here)"),
    R(ERROR_NO_PERMISSION, EIO, PERMISSION, "permission denied: needs root or read access to the mig/config capability"),
    R(ERROR_ALREADY_INITIALIZED, ESTATE, LIBRARY, "NVML already initialised"),
    R(ERROR_NOT_FOUND, ENOENT, NOT_FOUND, "not found (no such GPU, instance or MIG device)"),
    R(ERROR_INSUFFICIENT_SIZE, ERANGE, LIBRARY, "a buffer passed to NVML was too small"),
    R(ERROR_INSUFFICIENT_POWER, EIO, DRIVER, "the GPU's external power cables are not attached"),
    R(ERROR_DRIVER_NOT_LOADED, EIO, DRIVER, "the NVIDIA kernel driver is not loaded"),
    R(ERROR_TIMEOUT, EIO, BUSY, "the driver timed out"),
    R(ERROR_IRQ_ISSUE, EIO, DRIVER, "the kernel detected an interrupt problem with the GPU"),
    R(ERROR_LIBRARY_NOT_FOUND, ENOENT, DRIVER, "a library NVML needs was not found"),
    R(ERROR_FUNCTION_NOT_FOUND, ENOTSUP, DRIVER, "the driver lacks this function (driver too old)"),
    R(ERROR_CORRUPTED_INFOROM, EIO, DRIVER, "the GPU's infoROM is corrupted"),
    R(ERROR_GPU_IS_LOST, EIO, GPU_LOST, "the GPU has fallen off the bus or is otherwise inaccessible"),
    R(ERROR_RESET_REQUIRED, ESTATE, BUSY, "the GPU needs a reset before this can be done"),
    R(ERROR_OPERATING_SYSTEM, EIO, PERMISSION, "the operating system blocked the call (cgroups or device permissions)"),
    R(ERROR_LIB_RM_VERSION_MISMATCH, EIO, DRIVER, "libnvidia-ml and the kernel driver are different versions"),
    R(ERROR_IN_USE, ESTATE, BUSY, "in use: processes, compute instances or another client hold it"),
    R(ERROR_MEMORY, ENOMEM, DRIVER, "the driver ran out of memory"),
    R(ERROR_NO_DATA, ENOENT, NOT_FOUND, "no data"),
    R(ERROR_VGPU_ECC_NOT_SUPPORTED, ENOTSUP, UNSUPPORTED, "vGPU does not support ECC here"),
    R(ERROR_INSUFFICIENT_RESOURCES, ENOFIT, REFUSED, "the hardware refused: the slices are occupied or the GPU has no room for this instance"),
    R(ERROR_FREQ_NOT_SUPPORTED, ENOTSUP, UNSUPPORTED, "frequency not supported"),
    R(ERROR_ARGUMENT_VERSION_MISMATCH, ENOTSUP, DRIVER, "the driver does not know this struct version (driver too old or too new)"),
    R(ERROR_DEPRECATED, ENOTSUP, DRIVER, "the driver no longer supports this call"),
    R(ERROR_NOT_READY, ESTATE, BUSY, "the GPU is not ready yet"),
    R(ERROR_GPU_NOT_FOUND, EIO, GPU_LOST, "the GPU was not found"),
    R(ERROR_INVALID_STATE, ESTATE, BUSY, "the GPU is in a state that does not allow this"),
    R(ERROR_RESET_TYPE_NOT_SUPPORTED, ENOTSUP, UNSUPPORTED, "this reset type is not supported"),
    R(ERROR_UNKNOWN, EIO, DRIVER, "unknown driver error"),
};

#undef R

static const rc_row_t *row(int rc)
{
    size_t i;

    for (i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++)
        if (ROWS[i].rc == rc)
            return &ROWS[i];
    return NULL;
}

const char *ms_nvml_rc_name(int rc)
{
    const rc_row_t *r = row(rc);
    return r != NULL ? r->name : "NVML_ERROR_(unlisted)";
}

const char *ms_nvml_rc_text(int rc)
{
    const rc_row_t *r = row(rc);
    return r != NULL ? r->text : "a driver error this version of migsched does not know";
}

ms_status_t ms_nvml_rc_status(int rc)
{
    const rc_row_t *r = row(rc);
    return r != NULL ? r->st : MS_EIO;
}

ms_nvml_kind_t ms_nvml_rc_kind(int rc)
{
    const rc_row_t *r = row(rc);
    return r != NULL ? r->kind : MS_NVML_K_DRIVER;
}

const char *ms_nvml_kind_name(ms_nvml_kind_t k)
{
    switch (k) {
    case MS_NVML_K_NONE: return "none";
    case MS_NVML_K_REFUSED: return "refused";
    case MS_NVML_K_INVALID: return "invalid";
    case MS_NVML_K_UNSUPPORTED: return "unsupported";
    case MS_NVML_K_PERMISSION: return "permission";
    case MS_NVML_K_BUSY: return "busy";
    case MS_NVML_K_GPU_LOST: return "gpu-lost";
    case MS_NVML_K_NOT_FOUND: return "not-found";
    case MS_NVML_K_DRIVER: return "driver";
    case MS_NVML_K_LIBRARY: return "library";
    }
    return "unknown";
}
