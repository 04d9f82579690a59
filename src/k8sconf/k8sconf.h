/* k8sconf.h - one cluster policy file in, the GPU Operator's configuration
 * out: the mig-parted config (node MIG layouts), the device plugin's
 * configs (MIG mixed strategy, time-slicing with replicas) and the node
 * labels that select them (docs/kubernetes.md, "GPU Operator layouts").
 *
 * Not part of libmigsched: it reads YAML with libyaml, so it is its own
 * archive (build/libmsk8sconf.a, mk/k8sconf.mk) that the CLI links and the
 * daemon's node-configuration loop can link too. It follows the library's
 * rules all the same: no printing, no globals, errors as ms_status_t with an
 * ms_diag_t naming file, line and field.
 *
 * The policy file (YAML; docs/kubernetes.md has the full reference):
 *
 *   version: v1
 *   layouts:                      # optional: custom layouts, mig-parted's own
 *     mixed:                      # entry syntax (devices, mig-enabled, mig-devices)
 *       - devices: all
 *         mig-devices: {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}
 *   nodes:
 *     - name: gpu-a               # a Kubernetes node name
 *       model: A100-40GB          # a model of `migsched models`
 *       gpus: 8                   # 1..64
 *       layout: balanced          # mode mig (the default): a built-in layout
 *                                 # (inference-peak, balanced, training) or a custom one
 *     - name: gpu-b
 *       model: A100-40GB
 *       gpus: 4
 *       mode: timeslice           # mig | timeslice | whole
 *       replicas: 4               # timeslice: 2..MS_MAX_INST (default 4)
 *
 *   switching:                    # optional: migschedd --k8s-policy chooses the
 *     layouts: [inference-peak, training]   # MIG nodes' layouts among these
 *     windows:                    # (default: every layout) and switches them
 *       - {layout: training, from: "22:00", to: "06:00"}
 *     hysteresis: 900             # seconds a node keeps a layout
 *     switches-per-hour: 2        # per node
 *     drain-timeout: 1800         # seconds to wait for GPU pods
 *     apply-timeout: 600          # seconds to wait for mig-manager
 *     evict: false                # evict GPU pods after the drain timeout
 *     min-gain: 7                 # compute slices of demand a switch must add
 *   With switching, the mig-parted config holds every candidate layout for
 *   every MIG node's model (mig-manager must know each name before it is
 *   set), and those layouts must give every GPU the same instances.
 *
 * The built-in layouts are node-profile's kinds for the node's model
 * (ms_policy_node_layout), so the GPU Operator cuts what the simulator
 * models. Every layout is resolved per model (product profile names) and
 * checked placeable on one GPU of that model with the library's geometry.
 */
#ifndef MIGSCHED_K8SCONF_H
#define MIGSCHED_K8SCONF_H

#include <stdbool.h>
#include <stdio.h>

#include "migsched/geometry.h"
#include "migsched/status.h"

typedef struct ms_k8s_cfg ms_k8s_cfg_t;

typedef enum ms_k8s_mode {
    MS_K8S_MIG = 0,
    MS_K8S_TIMESLICE = 1,
    MS_K8S_WHOLE = 2
} ms_k8s_mode_t;

/* What one node gets. Strings live as long as the configuration. */
typedef struct ms_k8s_node {
    const char *name;
    const ms_model_t *model;
    int gpus;
    ms_k8s_mode_t mode;
    int replicas;              /* timeslice only */
    const char *layout;        /* mig only: the layout the policy names */
    const char *mig_config;    /* value of nvidia.com/mig.config */
    const char *plugin_config; /* value of nvidia.com/device-plugin.config */
} ms_k8s_node_t;

/* Read and check a policy file. Every error names path, line and field
 * (e.g. "nodes[1].layout" or "layouts.mixed[0].mig-devices.3g.20gb").
 * OUT out: free with ms_k8s_cfg_free(). */
ms_status_t ms_k8s_cfg_read(const char *path, ms_k8s_cfg_t **out, ms_diag_t *diag);
void ms_k8s_cfg_free(ms_k8s_cfg_t *c);   /* NULL-safe */

int ms_k8s_cfg_nnodes(const ms_k8s_cfg_t *c);
const ms_k8s_node_t *ms_k8s_cfg_node(const ms_k8s_cfg_t *c, int i);

/* The `switching:` section (NULL when the file has none). Windows name
 * layouts; minutes of the day, from != to, wrapping past midnight. */
typedef struct ms_k8s_window {
    const char *layout;
    int from_min, to_min;
} ms_k8s_window_t;

typedef struct ms_k8s_switching {
    int nlayouts;
    const char *const *layouts;    /* candidate layout names */
    int nwindows;
    const ms_k8s_window_t *windows;
    double hysteresis_s, drain_timeout_s, apply_timeout_s;
    int per_hour, min_gain;
    bool evict;
} ms_k8s_switching_t;

const ms_k8s_switching_t *ms_k8s_cfg_switching(const ms_k8s_cfg_t *c);

/* The mig-parted configs, one per (layout, model) in use: the label value,
 * the layout, the model (NULL for all-disabled) and, when the layout gives
 * every GPU the same instances (uniform), the per-GPU counts of product
 * profiles. Valid as long as the configuration. */
typedef struct ms_k8s_config {
    const char *name, *layout;
    const ms_model_t *model;
    bool uniform;
    int nprof;
    const char *prof[MS_MAX_PROFILES];
    int count[MS_MAX_PROFILES];
} ms_k8s_config_t;

int ms_k8s_cfg_nconfigs(const ms_k8s_cfg_t *c);
void ms_k8s_cfg_config(const ms_k8s_cfg_t *c, int i, ms_k8s_config_t *out);

/* The mig-parted config (`version: v1`, `mig-configs:`): every layout used,
 * per model, plus `all-disabled` when a node runs without MIG. */
ms_status_t ms_k8s_write_mig_parted(FILE *f, const ms_k8s_cfg_t *c);
/* The device plugin configs used, in order: their names, and each one's
 * YAML (`version: v1`, `flags: {migStrategy: ...}`, `sharing:`). */
int ms_k8s_cfg_nplugins(const ms_k8s_cfg_t *c);
const char *ms_k8s_cfg_plugin_name(const ms_k8s_cfg_t *c, int i);
ms_status_t ms_k8s_write_plugin(FILE *f, const ms_k8s_cfg_t *c, int i, const char *indent);
/* Both as ConfigMaps in namespace ns (one YAML stream, two documents). */
ms_status_t ms_k8s_write_configmaps(FILE *f, const ms_k8s_cfg_t *c, const char *ns);
/* One line per node: "NAME nvidia.com/mig.config=X nvidia.com/device-plugin.config=Y". */
ms_status_t ms_k8s_write_labels(FILE *f, const ms_k8s_cfg_t *c);

/* Check an existing mig-parted config file against model m: every config's
 * entries name profiles of m and each entry's counts fit one GPU. *nconfigs
 * receives the number of configs checked. */
ms_status_t ms_k8s_check_mig_parted(const char *path, const ms_model_t *m, int *nconfigs,
                                    ms_diag_t *diag);

/* The KubeSchedulerConfiguration for the cluster's kube-scheduler:
 * profiles default-scheduler and migsched, migschedd as the extender
 * (filter, prioritize, bind; nodeCacheCapable; weight 5; 10 s timeout),
 * percentageOfNodesToScore 100, and managedResources from the geometry
 * tables. Strings are written as given (the caller checks them). */
typedef struct ms_k8s_sched_opts {
    const char *extender_url;   /* urlPrefix, e.g. http://127.0.0.1:7070/extender */
    const char *kubeconfig;     /* clientConnection.kubeconfig */
    int leader_elect;
} ms_k8s_sched_opts_t;
ms_status_t ms_k8s_write_scheduler_config(FILE *f, const ms_k8s_sched_opts_t *o);
/* The migsched.io/mig-* suffixes managedResources lists: every product and
 * generic profile name of every model that is a valid resource name,
 * sorted, unique. *out is malloc'd (the strings are static). */
ms_status_t ms_k8s_resources(const char ***out, int *n);

#endif
