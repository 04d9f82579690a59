/* backend.h - private to migschedd: the hardware behind one interface.
 *
 * A backend executes the ops of ms_sched plans on GPUs (global GPU numbers,
 * as in plans) and answers what exists: its inventory is the truth after a
 * restart (loop.c reconciles the scheduler's view to it). Instances carry
 * the id of the job that runs on them (the tag), so a restarted daemon can
 * tell which job owns which instance.
 *
 *   sim      simulated GPUs; state persisted in STATE_DIR/sim-inventory.json
 *            and sim-inventory.journal (a snapshot and one line appended
 *            after every op, so it outlives kill -9);
 *            each op takes op_delay_s; ops can be made to fail (fail spec
 *            "KIND:N": every Nth op of KIND, e.g. "create:3"; KIND any = all)
 *   dry-run  the same inventory model, changing no hardware; every op it
 *            would perform is logged as one JSON line on stderr and appended
 *            to STATE_DIR/dry-run.jsonl
 *   nvml     real GPUs through src/nvml/ (NVML via dlopen; MIGSCHEDD_NVML_LIB
 *            overrides the library, for the tests' fake); GIs are the
 *            hardware's, job tags in STATE_DIR/nvml-inventory.json
 *   agent    each node's migsched-agent over HTTP (backend_agent.c); the
 *            inventory is the union of the agents' (docs/agent.md)
 *
 * Every function is called from one thread at a time (the executor, or the
 * loop before the executor starts); svc_backend_inventory may be called from
 * the loop while the executor runs (the backend locks itself).
 */
#ifndef MIGSCHED_SVC_BACKEND_H
#define MIGSCHED_SVC_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/geometry.h"
#include "migsched/plan.h"

typedef struct svc_binst {
    int32_t gpu;            /* global */
    int8_t start;           /* -1: a time-slice slot / whole GPU */
    int8_t prof;            /* profile index in the GPU's geometry */
    char job[128];          /* "" idle */
    char uuid[48];          /* instance uuid ("MIG-..."), "" none */
    uint16_t gi_id, ci_id;  /* nvml: the driver's GI and CI ids (0 unknown; not persisted) */
} svc_binst_t;

typedef struct svc_backend svc_backend_t;

typedef struct svc_backend_cfg {
    const char *kind;       /* sim, dry-run, nvml */
    const char *state_dir;
    int ngpus;
    double op_delay_s;
    const char *fail;       /* sim fail spec, NULL none */
    const char *const *gpu_names;   /* [ngpus] "node/index" for uuids, may be NULL */
    const ms_geom_t *const *gpu_geom;   /* [ngpus] each GPU's geometry (nvml) */
    const bool *gpu_mig;            /* [ngpus] on a MIG node (nvml checks MIG mode) */
    /* agent: [ngpus] the base URL of the migsched-agent that serves each GPU
     * and the GPU's index on that node; a bearer token file (NULL none) */
    const char *const *gpu_agent;
    const int *gpu_local;
    const char *agent_token_file;
    uint32_t uuid_salt;             /* sim: mixed into made-up uuids so nodes differ; 0 in migschedd */
} svc_backend_cfg_t;

/* 0 or -1 with *err set to a static message. */
int svc_backend_open(const svc_backend_cfg_t *cfg, svc_backend_t **out, const char **err);
void svc_backend_close(svc_backend_t *b);
const char *svc_backend_kind(const svc_backend_t *b);

/* Execute one op (global numbers); job is the id of op->job's job ("" none),
 * prof_name the profile's product name. 0 ok, -1 failed (*why set). */
int svc_backend_op(svc_backend_t *b, const ms_op_t *op, const char *job, const char *prof_name,
                   const char **why);
/* Direct calls used by the reconciliation at start-up. */
int svc_backend_destroy(svc_backend_t *b, const svc_binst_t *in);
int svc_backend_create(svc_backend_t *b, int gpu, int prof, int start);
/* A copy of every instance: *out malloc'd (free it), *n its length. */
int svc_backend_inventory(svc_backend_t *b, svc_binst_t **out, int *n);
/* A simulated backend (sim, dry-run) playing a node's agent takes the uuid
 * another replica gave the instance at (gpu, start), so that a new leader
 * and the pods' annotations agree; real hardware keeps its own (0). */
int svc_backend_adopt_uuid(svc_backend_t *b, int gpu, int start, const char *uuid);
/* The GPU's uuid ("GPU-..."), "" when the backend has none. */
const char *svc_backend_gpu_uuid(const svc_backend_t *b, int gpu);
/* The uuid of the instance at (gpu, start) running job (NULL any), "" none;
 * copies into buf. */
void svc_backend_inst_uuid(svc_backend_t *b, int gpu, int start, const char *job, char *buf,
                           size_t len);

/* The agent backend (backend_agent.c); backend.c dispatches to it. */
typedef struct svc_abe svc_abe_t;
int svc_abe_open(const svc_backend_cfg_t *cfg, svc_abe_t **out, const char **err);
void svc_abe_close(svc_abe_t *a);
int svc_abe_op(svc_abe_t *a, const ms_op_t *op, const char *job, const char *prof_name, const char **why);
int svc_abe_destroy(svc_abe_t *a, const svc_binst_t *in);
int svc_abe_create(svc_abe_t *a, int gpu, int prof, int start);
int svc_abe_inventory(svc_abe_t *a, svc_binst_t **out, int *n);
const char *svc_abe_gpu_uuid(const svc_abe_t *a, int gpu);
void svc_abe_inst_uuid(svc_abe_t *a, int gpu, int start, const char *job, char *buf, size_t len);

#endif
