/* nodecfg.h - the node-configuration controller: which whole-node MIG layout
 * each GPU Operator node should run, and the safe steps to switch it.
 *
 * On clusters whose MIG layouts belong to the GPU Operator's mig-manager,
 * a layout is chosen per node by the label nvidia.com/mig.config=<name> and
 * mig-manager reports nvidia.com/mig.config.state (pending, rebooting,
 * success, failed). mig-manager never drains user pods: "a higher level
 * entity" must cordon the node, wait for its GPU pods to finish, set the
 * label, wait for success and uncordon (gpu-operator#262). This is that
 * entity's brain, as seed 002 describes it (inference-peak / balanced /
 * training, chosen by time window and by load), with what the seed leaves
 * out: it never flaps (a minimum dwell and a budget of switches per hour),
 * never evicts unless told, and recovers from a failed or stuck switch.
 *
 * It does no I/O. A driver (migschedd in Kubernetes mode, or a test)
 * observes each node from the API server, tells the controller the demand
 * that the current layouts leave uncovered, calls ms_nodecfg_step and
 * carries out the actions it returns (cordon, set the label, evict, revert,
 * uncordon), then observes again. Actions are idempotent, so a driver that
 * crashes and restarts may repeat the last ones; the controller rebuilds
 * its per-node phase from what it observes (a node we cordoned carries the
 * annotation the driver sets on MS_NODECFG_CORDON).
 *
 * Layout choice, per node, at each step (docs/kubernetes.md):
 *   1. a layout whose time window covers the time of day is the target;
 *   2. otherwise, when demand is given, the layout of the node's model that
 *      covers the most uncovered demand, weighted by compute slices; it
 *      replaces the current one only when it covers at least min_gain
 *      more slices than the current one does;
 *   3. otherwise the node keeps what it has.
 * A switch starts only when the node has kept its layout for hysteresis_s,
 * fewer than max_switches_per_hour switches began on it in the last hour,
 * and no switch failed on it in the last failure_backoff_s.
 */
#ifndef MIGSCHED_NODECFG_H
#define MIGSCHED_NODECFG_H

#include <stdbool.h>

#include "migsched/status.h"

typedef struct ms_nodecfg_cfg {
    double hysteresis_s;          /* keep a layout at least this long (default 900) */
    int max_switches_per_hour;    /* per node (default 2) */
    double drain_timeout_s;       /* wait for GPU pods this long (default 1800) */
    double apply_timeout_s;       /* wait for mig.config.state=success (default 600) */
    bool evict;                   /* after drain_timeout_s evict GPU pods (default off:
                                     give up and uncordon) */
    int min_gain;                 /* compute slices of demand a switch must add (default 7) */
    double settle_s;              /* after a switch its new capacity still counts against
                                     the uncovered demand this long, while pods land on it
                                     (the device plugin restarts first) (default 300) */
    double failure_backoff_s;     /* after a failed switch, no new one on that node for
                                     this long (default 3600) */
    int utc_offset_min;           /* time windows are in this zone (default 0) */
} ms_nodecfg_cfg_t;

void ms_nodecfg_cfg_defaults(ms_nodecfg_cfg_t *cfg);

typedef struct ms_nodecfg ms_nodecfg_t;

ms_status_t ms_nodecfg_create(const ms_nodecfg_cfg_t *cfg, ms_nodecfg_t **out, ms_diag_t *diag);
void ms_nodecfg_destroy(ms_nodecfg_t *nc);          /* NULL-safe */

/* A named layout for every GPU of a node of `model`: per-GPU counts of
 * product profiles ("1g.5gb": 7), as in a mig-parted config. A profile name
 * starts with its compute slices ("3g.20gb" is 3). from_min/to_min: a time
 * window in minutes of the day [from, to), wrapping past midnight when
 * from > to; -1 for none. The same name may be given once per model. */
ms_status_t ms_nodecfg_add_layout(ms_nodecfg_t *nc, const char *name, const char *model,
                                  const char *const *profiles, const int *counts, int n,
                                  int from_min, int to_min, ms_diag_t *diag);

/* What the driver sees of one node. Strings are borrowed for the call. */
typedef struct ms_nodecfg_obs {
    const char *name;
    const char *model;            /* matches layouts' model */
    int ngpus;
    const char *config;           /* nvidia.com/mig.config, NULL when absent */
    const char *config_state;     /* nvidia.com/mig.config.state, NULL when absent */
    bool unschedulable;           /* spec.unschedulable */
    bool cordoned_by_us;          /* carries the driver's annotation */
    int gpu_pods;                 /* unfinished pods on it that use GPUs */
} ms_nodecfg_obs_t;

/* Record (or refresh) a node; nodes not observed since the last step are
 * forgotten at the next one. */
ms_status_t ms_nodecfg_observe(ms_nodecfg_t *nc, const ms_nodecfg_obs_t *obs, ms_diag_t *diag);

/* Uncovered demand of one model: `count` requests of `slices` compute
 * slices (1..8) that no node can host now. Cleared by every step. */
ms_status_t ms_nodecfg_demand(ms_nodecfg_t *nc, const char *model, int slices, int count);

typedef enum ms_nodecfg_act_kind {
    MS_NODECFG_CORDON = 1,        /* spec.unschedulable=true + our annotation */
    MS_NODECFG_SET_CONFIG,        /* nvidia.com/mig.config=config */
    MS_NODECFG_EVICT,             /* evict the node's GPU pods (only with cfg.evict) */
    MS_NODECFG_UNCORDON           /* spec.unschedulable=false, annotation removed */
} ms_nodecfg_act_kind_t;

typedef struct ms_nodecfg_act {
    ms_nodecfg_act_kind_t kind;
    const char *node;             /* valid until the next step */
    const char *config;           /* SET_CONFIG: the layout name */
    char reason[160];             /* why, in words (for events and logs) */
} ms_nodecfg_act_t;

/* Advance every node to `now` (seconds since the epoch, UTC). *acts points
 * at n actions owned by the controller, valid until the next call. */
ms_status_t ms_nodecfg_step(ms_nodecfg_t *nc, double now, const ms_nodecfg_act_t **acts, int *n);

/* Where one node stands (for status pages and tests). */
typedef enum ms_nodecfg_phase {
    MS_NODECFG_STEADY = 0,        /* serving with its layout */
    MS_NODECFG_DRAINING,          /* cordoned, waiting for its GPU pods */
    MS_NODECFG_APPLYING,          /* label set, waiting for success */
    MS_NODECFG_REVERTING,         /* the switch failed: back to the old layout */
    MS_NODECFG_BROKEN             /* the revert failed too: stays cordoned */
} ms_nodecfg_phase_t;

typedef struct ms_nodecfg_node_info {
    ms_nodecfg_phase_t phase;
    const char *target;           /* the layout it is switching to, NULL */
    long switches;                /* switches completed on it */
    long failures;                /* switches that failed or timed out */
    long drain_giveups;           /* drains abandoned after drain_timeout_s */
} ms_nodecfg_node_info_t;

ms_status_t ms_nodecfg_node(const ms_nodecfg_t *nc, const char *name, ms_nodecfg_node_info_t *out);
const char *ms_nodecfg_phase_name(ms_nodecfg_phase_t p);

#endif
