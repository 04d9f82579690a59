/* dryrun.c - the dry-run backend (backend.h): the sim's inventory model
 * (STATE_DIR/dry-run-inventory.json), touching nothing; every op it would
 * perform is one JSON line on stderr and in STATE_DIR/dry-run.jsonl. Ops of
 * start-up's reconciliation (force) are not logged.
 *
 * Any thread (backend.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/sim_int.h"

static ms_status_t dry_open(const ms_backend_cfg_t *cfg, void **impl, ms_diag_t *why)
{
    ms__sim_t *s;
    char *path;
    ms_status_t st;

    *impl = NULL;
    if ((st = ms__sim_open(cfg, true, &s, why)) != MS_OK)
        return st;
    if ((path = ms__path_join(cfg->state_dir, "dry-run.jsonl")) == NULL || (s->log = fopen(path, "a")) == NULL) {
        ms_diag_set(why, path, 0, "", "cannot open dry-run.jsonl in the state directory");
        free(path);
        ms__sim_close(s);
        return MS_EIO;
    }
    free(path);
    *impl = s;
    return MS_OK;
}

static void dry_close(void *impl)
{
    ms__sim_t *s = impl;

    if (s != NULL && s->log != NULL)
        fclose(s->log);
    ms__sim_close(s);
}

/* The op as one JSON line, in the file and in the log. */
static void log_op(ms__sim_t *s, const ms_backend_op_t *bop)
{
    const ms_op_t *op = &bop->op;
    json_t *o = json_pack("{s:s,s:i,s:i,s:s,s:s}", "op", ms_backend_op_name(op->kind), "gpu", (int)op->gpu,
                          "start", (int)op->start, "profile", bop->profile != NULL ? bop->profile : "", "job",
                          bop->job != NULL ? bop->job : "");
    char *text;

    if (o != NULL && op->kind == MS_OP_MOVE) {
        json_object_set_new(o, "from_gpu", json_integer(op->from_gpu));
        json_object_set_new(o, "from_start", json_integer(op->from_start));
        json_object_set_new(o, "bbm", json_boolean(op->bbm));
    }
    if (o != NULL && (text = json_dumps(o, JSON_COMPACT)) != NULL) {
        /* one line per op in the file: ops of two lanes never interleave */
        pthread_mutex_lock(&s->inv.mu);
        fprintf(s->log, "%s\n", text);
        fflush(s->log);
        pthread_mutex_unlock(&s->inv.mu);
        ms_log("info", "dry-run op", json_deep_copy(o));
        free(text);
    }
    json_decref(o);
}

static ms_status_t dry_run(void *impl, const ms_backend_op_t *op, ms_diag_t *why)
{
    ms_status_t st = ms__sim_op(impl, op, why);

    if (!op->force && op->op.kind >= MS_OP_CREATE && op->op.kind <= MS_OP_STOP)
        log_op(impl, op);
    return st;
}

const ms_backend_ops_t ms_backend_dry_run = {
    .name = "dry-run",
    .open = dry_open,
    .close = dry_close,
    .inventory = ms__sim_inventory,
    .create = dry_run,
    .destroy = dry_run,
    .start = dry_run,
    .stop = dry_run,
    .move = dry_run,
    .adopt_uuid = ms__sim_adopt_uuid,
    .gpu_uuid = ms__sim_gpu_uuid,
    .inst_uuid = ms__sim_inst_uuid,
    .probe = ms__sim_probe,
};
