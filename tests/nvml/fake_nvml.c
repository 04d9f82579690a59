/* fake_nvml.c - a small fake libnvidia-ml.so.1 for the NVML executor's tests.
 *
 * Built as a shared object named libnvidia-ml.so.1 and loaded through the
 * same dlopen path as the real driver. It simulates N GPUs of a few models
 * with MIG placements from its own table below (written from
 * shared/reference/mig-hardware.md §1.2 and §1.4, independently of
 * src/core/models.c, so that the probe compares two sources).
 *
 * State lives in a text file named by MS_FAKE_NVML_STATE, read at
 * nvmlInit_v2 and rewritten after every change, so it outlives the process:
 *
 *   # comment
 *   gpu KEY [mig=0|1] [pending=0|1] [lost=0|1] [placements=ID:HEXMASK]
 *   gi ID PROFILE_ID START           (a GI on the last gpu)
 *   ci ID CI_PROFILE_ID START UUID   (a CI in the last gi)
 *   serial N                         (next MIG UUID number)
 *
 * KEY is a100-40, h100-80, h200 or a30. placements= overrides the legal
 * starts of one profile ID (to make the probe find a difference). A missing
 * file is "driver not loaded".
 *
 * Faults, MS_FAKE_NVML_FAULTS, comma-separated, read at nvmlInit_v2:
 *   FUNC:N:RC   the N-th call of FUNC (counted from init) returns RC;
 *               FUNC '*' counts every call
 *   lose:G:N    GPU G falls off the bus at the N-th call: from then on every
 *               call on it answers GPU_IS_LOST, and the state file says lost=1
 *
 * Divergences from real NVML, on purpose: GI ids are the smallest free id
 * from 1 (real ids depend on the placement); profile info is refused while
 * MIG is disabled (real drivers may answer it); one GI per slot array of 8.
 *
 * A test fixture, not library code: it keeps its simulated driver in
 * static storage, as a driver would, and prints parse errors to stderr.
 */
#include "nvml/nvml_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 16
#define MAX_GIS 8
#define MAX_CIS 8
#define MAX_FAULTS 16
#define MAX_COUNTERS 48

typedef struct fprof {
    unsigned index, id, slices, msize, starts, max;
    unsigned long long mem_mb;
    const char *name;
} fprof_t;

typedef struct fmodel {
    const char *key, *nvml_name;
    unsigned width, compute;
    int nprof;
    fprof_t prof[8];
} fmodel_t;

/* The 8-slice family: index, ID, compute slices, memory slices, starts, max. */
#define FAKE8(n1, nme, n1d, n2, n3, n4, n7, mem)                        \
    8, 7, 7, {                                                          \
        { 0x0, 19, 1, 1, 0x7F, 7, (mem) / 8, n1 },                      \
        { 0x7, 20, 1, 1, 0x7F, 1, (mem) / 8, nme },                     \
        { 0x9, 15, 1, 2, 0x55, 4, (mem) / 4, n1d },                     \
        { 0x1, 14, 2, 2, 0x15, 3, (mem) / 4, n2 },                      \
        { 0x2, 9, 3, 4, 0x11, 2, (mem) / 2, n3 },                       \
        { 0x3, 5, 4, 4, 0x01, 1, (mem) / 2, n4 },                       \
        { 0x4, 0, 7, 8, 0x01, 1, (mem), n7 } }

static const fmodel_t MODELS[] = {
    { "a100-40", "NVIDIA A100-SXM4-40GB",
      FAKE8("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", 40320) },
    { "h100-80", "NVIDIA H100 80GB HBM3",
      FAKE8("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", 80896) },
    { "h200", "NVIDIA H200",
      FAKE8("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb", 143360) },
    { "a30", "NVIDIA A30", 4, 4, 5, {
        { 0x0, 14, 1, 1, 0x0F, 4, 5836, "1g.6gb" },
        { 0x7, 21, 1, 1, 0x0F, 1, 5836, "1g.6gb+me" },
        { 0x1, 5, 2, 2, 0x05, 2, 11672, "2g.12gb" },
        { 0x8, 6, 2, 2, 0x05, 1, 11672, "2g.12gb+me" },
        { 0x3, 0, 4, 4, 0x01, 1, 23344, "4g.24gb" } } },
};

enum { TAG_GPU = 0x47505521, TAG_MIG = 0x4D494721 };

struct nvmlDevice_st { unsigned tag; };
struct nvmlGpuInstance_st { int unused; };
struct nvmlComputeInstance_st { int unused; };

typedef struct fci {
    int used;
    unsigned id, prof, start, size;   /* prof: CI profile ID (= enum index) */
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    struct nvmlComputeInstance_st h;
    struct nvmlDevice_st mig;
} fci_t;

typedef struct fgi {
    int used;
    unsigned id;
    int prof;                         /* index into the model's prof[] */
    unsigned start;
    fci_t ci[MAX_CIS];
    struct nvmlGpuInstance_st h;
} fgi_t;

typedef struct fgpu {
    const fmodel_t *m;
    int mig, pending, lost;
    int has_override;
    unsigned ovr_id, ovr_starts;
    fgi_t gi[MAX_GIS];
    struct nvmlDevice_st h;
} fgpu_t;

typedef struct fault { char fn[64]; long n; int rc; int lose_gpu; } fault_t;
typedef struct counter { const char *fn; long n; } counter_t;

static struct {
    int refs;
    int ngpu;
    fgpu_t gpu[MAX_GPUS];
    unsigned serial;
    char path[1024];
    long calls;
    int nfault;
    fault_t fault[MAX_FAULTS];
    int ncounter;
    counter_t counter[MAX_COUNTERS];
} S;

/* --- state file ---------------------------------------------------------- */

static const fprof_t *prof_by_id(const fgpu_t *g, unsigned id, int *k)
{
    int i;

    for (i = 0; i < g->m->nprof; i++)
        if (g->m->prof[i].id == id) {
            if (k != NULL)
                *k = i;
            return &g->m->prof[i];
        }
    return NULL;
}

static unsigned starts_of(const fgpu_t *g, const fprof_t *p)
{
    return g->has_override && g->ovr_id == p->id ? g->ovr_starts : p->starts;
}

static int parse_uint(const char *s, unsigned *out, int base)
{
    char *end;
    unsigned long v;

    if (s == NULL || *s == '\0')
        return 0;
    v = strtoul(s, &end, base);
    if (*end != '\0' || v > 0xFFFFFFFFul)
        return 0;
    *out = (unsigned)v;
    return 1;
}

static int bad(long line, const char *what)
{
    fprintf(stderr, "fake_nvml: %s:%ld: %s\n", S.path, line, what);
    return 0;
}

static int load_state(void)
{
    FILE *f = fopen(S.path, "r");
    char buf[512];
    long line = 0;
    fgpu_t *g = NULL;
    fgi_t *gi = NULL;

    if (f == NULL)
        return -1;
    while (fgets(buf, sizeof(buf), f) != NULL) {
        char *save = NULL, *tok;

        line++;
        if (strchr(buf, '\n') == NULL && !feof(f)) {
            fclose(f);
            return bad(line, "line too long");
        }
        buf[strcspn(buf, "\r\n")] = '\0';
        tok = strtok_r(buf, " \t", &save);
        if (tok == NULL || tok[0] == '#')
            continue;
        if (strcmp(tok, "gpu") == 0) {
            const char *key = strtok_r(NULL, " \t", &save);
            size_t i;

            if (S.ngpu >= MAX_GPUS) {
                fclose(f);
                return bad(line, "too many GPUs");
            }
            g = &S.gpu[S.ngpu];
            memset(g, 0, sizeof(*g));
            for (i = 0; key != NULL && i < sizeof(MODELS) / sizeof(MODELS[0]); i++)
                if (strcmp(MODELS[i].key, key) == 0)
                    g->m = &MODELS[i];
            if (g->m == NULL) {
                fclose(f);
                return bad(line, "unknown model key");
            }
            g->mig = g->pending = 1;
            g->h.tag = TAG_GPU;
            gi = NULL;
            S.ngpu++;
            while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
                unsigned v;
                char *colon;
                if (strncmp(tok, "mig=", 4) == 0 && parse_uint(tok + 4, &v, 10)) {
                    g->mig = g->pending = v != 0;
                } else if (strncmp(tok, "pending=", 8) == 0 && parse_uint(tok + 8, &v, 10)) {
                    g->pending = v != 0;
                } else if (strncmp(tok, "lost=", 5) == 0 && parse_uint(tok + 5, &v, 10)) {
                    g->lost = v != 0;
                } else if (strncmp(tok, "placements=", 11) == 0 &&
                           (colon = strchr(tok + 11, ':')) != NULL) {
                    *colon = '\0';
                    if (!parse_uint(tok + 11, &g->ovr_id, 10) ||
                        !parse_uint(colon + 1, &g->ovr_starts, 16)) {
                        fclose(f);
                        return bad(line, "placements=ID:HEXMASK expected");
                    }
                    g->has_override = 1;
                } else {
                    fclose(f);
                    return bad(line, "unknown gpu attribute");
                }
            }
        } else if (strcmp(tok, "gi") == 0) {
            unsigned id, pid, start;
            const fprof_t *p;
            int k, slot;

            if (g == NULL || !parse_uint(strtok_r(NULL, " \t", &save), &id, 10) ||
                !parse_uint(strtok_r(NULL, " \t", &save), &pid, 10) ||
                !parse_uint(strtok_r(NULL, " \t", &save), &start, 10) ||
                (p = prof_by_id(g, pid, &k)) == NULL || start >= 16 ||
                !((starts_of(g, p) >> start) & 1u)) {
                fclose(f);
                return bad(line, "gi ID PROFILE_ID START with a legal start expected after a gpu line");
            }
            for (slot = 0; slot < MAX_GIS && g->gi[slot].used; slot++)
                ;
            if (slot == MAX_GIS) {
                fclose(f);
                return bad(line, "too many GIs");
            }
            gi = &g->gi[slot];
            memset(gi, 0, sizeof(*gi));
            gi->used = 1;
            gi->id = id;
            gi->prof = k;
            gi->start = start;
        } else if (strcmp(tok, "ci") == 0) {
            unsigned id, cp, start;
            const char *uuid;
            int slot;

            if (gi == NULL || !parse_uint(strtok_r(NULL, " \t", &save), &id, 10) ||
                !parse_uint(strtok_r(NULL, " \t", &save), &cp, 10) ||
                !parse_uint(strtok_r(NULL, " \t", &save), &start, 10) ||
                (uuid = strtok_r(NULL, " \t", &save)) == NULL ||
                strlen(uuid) >= NVML_DEVICE_UUID_V2_BUFFER_SIZE || cp > 6) {
                fclose(f);
                return bad(line, "ci ID CI_PROFILE_ID START UUID expected after a gi line");
            }
            for (slot = 0; slot < MAX_CIS && gi->ci[slot].used; slot++)
                ;
            if (slot == MAX_CIS) {
                fclose(f);
                return bad(line, "too many CIs");
            }
            {
                static const unsigned SL[] = { 1, 2, 3, 4, 7, 8, 6 };
                fci_t *c = &gi->ci[slot];
                memset(c, 0, sizeof(*c));
                c->used = 1;
                c->id = id;
                c->prof = cp;
                c->start = start;
                c->size = SL[cp];
                memcpy(c->uuid, uuid, strlen(uuid) + 1);
                c->mig.tag = TAG_MIG;
            }
        } else if (strcmp(tok, "serial") == 0) {
            if (!parse_uint(strtok_r(NULL, " \t", &save), &S.serial, 10)) {
                fclose(f);
                return bad(line, "serial N expected");
            }
        } else {
            fclose(f);
            return bad(line, "unknown line");
        }
    }
    fclose(f);
    return 1;
}

static int save_state(void)
{
    char tmp[1100];
    FILE *f;
    int i, j, k;

    snprintf(tmp, sizeof(tmp), "%s.tmp", S.path);
    if ((f = fopen(tmp, "w")) == NULL)
        return 0;
    fprintf(f, "# fake NVML state (tests/nvml/fake_nvml.c)\n");
    for (i = 0; i < S.ngpu; i++) {
        const fgpu_t *g = &S.gpu[i];
        fprintf(f, "gpu %s mig=%d pending=%d lost=%d", g->m->key, g->mig, g->pending, g->lost);
        if (g->has_override)
            fprintf(f, " placements=%u:%x", g->ovr_id, g->ovr_starts);
        fprintf(f, "\n");
        for (j = 0; j < MAX_GIS; j++) {
            const fgi_t *gi = &g->gi[j];
            if (!gi->used)
                continue;
            fprintf(f, "gi %u %u %u\n", gi->id, g->m->prof[gi->prof].id, gi->start);
            for (k = 0; k < MAX_CIS; k++)
                if (gi->ci[k].used)
                    fprintf(f, "ci %u %u %u %s\n", gi->ci[k].id, gi->ci[k].prof,
                            gi->ci[k].start, gi->ci[k].uuid);
        }
    }
    fprintf(f, "serial %u\n", S.serial);
    if (fclose(f) != 0)
        return 0;
    return rename(tmp, S.path) == 0;
}

/* --- faults and call counting -------------------------------------------- */

static void load_faults(void)
{
    const char *env = getenv("MS_FAKE_NVML_FAULTS");
    char buf[1024], *save = NULL, *item;

    S.nfault = 0;
    if (env == NULL || strlen(env) >= sizeof(buf))
        return;
    memcpy(buf, env, strlen(env) + 1);
    for (item = strtok_r(buf, ",", &save); item != NULL && S.nfault < MAX_FAULTS;
         item = strtok_r(NULL, ",", &save)) {
        char *a = strchr(item, ':'), *b = a != NULL ? strchr(a + 1, ':') : NULL;
        fault_t *ft = &S.fault[S.nfault];
        unsigned n, v;

        if (a == NULL || b == NULL || (size_t)(a - item) >= sizeof(ft->fn)) {
            fprintf(stderr, "fake_nvml: bad fault '%s'\n", item);
            continue;
        }
        *a = *b = '\0';
        memset(ft, 0, sizeof(*ft));
        memcpy(ft->fn, item, strlen(item) + 1);
        if (strcmp(item, "lose") == 0) {
            if (!parse_uint(a + 1, &v, 10) || !parse_uint(b + 1, &n, 10))
                continue;
            ft->lose_gpu = (int)v;
            ft->n = n;
            ft->rc = -1;
        } else {
            if (!parse_uint(a + 1, &n, 10) || !parse_uint(b + 1, &v, 10))
                continue;
            ft->n = n;
            ft->rc = (int)v;
            ft->lose_gpu = -1;
        }
        S.nfault++;
    }
}

static long count_call(const char *fn)
{
    int i;

    for (i = 0; i < S.ncounter; i++)
        if (strcmp(S.counter[i].fn, fn) == 0)
            return ++S.counter[i].n;
    if (S.ncounter < MAX_COUNTERS) {
        S.counter[S.ncounter].fn = fn;
        S.counter[S.ncounter].n = 1;
        S.ncounter++;
    }
    return 1;
}

/* Every entry point starts here: initialised? a fault due? a GPU to lose? */
static nvmlReturn_t enter(const char *fn)
{
    long mine;
    int i;

    if (S.refs == 0)
        return NVML_ERROR_UNINITIALIZED;
    S.calls++;
    mine = count_call(fn);
    for (i = 0; i < S.nfault; i++) {
        fault_t *ft = &S.fault[i];
        if (ft->rc < 0) {
            if (S.calls == ft->n && ft->lose_gpu >= 0 && ft->lose_gpu < S.ngpu) {
                S.gpu[ft->lose_gpu].lost = 1;
                save_state();
            }
        } else if ((strcmp(ft->fn, "*") == 0 && S.calls == ft->n) ||
                   (strcmp(ft->fn, fn) == 0 && mine == ft->n)) {
            return (nvmlReturn_t)ft->rc;
        }
    }
    return NVML_SUCCESS;
}

#define ENTER()                                 \
    do {                                        \
        nvmlReturn_t enter_rc_ = enter(__func__); \
        if (enter_rc_ != NVML_SUCCESS)          \
            return enter_rc_;                   \
    } while (0)

/* --- handles ------------------------------------------------------------- */

static nvmlReturn_t gpu_of(nvmlDevice_t d, fgpu_t **g)
{
    int i;

    for (i = 0; i < S.ngpu; i++)
        if (d == &S.gpu[i].h) {
            *g = &S.gpu[i];
            return S.gpu[i].lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
        }
    return NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t gi_of(nvmlGpuInstance_t h, fgpu_t **g, fgi_t **gi)
{
    int i, j;

    for (i = 0; i < S.ngpu; i++)
        for (j = 0; j < MAX_GIS; j++)
            if (h == &S.gpu[i].gi[j].h && S.gpu[i].gi[j].used) {
                *g = &S.gpu[i];
                *gi = &S.gpu[i].gi[j];
                return S.gpu[i].lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
            }
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* A CI by its handle (mig == 0) or by its MIG device handle (mig == 1). */
static nvmlReturn_t ci_of(const void *h, int mig, fgpu_t **g, fgi_t **gi, fci_t **ci)
{
    int i, j, k;

    for (i = 0; i < S.ngpu; i++)
        for (j = 0; j < MAX_GIS; j++)
            for (k = 0; k < MAX_CIS; k++) {
                fci_t *c = &S.gpu[i].gi[j].ci[k];
                if (S.gpu[i].gi[j].used && c->used &&
                    (mig ? h == (const void *)&c->mig : h == (const void *)&c->h)) {
                    *g = &S.gpu[i];
                    *gi = &S.gpu[i].gi[j];
                    *ci = c;
                    return S.gpu[i].lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
                }
            }
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* CI profile enum index -> compute slices (index = profile ID here). */
static unsigned ci_slices(unsigned idx)
{
    static const unsigned SL[] = { 1, 2, 3, 4, 7, 8, 6 };
    return idx < sizeof(SL) / sizeof(SL[0]) ? SL[idx] : 0;
}

static int ci_supported(unsigned gi_slices, unsigned cs)
{
    if (cs == 0 || cs > gi_slices)
        return 0;
    return cs == gi_slices || cs <= 2 || gi_slices == 7;
}

/* --- the API ------------------------------------------------------------- */

nvmlReturn_t nvmlInit_v2(void)
{
    const char *path = getenv("MS_FAKE_NVML_STATE");
    int r;

    if (S.refs > 0) {
        S.refs++;
        return NVML_SUCCESS;
    }
    memset(&S, 0, sizeof(S));
    if (path == NULL || strlen(path) >= sizeof(S.path))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    memcpy(S.path, path, strlen(path) + 1);
    r = load_state();
    if (r < 0)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    if (r == 0) {
        S.ngpu = 0;
        return NVML_ERROR_UNKNOWN;
    }
    load_faults();
    S.refs = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    if (S.refs == 0)
        return NVML_ERROR_UNINITIALIZED;
    if (--S.refs == 0)
        S.ngpu = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient Resources";
    default: return "fake error";
    }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    ENTER();
    if (deviceCount == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = (unsigned)S.ngpu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    ENTER();
    if (device == NULL || index >= (unsigned)S.ngpu)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (S.gpu[index].lost)
        return NVML_ERROR_GPU_IS_LOST;
    *device = &S.gpu[index].h;
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(char *dst, unsigned len, const char *src)
{
    if (dst == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    fgpu_t *g;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    return copy_str(name, length, g->m->nvml_name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    fgpu_t *g;
    fgi_t *gi;
    fci_t *ci;
    char buf[64];

    nvmlReturn_t rc;

    ENTER();
    rc = gpu_of(device, &g);
    if (rc == NVML_SUCCESS) {
        snprintf(buf, sizeof(buf), "GPU-fa4e0000-0000-4000-8000-%012d", (int)(g - S.gpu));
        return copy_str(uuid, length, buf);
    }
    if (rc != NVML_ERROR_INVALID_ARGUMENT)
        return rc;
    if ((rc = ci_of(device, 1, &g, &gi, &ci)) != NVML_SUCCESS)   /* a MIG device? */
        return rc;
    return copy_str(uuid, length, ci->uuid);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode)
{
    fgpu_t *g;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (currentMode == NULL || pendingMode == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *currentMode = g->mig ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    *pendingMode = g->pending ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode,
                                  nvmlReturn_t *activationStatus)
{
    fgpu_t *g;
    nvmlReturn_t rc;
    int j;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (activationStatus == NULL || mode > NVML_DEVICE_MIG_ENABLE)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (j = 0; j < MAX_GIS; j++)
        if (g->gi[j].used)
            return NVML_ERROR_IN_USE;
    g->mig = g->pending = mode == NVML_DEVICE_MIG_ENABLE;
    *activationStatus = NVML_SUCCESS;
    return save_state() ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

/* GI profile info by enum index into a v2 struct (both calls share it). */
static nvmlReturn_t fill_profile(nvmlDevice_t device, unsigned int profile,
                                 nvmlGpuInstanceProfileInfo_v2_t *info)
{
    fgpu_t *g;
    nvmlReturn_t rc;
    int i;

    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!g->mig)
        return NVML_ERROR_NOT_SUPPORTED;
    for (i = 0; i < g->m->nprof; i++) {
        const fprof_t *p = &g->m->prof[i];
        if (p->index != profile)
            continue;
        memset(info, 0, sizeof(*info));
        info->version = nvmlGpuInstanceProfileInfo_v2;
        info->id = p->id;
        info->sliceCount = p->slices;
        info->instanceCount = p->max;
        info->multiprocessorCount = 14 * p->slices;
        info->copyEngineCount = p->slices;
        info->memorySizeMB = p->mem_mb;
        snprintf(info->name, sizeof(info->name), "%s", p->name);
        return NVML_SUCCESS;
    }
    return NVML_ERROR_NOT_SUPPORTED;
}

/* Built with -DFAKE_R470 (mk/nvml.mk: fake-nvml-r470/) the fake lacks the
 * versioned profile call, as the R470 reference does: the executor must
 * fall back to the v1 call. */
#ifndef FAKE_R470
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t *info)
{
    nvmlGpuInstanceProfileInfo_v2_t tmp;
    nvmlReturn_t rc;

    ENTER();
    if (info == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (info->version != nvmlGpuInstanceProfileInfo_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if ((rc = fill_profile(device, profile, &tmp)) == NVML_SUCCESS)
        *info = tmp;
    return rc;
}
#endif

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t *info)
{
    nvmlGpuInstanceProfileInfo_v2_t tmp;
    nvmlReturn_t rc;

    ENTER();
    if (info == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if ((rc = fill_profile(device, profile, &tmp)) != NVML_SUCCESS)
        return rc;
    memset(info, 0, sizeof(*info));
    info->id = tmp.id;
    info->sliceCount = tmp.sliceCount;
    info->instanceCount = tmp.instanceCount;
    info->multiprocessorCount = tmp.multiprocessorCount;
    info->copyEngineCount = tmp.copyEngineCount;
    info->memorySizeMB = tmp.memorySizeMB;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device,
                                                           unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t *placements,
                                                           unsigned int *count)
{
    fgpu_t *g;
    const fprof_t *p;
    nvmlReturn_t rc;
    unsigned s, n = 0, mask;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (count == NULL || (p = prof_by_id(g, profileId, NULL)) == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    mask = starts_of(g, p);
    for (s = 0; s < 16; s++)
        n += (mask >> s) & 1u;
    if (placements == NULL) {
        *count = n;
        return NVML_SUCCESS;
    }
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    n = 0;
    for (s = 0; s < 16; s++)
        if ((mask >> s) & 1u) {
            placements[n].start = s;
            placements[n].size = p->msize;
            n++;
        }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
                                       nvmlGpuInstance_t *gpuInstances, unsigned int *count)
{
    fgpu_t *g;
    const fprof_t *p;
    nvmlReturn_t rc;
    unsigned n = 0;
    int j, k;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (gpuInstances == NULL || count == NULL || (p = prof_by_id(g, profileId, &k)) == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!g->mig)
        return NVML_ERROR_NOT_SUPPORTED;
    /* Real NVML writes up to instanceCount entries whatever *count says; the
     * fake is stricter and checks the caller's buffer size. */
    for (j = 0; j < MAX_GIS; j++)
        if (g->gi[j].used && g->gi[j].prof == k) {
            if (n >= *count)
                return NVML_ERROR_INSUFFICIENT_SIZE;
            gpuInstances[n++] = &g->gi[j].h;
        }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info)
{
    fgpu_t *g;
    fgi_t *gi;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = gi_of(gpuInstance, &g, &gi)) != NVML_SUCCESS)
        return rc;
    if (info == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    info->device = &g->h;
    info->id = gi->id;
    info->profileId = g->m->prof[gi->prof].id;
    info->placement.start = gi->start;
    info->placement.size = g->m->prof[gi->prof].msize;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t *placement,
                                                      nvmlGpuInstance_t *gpuInstance)
{
    fgpu_t *g;
    const fprof_t *p;
    nvmlReturn_t rc;
    unsigned used = 0, compute = 0, mask, id;
    int j, k, same = 0, slot = -1;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (!g->mig)
        return NVML_ERROR_NOT_SUPPORTED;
    if (placement == NULL || gpuInstance == NULL || (p = prof_by_id(g, profileId, &k)) == NULL ||
        placement->start >= 16 || placement->size != p->msize ||
        !((starts_of(g, p) >> placement->start) & 1u))
        return NVML_ERROR_INVALID_ARGUMENT;
    for (j = 0; j < MAX_GIS; j++) {
        const fgi_t *gi = &g->gi[j];
        if (!gi->used) {
            if (slot < 0)
                slot = j;
            continue;
        }
        used |= ((1u << g->m->prof[gi->prof].msize) - 1u) << gi->start;
        compute += g->m->prof[gi->prof].slices;
        same += gi->prof == k;
    }
    mask = ((1u << p->msize) - 1u) << placement->start;
    if ((used & mask) != 0 || compute + p->slices > g->m->compute || same >= (int)p->max ||
        slot < 0)
        return NVML_ERROR_INSUFFICIENT_RESOURCES;
    for (id = 1;; id++) {
        int taken = 0;
        for (j = 0; j < MAX_GIS; j++)
            taken |= g->gi[j].used && g->gi[j].id == id;
        if (!taken)
            break;
    }
    memset(&g->gi[slot], 0, sizeof(g->gi[slot]));
    g->gi[slot].used = 1;
    g->gi[slot].id = id;
    g->gi[slot].prof = k;
    g->gi[slot].start = placement->start;
    *gpuInstance = &g->gi[slot].h;
    return save_state() ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance,
                                                          unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t *info)
{
    fgpu_t *g;
    fgi_t *gi;
    nvmlReturn_t rc;
    unsigned gs, cs;

    ENTER();
    if ((rc = gi_of(gpuInstance, &g, &gi)) != NVML_SUCCESS)
        return rc;
    if (info == NULL || profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
        engProfile >= NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT)
        return NVML_ERROR_INVALID_ARGUMENT;
    gs = g->m->prof[gi->prof].slices;
    cs = ci_slices(profile);
    if (!ci_supported(gs, cs))
        return NVML_ERROR_NOT_SUPPORTED;
    memset(info, 0, sizeof(*info));
    info->id = profile;
    info->sliceCount = cs;
    info->instanceCount = gs / cs;
    info->multiprocessorCount = 14 * cs;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
                                                  unsigned int profileId,
                                                  nvmlComputeInstance_t *computeInstance)
{
    fgpu_t *g;
    fgi_t *gi;
    nvmlReturn_t rc;
    unsigned gs, cs, start, busy = 0, id;
    int k, slot = -1;

    ENTER();
    if ((rc = gi_of(gpuInstance, &g, &gi)) != NVML_SUCCESS)
        return rc;
    gs = g->m->prof[gi->prof].slices;
    cs = ci_slices(profileId);
    if (computeInstance == NULL || !ci_supported(gs, cs))
        return NVML_ERROR_INVALID_ARGUMENT;
    for (k = 0; k < MAX_CIS; k++) {
        if (gi->ci[k].used)
            busy |= ((1u << gi->ci[k].size) - 1u) << gi->ci[k].start;
        else if (slot < 0)
            slot = k;
    }
    for (start = 0; start + cs <= gs; start += cs)
        if ((busy & (((1u << cs) - 1u) << start)) == 0)
            break;
    if (start + cs > gs || slot < 0)
        return NVML_ERROR_INSUFFICIENT_RESOURCES;
    for (id = 0;; id++) {
        int taken = 0;
        for (k = 0; k < MAX_CIS; k++)
            taken |= gi->ci[k].used && gi->ci[k].id == id;
        if (!taken)
            break;
    }
    {
        fci_t *c = &gi->ci[slot];
        memset(c, 0, sizeof(*c));
        c->used = 1;
        c->id = id;
        c->prof = profileId;
        c->start = start;
        c->size = cs;
        c->mig.tag = TAG_MIG;
        snprintf(c->uuid, sizeof(c->uuid), "MIG-fa4e%04d-0000-4000-8000-%012u",
                 (int)(g - S.gpu), S.serial++);
        *computeInstance = &c->h;
    }
    return save_state() ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance,
                                                unsigned int profileId,
                                                nvmlComputeInstance_t *computeInstances,
                                                unsigned int *count)
{
    fgpu_t *g;
    fgi_t *gi;
    nvmlReturn_t rc;
    unsigned n = 0;
    int k;

    ENTER();
    if ((rc = gi_of(gpuInstance, &g, &gi)) != NVML_SUCCESS)
        return rc;
    if (computeInstances == NULL || count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (k = 0; k < MAX_CIS; k++)
        if (gi->ci[k].used && gi->ci[k].prof == profileId) {
            if (n >= *count)
                return NVML_ERROR_INSUFFICIENT_SIZE;
            computeInstances[n++] = &gi->ci[k].h;
        }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance,
                                           nvmlComputeInstanceInfo_t *info)
{
    fgpu_t *g;
    fgi_t *gi;
    fci_t *ci;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = ci_of(computeInstance, 0, &g, &gi, &ci)) != NVML_SUCCESS)
        return rc;
    if (info == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    info->device = &g->h;
    info->gpuInstance = &gi->h;
    info->id = ci->id;
    info->profileId = ci->prof;
    info->placement.start = ci->start;
    info->placement.size = ci->size;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance)
{
    fgpu_t *g;
    fgi_t *gi;
    fci_t *ci;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = ci_of(computeInstance, 0, &g, &gi, &ci)) != NVML_SUCCESS)
        return rc;
    ci->used = 0;
    return save_state() ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance)
{
    fgpu_t *g;
    fgi_t *gi;
    nvmlReturn_t rc;
    int k;

    ENTER();
    if ((rc = gi_of(gpuInstance, &g, &gi)) != NVML_SUCCESS)
        return rc;
    for (k = 0; k < MAX_CIS; k++)
        if (gi->ci[k].used)
            return NVML_ERROR_IN_USE;
    gi->used = 0;
    return save_state() ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    fgpu_t *g;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (count == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = g->mig ? g->m->compute : 0;
    return NVML_SUCCESS;
}

/* Built with -DFAKE_BROKEN (fake-nvml-broken/) one required symbol is
 * missing: the executor must refuse to open, naming it. */
#ifndef FAKE_BROKEN
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice)
{
    fgpu_t *g;
    nvmlReturn_t rc;
    unsigned n = 0;
    int j, k;

    ENTER();
    if ((rc = gpu_of(device, &g)) != NVML_SUCCESS)
        return rc;
    if (migDevice == NULL || !g->mig || index >= g->m->compute)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (j = 0; j < MAX_GIS; j++)
        for (k = 0; g->gi[j].used && k < MAX_CIS; k++)
            if (g->gi[j].ci[k].used && n++ == index) {
                *migDevice = &g->gi[j].ci[k].mig;
                return NVML_SUCCESS;
            }
    return NVML_ERROR_NOT_FOUND;
}
#endif

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
    fgpu_t *g;
    fgi_t *gi;
    fci_t *ci;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = ci_of(device, 1, &g, &gi, &ci)) != NVML_SUCCESS)
        return rc;
    if (id == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *id = gi->id;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
    fgpu_t *g;
    fgi_t *gi;
    fci_t *ci;
    nvmlReturn_t rc;

    ENTER();
    if ((rc = ci_of(device, 1, &g, &gi, &ci)) != NVML_SUCCESS)
        return rc;
    if (id == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *id = ci->id;
    return NVML_SUCCESS;
}
