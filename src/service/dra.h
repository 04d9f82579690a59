/* dra.h - private to migschedd: the placement brain for Kubernetes DRA
 * (--dra; docs/dra.md, "The allocator").
 *
 * migschedd watches ResourceSlices, DeviceClasses, ResourceClaims,
 * ResourceClaimTemplates and pods; maps each published device of a driver
 * it manages (NVIDIA's DynamicMIG scheme: gpu.nvidia.com, and
 * migsched-agent's mig.migsched.io) to its model (node, GPU, profile,
 * placement start); gates pods at admission (a mutating webhook) whose
 * claims ask for those devices; decides one device per claim request with
 * ms_sched (the configured policy, fa+ by default); writes the allocation
 * as kube-scheduler would (finalizer, results, config, nodeSelector,
 * allocationTimestamp), removes the gate and lets kube-scheduler bind. A
 * DeviceTaintRule per managed driver fences kube-scheduler's own allocator
 * off the devices. By thread (one file per thread's job):
 *   dra_obj.c, dra_pod.c, dra_cel.c,   any: pure parsing and writing of the
 *   dra_qty.c, dra_out.c               API's objects and the AdmissionReview,
 *                                      the CEL subset, quantities (fuzzed)
 *   dra_msg.c                          any: messages, write jobs, leadership
 *   dra_store.c                        the DRA loop: its tables
 *   dra_model.c, dra_map.c             the DRA loop: the objects; devices to
 *                                      GPUs, nodes and kinds
 *   dra_sched.c, dra_place.c,          the DRA loop: ms_sched built from the
 *   dra_decide.c, dra_commit.c,        GPUs, what each pod gets, decisions
 *   dra_review.c                       to writes, the webhook's question
 *   dra_loop.c                         the DRA loop thread: batches of
 *                                      messages, the tick (expiry, retries)
 *   dra_watch.c                        the watch threads (one per kind)
 *   dra_write.c                        the writer threads: every API write
 *   dra_hook.c                         the webhook worker: AdmissionReview,
 *                                      /dra/status
 *   dra_open.c                         main: options, start and stop; the
 *                                      takeover callback (kctl's thread)
 * Nothing here runs on the core's loop: in --dra mode migschedd has no
 * nodes, jobs or store of its own (the API server holds every allocation),
 * so the DRA loop owns its ms_sched and its state, and the core's loop is
 * not started.
 */
#ifndef MIGSCHED_SVC_DRA_H
#define MIGSCHED_SVC_DRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "service/extender.h"
#include "service/svc.h"

#define SVC_DRA_GATE "migsched.io/dra"          /* the scheduling gate */
#define SVC_DRA_MAX_DRIVERS 8

/* --dra* settings (dra_open.c parses them for config.c). */
typedef struct svc_dra_cfg {
    bool on;                                    /* --dra */
    char *drivers[SVC_DRA_MAX_DRIVERS];          /* --dra-driver (default gpu.nvidia.com, mig.migsched.io) */
    int ndrivers;
    double expire_s;                            /* --dra-expire: unreserved allocations (default 120) */
    bool fence;                                 /* --dra-fence (default true): a DeviceTaintRule per driver */
    double retry_s;                             /* --dra-retry: a failed pod is tried again after (default 2) */
    double hook_timeout_s;                      /* --dra-webhook-timeout: the webhook's answer within (default 3) */
} svc_dra_cfg_t;

/* config.c: a --dra* option (k without dashes, v its value or "true" for a
 * flag): 0, or -1 with msg. */
int svc_dra_cfg_set(svc_cfg_t *c, const char *k, const char *v, char *msg, size_t mlen);
void svc_dra_cfg_free(svc_cfg_t *c);
bool svc_dra_on(const svc_cfg_t *c);
/* The usage lines of the --dra* options. */
void svc_dra_usage(FILE *f);

/* main.c: in --dra mode, instead of the core's start-up: the API client,
 * the DRA threads, leader election (its takeover rebuilds the DRA state
 * from the API server), the HTTP front with the webhook. 0, or 1/2
 * (printed). svc_dra_stop ends everything it started, in order. */
int svc_dra_serve(svc_t *d, svc_http_t **http);
void svc_dra_stop(svc_t *d, svc_http_t *http);

/* http.c: a /dra/ request (any HTTP thread), j->verb is "METHOD PATH" with
 * the path after /dra/; the answer comes through j->done on the webhook
 * worker. 0, or -1 when no worker runs (j untouched). */
int svc_dra_push(svc_t *d, svc_ext_job_t *j);

#endif
