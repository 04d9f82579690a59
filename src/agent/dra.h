/* dra.h - migsched-agent as a Kubernetes DRA driver (docs/dra.md).
 *
 * With --dra the agent is its node's Dynamic Resource Allocation driver
 * under its own driver name (default mig.migsched.io; never
 * gpu.nvidia.com: a node runs NVIDIA's driver or this one, and neither may
 * touch a GPU the other manages):
 *
 *   publish    the node's GPUs as ResourceSlices (resource.k8s.io/v1) in
 *              NVIDIA's DynamicMIG naming and counter scheme: per GPU the
 *              whole GPU "gpu-<g>" and one device per (profile, legal
 *              start) "gpu-<g>-mig-<profile>-<GI profile id>-<start>", each
 *              consuming its memory slices from the GPU's counter set
 *              "gpu-<g>-counter-set"; counters in their own slice(s), then
 *              one device slice per GPU; one pool per node (its name), a
 *              generation bumped on every change (dra_slices.c builds them,
 *              dra_pub.c keeps them true on the API server);
 *   prepare    the kubelet's NodePrepareResources: read each claim, create
 *              the instance at exactly its device's placement through the
 *              agent's create path (tagged "dra:<claim uid>" in the
 *              inventory: the checkpoint), answer the CDI device ids;
 *              NodeUnprepareResources destroys what prepare made
 *              (dra_prep.c, on the backend through dra_exec.c);
 *   register   the kubelet's plugin watcher finds the registration socket
 *              in its plugins_registry directory and asks GetInfo: type
 *              DRAPlugin, the driver's name, the DRA service's socket,
 *              "v1.DRAPlugin" (dra.c).
 *
 * Threads: the registration server and the DRA service each have their own
 * gRPC server thread (src/rpc/), so a slow prepare never delays a
 * registration; the manager thread (dra.c) re-serves a socket someone
 * removed; the publisher (dra_pub.c) has a watch thread that marks the
 * slices dirty and a writer thread that reconciles them. Prepare and
 * unprepare run one at a time on the DRA service's thread; the backend's
 * own calls take a->mu (ops.c).
 */
#ifndef MIGSCHED_AGENT_DRA_H
#define MIGSCHED_AGENT_DRA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/agent.h"
#include "kube/kube.h"
#include "migsched/geometry.h"
#include "rpc/rpc.h"

#define AG_DRA_DRIVER "mig.migsched.io"
#define AG_DRA_SERVICE "v1.DRAPlugin"           /* the kubelet's name for dra/v1 */
#define AG_DRA_TAG "dra:"                       /* inventory tag prefix: dra:<claim uid> */
#define AG_DRA_CDI_CLAIM_KIND "migsched.io/claim" /* whole GPUs and shares, one spec per claim */
#define AG_DRA_MAX_RESULTS 32                   /* the API's AllocationResultsMaxSize */
#define AG_DRA_MAX_SLICE_DEVICES 64             /* devices per slice when they consume counters */
#define AG_DRA_MAX_COUNTER_SETS 8               /* counter sets per slice */

/* --- options (main.c passes what it does not know to ag_dra_opt) ------- */

struct ag_dra_cfg {
    bool on;                 /* --dra */
    char *driver;            /* --dra-driver (default AG_DRA_DRIVER) */
    char *plugins_dir;       /* --dra-plugins-dir: the DRA socket is DIR/<driver>/dra.sock */
    char *registry_dir;      /* --dra-registry-dir: the registration socket DIR/<driver>-reg.sock */
    bool cleanup;            /* --dra-cleanup: delete our slices on a clean stop */
    double resync_s;         /* --dra-resync: re-read the slices at least this often */
};

/* 1: a flag taken (name only); 2: name and value taken; 0: not ours;
 * -1: bad value or out of memory (printed). */
int ag_dra_opt(ag_cfg_t *c, const char *name, const char *value);
void ag_dra_usage(FILE *f);
void ag_dra_cfg_free(ag_cfg_t *c);

typedef struct ag_dra ag_dra_t;
/* Start publishing and serving (nothing without --dra: *out stays NULL).
 * 0, or -1 (printed). */
int ag_dra_start(ag_t *a, ag_dra_t **out);
/* Stop serving; with --dra-cleanup delete our slices first. NULL-safe. */
void ag_dra_stop(ag_dra_t *d);

/* --- dra_names.c: device names, pure --------------------------------- */

enum { AG_DRA_GPU = 0, AG_DRA_MIG = 1 };

typedef struct ag_dra_dev {
    char name[64];           /* a DNS label */
    int kind;                /* AG_DRA_GPU (the whole GPU, or a share of it) or AG_DRA_MIG */
    int gpu;
    int prof;                /* active profile index (MIG), -1 for the whole GPU */
    int start;               /* first memory slice (MIG), -1 for the whole GPU */
} ag_dra_dev_t;

/* A profile's name as NVIDIA's device names carry it: lower case, dots
 * dropped, anything but [a-z0-9-] made '-', no leading or trailing '-'
 * ("1g.5gb+me" -> "1g5gb-me"). 0, or -1 when it does not fit len. */
int ag_dra_profile_token(const char *profile, char *buf, size_t len);
/* "gpu-<g>", "gpu-<g>-mig-<token>-<GI profile id>-<start>". 0 or -1. */
int ag_dra_name_gpu(int gpu, char *buf, size_t len);
int ag_dra_name_mig(const ms_geom_t *g, int gpu, int prof, int start, char *buf, size_t len);

/* The GPUs a name can refer to, and how each is published. */
typedef struct ag_dra_gpu {
    const ms_geom_t *geom;
    bool mig;                /* MIG enabled: MIG devices and counters */
    int replicas;            /* > 0: time-sliced, the whole GPU is shared this many ways */
    const char *uuid;        /* "GPU-..." */
} ag_dra_gpu_t;

/* Parse a device name back to (kind, gpu, prof, start) against gpus[0..n):
 * the GPU must exist, a MIG device must name an active profile of its
 * geometry by token and GI profile id at a legal start on a GPU with MIG
 * on. 0, or -1 with why (a sentence naming the part that is wrong). */
int ag_dra_parse(const ag_dra_gpu_t *gpus, int n, const char *name, ag_dra_dev_t *out, char *why,
                 size_t whylen);
/* Every device of gpu g, sorted by name (the whole GPU first): *out
 * malloc'd. 0, or -1 out of memory. */
int ag_dra_devices(const ag_dra_gpu_t *gpu, int g, ag_dra_dev_t **out, int *n);
/* The whole GPU's stand-in on a MIG GPU: the active profile that covers
 * every memory slice (7g on the 8-slice family), -1 when none. */
int ag_dra_full_profile(const ms_geom_t *g);

/* --- dra_slices.c: the ResourceSlices, pure ---------------------------- */

typedef struct ag_dra_node {
    const char *node;        /* the node's name: also the pool's */
    const char *driver;
    const ag_dra_gpu_t *gpus;
    int ngpus;
    const char *node_uid;    /* the Node's uid for ownerReferences, NULL unknown */
} ag_dra_node_t;

/* The slices to publish at generation gen, each a complete object
 * (apiVersion, kind, metadata.name, spec) in an array, counter slices
 * first. NULL: out of memory, or a GPU with more than
 * AG_DRA_MAX_SLICE_DEVICES devices (*why says which). */
json_t *ag_dra_slices(const ag_dra_node_t *nd, long long gen, char *why, size_t whylen);
/* The slice name of part (e.g. "gpu-000", "counters-0") on this node:
 * <node>-<driver>-<part>, shortened with a hash when longer than 253. */
int ag_dra_slice_name(const char *node, const char *driver, const char *part, char *buf, size_t len);
/* The counter total of name in gpu's counter set, and what device d
 * consumes of it (0 when it consumes none): what the tests check against
 * the geometry. Counters: memory-slice-<i>, memory (bytes), compute-slices,
 * instances-<token> for a profile whose count is capped before its slices
 * run out. -1 when the GPU's set has no such counter. */
long long ag_dra_counter_total(const ag_dra_gpu_t *gpu, const char *name);
long long ag_dra_counter_use(const ag_dra_gpu_t *gpu, const ag_dra_dev_t *d, const char *name);
/* Does `have` (a slice the API server answered) carry everything in
 * `want` (ours): every member of each object, arrays element by element,
 * equal scalars? Fields the server added are ignored. */
bool ag_dra_covers(const json_t *have, const json_t *want);

/* --- dra_claim.c: the kubelet's messages and the claim, pure (fuzzed) -- */

typedef struct ag_dra_result {
    char request[64];        /* the base request name (a subrequest's "/x" dropped) */
    char device[64];
    char share_id[64];       /* "" none */
} ag_dra_result_t;

typedef struct ag_dra_claim {
    char ns[64], name[254], uid[64];
    int n;                   /* results for this driver and pool */
    ag_dra_result_t res[AG_DRA_MAX_RESULTS];
} ag_dra_claim_t;

/* A ResourceClaim (JSON text from the API server) to the results that are
 * this driver's on this pool. The claim must be allocated; a result of this
 * driver on another pool, admin access, or an opaque configuration for this
 * driver is refused. 0, or -1 with why. */
int ag_dra_claim_decode(const char *json, size_t len, const char *driver, const char *pool, ag_dra_claim_t *out,
                        char *why, size_t whylen);

/* A claim reference the kubelet sent (namespace, uid, name). */
typedef struct ag_dra_ref {
    char ns[64], uid[64], name[254];
} ag_dra_ref_t;

/* NodePrepareResourcesRequest / NodeUnprepareResourcesRequest to their
 * claims (*out malloc'd, *n entries; each field checked: a DNS name, a
 * uid). MS_RPC_OK, or MS_RPC_INVALID_ARGUMENT with msg. */
int ag_dra_refs_decode(const uint8_t *req, size_t len, bool prepare, ag_dra_ref_t **out, int *n, char *msg,
                       size_t msglen);

/* One claim's answer: an error, or its devices. */
typedef struct ag_dra_pdev {
    char request[64], pool[254], device[64], share_id[64];
    char cdi[160];           /* one CDI device id */
} ag_dra_pdev_t;

typedef struct ag_dra_answer {
    char uid[64];
    char error[512];         /* "" ok */
    int n;
    ag_dra_pdev_t dev[AG_DRA_MAX_RESULTS];
} ag_dra_answer_t;

/* The response messages. MS_RPC_OK with *out malloc'd, or MS_RPC_INTERNAL. */
int ag_dra_prepare_resp(const ag_dra_answer_t *ans, int n, ms_rpc_buf_t *out);
int ag_dra_unprepare_resp(const ag_dra_answer_t *ans, int n, ms_rpc_buf_t *out);
/* The registration's PluginInfo. */
int ag_dra_info_resp(const char *driver, const char *endpoint, ms_rpc_buf_t *out);
/* RegistrationStatus: 0 decoded (*ok, error copied), -1 not a message. */
int ag_dra_status_decode(const uint8_t *req, size_t len, bool *ok, char *err, size_t errlen);

/* --- dra_exec.c: the agent's backend, as the DRA driver sees it -------- */

typedef struct ag_dra_inst {
    int gpu, start;          /* start -1: a whole-GPU or time-slice slot */
    char profile[32];
    char uuid[48];           /* the MIG instance's, "" for a slot */
    char tag[128];           /* the job tag: "dra:<uid>" for ours */
} ag_dra_inst_t;

/* The node's GPUs as the naming sees them (a view of a; uuids from the
 * backend). *out malloc'd. 0 or -1. */
int ag_dra_x_gpus(ag_t *a, ag_dra_gpu_t **out);
/* Every instance and slot (a->mu taken inside). *out malloc'd. 0 or -1. */
int ag_dra_x_inventory(ag_t *a, ag_dra_inst_t **out, int *n);
/* Create profile at (gpu, start) tagged tag through the agent's create
 * path (checks, idempotency, the CDI spec): 1 created, 2 an idle instance
 * of that profile was there and is now tagged (the create path adopts
 * it), 0 it was tagged already (a retry), -1 refused or failed (why: the
 * agent's message). */
int ag_dra_x_create(ag_t *a, int gpu, const char *profile, int start, const char *tag, ag_dra_inst_t *made,
                    char *why, size_t whylen);
/* Give an adopted instance back: its tag removed, the instance kept. */
int ag_dra_x_untag(ag_t *a, const ag_dra_inst_t *in, char *why, size_t whylen);
/* Tag a whole-GPU or time-slice slot of gpu (idempotent): 1 tagged, 0
 * there already, -1 with why. */
int ag_dra_x_slot(ag_t *a, int gpu, const char *tag, char *why, size_t whylen);
/* Destroy an instance or untag a slot found in the inventory. 0 or -1. */
int ag_dra_x_release(ag_t *a, const ag_dra_inst_t *in, char *why, size_t whylen);
/* The CDI spec of a claim's slots: written (slots of gpus[0..n)) or, with
 * n == 0, removed. The file is CDI_DIR/migsched.claim-<uid>.json, kind
 * AG_DRA_CDI_CLAIM_KIND, one device "<uid>-gpu-<g>" per GPU. 0 or -1. */
int ag_dra_x_claim_spec(ag_t *a, const char *uid, const int *gpus, int n, char *why, size_t whylen);
/* Start-up: remove claim specs whose claim holds no slot, write missing
 * ones. 0 or -1. */
int ag_dra_x_claim_specs_sync(ag_t *a);

/* --- dra_prep.c: prepare and unprepare -------------------------------- */

typedef struct ag_dra_ctx {
    ag_t *a;
    const char *driver;
    const char *pool;
    /* the claim's JSON from the API server: 0 with *json malloc'd, 1 not
     * found, -1 no answer (why) */
    int (*get_claim)(void *kctx, const char *ns, const char *name, char **json, char *why, size_t whylen);
    void *kctx;
} ag_dra_ctx_t;

/* Prepare one claim: read it, make every device of ours, answer the CDI
 * ids; on failure nothing this call made is left, and ans->error says why. */
void ag_dra_prepare(ag_dra_ctx_t *c, const ag_dra_ref_t *ref, ag_dra_answer_t *ans);
/* Unprepare one claim: release everything tagged with it (nothing tagged
 * is not an error). */
void ag_dra_unprepare(ag_dra_ctx_t *c, const ag_dra_ref_t *ref, ag_dra_answer_t *ans);

/* --- dra_pub.c: the slices on the API server --------------------------- */

typedef struct ag_dra_pub ag_dra_pub_t;
int ag_dra_pub_start(ag_t *a, ms_kube_t *kube, const char *driver, double resync_s, ag_dra_pub_t **out);
/* Stop; with cleanup, delete this driver's slices of this node. */
void ag_dra_pub_stop(ag_dra_pub_t *p, bool cleanup);

#endif
