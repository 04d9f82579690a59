/* extender_int.h - private to the extender's files (ext_*.c): its state
 * and messages. */
#ifndef MIGSCHED_SVC_EXTENDER_INT_H
#define MIGSCHED_SVC_EXTENDER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "service/extender.h"

#define SVC_EXT_UID_MAX 128        /* a pod's uid as a victim keeps it (the API server's: 36) */
#define SVC_EXT_REFUSED 64

/* A pod the extender has seen: its current job (a reservation, or the
 * instance it runs on). */
typedef struct ext_pod {
    char *uid;
    svc_job_t *job;
    int gen;                       /* jobs made for it (their ids) */
    double expires;                /* its reservation's end */
    bool want_release;             /* gone while its instance was starting */
    bool release_finished;
    double preempt_wait;           /* its victims' evictions asked for: no new
                                    * search before this (ext_preempt.c) */
    int preempt_node;              /* their node (the scheduler's index) */
    int preempt_n;                 /* how many */
    char *preempt_path;            /* a preemptor's pod's API path, for its nudge */
    int preempt_left;              /* its evicted victims whose release the
                                    * watch has not brought yet */
    char *preemptor;               /* a victim's: its preemptor's uid */
    char *wait_path;               /* turned down for room: its pod's API path,
                                    * to nudge when room frees (ext_loop.c) */
    double wait_since;             /* since when */
} ext_pod_t;

#define EXT_TOMB ((ext_pod_t *)1)

/* Binds waiting for their instances (ext_runs.c): the loop moves gen when
 * a job leaves STARTING, while waiters > 0. */
typedef struct svc_ext_runs {
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* CLOCK_MONOTONIC */
    uint64_t gen;                  /* under mu */
    atomic_int waiters;
} svc_ext_runs_t;

/* The pod map (ext_pods.c): the loop thread's. */
typedef struct svc_ext {
    ext_pod_t **slots;             /* open addressing by uid */
    size_t cap, used, n;
    double ttl_s;
    struct svc_ext_scores *scores; /* the last filter's (ext_score.c) */
    /* pods whose eviction the API server refused (a PodDisruptionBudget):
     * no victim until then (ext_preempt.c; a ring, the oldest replaced) */
    struct { char uid[SVC_EXT_UID_MAX]; double until; } refused[SVC_EXT_REFUSED];
    int nrefused, refused_next;
    svc_queue_t nudges;            /* ext_nudge.c's, any thread (made with the map) */
    svc_ext_runs_t runs;           /* binds waiting for instances (made with the map) */
} svc_ext_t;

enum { EXT_FILTER = 1, EXT_PRIORITIZE, EXT_BIND, EXT_STATE, EXT_RELEASE, EXT_RESYNC, EXT_ADOPT, EXT_EVICTED };

/* A victim pod of a preemption (ext_preempt.c picks it on the loop,
 * ext_evict.c asks the API server on a worker). */
typedef struct ext_victim {
    char ns[64], name[254], uid[SVC_EXT_UID_MAX];
    char job[160];                 /* its job id */
    int tenant;                    /* its job's tenant index (the metric) */
    long code;                     /* the Eviction's HTTP status, 0 no answer */
    bool dry_refused;              /* the budgets' count or a dry run refused the
                                    * set: none was evicted */
    char pdb[254];                 /* the budget whose count refused it ("" none) */
} ext_victim_t;

/* One extender message (svc_msg_t.ext). */
typedef struct ext_msg {
    int verb;
    svc_ext_args_t args;           /* filter, prioritize */
    svc_ext_bind_t bind;           /* bind; release: uid */
    bool finished;                 /* release: the pod completed (else deleted) */
    bool rollback;                 /* release: only if job_id is the pod's job */
    bool scan;                     /* release: look the pod up in the job table
                                    * too (one bound before a restart) */
    char **uids;                   /* resync: the pods that exist */
    int nuids;
    double list_t;                 /* resync: when the list began */
    json_t *pods;                  /* adopt: the pod list's items (owned) */
    /* replies */
    bool ok;
    char job_id[160];
    int state;                     /* ms_job_state_t, -1 unknown */
    char node[SVC_NODE_NAME_MAX + 1], profile[32], gpu_uuid[48], inst_uuid[48];
    int gpu, start, ninst;
    char places[512];              /* state: every instance's "node/gpu/start", comma-separated */
    char why[300];
    /* filter (reply): pods to evict once kube-scheduler has its answer,
     * for args.pod; evicted: their outcomes,
     * the preemptor's uid in bind.uid and job id in job_id */
    ext_victim_t *evict;
    int nevict;
} ext_msg_t;

/* The pod watch thread (ext_watch.c), started by ext_kube.c. */
struct svc_ext_watch {
    pthread_t th;
    volatile int stop;             /* checked by ms_kube_watch at least once a second */
    pthread_t nudger;              /* ext_nudge.c */
    bool nudging;
};
void *svc_ext_watch_main(void *d);

/* ext_msg.c (any thread) */
ext_msg_t *svc_ext_msg_new(int verb);     /* NULL out of memory */
/* The id of a pod's gen-th job: "k8s-<uid>" (gen 1), "k8s-<uid>.<gen>" (a
 * filter after its hold lapsed, a bind on another node), "k8s-<uid>.<tag><gen>"
 * (tag "a": a new leader's adoption). The uid goes in as it is when it is a
 * plain UID (1-64 of A-Z a-z 0-9 -, as the API server's are), else as "x"
 * and a 64-bit hash of it (16 hex digits): every id keeps the daemon's id
 * rules (svc_id_valid), whatever kube-scheduler sends. (A uid of 128 bytes
 * made an id that the backend's tag cut at 127; a restart then took that
 * pod's instance for nobody's and destroyed it.) buf has room for
 * SVC_EXT_ID_MAX bytes. */
#define SVC_EXT_ID_MAX 96
void svc_ext_job_id(const char *uid, const char *tag, int gen, char *buf, size_t len);

/* ext_call.c (any thread but the loop's): post e to the loop and wait;
 * returns e (with its replies; the caller frees it) or NULL. */
ext_msg_t *svc_ext_call(svc_t *d, ext_msg_t *e, int *status, char **body);
/* GET path of the API server within timeout_ms: the parsed answer of a
 * 200, else NULL; *status (when asked) the HTTP status, 0 for no answer. */
json_t *svc_ext_get_json(svc_t *d, const char *path, long timeout_ms, long *status);

/* ext_bind.c (any thread): the API path of pod ns/name with sub ("",
 * "/binding", "/eviction?..."), names percent-encoded; false if it does
 * not fit in len. */
bool svc_ext_pod_path(const char *ns, const char *name, const char *sub, char *buf, size_t len);
/* ext_bind.c (an extender worker): a bind in --kube mode (frees e). */
void svc_ext_kube_bind(svc_t *d, ext_msg_t *e, int *status, char **body);

/* ext_pods.c (loop): the map, and where a pod's job stands */
ext_pod_t *svc_ext_pod_find(svc_ext_t *x, const char *uid);
ext_pod_t *svc_ext_pod_add(svc_ext_t *x, const char *uid);   /* NULL out of memory */
void svc_ext_pod_del(svc_ext_t *x, ext_pod_t *p);
/* The job's node name ("" none) and state (-1 none) in the scheduler's view. */
const char *svc_ext_job_node(const svc_t *d, const svc_job_t *j);
int svc_ext_job_state(const svc_t *d, const svc_job_t *j);
/* Does the pod hold room now (its job reserved, starting or running)? */
bool svc_ext_pod_holds(const svc_t *d, const ext_pod_t *p);
/* A placed job's instances as "node/gpu/start" (the node's GPU index),
 * comma-separated: the bind's migsched.io/placements; "" when they do not
 * fit in len. */
void svc_ext_places(const svc_t *d, const ms_sched_job_info_t *info, char *buf, size_t len);
/* ext_loop.c (loop): release whatever the pod holds now. */
void svc_ext_release(svc_t *d, ext_pod_t *p, bool finished, double now);
/* ext_msg.c (the loop's handlers): the answer of an extender message, body
 * (NULL: out of memory, a 500). */
void svc_ext_reply(svc_msg_t *m, int status, char *body);

/* ext_score.c (loop): the last filter's per-node scores (by the
 * scheduler's node index), for the prioritize of the same pod. put: 0, or
 * -1 out of memory (nothing kept). get: true with out[i] for node[i] when
 * they are still what a scoring from scratch would give; false: score
 * again. drop: forget them. */
int svc_ext_scores_put(svc_t *d, const char *uid, const char *req, const int *node, const int *score,
                       int n, double now);
bool svc_ext_scores_get(svc_t *d, const char *uid, const char *req, const int *node, int n, int *out,
                        double now);
void svc_ext_scores_drop(svc_ext_t *x);
void svc_ext_scores_free(svc_ext_t *x);

/* ext_adopt.c (loop): EXT_ADOPT, a new leader's takeover of bound pods. */
void svc_ext_h_adopt(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now);

/* ext_preempt.c (loop): with --preempt, a pod that fits none of nodes
 * (names[i] are the scheduler's nodes, v[idx[i]] their verdicts) gets
 * victims picked for it by geometry (e->evict; the worker evicts them after
 * the reply, ext_evict.c); and EXT_EVICTED, what the API server said. */
void svc_ext_preempt(svc_t *d, ext_pod_t *p, const svc_ext_pod_t *pod, const ms_sched_req_t *r,
                     const char *const *names, int n, svc_ext_verdict_t *v, const int *idx, ext_msg_t *e,
                     double now);
void svc_ext_h_evicted(svc_t *d, svc_msg_t *m, ext_msg_t *e, double now);
/* A pod released (svc_ext_release): if it is a victim, its preemptor
 * counts it, and is nudged at the last. */
void svc_ext_victim_gone(svc_t *d, ext_pod_t *v);
/* svc_ext_tick's, for each pod: a preemptor whose wait ran out. */
void svc_ext_preempt_tick(svc_t *d, ext_pod_t *p, double now);
/* ext_evict.c (an extender worker, after the filter's reply): a dry run
 * of every eviction of e->evict, then, if none was refused, the evictions;
 * the outcomes to the loop (EXT_EVICTED). Frees e. */
void svc_ext_evict(svc_t *d, ext_msg_t *e);
/* ext_nudge.c: a waiting pod (path: its API path, svc_ext_pod_path;
 * uid: its UID, the patch's precondition) touched (the annotation key:
 * why, and when) so that kube-scheduler tries it again. svc_ext_nudge: the loop, queued
 * for the nudge thread; false when it could not be (out of memory,
 * stopped). start/stop: the main thread, with the pod watch (ext_kube.c);
 * the queue is svc_ext_t's (made by svc_ext_init, drained by
 * svc_ext_free), so the loop may nudge before the thread starts and after
 * it stopped. */
bool svc_ext_nudge(svc_t *d, const char *path, const char *uid, const char *key, const char *why);
/* The same for a takeover, which queues before its leadership starts: the
 * nudge waits for it (a short while) instead of being dropped. */
bool svc_ext_nudge_when_leading(svc_t *d, const char *path, const char *uid, const char *key, const char *why);
#define SVC_EXT_PREEMPT_RETRY "migsched.io/preempt-retry"   /* a preemptor's */
#define SVC_EXT_RETRY "migsched.io/retry"                   /* room freed */
/* ext_loop.c (the loop): room freed outside a filter (a pod gone or
 * completed, a hold expired): the pods turned down for room longest ago
 * (at most a few, not gone) are nudged. */
void svc_ext_room_freed(svc_t *d, const ext_pod_t *gone);
int svc_ext_nudger_start(svc_t *d);
void svc_ext_nudger_stop(svc_t *d);
void svc_ext_nudges_free(svc_ext_t *x);
/* ext_runs.c: a bind's wait for its instance. init/free: the main thread
 * (svc_ext_init, svc_ext_free); moved: the loop (svc_ext_job_moved);
 * enter, gen, wait, leave: the workers (ext_bind.c). */
int svc_ext_runs_init(svc_ext_runs_t *r);
void svc_ext_runs_free(svc_ext_runs_t *r);
void svc_ext_runs_moved(svc_ext_runs_t *r);
void svc_ext_runs_enter(svc_ext_runs_t *r);
void svc_ext_runs_leave(svc_ext_runs_t *r);
uint64_t svc_ext_runs_gen(svc_ext_runs_t *r);
bool svc_ext_runs_wait(svc_ext_runs_t *r, uint64_t gen, double max_s);
/* ext_pdb.c (any thread, pure): does a label selector (policy/v1: an
 * object; NULL or not an object matches nothing) match labels? And which
 * of n victims (labels[i], NULL unknown) the budgets `items` (one
 * namespace's PodDisruptionBudgetList items) cannot all give now: refuse[i]
 * set, by[i] the budget's name; returns how many were newly set. */
bool svc_ext_selector_matches(json_t *sel, json_t *labels);
int svc_ext_pdb_refuse(json_t *items, json_t *const *labels, int n, bool *refuse, const char **by);

#endif
