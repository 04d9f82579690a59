/* registry.c - the backends by name, and the calls through a backend's ops
 * table (backend.h). Any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

static const ms_backend_ops_t *const ALL[] = {
    &ms_backend_sim, &ms_backend_dry_run, &ms_backend_nvml, &ms_backend_agent, NULL,
};

struct ms_backend {
    const ms_backend_ops_t *ops;
    void *impl;
    bool (*may_act)(void *ctx);    /* the gate (NULL: none) */
    void *gate_ctx;
    bool keep_foreign;             /* cfg.keep_foreign */
};

static bool shut(ms_backend_t *b, ms_diag_t *why)
{
    if (b->may_act == NULL || b->may_act(b->gate_ctx))
        return false;
    ms_diag_set(why, NULL, 0, MS_BACKEND_NOT_LEADER,
                "not done: this migschedd may not act on the backend (it is not the leader)");
    return true;
}

const ms_backend_ops_t *const *ms_backend_list(void)
{
    return ALL;
}

const ms_backend_ops_t *ms_backend_find(const char *name)
{
    int i;

    for (i = 0; name != NULL && ALL[i] != NULL; i++)
        if (strcmp(ALL[i]->name, name) == 0)
            return ALL[i];
    return NULL;
}

ms_status_t ms_backend_open(const ms_backend_cfg_t *cfg, ms_backend_t **out, ms_diag_t *why)
{
    const ms_backend_ops_t *ops = ms_backend_find(cfg->kind);
    ms_backend_t *b;
    ms_status_t st;

    *out = NULL;
    ms_diag_clear(why);
    if (ops == NULL) {
        ms_diag_set(why, NULL, 0, "backend", "unknown backend (sim, dry-run, nvml, agent)");
        return MS_EINVAL;
    }
    if ((b = calloc(1, sizeof(*b))) == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    b->ops = ops;
    b->keep_foreign = cfg->keep_foreign;
    if ((st = ops->open(cfg, &b->impl, why)) != MS_OK) {
        free(b);
        return st;
    }
    *out = b;
    return MS_OK;
}

void ms_backend_close(ms_backend_t *b)
{
    if (b == NULL)
        return;
    b->ops->close(b->impl);
    free(b);
}

const char *ms_backend_name(const ms_backend_t *b)
{
    return b->ops->name;
}

/* Would op stop, move or destroy an instance another owner tagged? The
 * op's job says, and a forced DESTROY (start-up's, which takes whatever
 * runs) is checked against the inventory. */
static bool foreign(ms_backend_t *b, const ms_backend_op_t *op, ms_diag_t *why)
{
    ms_binst_t *inv = NULL;
    bool theirs = false;
    int n = 0, i;

    if (!b->keep_foreign ||
        (op->op.kind != MS_OP_DESTROY && op->op.kind != MS_OP_STOP && op->op.kind != MS_OP_MOVE))
        return false;
    theirs = ms_backend_tag_foreign(op->job);
    if (!theirs && op->force && op->op.kind == MS_OP_DESTROY &&
        b->ops->inventory(b->impl, &inv, &n, why) == MS_OK) {
        for (i = 0; i < n && !theirs; i++)
            theirs = inv[i].gpu == op->op.gpu && inv[i].start == op->op.start && ms_backend_tag_foreign(inv[i].job);
    }
    free(inv);
    ms_diag_clear(why);
    if (theirs)
        ms_diag_set(why, NULL, 0, "", "not done: the instance on GPU %d at slice %d belongs to another owner "
                                      "(its tag begins with " MS_BACKEND_FOREIGN_PREFIX ")",
                    (int)op->op.gpu, (int)op->op.start);
    return theirs;
}

ms_status_t ms_backend_run(ms_backend_t *b, const ms_backend_op_t *op, ms_diag_t *why)
{
    ms_diag_clear(why);
    if (shut(b, why) || foreign(b, op, why))
        return MS_ESTATE;
    switch (op->op.kind) {
    case MS_OP_CREATE: return b->ops->create(b->impl, op, why);
    case MS_OP_DESTROY: return b->ops->destroy(b->impl, op, why);
    case MS_OP_START: return b->ops->start(b->impl, op, why);
    case MS_OP_STOP: return b->ops->stop(b->impl, op, why);
    case MS_OP_MOVE: return b->ops->move(b->impl, op, why);
    default:
        ms_diag_set(why, NULL, 0, "op", "unknown op");
        return MS_EINVAL;
    }
}

ms_status_t ms_backend_inventory(ms_backend_t *b, ms_binst_t **out, int *n, ms_diag_t *why)
{
    *out = NULL;
    *n = 0;
    ms_diag_clear(why);
    return b->ops->inventory(b->impl, out, n, why);
}

ms_status_t ms_backend_adopt_uuid(ms_backend_t *b, int gpu, int start, const char *uuid, ms_diag_t *why)
{
    ms_diag_clear(why);
    if (shut(b, why))
        return MS_ESTATE;
    return b->ops->adopt_uuid(b->impl, gpu, start, uuid, why);
}

ms_status_t ms_backend_refresh(ms_backend_t *b, bool *stale, int ngpus, double timeout_s, ms_diag_t *why)
{
    ms_diag_clear(why);
    if (b->ops->refresh == NULL) {
        memset(stale, 0, (size_t)(ngpus > 0 ? ngpus : 0) * sizeof(*stale));
        return MS_OK;
    }
    return b->ops->refresh(b->impl, stale, timeout_s, why);
}

void ms_backend_set_gate(ms_backend_t *b, bool (*may_act)(void *ctx), void *ctx)
{
    b->may_act = may_act;
    b->gate_ctx = ctx;
}

const char *ms_backend_gpu_uuid(const ms_backend_t *b, int gpu)
{
    return b->ops->gpu_uuid(b->impl, gpu);
}

void ms_backend_inst_uuid(ms_backend_t *b, int gpu, int start, const char *job, char *buf, size_t len)
{
    b->ops->inst_uuid(b->impl, gpu, start, job, buf, len);
}

ms_status_t ms_backend_probe(ms_backend_t *b, int gpu, double timeout_s, ms_diag_t *why)
{
    ms_diag_clear(why);
    return b->ops->probe(b->impl, gpu, timeout_s, why);
}
