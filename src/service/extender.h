/* extender.h - private to migschedd: the Kubernetes scheduler extender.
 *
 * kube-scheduler (an `extenders:` entry with nodeCacheCapable: true) POSTs
 * ExtenderArgs to /extender/filter and /extender/prioritize and
 * ExtenderBindingArgs to /extender/bind (wire types in
 * ../shared/reference/ecosystem.md section 1; samples in
 * tests/k8s/contract/). By thread:
 *   - extender_json.c (any thread): pure parsing and rendering, no daemon
 *     state (fuzzed by fuzz/fuzz_extender.c, contract-tested by
 *     tests/service/test_extender.c);
 *   - ext_loop.c, ext_adopt.c, ext_pods.c, ext_score.c (the loop): the
 *     handlers (reservations keyed by pod UID in ms_sched, per-node scores
 *     kept from filter to prioritize, bind, release, a new leader's
 *     takeover) and the pod map;
 *   - ext_worker.c, ext_bind.c (the extender workers: two for filter and
 *     prioritize, 16 for binds): kube-scheduler's calls, and a bind in
 *     --kube mode (wait for the instance, annotate the pod, POST the
 *     Binding, roll back on failure);
 *   - ext_watch.c (the pod watch) frees the instances of pods that go;
 *   - ext_takeover.c (kctl, through its takeover callback) lists the pods
 *     a new leader adopts;
 *   - ext_kube.c (main) opens the API-server client and starts the watch;
 *   - ext_msg.c, ext_call.c (any thread): the messages, and a call to the
 *     loop that waits.
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
    int priority;           /* spec.priority (its PriorityClass's value), clamped to the
                             * API's [-1e6, 1e6]; 0 without one */
    bool never_preempts;    /* spec.preemptionPolicy: Never (docs/kubernetes.md) */
    double checkpoint_s;    /* annotation migsched.io/checkpoint-s: how often it
                             * saves its progress (a victim loses only the run
                             * since); 0 without it */
    char *tenant;           /* the tenant label's value, else the namespace */
    char *bad;              /* a pod the extender cannot serve: why (an
                             * Error reply, not a 4xx: the body was fine) */
} svc_ext_pod_t;

typedef struct svc_ext_args {
    svc_ext_pod_t pod;
    char **nodes;           /* NodeNames (or Nodes.items[].metadata.name) */
    int nnodes;
    char *names_buf;        /* non-NULL: nodes[i] point into it (ext_names.c),
                             * else each is its own allocation */
} svc_ext_args_t;

typedef struct svc_ext_bind {
    char *name, *ns, *uid, *node;
} svc_ext_bind_t;

/* Parse a filter/prioritize body. 0, or -1 with err a 4xx naming the field
 * (nothing left to free). */
int svc_ext_parse_args(const char *body, size_t len, const char *tenant_label, svc_ext_args_t *out,
                       svc_err_t *err);
void svc_ext_args_free(svc_ext_args_t *a);
/* The same, every byte through jansson: what svc_ext_parse_args must equal
 * (its tests and fuzz/fuzz_extender.c compare them). */
int svc_ext_parse_args_tree(const char *body, size_t len, const char *tenant_label, svc_ext_args_t *out,
                            svc_err_t *err);

/* ext_names.c: the top-level NodeNames array of a body, read without
 * jansson. 0: buf holds its n names, NUL-terminated one after another
 * (malloc'd), and body[start, end) is the array; -1: a body this reader
 * leaves to jansson (nothing to free). */
typedef struct svc_ext_names {
    char *buf;
    int n;
    size_t start, end;
} svc_ext_names_t;
int svc_ext_names_scan(const char *body, size_t len, svc_ext_names_t *out);
/* Parse one Pod object (as ExtenderArgs.Pod or a pod list's item).
 * tenant_label (--k8s-tenant-label, NULL none): the label whose value is the
 * pod's tenant; without it, or on a pod without that label, the namespace. */
int svc_ext_parse_pod(json_t *pod, const char *tenant_label, svc_ext_pod_t *p, svc_err_t *err);
/* A pod's spec.priority, x (NULL: absent), as the Priority admission plugin
 * wrote it from the pod's PriorityClass (an int32), into *prio clamped to
 * [-1e6, 1e6] (ms_sched's, and the API's jobs'); the DRA allocator's pod
 * reader (dra_pod.c) reads it too. 0 (*prio untouched when x is absent or
 * null), or -1 when x is not an integer (the caller says so, its way). */
int svc_ext_pod_priority(json_t *x, int *prio);
void svc_ext_pod_free(svc_ext_pod_t *p);
/* Parse a bind body (every field a non-empty string). */
int svc_ext_parse_bind(const char *body, size_t len, svc_ext_bind_t *out, svc_err_t *err);
void svc_ext_bind_free(svc_ext_bind_t *b);

/* The /v1/jobs request body a pod becomes (the job's canonical request, so
 * that a restarted daemon reads it back like any job). malloc'd. */
char *svc_ext_job_body(const svc_ext_pod_t *p, bool with_tenant);

/* Replies, malloc'd JSON (NULL: out of memory). Filter: the nodes that
 * pass, those that fail now (with reasons) and those that never can. */
typedef struct svc_ext_verdict {
    const char *node;
    const char *reason;     /* NULL: passes */
    bool unresolvable;
    bool omitted;           /* in neither list: passes, but not offered */
} svc_ext_verdict_t;

char *svc_ext_filter_reply(const svc_ext_verdict_t *v, int n, const char *error);
char *svc_ext_prioritize_reply(const char *const *nodes, const int *scores, int n);
char *svc_ext_bind_reply(const char *error);

/* --- the daemon side ------------------------------------------------------ */

/* A call for the extender's workers (ext_worker.c), queued by an HTTP
 * thread with its connection suspended; done(j) is called on the worker
 * once *status and *out (malloc'd) hold the answer, and resumes it. */
typedef struct svc_ext_job {
    svc_qlink_t link;
    const char *verb;              /* filter, prioritize, bind */
    const char *body;
    size_t len;
    int status;
    char *out;
    void (*done)(struct svc_ext_job *j);
} svc_ext_job_t;

/* ext_worker.c: the pool (start/stop: main; push: an HTTP thread; 0, or -1
 * when it has stopped). */
int svc_ext_workers_start(svc_t *d);
void svc_ext_workers_stop(svc_t *d);
int svc_ext_workers_push(svc_t *d, svc_ext_job_t *j);
/* ext_loop.c (loop): the handler of SVC_M_EXT messages, and its tick
 * (expired reservations). */
void svc_ext_handle(svc_t *d, svc_msg_t *m, double now);
void svc_ext_tick(svc_t *d, double now);
/* ext_pods.c (main): the pod map. */
int svc_ext_init(svc_t *d);
void svc_ext_free(svc_t *d);
/* ext_pods.c (loop, svc_job_sync): a job left STARTING; the binds waiting
 * for their instances ask again (ext_runs.c). No extender: nothing. */
void svc_ext_job_moved(svc_t *d);
/* ext_msg.c (any thread) */
void svc_ext_msg_free(void *ext);
/* May this replica serve the extender (the leader, or no election)? */
bool svc_ext_serving(const svc_t *d);
/* The deadline (ms_clock_mono's clock) of a write this replica makes as
 * the leader (a Binding, an Eviction): when its leadership ends, at most
 * max_s from now; now when it does not lead (ms_kube_request_by then
 * sends nothing). */
double svc_ext_write_deadline(const svc_t *d, double max_s);
/* A test's failpoint between a leader write's deadline and its request
 * (svc_t.ext_stall_bind, ext_stall_evict): when pod name starts with
 * prefix (not ""), says msg and sleeps 5 s to an absolute time on the
 * monotonic clock, so that a replica frozen (kill -STOP) in it goes on at
 * once when continued, as a stale leader. */
void svc_ext_stall(const char *prefix, const char *name, const char *ns, const char *msg);
/* Is m an extender read (answered before the batch's writes)? */
bool svc_ext_is_read(const svc_msg_t *m);
/* Would m place a pod anew (filter, bind: refused while the store cannot
 * write, redo.c)? */
bool svc_ext_is_new(const svc_msg_t *m);
/* Answer m 503 with why (its verb's outcome: not done). */
void svc_ext_refuse(svc_msg_t *m, const char *why);
/* ext_takeover.c (kctl's takeover callback; ctx is the svc_t): a replica
 * that just became the leader takes over the pods another one bound: lists
 * the pods and has the loop adopt each bound, unfinished pod that carries
 * migsched.io/placement. 0, or -1 when the pods could not be listed (a pod
 * that cannot be adopted is logged and skipped). */
int svc_ext_takeover(void *ctx);
/* ext_kube.c (main) */
int svc_ext_kube_open(svc_t *d);
void svc_ext_kube_close(svc_t *d);
int svc_ext_watch_start(svc_t *d);
void svc_ext_watch_stop(svc_t *d);

#endif
