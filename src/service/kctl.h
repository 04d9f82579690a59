/* kctl.h - private to migschedd: its Kubernetes control loops.
 *
 * One thread (kctl.c, kctl_nodes.c), started in Kubernetes mode, that
 *   - takes part in leader election on a coordination.k8s.io/v1 Lease
 *     (src/control/lease.c decides; this file reads and writes the Lease):
 *     only the leader binds pods and changes nodes, and /readyz answers 503
 *     on a standby, so a Service in front of the replicas sends
 *     kube-scheduler's extender calls to the leader alone;
 *   - while leader, runs the node MIG layout controller (src/control/
 *     nodecfg.c) on the nodes the cluster policy marks as GPU Operator
 *     nodes: it observes them and their pods from the API server, gives the
 *     controller the demand of unschedulable nvidia.com/mig-* pods, and
 *     carries out its actions (cordon with our annotation, set
 *     nvidia.com/mig.config and clear nvidia.com/mig.config.state in one
 *     patch, evict through the Eviction API when told, uncordon).
 * The leader identity is $POD_NAME, else the host name and the pid.
 * Becoming the leader, it calls cfg.takeover (migschedd's: the extender
 * adopts the pods the last leader bound, ext_takeover.c) and serves only
 * once that returned 0; kctl itself knows nothing of the extender.
 *
 * Files: kctl.c (the kctl thread: the Lease and the thread's loop),
 * kctl_nodes.c (kctl thread: the node layout loop), kctl_api.c (the API
 * helpers and times; the leader flag, read by any thread), kctl_open.c
 * (main: the settings, start and stop).
 */
#ifndef MIGSCHED_SVC_KCTL_H
#define MIGSCHED_SVC_KCTL_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/kube.h"
#include "migsched/nodecfg.h"
#include "service/svc.h"

typedef struct svc_kctl svc_kctl_t;

/* A node whose MIG layout the GPU Operator applies and this loop chooses. */
typedef struct svc_kctl_node {
    const char *name, *model;
    int ngpus;
} svc_kctl_node_t;

/* A layout a node of `model` may run (per-GPU counts of product profiles). */
typedef struct svc_kctl_layout {
    const char *name, *model;
    int n;
    const char **prof;             /* owned by whoever built the list */
    int *count;
    int from_min, to_min;          /* time window, -1 none */
} svc_kctl_layout_t;

typedef struct svc_kctl_cfg {
    bool elect;                    /* leader election (off: always the leader) */
    const char *ns;                /* the Lease's namespace */
    const char *lease;             /* the Lease's name */
    const char *identity;          /* NULL: $POD_NAME, else host-pid */
    double lease_s;                /* lease duration (renew deadline and retry follow) */
    /* node layouts: none when nnodes is 0 */
    const svc_kctl_node_t *nodes;
    int nnodes;
    const svc_kctl_layout_t *layouts;
    int nlayouts;
    ms_nodecfg_cfg_t nodecfg;
    double period_s;               /* node loop period */
    /* on becoming the leader, before serving (NULL: nothing to take over):
     * 0 done, -1 try again at the next round (still not serving) */
    int (*takeover)(void *ctx);
    void *takeover_ctx;
    const svc_clock_t *clock;      /* NULL: the real one */
} svc_kctl_cfg_t;

void svc_kctl_cfg_defaults(svc_kctl_cfg_t *cfg);

/* Make the control loops without starting their thread (tests drive
 * svc_kctl_lease_round themselves). 0, or -1 with err filled. k stays the
 * caller's. */
int svc_kctl_new(const svc_kctl_cfg_t *cfg, ms_kube_t *k, svc_kctl_t **out, char *err, size_t errlen);
/* The same, and start the thread. */
int svc_kctl_start(const svc_kctl_cfg_t *cfg, ms_kube_t *k, svc_kctl_t **out, char *err, size_t errlen);
/* One round of the election (the thread's; a test's without it): read the
 * Lease, write what the rules say, take over on becoming the leader. */
void svc_kctl_lease_round(svc_kctl_t *c);
/* Stop it; a leader releases the Lease so a standby takes over at once. */
void svc_kctl_stop(svc_kctl_t *c);     /* NULL-safe */
/* True while this replica may bind pods and change nodes (any thread). */
bool svc_kctl_is_leader(const svc_kctl_t *c);
/* True while this replica holds the Lease, whether or not it serves yet:
 * the only time it may act on the backend (any thread). */
bool svc_kctl_may_act(const svc_kctl_t *c);
/* The monotonic times (c's clock) until which is_leader and may_act hold:
 * INFINITY without an election, <= now when they do not (any thread). A
 * write carries the first as its deadline (svc_clock_real_deadline): one
 * started just before the leadership ends is not sent after it. */
double svc_kctl_leader_until(const svc_kctl_t *c);
double svc_kctl_lease_until(const svc_kctl_t *c);
const char *svc_kctl_identity(const svc_kctl_t *c);

/* migschedd's use: from its settings (--leader-elect, --lease,
 * --lease-duration, --k8s-policy and the --layout-* overrides), start the
 * loops when any is asked for (d->kctl; NULL when none), with takeover as
 * the callback. 0, or -1 with err filled (names the file, line and field
 * of a bad policy). */
int svc_kctl_open(svc_t *d, int (*takeover)(void *ctx), char *err, size_t errlen);
/* The backend's gate (ms_backend_set_gate, ctx the svc_t): with
 * --leader-elect, true only while this replica holds the Lease (any thread). */
bool svc_kctl_gate(void *ctx);
/* Shutdown in two steps (main thread): close stops the loops and hands the
 * Lease over (the gate answers false from then on); free, once every
 * thread that reads d->kctl has stopped, frees it. */
void svc_kctl_close(svc_t *d);
void svc_kctl_free(svc_t *d);

/* RFC 3339 times as the API server writes them ("2026-12-01T10:00:00.123456Z"). */
bool svc_kctl_time_parse(const char *s, double *out);
void svc_kctl_time_format(double t, char *buf, size_t len);

#endif
