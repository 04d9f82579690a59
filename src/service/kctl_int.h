/* kctl_int.h - private to kctl*.c: the control loops' state. */
#ifndef MIGSCHED_SVC_KCTL_INT_H
#define MIGSCHED_SVC_KCTL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "k8sconf/k8sconf.h"
#include "migsched/lease.h"
#include "service/kctl.h"

struct svc_kctl {
    svc_kctl_cfg_t cfg;
    ms_kube_t *kube;
    const svc_clock_t *clock;
    bool adopted;                    /* took over bound pods in this leadership */
    ms_lease_t *lease;
    ms_nodecfg_t *nc;
    char id[MS_LEASE_ID_MAX + 1];
    char ns[64], lease_name[254];     /* cfg.ns and cfg.lease point here */
    char rv[64];                     /* the Lease's resourceVersion as read */
    pthread_t th;
    pthread_mutex_t mu;              /* a leaf: stop, with cv */
    pthread_cond_t cv;
    bool stop, started;
    bool leader;                     /* the control thread's view */
    _Atomic double leader_until;     /* the clock's mono; read by any thread */
    _Atomic double lease_until;      /* the Lease is ours until then (mono), taken
                                      * over or not: the backend's gate (any thread) */
    double next_nodes;
    /* the node-loop's names, sorted for bsearch */
    const svc_kctl_node_t **byname;
    /* svc_kctl_open's: what cfg's pointers point into */
    ms_k8s_cfg_t *policy;
    svc_kctl_node_t *own_nodes;
    svc_kctl_layout_t *own_layouts;
    /* a test's failpoint (MIGSCHEDD_KCTL_FAIL=stall-before-node-write:P,
     * read at start): a node write to a node named P... sleeps 5 s between
     * its deadline and its request ("" none) */
    char stall_node[64];
};

/* kctl_api.c: a request whose JSON answer is parsed (*status the HTTP
 * status; NULL when no answer came or it is not JSON), sent and answered
 * before until (c's monotonic clock; INFINITY: the client's 30 s) or not
 * sent at all; and a write (true on a 2xx; the object's new
 * resourceVersion into rv when given): as_leader, a write only the leader
 * makes (a node's cordon or layout, an eviction), carries the end of the
 * leadership (svc_kctl_leader_until); the Lease's own writes do not. */
json_t *svc_kctl_api_json(svc_kctl_t *c, const char *method, const char *path, json_t *body, double until,
                          long *status);
bool svc_kctl_api_write(svc_kctl_t *c, const char *method, const char *path, json_t *body, const char *what,
                        bool as_leader, char *rv, size_t rvlen);
/* kctl.c: write the Lease (create or update); the thread's body. */
bool svc_kctl_lease_write(svc_kctl_t *c, ms_lease_do_t what, const ms_lease_record_t *w);
void *svc_kctl_main(void *c);
/* kctl_nodes.c: one round of the node layout loop; the node-name index. */
void svc_kctl_nodes_round(svc_kctl_t *c);
int svc_kctl_cmp_node(const void *a, const void *b);

#endif
