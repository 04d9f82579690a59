/* backend.h - the hardware behind one interface, shared by migschedd
 * (src/service/) and migsched-agent (src/agent/).
 *
 * A backend executes the ops of ms_sched plans on GPUs (global GPU numbers,
 * as in plans) and answers what exists: its inventory is the truth after a
 * restart. Instances carry the id of the job that runs on them (the tag), so
 * a restarted daemon can tell which job owns which instance.
 *
 * Each backend is one file with a const ms_backend_ops_t, listed in
 * registry.c (as policies are in src/policy/registry.c):
 *
 *   sim      simulated GPUs (sim.c); state persisted in STATE_DIR/
 *            sim-inventory.json and sim-inventory.journal (a snapshot and
 *            one line appended after every op, so it outlives kill -9,
 *            inv_file.c); each op takes op_delay_s; ops can be made to fail
 *            (fail spec "KIND:N": every Nth op of KIND, e.g. "create:3";
 *            KIND any = all)
 *   dry-run  the same inventory model, changing no hardware (dryrun.c); every
 *            op it would perform is logged as one JSON line on stderr and
 *            appended to STATE_DIR/dry-run.jsonl
 *   nvml     real GPUs through src/nvml/ (nvml.c; NVML via dlopen,
 *            MIGSCHEDD_NVML_LIB overrides the library, for the tests' fake);
 *            GIs are the hardware's, job tags in STATE_DIR/nvml-inventory.json
 *   agent    each node's migsched-agent over HTTP (agent.c, agent_http.c);
 *            the inventory is the union of the agents' (docs/agent.md)
 *
 * Errors: every call returns an ms_status_t and, on failure, fills the
 * caller's ms_diag_t with why (no static buffers). MS_ENOFIT means the
 * hardware (or the agent) refused a placement: its slices are taken. Whose
 * fault a failure is goes in why->field, for the executor's backoff and the
 * GPUs' health (ms_backend_fault below): "refused" (the slices are taken:
 * the caller's view is behind the hardware), "gpu-lost" (the GPU failed:
 * it fell off the bus, the driver lost it), "unreachable" (the node did
 * not answer within the deadline: the op may or may not have happened, and
 * the backend found no sign that it did); anything else is the op's own
 * failure (a wrong state, a bad argument).
 *
 * Threads: every function may be called from any thread. Calls for GPUs of
 * different nodes may run at once (per-node executor lanes); calls for one
 * GPU come in plan order from one thread at a time. No backend holds a lock
 * across a network call: the agent backend sends each request with only
 * that node's state in hand, and its inventory mirror is locked per node,
 * for the copy only. The sim and dry-run hold their inventory lock for the
 * update and the journal line (never across the op delay); nvml holds it
 * across the driver call (one node, one driver).
 *
 * Deadlines: every op and probe carries timeout_s, the most it may take
 * from its start (0: the backend's default, 60 s). The agent backend sends
 * an op once: when no answer comes it reads the node's inventory within
 * what is left of the deadline and reports the op done if its effect is
 * there, failed ("unreachable") if not or if it cannot tell; it never sends
 * a request a second time. Local backends finish in their own time.
 */
#ifndef MIGSCHED_BACKEND_H
#define MIGSCHED_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "migsched/geometry.h"
#include "migsched/plan.h"
#include "migsched/status.h"

/* One instance: a MIG GI (start >= 0) or a time-slice slot / whole GPU
 * (start -1). */
typedef struct ms_binst {
    int32_t gpu;            /* global */
    int8_t start;           /* -1: a time-slice slot / whole GPU */
    int8_t prof;            /* profile index in the GPU's geometry */
    char job[128];          /* "" idle */
    char uuid[48];          /* instance uuid ("MIG-..."), "" none */
    uint16_t gi_id, ci_id;  /* nvml: the driver's GI and CI ids (0 unknown; not persisted) */
} ms_binst_t;

typedef struct ms_backend_cfg {
    const char *kind;       /* a registered name: sim, dry-run, nvml, agent */
    const char *state_dir;
    int ngpus;
    double op_delay_s;
    const char *fail;       /* sim fail spec, NULL none */
    const ms_geom_t *const *gpu_geom;   /* [ngpus] each GPU's geometry (nvml, agent) */
    const bool *gpu_mig;            /* [ngpus] on a MIG node (nvml checks MIG mode) */
    /* agent: [ngpus] the base URL of the migsched-agent that serves each GPU
     * and the GPU's index on that node; a bearer token file (NULL none) */
    const char *const *gpu_agent;
    const int *gpu_local;
    const char *agent_token_file;
    uint32_t uuid_salt;             /* sim: mixed into made-up uuids so nodes differ; 0 in migschedd */
    /* migschedd's: refuse to stop, move or destroy an instance another
     * owner tagged (ms_backend_tag_foreign). The agent, whose DRA driver
     * is that owner, leaves it false. */
    bool keep_foreign;
} ms_backend_cfg_t;

/* One call: an op of a plan (op.kind says which), or one of start-up's
 * reconciliation (force). */
typedef struct ms_backend_op {
    ms_op_t op;             /* global GPU numbers; op.job is not read */
    const char *job;        /* the id of the op's job ("" none) */
    const char *profile;    /* the profile's product name ("" none) */
    /* start-up's reconciliation: a DESTROY removes the instance whatever
     * runs on it (the agent's "reap"); the sim neither delays nor injects
     * failures into these calls, and dry-run does not log them */
    bool force;
    double timeout_s;       /* the call's deadline, seconds from its start; 0 default */
} ms_backend_op_t;

/* A backend's implementation. impl is its own state. Every entry is set. */
typedef struct ms_backend_ops {
    const char *name;
    ms_status_t (*open)(const ms_backend_cfg_t *cfg, void **impl, ms_diag_t *why);
    void (*close)(void *impl);
    /* A copy of every instance: *out malloc'd (the caller frees it). */
    ms_status_t (*inventory)(void *impl, ms_binst_t **out, int *n, ms_diag_t *why);
    ms_status_t (*create)(void *impl, const ms_backend_op_t *op, ms_diag_t *why);
    ms_status_t (*destroy)(void *impl, const ms_backend_op_t *op, ms_diag_t *why);
    ms_status_t (*start)(void *impl, const ms_backend_op_t *op, ms_diag_t *why);
    ms_status_t (*stop)(void *impl, const ms_backend_op_t *op, ms_diag_t *why);
    ms_status_t (*move)(void *impl, const ms_backend_op_t *op, ms_diag_t *why);
    /* A simulated backend playing a node's agent takes the uuid another
     * replica gave the instance at (gpu, start), so that a new leader and
     * the pods' annotations agree; real hardware keeps its own (MS_OK). */
    ms_status_t (*adopt_uuid)(void *impl, int gpu, int start, const char *uuid, ms_diag_t *why);
    /* The GPU's uuid ("GPU-..."), "" none; fixed once open. */
    const char *(*gpu_uuid)(const void *impl, int gpu);
    /* The uuid of the instance at (gpu, start) running job (NULL any), ""
     * none, into buf. */
    void (*inst_uuid)(void *impl, int gpu, int start, const char *job, char *buf, size_t len);
    /* Does the GPU answer? Reads what the backend knows of it afresh (the
     * agent: its node's inventory, which replaces the mirror) within
     * timeout_s (0: the default). MS_OK, or why (with its fault). */
    ms_status_t (*probe)(void *impl, int gpu, double timeout_s, ms_diag_t *why);
    /* Optional (NULL: the inventory is always current, as a local
     * backend's is). Read the inventory again from where it lives for the
     * GPUs marked in stale[ngpus], within timeout_s; on return stale[g]
     * says which could not be read (their last known state stays). A new
     * leader calls it: a copy read earlier may be another's past. */
    ms_status_t (*refresh)(void *impl, bool *stale, double timeout_s, ms_diag_t *why);
} ms_backend_ops_t;

extern const ms_backend_ops_t ms_backend_sim, ms_backend_dry_run, ms_backend_nvml, ms_backend_agent;

/* --- the registry (registry.c) ------------------------------------------- */

/* The backend called name, NULL if none. */
const ms_backend_ops_t *ms_backend_find(const char *name);
/* Every registered backend, NULL-terminated. */
const ms_backend_ops_t *const *ms_backend_list(void);

typedef struct ms_backend ms_backend_t;

/* Open the backend cfg->kind names. MS_OK, or *out NULL and why says what
 * failed (MS_EINVAL for an unknown kind). */
ms_status_t ms_backend_open(const ms_backend_cfg_t *cfg, ms_backend_t **out, ms_diag_t *why);
void ms_backend_close(ms_backend_t *b);                 /* NULL-safe */
const char *ms_backend_name(const ms_backend_t *b);
/* The op's kind's entry: create, destroy, start, stop or move. */
ms_status_t ms_backend_run(ms_backend_t *b, const ms_backend_op_t *op, ms_diag_t *why);
ms_status_t ms_backend_inventory(ms_backend_t *b, ms_binst_t **out, int *n, ms_diag_t *why);
ms_status_t ms_backend_adopt_uuid(ms_backend_t *b, int gpu, int start, const char *uuid, ms_diag_t *why);
const char *ms_backend_gpu_uuid(const ms_backend_t *b, int gpu);
void ms_backend_inst_uuid(ms_backend_t *b, int gpu, int start, const char *job, char *buf, size_t len);
ms_status_t ms_backend_probe(ms_backend_t *b, int gpu, double timeout_s, ms_diag_t *why);

/* Whose fault a failed call was (why->field, see "Errors" above). */
typedef enum ms_backend_fault {
    MS_BF_OP = 0,           /* the op's own: a wrong state, a bad argument */
    MS_BF_REFUSED,          /* the placement's slices are taken */
    MS_BF_GPU,              /* the GPU failed */
    MS_BF_NODE,             /* the node did not answer */
    MS_BF_GATE              /* not tried: this process may not act (the gate below) */
} ms_backend_fault_t;

#define MS_BACKEND_REFUSED "refused"
#define MS_BACKEND_GPU_LOST "gpu-lost"
#define MS_BACKEND_UNREACHABLE "unreachable"
#define MS_BACKEND_NOT_LEADER "not-leader"

static inline ms_backend_fault_t ms_backend_fault(ms_status_t st, const ms_diag_t *why)
{
    if (st == MS_ENOFIT)
        return MS_BF_REFUSED;
    if (why == NULL)
        return MS_BF_OP;
    if (strcmp(why->field, MS_BACKEND_GPU_LOST) == 0)
        return MS_BF_GPU;
    if (strcmp(why->field, MS_BACKEND_UNREACHABLE) == 0)
        return MS_BF_NODE;
    if (strcmp(why->field, MS_BACKEND_NOT_LEADER) == 0)
        return MS_BF_GATE;
    return strcmp(why->field, MS_BACKEND_REFUSED) == 0 ? MS_BF_REFUSED : MS_BF_OP;
}
/* The ops table's refresh (every GPU marked in stale[ngpus] read again;
 * stale left marking those that could not be); without one, nothing is
 * stale. */
ms_status_t ms_backend_refresh(ms_backend_t *b, bool *stale, int ngpus, double timeout_s, ms_diag_t *why);
/* A gate every call that changes something passes first (ms_backend_run,
 * ms_backend_adopt_uuid): while may_act(ctx) is false they fail with
 * MS_ESTATE and do nothing. (Independently, with cfg.keep_foreign,
 * ms_backend_run refuses with MS_ESTATE to stop, move or destroy an
 * instance another owner tagged: ms_backend_tag_foreign.) migschedd's: only the leader acts. Set before
 * the backend is shared between threads; may_act is called from any. */
void ms_backend_set_gate(ms_backend_t *b, bool (*may_act)(void *ctx), void *ctx);
/* An op's kind as the journal, the dry-run log and the agent write it:
 * "create", "destroy", "start", "move", "stop"; "?" for another. (Inline:
 * every backend file names ops, and none may depend on the registry,
 * which depends on each of them.) */
/* An instance tagged by another owner on the node (the agent's DRA
 * driver: "dra:<claim uid>"): migschedd holds its slices but never stops,
 * moves or destroys it (ms_backend_run refuses, cfg.keep_foreign). */
#define MS_BACKEND_FOREIGN_PREFIX "dra:"
static inline bool ms_backend_tag_foreign(const char *tag)
{
    return tag != NULL && tag[0] == 'd' && tag[1] == 'r' && tag[2] == 'a' && tag[3] == ':';
}

static inline const char *ms_backend_op_name(int kind)
{
    switch (kind) {
    case MS_OP_CREATE: return "create";
    case MS_OP_DESTROY: return "destroy";
    case MS_OP_START: return "start";
    case MS_OP_MOVE: return "move";
    case MS_OP_STOP: return "stop";
    default: return "?";
    }
}

#endif
