/* sim.c - the sim backend (backend.h): simulated GPUs whose inventory
 * outlives the daemon (STATE_DIR/sim-inventory.json and .journal,
 * inv_file.c). Each op takes --op-delay seconds (slept without a lock, so
 * ops of different nodes overlap) and a fail spec "KIND:N" makes every Nth
 * op of KIND fail, for tests; STATE_DIR/sim-faults makes GPUs fail while it
 * says so (sim_fault.c). A CREATE whose slices are taken is refused
 * (MS_ENOFIT, "refused") as the hardware and the agent refuse it. The
 * dry-run backend (dryrun.c) is this model with no delay and no failures,
 * logging every op instead.
 *
 * Any thread (backend.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/sim_int.h"

static int parse_fail(ms__sim_t *s, const char *spec)
{
    const char *colon;
    char *end;
    int k;

    if (spec == NULL || *spec == '\0')
        return 0;
    if ((colon = strchr(spec, ':')) == NULL)
        return -1;
    s->fail_kind = 0;
    if ((size_t)(colon - spec) == 3 && strncmp(spec, "any", 3) == 0)
        s->fail_kind = -1;
    for (k = MS_OP_CREATE; k <= MS_OP_STOP; k++) {
        const char *name = ms_backend_op_name(k);

        if (strlen(name) == (size_t)(colon - spec) && strncmp(spec, name, strlen(name)) == 0)
            s->fail_kind = k;
    }
    errno = 0;
    s->fail_every = strtol(colon + 1, &end, 10);
    if (s->fail_kind == 0 || errno != 0 || *end != '\0' || s->fail_every < 1)
        return -1;
    return 0;
}

ms_status_t ms__sim_open(const ms_backend_cfg_t *cfg, bool dry, ms__sim_t **out, ms_diag_t *why)
{
    ms__sim_t *s = calloc(1, sizeof(*s));
    ms_status_t st;
    int g;

    *out = NULL;
    if (s == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    s->dry = dry;
    s->delay = dry ? 0.0 : cfg->op_delay_s;
    if ((st = ms__inv_init(&s->inv, cfg->ngpus, cfg->state_dir, dry ? "dry-run-inventory" : "sim-inventory",
                           why)) != MS_OK) {
        ms__sim_close(s);
        return st;
    }
    s->inv.salt = cfg->uuid_salt;
    if (cfg->gpu_geom != NULL && cfg->ngpus > 0) {
        if ((s->geom = calloc((size_t)cfg->ngpus, sizeof(*s->geom))) == NULL) {
            ms_diag_set(why, NULL, 0, "", "out of memory");
            ms__sim_close(s);
            return MS_ENOMEM;
        }
        memcpy(s->geom, cfg->gpu_geom, (size_t)cfg->ngpus * sizeof(*s->geom));
    }
    if (!dry && ms__sim_fault_init(s, cfg->state_dir) != 0) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        ms__sim_close(s);
        return MS_ENOMEM;
    }
    for (g = 0; g < cfg->ngpus; g++)
        snprintf(s->inv.gpu_uuid[g], sizeof(s->inv.gpu_uuid[g]), "GPU-%08x-0000-4000-8000-%012x",
                 0x5157u ^ s->inv.salt, (unsigned)g);
    if (!dry && parse_fail(s, cfg->fail) != 0) {
        ms_diag_set(why, NULL, 0, "fail",
                    "bad sim fail spec: KIND:N with KIND create, destroy, start, move, stop or any, N >= 1");
        ms__sim_close(s);
        return MS_EINVAL;
    }
    if ((st = ms__inv_load(&s->inv, why)) != MS_OK) {
        ms__sim_close(s);
        return st;
    }
    if (ms__inv_compact(&s->inv) != 0) {
        ms_diag_set(why, s->inv.path, 0, "", "cannot write the backend's inventory file");
        ms__sim_close(s);
        return MS_EIO;
    }
    *out = s;
    return MS_OK;
}

void ms__sim_close(ms__sim_t *s)
{
    if (s == NULL)
        return;
    ms__inv_fini(&s->inv);
    ms__sim_fault_fini(s);
    free(s->geom);
    free(s);
}

static void sleep_s(double secs)
{
    struct timespec ts;

    if (secs <= 0.0)
        return;
    ts.tv_sec = (time_t)secs;
    ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* (inv.mu held) Does the GPU's layout have room for the CREATE? Without
 * geometries (a caller that gave none) the exact start alone is checked. */
static bool room_for(const ms__sim_t *s, const ms_op_t *op)
{
    const ms_geom_t *g = s->geom != NULL ? s->geom[op->gpu] : NULL;
    ms_state_t st = ms_geom_empty_state();
    int i;

    if (g == NULL || op->prof < 0 || op->prof >= ms_geom_nprofiles(g))
        return true;
    for (i = 0; i < s->inv.n; i++) {
        const ms_binst_t *in = &s->inv.v[i];

        if (in->gpu == op->gpu && in->start >= 0 && (st = ms_state_place(g, st, in->prof, in->start)) == MS_STATE_NONE)
            return true;   /* not a layout of this geometry: the model's own checks decide */
    }
    return ms_state_place(g, st, op->prof, op->start) != MS_STATE_NONE;
}

/* (inv.mu held) An injected failure of op (not a forced one), or MS_OK. */
static ms_status_t injected(ms__sim_t *s, const ms_backend_op_t *op, ms_diag_t *why)
{
    int kind = op->op.kind;
    uint8_t f = ms__sim_fault(s, op->op.gpu) | (kind == MS_OP_MOVE ? ms__sim_fault(s, op->op.from_gpu) : 0);

    if (s->dry)
        f = 0;   /* dry-run: no failures, only the hardware's refusals */
    if (f & MS__SIM_LOST) {
        ms_diag_set(why, NULL, 0, MS_BACKEND_GPU_LOST, "injected: the GPU fell off the bus (sim-faults)");
        return MS_EIO;
    }
    if (f & MS__SIM_FAIL) {
        ms_diag_set(why, NULL, 0, "", "injected failure (sim-faults)");
        return MS_EIO;
    }
    if (kind >= MS_OP_CREATE && kind <= MS_OP_STOP)
        s->count[kind]++;
    if (!s->dry && s->fail_every > 0 && (s->fail_kind == -1 || s->fail_kind == kind) && s->count[kind] % s->fail_every == 0) {
        ms_diag_set(why, NULL, 0, "", "injected failure (sim fail spec)");
        return MS_EIO;
    }
    if (kind == MS_OP_CREATE && !room_for(s, &op->op)) {
        ms_diag_set(why, NULL, 0, MS_BACKEND_REFUSED,
                    "GPU %d has no room for the instance at slice %d (its slices are taken)", (int)op->op.gpu,
                    (int)op->op.start);
        return MS_ENOFIT;
    }
    return MS_OK;
}

static bool on(const ms_binst_t *b, int g1, int g2)
{
    return b->gpu == g1 || (g2 >= 0 && b->gpu == g2);
}

/* (mu held) The op on the model, kept only once its journal line is
 * written: when the file cannot be written (a full disk) the op's GPUs go
 * back to what they held and the op fails, so an op reported failed never
 * happened (the daemon rolls it back and stays in step with the model). */
static ms_status_t apply_persisted(ms__sim_t *s, const ms_backend_op_t *op, ms_diag_t *why)
{
    int g1 = op->op.gpu, g2 = op->op.kind == MS_OP_MOVE ? op->op.from_gpu : -1, i, k = 0, ns = 0;
    uint64_t seq = s->inv.uuid_seq;
    ms_binst_t *saved;
    ms_status_t st;

    for (i = 0; i < s->inv.n; i++)
        ns += on(&s->inv.v[i], g1, g2);
    if ((saved = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(*saved))) == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    for (i = 0; i < s->inv.n; i++)
        if (on(&s->inv.v[i], g1, g2))
            saved[k++] = s->inv.v[i];
    st = ms__inv_apply(&s->inv, op, why);
    if (st == MS_OK && ms__inv_persist(&s->inv, g1, g2) != 0) {
        /* the GPUs' instances as they were (the array never shrinks its room) */
        for (i = k = 0; i < s->inv.n; i++)
            if (!on(&s->inv.v[i], g1, g2))
                s->inv.v[k++] = s->inv.v[i];
        for (i = 0; i < ns; i++)   /* they were there before the op: they fit */
            s->inv.v[k++] = saved[i];
        s->inv.n = k;
        s->inv.uuid_seq = seq;
        ms_diag_set(why, NULL, 0, "", "cannot write the inventory file (the op was not done)");
        st = MS_EIO;
    }
    free(saved);
    return st;
}

ms_status_t ms__sim_op(ms__sim_t *s, const ms_backend_op_t *op, ms_diag_t *why)
{
    int kind = op->op.kind;
    ms_status_t st;

    if (op->op.gpu < 0 || op->op.gpu >= s->inv.ngpus ||
        (kind == MS_OP_MOVE && (op->op.from_gpu < 0 || op->op.from_gpu >= s->inv.ngpus))) {
        ms_diag_set(why, NULL, 0, "gpu", "no such GPU");   /* a record of it would not load */
        return MS_EINVAL;
    }
    if (!op->force)
        sleep_s(s->delay);
    pthread_mutex_lock(&s->inv.mu);
    if (!op->force && (st = injected(s, op, why)) != MS_OK) {
        pthread_mutex_unlock(&s->inv.mu);
        return st;
    }
    st = apply_persisted(s, op, why);
    pthread_mutex_unlock(&s->inv.mu);
    return st;
}

/* --- the ops table -------------------------------------------------------- */

static ms_status_t sim_open(const ms_backend_cfg_t *cfg, void **impl, ms_diag_t *why)
{
    ms__sim_t *s;
    ms_status_t st = ms__sim_open(cfg, false, &s, why);

    *impl = s;
    return st;
}

static void sim_close(void *impl) { ms__sim_close(impl); }

ms_status_t ms__sim_inventory(void *impl, ms_binst_t **out, int *n, ms_diag_t *why)
{
    return ms__inv_copy(&((ms__sim_t *)impl)->inv, out, n, why);
}

static ms_status_t sim_run(void *impl, const ms_backend_op_t *op, ms_diag_t *why)
{
    return ms__sim_op(impl, op, why);
}

ms_status_t ms__sim_adopt_uuid(void *impl, int gpu, int start, const char *uuid, ms_diag_t *why)
{
    return ms__inv_adopt_uuid(&((ms__sim_t *)impl)->inv, gpu, start, uuid, why);
}

const char *ms__sim_gpu_uuid(const void *impl, int gpu)
{
    return ms__inv_gpu_uuid(&((const ms__sim_t *)impl)->inv, gpu);
}

void ms__sim_inst_uuid(void *impl, int gpu, int start, const char *job, char *buf, size_t len)
{
    ms__inv_inst_uuid(&((ms__sim_t *)impl)->inv, gpu, start, job, buf, len);
}

ms_status_t ms__sim_probe(void *impl, int gpu, double timeout_s, ms_diag_t *why)
{
    ms__sim_t *s = impl;
    uint8_t f;

    (void)timeout_s;
    if (gpu < 0 || gpu >= s->inv.ngpus) {
        ms_diag_set(why, NULL, 0, "gpu", "no such GPU");
        return MS_EINVAL;
    }
    pthread_mutex_lock(&s->inv.mu);
    f = s->dry ? 0 : ms__sim_fault(s, gpu);
    pthread_mutex_unlock(&s->inv.mu);
    if (f & MS__SIM_LOST) {
        ms_diag_set(why, NULL, 0, MS_BACKEND_GPU_LOST, "injected: the GPU fell off the bus (sim-faults)");
        return MS_EIO;
    }
    return MS_OK;
}

const ms_backend_ops_t ms_backend_sim = {
    .name = "sim",
    .open = sim_open,
    .close = sim_close,
    .inventory = ms__sim_inventory,
    .create = sim_run,
    .destroy = sim_run,
    .start = sim_run,
    .stop = sim_run,
    .move = sim_run,
    .adopt_uuid = ms__sim_adopt_uuid,
    .gpu_uuid = ms__sim_gpu_uuid,
    .inst_uuid = ms__sim_inst_uuid,
    .probe = ms__sim_probe,
};
