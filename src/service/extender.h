/* extender.h - private to migschedd: the Kubernetes scheduler extender.
 *
 * kube-scheduler (an `extenders:` entry with nodeCacheCapable: true) POSTs
 * ExtenderArgs to /extender/filter and /extender/prioritize and
 * ExtenderBindingArgs to /extender/bind (wire types in
 * ../shared/reference/ecosystem.md section 1; samples in
 * tests/k8s/contract/). Two halves:
 *   - extender_json.c: pure parsing and rendering, no daemon state (fuzzed
 *     by fuzz/fuzz_extender.c, contract-tested by tests/service/
 *     test_extender.c);
 *   - extender.c: the loop-side handlers (reservations keyed by pod UID in
 *     ms_sched, per-node scores, bind), the HTTP-side orchestration of a
 *     bind in --kube mode (wait for the instance, annotate the pod, POST the
 *     Binding, roll back on failure) and the pod watch that frees instances.
 *
 * Pod resources (containers' requests, else limits; summed over containers):
 *   migsched.io/mig-<profile>: N   a MIG instance of <profile> ("2g.10gb" or
 *                                  generic "2g"); N > 1: a gang of N whole
 *                                  GPUs on one node
 *   migsched.io/mem-gb: N          the smallest instance with N GB
 *   migsched.io/gpu-share: 1       a slot on a time-sliced GPU
 * and the pod annotation migsched.io/gang: N (N whole GPUs on one node).
 */
#ifndef MIGSCHED_SVC_EXTENDER_H
#define MIGSCHED_SVC_EXTENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "service/svc.h"

#define SVC_EXT_PREFIX "migsched.io/"

/* What a pod asks for, from ExtenderArgs.Pod. Strings owned. */
typedef struct svc_ext_pod {
    char *uid, *name, *ns;
    char *profile;          /* mig-<profile>: the profile text, else NULL */
    double mem_gb;          /* mem-gb, else 0 */
    bool share;             /* gpu-share */
    int gang;               /* 1, or N whole GPUs */
    char *bad;              /* a pod the extender cannot serve: why (an
                             * Error reply, not a 4xx: the body was fine) */
} svc_ext_pod_t;

typedef struct svc_ext_args {
    svc_ext_pod_t pod;
    char **nodes;           /* NodeNames (or Nodes.items[].metadata.name) */
    int nnodes;
} svc_ext_args_t;

typedef struct svc_ext_bind {
    char *name, *ns, *uid, *node;
} svc_ext_bind_t;

/* Parse a filter/prioritize body. 0, or -1 with err a 4xx naming the field
 * (nothing left to free). */
int svc_ext_parse_args(const char *body, size_t len, svc_ext_args_t *out, svc_err_t *err);
void svc_ext_args_free(svc_ext_args_t *a);
/* Parse one Pod object (as ExtenderArgs.Pod or a pod list's item). */
int svc_ext_parse_pod(json_t *pod, svc_ext_pod_t *p, svc_err_t *err);
void svc_ext_pod_free(svc_ext_pod_t *p);
/* Parse a bind body (every field a non-empty string). */
int svc_ext_parse_bind(const char *body, size_t len, svc_ext_bind_t *out, svc_err_t *err);
void svc_ext_bind_free(svc_ext_bind_t *b);

/* The /v1/jobs request body a pod becomes (the job's canonical request, so
 * that a restarted daemon reads it back like any job). malloc'd. */
char *svc_ext_job_body(const svc_ext_pod_t *p);

/* Replies, malloc'd JSON (NULL: out of memory). Filter: the nodes that
 * pass, those that fail now (with reasons) and those that never can. */
typedef struct svc_ext_verdict {
    const char *node;
    const char *reason;     /* NULL: passes */
    bool unresolvable;
} svc_ext_verdict_t;

char *svc_ext_filter_reply(const svc_ext_verdict_t *v, int n, const char *error);
char *svc_ext_prioritize_reply(const char *const *nodes, const int *scores, int n);
char *svc_ext_bind_reply(const char *error);

/* --- the daemon side (extender.c) ------------------------------------- */

/* Route POST /extender/{filter,prioritize,bind} (on an extender worker of
 * http.c: it may block). *status and *body (malloc'd) are the reply. */
void svc_ext_http(svc_t *d, const char *verb, const char *body, size_t len, int *status,
                  char **body_out);
/* The loop's handler of SVC_M_EXT_* messages, and its tick (expired
 * reservations). */
void svc_ext_handle(svc_t *d, svc_msg_t *m, double now);
void svc_ext_tick(svc_t *d, double now);
void svc_ext_msg_free(void *ext);
/* A replica that just became the leader takes over the pods another one
 * bound: lists the pods and adopts each bound, unfinished pod that carries
 * migsched.io/placement (kctl.c calls it; any thread but the loop's).
 * 0, or -1 when the pods could not be listed (a pod that cannot be adopted
 * is logged and skipped). */
int svc_ext_adopt(svc_t *d);
/* May this replica serve the extender (the leader, or no election)? */
bool svc_ext_serving(const svc_t *d);
/* Is m an extender read (answered before the batch's writes)? */
bool svc_ext_is_read(const svc_msg_t *m);

#endif
