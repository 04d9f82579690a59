/* dp.h - migsched-agent's kubelet device plugin (docs/kubernetes.md,
 * "Delivery"): how a bound pod's container gets its MIG instance.
 *
 * The agent registers every migsched.io resource of its node with the
 * kubelet (device plugin API v1beta1, one gRPC server per resource on a
 * unix socket in the kubelet's device-plugins directory) and advertises
 * slots, not instances: "mig-1g.5gb-0" .. "mig-1g.5gb-N", as many as the
 * node could ever run of that resource, so the kubelet's own accounting
 * never refuses a pod that migschedd bound. Which instance a container gets
 * is migschedd's decision, recorded on the pod (migsched.io/job) and in the
 * agent's inventory (the instance tagged with that job):
 *   Allocate           answers, for each container, the CDI device
 *                      migsched.io/slot=<first slot of the container>: a
 *                      name only, the same whatever pod it serves;
 *   PreStartContainer  (asked for: pre_start_required) runs before each
 *                      start of the container: the kubelet's pod-resources
 *                      API says which pod's container holds those slots,
 *                      the API server says which job migschedd bound that
 *                      pod to, the inventory says which instances run that
 *                      job; the agent writes the slot's CDI spec with those
 *                      instances' device nodes and NVIDIA_VISIBLE_DEVICES.
 * The container runtime resolves the CDI device when it creates the
 * container, after PreStartContainer: no spec, no container (the runtime
 * refuses an unresolvable CDI device), so no container ever runs without
 * its instance or with another pod's.
 *
 * Threads: the manager thread (dp.c) registers and re-registers; each
 * resource's server thread (src/rpc/) runs its handlers; PreStartContainer
 * reads the inventory under a->mu.
 */
#ifndef MIGSCHED_AGENT_DP_H
#define MIGSCHED_AGENT_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/agent.h"
#include "kube/kube.h"
#include "rpc/rpc.h"

/* The options (main.c passes what it does not know to ag_dp_opt). */
struct ag_dp_cfg {
    char *dir;              /* --device-plugin-dir; NULL: the device plugin is off */
    char *pod_resources;    /* --pod-resources-socket */
    char *kube_api, *kube_token_file, *kube_ca, *kubeconfig;
};

/* 1: name was a device-plugin option and value is taken; 0: not ours;
 * -1: out of memory. */
int ag_dp_opt(ag_cfg_t *c, const char *name, const char *value);
void ag_dp_usage(FILE *f);
void ag_dp_cfg_free(ag_cfg_t *c);

/* Start serving and registering (nothing when --device-plugin-dir is not
 * given: *out stays NULL). 0, or -1 (printed). */
int ag_dp_start(ag_t *a, ag_dp_t **out);
void ag_dp_stop(ag_dp_t *d);   /* NULL-safe; removes its sockets */

/* --- dp_msg.c: resources and the messages, no I/O (fuzzed) ------------- */

#define AG_DP_PREFIX "migsched.io/"
#define AG_DP_VERSION "v1beta1"
#define AG_DP_CDI_KIND "migsched.io/slot"
#define AG_DP_MAX_SLOTS 4096

typedef struct ag_dp_res {
    char name[64];          /* migsched.io/mig-1g.5gb */
    char id[48];            /* mig-1g.5gb: the slots' prefix, the socket's name */
    int count;              /* slots id-0 .. id-(count-1) */
} ag_dp_res_t;

/* The resources a node of a->ngpus GPUs serves: mig-<profile> by product
 * and generic name (each profile any GPU has), mem-gb, and gpu-share on a
 * time-sliced node; each with as many slots as the node could use at once.
 * 0, or -1: out of memory. */
int ag_dp_resources(const ag_t *a, ag_dp_res_t **out, int *n);

/* The slot number of id in r, or -1 when id is not one of r's slots. */
int ag_dp_slot(const ag_dp_res_t *r, const char *id);

/* Handlers' message work; each returns an MS_RPC_* code with msg set on
 * error, and *out malloc'd on success. */
int ag_dp_options(ms_rpc_buf_t *out);
int ag_dp_list(const ag_dp_res_t *r, ms_rpc_buf_t *out);
int ag_dp_preferred(const ag_dp_res_t *r, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg,
                    size_t msglen);
int ag_dp_allocate(const ag_dp_res_t *r, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg,
                   size_t msglen);
/* PreStartContainerRequest: the container's slots checked against r; *key
 * is the lowest slot number (the CDI device Allocate named). */
int ag_dp_prestart_key(const ag_dp_res_t *r, const uint8_t *req, size_t len, int *key, char *msg,
                       size_t msglen);
/* RegisterRequest for r at endpoint (a socket name in the directory). */
int ag_dp_register_req(const ag_dp_res_t *r, const char *endpoint, ms_rpc_buf_t *out);

/* Who holds slot key of r, from a pod-resources ListPodResourcesResponse:
 * 0 found (ns, pod, container filled), 1 no container holds it, -1 not a
 * valid message. */
typedef struct ag_dp_owner {
    char ns[254], pod[254], container[254];
} ag_dp_owner_t;
int ag_dp_owner(const ag_dp_res_t *r, int key, const uint8_t *resp, size_t len, ag_dp_owner_t *out);

/* --- dp_slot.c: PreStartContainer's lookup and the slot's CDI spec ---- */

/* Resolve and write the slot's spec; an MS_RPC_* code, msg on error. */
int ag_dp_prestart(ag_t *a, ms_kube_t *kube, const ag_dp_res_t *r, const uint8_t *req, size_t len, char *msg,
                   size_t msglen);
/* The spec file of slot key of r (0 written; -1 with msg). */
int ag_dp_slot_path(const ag_t *a, const ag_dp_res_t *r, int key, char *buf, size_t len);

#endif
