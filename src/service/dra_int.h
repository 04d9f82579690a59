/* dra_int.h - private to the DRA allocator's files (dra_*.c): the API's
 * objects as parsed, the CEL subset, the DRA loop's state and messages.
 * dra.h says which thread runs which file.
 */
#ifndef MIGSCHED_SVC_DRA_INT_H
#define MIGSCHED_SVC_DRA_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/idmap.h"
#include "migsched/geometry.h"
#include "migsched/sched.h"
#include "service/dra.h"

/* Bounds on what one object may hold (the API's own limits or below): a
 * larger object is refused with a reason, never truncated silently. */
#define DRA_NAME_MAX 253           /* object names, qualified attribute names */
#define DRA_MAX_DEVICES 128        /* devices in one slice (the API: 128) */
#define DRA_MAX_SETS 32            /* counter sets in one slice */
#define DRA_MAX_COUNTERS 64        /* counters in one set or consumption */
#define DRA_MAX_KV 64              /* attributes, capacities of one device */
#define DRA_MAX_REQ 32             /* requests of one claim */
#define DRA_MAX_SEL 32             /* selectors of one request or class */
#define DRA_MAX_COUNT 16           /* devices one request may ask for */
#define DRA_MAX_RESULTS 32         /* results of one allocation */
#define DRA_MAX_PODCLAIMS 32       /* claims of one pod */
#define DRA_MAX_GATES 32           /* scheduling gates of one pod */
#define DRA_MAX_RESERVED 256       /* reservedFor entries kept */
#define DRA_CEL_MAX 10240          /* characters of one expression */

/* --- values (dra_cel.c, dra_qty.c) ------------------------------------- */

enum { DRA_V_NONE = 0, DRA_V_STR, DRA_V_INT, DRA_V_BOOL, DRA_V_VER, DRA_V_QTY };

typedef struct dra_val {
    int kind;
    char *s;                       /* STR, VER (owned where it is in a kv) */
    long long i;                   /* INT */
    bool b;                        /* BOOL */
    double q;                      /* QTY: the quantity's value */
} dra_val_t;

/* One attribute or capacity: key fully qualified ("gpu.nvidia.com/profile"). */
typedef struct dra_kv {
    char *key;
    dra_val_t v;
} dra_kv_t;

/* A Kubernetes quantity ("40Gi", "42144366592", "1.5k", "100m") as a
 * number: 0, or -1 (not a quantity, or not finite). */
int dra_qty_parse(const char *s, double *out);

/* --- CEL, the subset real claims use (dra_cel.c) ------------------------ */

typedef struct dra_cel dra_cel_t;

/* What an expression sees of one device. */
typedef struct dra_devview {
    const char *driver;
    const dra_kv_t *attrs;
    int nattrs;
    const dra_kv_t *caps;
    int ncaps;
} dra_devview_t;

enum { DRA_CEL_FALSE = 0, DRA_CEL_TRUE = 1, DRA_CEL_ERR = -1 };

/* Compile: 0, or -1 with why naming the expression and the position of
 * the first thing outside the subset. */
int dra_cel_compile(const char *expr, dra_cel_t **out, char *why, size_t whylen);
void dra_cel_free(dra_cel_t *c);
/* TRUE, FALSE, or ERR (a missing attribute, a type mismatch: why says
 * which). */
int dra_cel_eval(const dra_cel_t *c, const dra_devview_t *d, char *why, size_t whylen);
/* Does the expression name driver `drv` (device.driver == '<drv>', or
 * device.attributes['<drv>'])? */
bool dra_cel_names_driver(const dra_cel_t *c, const char *drv);

/* --- the API's objects, parsed (dra_obj.c; any thread) ------------------ */

typedef struct dra_counter {
    char *name;
    double value;
} dra_counter_t;

typedef struct dra_cset {          /* a counter set, or what a device consumes of one */
    char *name;
    dra_counter_t *c;
    int n;
} dra_cset_t;

typedef struct dra_pdev {          /* a device as a slice publishes it */
    char *name;
    dra_kv_t *attrs;
    int nattrs;
    dra_kv_t *caps;
    int ncaps;
    dra_cset_t *cons;              /* consumesCounters */
    int ncons;
    bool multi;                    /* allowMultipleAllocations */
} dra_pdev_t;

typedef struct dra_slice {
    char *name, *driver, *pool, *node;   /* node NULL: not node-local (ignored) */
    long long gen, count;
    dra_pdev_t *dev;
    int ndev;
    dra_cset_t *sets;
    int nsets;
} dra_slice_t;

typedef struct dra_class {
    char *name;
    char **cel;
    int ncel;
    json_t *config;                /* spec.config (array) or NULL */
} dra_class_t;

typedef struct dra_request {
    char *name;
    char *cls;                     /* deviceClassName */
    char **cel;
    int ncel;
    int count;                     /* ExactCount */
    char *why;                     /* set: migsched cannot serve it (names the field) */
} dra_request_t;

typedef struct dra_constraint {    /* matchAttribute */
    char *attr;                    /* qualified */
    char **reqs;                   /* NULL: every request */
    int nreqs;
} dra_constraint_t;

typedef struct dra_cspec {         /* a claim's spec (also a template's) */
    dra_request_t *req;
    int nreq;
    dra_constraint_t *con;
    int ncon;
    json_t *config;                /* spec.devices.config (array) or NULL */
    char *why;                     /* set: something migsched cannot serve */
} dra_cspec_t;

typedef struct dra_result {
    char *request, *driver, *pool, *device;
} dra_result_t;

typedef struct dra_claim {
    char *uid, *ns, *name, *rv;
    char *nskey;                   /* "ns/name" */
    char *owner;                   /* the uid of the pod that owns it (a template's claim), or NULL */
    bool deleting;
    char **fin;                    /* finalizers */
    int nfin;
    bool ours;                     /* carries migsched's allocator annotation */
    dra_cspec_t spec;
    /* status */
    bool allocated;
    dra_result_t *res;
    int nres;
    char *node;                    /* the allocation's nodeSelector (metadata.name In [node]), or NULL */
    double alloc_t;                /* allocationTimestamp (wall), 0 none */
    char **reserved;               /* reservedFor pods' uids */
    int nreserved;
    bool reserved_other;           /* reservedFor has consumers that are not pods */
} dra_claim_t;

typedef struct dra_tmpl {
    char *ns, *name;
    char *key;                     /* "ns/name" */
    dra_cspec_t spec;
} dra_tmpl_t;

typedef struct dra_podclaim {
    char *name;                    /* the pod's name for it */
    char *claim;                   /* resourceClaimName, or the generated name from the status */
    char *tmpl;                    /* resourceClaimTemplateName, or NULL */
} dra_podclaim_t;

typedef struct dra_pod {
    char *uid, *ns, *name, *rv;
    char *node;                    /* spec.nodeName, NULL while unbound */
    bool done;                     /* phase Succeeded or Failed */
    bool deleting;
    int priority;                  /* spec.priority (its PriorityClass's), clamped to
                                    * ms_sched's [-1e6, 1e6]; 0 without */
    char **gates;
    int ngates;
    dra_podclaim_t *pc;
    int npc;
    bool pc_status;                /* status.resourceClaimStatuses was read */
} dra_pod_t;

/* Parse one object (as the API serves it) into *out: 0, or -1 with why
 * naming the field. Every free is NULL-safe on a zeroed object. */
int dra_parse_slice(json_t *o, dra_slice_t *out, char *why, size_t whylen);
int dra_parse_class(json_t *o, dra_class_t *out, char *why, size_t whylen);
int dra_parse_claim(json_t *o, dra_claim_t *out, char *why, size_t whylen);
int dra_parse_tmpl(json_t *o, dra_tmpl_t *out, char *why, size_t whylen);
int dra_parse_pod(json_t *o, dra_pod_t *out, char *why, size_t whylen);
void dra_slice_free(dra_slice_t *s);
void dra_class_free(dra_class_t *c);
void dra_claim_free(dra_claim_t *c);
void dra_tmpl_free(dra_tmpl_t *t);
void dra_pod_free(dra_pod_t *p);
void dra_cspec_free(dra_cspec_t *s);
/* The value of a device's attribute or capacity by qualified key, NULL. */
const dra_val_t *dra_kv_get(const dra_kv_t *kv, int n, const char *key);

/* An AdmissionReview request: its uid, and the pod it admits (a CREATE of
 * a pod in core/v1; anything else is answered allowed, unchanged). */
typedef struct dra_review {
    char *uid;
    bool is_pod_create;
    dra_pod_t pod;                 /* valid when is_pod_create */
    bool has_gates;                /* spec.schedulingGates present */
    bool has_ours;                 /* already carries our gate */
} dra_review_t;

/* 0, or -1 with why (the body is not an AdmissionReview v1: a 400). */
int dra_parse_review(const char *body, size_t len, dra_review_t *out, char *why, size_t whylen);
void dra_review_free(dra_review_t *r);

/* --- what migschedd writes (dra_out.c; any thread) ----------------------- */

/* The AdmissionReview answer: allowed, with a JSONPatch that adds our gate
 * when gate is set. malloc'd, NULL out of memory. */
char *dra_out_review(const dra_review_t *r, bool gate);
/* Merge patches (with the resourceVersion they were decided on, so a
 * concurrent change is a 409), malloc'd: a claim's finalizers plus
 * resource.kubernetes.io/delete-protection and our annotation (meta), or
 * without both (unmeta); its status with an allocation (NULL: cleared); a
 * pod's scheduling gates without ours. */
json_t *dra_out_claim_meta(const dra_claim_t *c, const char *identity);
json_t *dra_out_claim_unmeta(const dra_claim_t *c);
/* patch with metadata.resourceVersion rv, as text (patch kept). */
char *dra_out_with_rv(json_t *patch, const char *rv);
typedef struct dra_out_result {
    const char *request, *driver, *pool, *device;
} dra_out_result_t;
/* status.allocation: results, the node, the config, allocationTimestamp. */
json_t *dra_out_allocation(const dra_out_result_t *res, int n, const char *node, json_t *config, double now_wall);
char *dra_out_status(const char *rv, json_t *alloc);
char *dra_out_ungate(const char *rv, char *const *gates, int ngates);
/* A DeviceTaintRule fencing driver's devices; a core/v1 Event on a pod. */
char *dra_out_taint_rule(const char *name, const char *driver);
/* The same, named migsched-fence-<driver>. */
char *dra_out_taint_rule_named(const char *driver);
char *dra_out_event(const char *ns, const char *pod, const char *uid, const char *reason, const char *msg,
                    double now_wall);
/* printf into a new string (NULL out of memory). */
char *dra_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The allocation's config: the class's entries (source FromClass) then
 * the claim's (FromClaim) whose requests name one of the results' (or
 * none). A new reference, json_array() when none; NULL out of memory. */
json_t *dra_out_config(json_t *const class_cfg[], const char *const class_req[], int ncls, json_t *claim_cfg);

/* --- the DRA loop's model (dra_model.c, dra_map.c) ---------------------- */

/* A table of owned objects by a string key (an idmap over a vector). */
typedef struct dra_tab {
    void **v;
    int32_t n, cap;
    int32_t *freel;                /* free indices */
    int32_t nfree;
    ms__idmap_t ids;
    const char *(*key)(const void *obj);
    void (*del)(void *obj);
    int *epoch;                    /* per index: the list epoch it was seen in */
} dra_tab_t;

void dra_tab_init(dra_tab_t *t, const char *(*key)(const void *obj), void (*del)(void *obj));
void dra_tab_fini(dra_tab_t *t);
void *dra_tab_get(const dra_tab_t *t, const char *key);
int32_t dra_tab_index(const dra_tab_t *t, const char *key);   /* -1 none */
/* Take the object out without freeing it (the caller owns it). */
void *dra_tab_take(dra_tab_t *t, const char *key);
/* Put obj (owned) in place of any with its key (freed). 0, -1 out of
 * memory (obj freed). */
int dra_tab_put(dra_tab_t *t, void *obj, int epoch);
/* Remove and free the one with this key; true if there was one. */
bool dra_tab_del(dra_tab_t *t, const char *key);

enum { DRA_DEV_MIG = 0, DRA_DEV_WHOLE = 1 };

/* One device of a managed GPU. */
typedef struct dra_dev {
    char name[64];
    int kind;                      /* DRA_DEV_* */
    int prof;                      /* the geometry's profile (the full one for a whole GPU on MIG) */
    int start;                     /* memory slice (0 for a whole MIG GPU, -1 on a GPU without MIG) */
    int kindix;                    /* its kind (dra_kind_t) */
} dra_dev_t;

/* A GPU: every device consuming one counter set of a pool, or one whole
 * device that consumes none (MIG off). */
typedef struct dra_gpu {
    char *driver, *pool, *node;    /* owned copies */
    char label[64];                /* the whole device's name, else the set's */
    const ms_geom_t *geom;         /* borrowed (dra_map_t.geoms) */
    bool mig;
    dra_dev_t *dev;                /* owned */
    int ndev;
    int whole;                     /* index of the whole-GPU device, -1 */
    int16_t *at;                   /* [prof * width + start] -> device, -1 (MIG) */
    int sched;                     /* 0 MIG, 1 whole (which ms_sched) */
    int gpu;                       /* its global number in that ms_sched, -1 */
    char *sname;                   /* its ms_sched node's name (dra_sched.c), owned */
} dra_gpu_t;

/* A kind of device: what a selector sees of every device of one profile
 * of one model (the attributes all of them share). */
typedef struct dra_kind {
    const char *driver;
    const ms_model_t *model;
    const ms_geom_t *geom;
    bool mig_gpu;                  /* lives on MIG GPUs */
    bool whole;                    /* the whole-GPU device */
    int prof;
    dra_kv_t *attrs, *caps;        /* owned copies (the shared ones) */
    int nattrs, ncaps;
    bool first;                    /* (building) */
} dra_kind_t;

/* Devices to GPUs: rebuilt when slices change. */
typedef struct dra_map {
    dra_gpu_t *gpu;
    int ngpu;
    dra_kind_t *kind;
    int nkind;
    ms_geom_t **geoms;             /* one per model seen, owned */
    const ms_model_t **gmodels;
    int *gsched;                   /* per geometry: bit s set when scheduler s has one of its GPUs */
    int ngeoms;
    ms__idmap_t devix;             /* "driver/pool/device" -> an index into the three below */
    char **devkeys;
    int32_t *devgpu, *devdev;      /* its GPU and its index there */
    int ndevkeys;
    int skipped;                   /* devices migsched cannot model (logged once each build) */
} dra_map_t;

/* --- the DRA loop's state (dra_loop.c) ---------------------------------- */

enum { DRA_K_SLICE = 0, DRA_K_CLASS, DRA_K_CLAIM, DRA_K_TMPL, DRA_K_POD, DRA_K_N };

/* A device held in ms_sched for a claim. */
typedef struct dra_held {
    int32_t slot;
    int sched;
    int gpu, dev;                  /* map indices */
} dra_held_t;

/* A device a claim request waits for: a job in ms_sched, queued or
 * reserved, not placed yet. */
typedef struct dra_pend {
    int32_t slot;
    int sched;
    int req;                       /* the claim's request */
    int *kinds;                    /* the device kinds it may take (map indices) */
    int nkinds;
} dra_pend_t;

/* What the loop keeps beside a claim object. */
typedef struct dra_cstate {
    char *uid;                     /* key */
    dra_held_t *held;              /* devices held in ms_sched */
    int nheld, capheld;
    dra_pend_t *pend;              /* jobs waiting to be placed */
    int npend;
    char *qpod;                    /* the pod they wait for */
    double qsince;                 /* when the pod began to wait (mono) */
    /* our decision, until the allocation is seen or the write fails */
    bool decided;
    dra_held_t *dec;
    int ndec, capdec;
    int *decreq;                   /* each decided device's request */
    bool writing;
    char *expiring_rv;             /* its allocation expires: the version the deallocation was sent for */
} dra_cstate_t;

typedef struct dra_pstate {
    char *uid;
    double seen;                   /* mono: first seen waiting for devices */
    bool busy;                     /* a write is in flight */
    double retry_at;               /* mono: not before */
    char *excl[8];                 /* nodes where its allocation was wiped */
    double excl_until[8];
    int nexcl;
    char last_event[160];          /* the last reason posted (no repeats) */
    bool counted;                  /* its latency was recorded */
    bool in_retry;                 /* listed in svc_dra_t.retry */
    bool wait_multi;               /* waits for several devices at once (the reserve path) */
    bool ungated;                  /* a writer removed our gate (the watch may not show it yet) */
} dra_pstate_t;

typedef struct dra_stats {
    long decisions, writes_ok, writes_failed, ungated, expired, conflicts, wiped, refused, rebuilds;
    double *lat;                   /* gate-to-allocation seconds (ring) */
    int nlat, caplat, lathead;
} dra_stats_t;

typedef struct svc_dra svc_dra_t;

/* --- messages to the DRA loop (dra_loop.c) ------------------------------- */

enum { DRA_M_OBJ = 1, DRA_M_SYNCED, DRA_M_WRITTEN, DRA_M_HOOK, DRA_M_TAKEOVER, DRA_M_STATUS };

/* One write job for the writer threads: a pod's allocations and its gate,
 * or one claim's deallocation, or a rule, or an event. */
enum { DRA_W_ALLOC = 1, DRA_W_UNGATE, DRA_W_DEALLOC, DRA_W_RULE, DRA_W_EVENT };

typedef struct dra_wclaim {
    char *ns, *name, *uid, *rv;
    json_t *meta;                  /* merge patch of its metadata (finalizer, annotation), without resourceVersion */
    json_t *alloc;                 /* status.allocation (the writer adds the resourceVersion) */
    bool ok;
    char why[200];
} dra_wclaim_t;

typedef struct dra_work {
    svc_qlink_t link;
    int kind;
    char *pod_uid, *pod_ns, *pod_name, *pod_rv;
    dra_wclaim_t *cl;
    int ncl;
    bool ungate;                   /* remove our gate once the claims are written */
    char **gates;                  /* the pod's other gates */
    int ngates;
    char *path, *body;             /* RULE, EVENT: where and what; DEALLOC: the claim's path and resourceVersion */
    json_t *patch;                 /* DEALLOC: the claim's metadata without our finalizer and annotation */
    char *claim_uid;               /* DEALLOC */
    /* outcome */
    bool ok;
    bool ungated;
    long status;
    char why[300];
    double t_done;
} dra_work_t;

/* A caller waiting for the loop's answer (dra_call_within). A caller that
 * gave up (abandoned) leaves the message to the loop, which frees both. */
typedef struct dra_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;             /* on CLOCK_MONOTONIC */
    bool done;
    bool abandoned;
} dra_waiter_t;

typedef struct dra_msg {
    svc_qlink_t link;
    int kind;
    int okind;                     /* OBJ, SYNCED: DRA_K_* */
    int epoch;                     /* the watch's list epoch */
    bool del;
    char *key;                     /* OBJ del: the object's key */
    void *obj;                     /* OBJ: parsed, owned (dra_slice_t, ...) */
    dra_work_t *work;              /* WRITTEN */
    dra_review_t *review;          /* HOOK: owned (malloc'd; dra_msg_free frees it) */
    /* a caller waiting for the answer (HOOK, TAKEOVER, STATUS) */
    dra_waiter_t *waiter;
    int rc;
    bool gate;                     /* HOOK: add the gate */
    char **unknown;                /* HOOK: refs not known yet: "t/NAME" template, "c/NAME" claim */
    int nunknown;
    char *body;                    /* STATUS */
} dra_msg_t;

/* The DRA mode's state: the loop's alone, but for the queues. */
struct svc_dra {
    svc_t *d;
    const svc_dra_cfg_t *cfg;
    /* threads */
    svc_queue_t q;                 /* dra_msg_t to the loop */
    pthread_t loop_th;
    bool loop_running;
    svc_queue_t wq;                /* dra_work_t to the writers */
    pthread_t wth[2];
    int nwriters;
    svc_queue_t hq;                /* svc_ext_job_t to the webhook worker */
    pthread_t hth;
    bool hook_running;
    atomic_long hook_late;         /* webhook answers given without the loop (its deadline passed) */
    pthread_t wa_th[DRA_K_N];      /* watch threads */
    bool wa_running[DRA_K_N];
    volatile int stop;             /* the watches' */
    char identity[128];
    /* tests' failpoints (MIGSCHEDD_DRA_FAIL, a comma list read at start):
     * before-ungate: the process exits as a kill -9 would between a pod's
     * allocations and its ungate (tests/k8s/test_e2e_dra_failover.sh);
     * between-writes: likewise between a claim's metadata PATCH (finalizer,
     * annotation) and its status PATCH (the allocation), the same test;
     * hook-stall:PREFIX: the loop sleeps 8 s before it answers the webhook
     * about a pod whose name starts with PREFIX, a stuck loop
     * (tests/k8s/test_e2e_dra_alloc.sh: the webhook's deadline);
     * stall-before-status:PREFIX: a writer sleeps 5 s between the
     * leadership check of the status PATCH (the allocation) of a claim
     * whose name starts with PREFIX and its request, the window a test
     * freezes the leader in (kill -STOP) to make it a stale writer whose
     * check passed (tests/k8s/test_e2e_dra_split.sh) */
    bool die_before_ungate;
    bool die_between_writes;
    char stall_prefix[32];
    char stall_status_prefix[32];
    atomic_int synced_kinds;       /* bit per kind: listed once (readers: readyz) */
    /* the loop's */
    dra_tab_t tab[DRA_K_N];
    int epoch[DRA_K_N];            /* current list epoch per kind */
    dra_tab_t cst, pst;            /* dra_cstate_t, dra_pstate_t by uid */
    ms__idmap_t claim_by_name;     /* "ns/name" -> claim index in tab[CLAIM] */
    dra_map_t map;
    bool map_dirty;
    ms_sched_t *sched[2];          /* MIG GPUs, whole GPUs */
    struct dra_sctx { svc_dra_t *x; int k; } sctx[2];   /* the executor callbacks' contexts */
    int32_t *gmap[2];              /* ms_sched GPU -> map GPU */
    int32_t *slot_claim[2];        /* slot -> cst index, -1 */
    int32_t nslot[2];
    bool built;                    /* ms_sched mirrors the cluster (leader) */
    atomic_llong takeover_us;      /* mono µs when the takeover built it, 0 (any thread reads it) */
    double last_build;
    int fenced_n;                  /* DeviceTaintRules written */
    bool fence_sent;
    /* plans' STARTs seen by the executor callback during an ms_sched call */
    struct { int sched; int32_t slot; int gpu, prof, start; } *started;
    int nstarted, capstarted;
    char **retry;                  /* pods to try at the end of the batch (NULL-terminated) */
    bool retry_named;              /* try every waiting pod (a named claim or a class changed) */
    dra_stats_t st;
    double next_expire;
};

/* dra_store.c (loop): the tables, the managed classes, the pods to try */
int dra_store_init(svc_dra_t *x);
void dra_store_fini(svc_dra_t *x);
dra_claim_t *dra_claim_by_name(svc_dra_t *x, const char *ns, const char *name);
bool dra_driver_managed(const svc_dra_t *x, const char *driver);
/* Is class c one whose devices we manage (its selectors name a managed
 * driver, or match a managed device kind)? */
bool dra_class_managed(svc_dra_t *x, const char *cls);
dra_cstate_t *dra_cstate(svc_dra_t *x, const char *uid, bool make);
dra_pstate_t *dra_pstate(svc_dra_t *x, const char *uid, bool make);
/* Try this pod at the end of the batch. */
void dra_model_retry(svc_dra_t *x, const char *uid);

/* dra_model.c (loop): what a watched change sets off */
/* Apply one watched object (owned) or its deletion. */
void dra_model_apply(svc_dra_t *x, dra_msg_t *m, double now);
/* The watch of kind k listed everything at epoch: the rest is gone. */
void dra_model_synced(svc_dra_t *x, int k, int epoch, double now);

/* dra_map.c (loop): rebuild the map from the slices. 0, -1 out of memory. */
int dra_map_build(svc_dra_t *x);
void dra_map_free(dra_map_t *m);
/* The device of "driver/pool/name": its GPU and index; false if none. */
bool dra_map_find(const dra_map_t *m, const char *driver, const char *pool, const char *name, int *gpu,
                  int *dev);
/* A device's view for CEL: its slice's driver, attributes, capacities. */
void dra_kind_view(const dra_kind_t *k, dra_devview_t *v);

/* dra_sched.c (loop): ms_sched over the map's GPUs */
int dra_sched_build(svc_dra_t *x, double now);
void dra_sched_drop(svc_dra_t *x);
/* Make ms_sched hold exactly what the claim has (its allocation, else our
 * decision): adopt what is missing, cancel the rest. */
void dra_sched_sync_claim(svc_dra_t *x, dra_claim_t *c, dra_cstate_t *cs, double now);
/* Cancel and forget a slot. */
void dra_sched_release(svc_dra_t *x, int sched, int32_t slot, double now);
/* Which claim (its index in x->cst) a slot serves; 0, -1 out of memory. */
int dra_sched_slot_set(svc_dra_t *x, int sched, int32_t slot, int32_t cst_index);
/* Every pending job of a claim: released, forgotten. */
void dra_sched_unpend(svc_dra_t *x, dra_cstate_t *cs, double now);
/* A placed slot becomes a decided device of the claim (held). 0, -1. */
int dra_sched_hold(svc_dra_t *x, dra_cstate_t *cs, int sched, int32_t slot, int gpu, int dev, int req);
/* The executor callback's STARTs since the last call: the placements. */
ms_status_t dra_sched_exec(void *ctx, const ms_sched_plan_t *p);

/* dra_place.c (loop): what a request may get, and where */
#define DRA_MAX_MODELS 16
#define DRA_MAX_KINDS 256
typedef struct dra_want {
    int sched;                     /* 0 MIG GPUs, 1 whole GPUs; -1 nothing matches */
    int kinds[DRA_MAX_KINDS];      /* the matching kinds (map indices) in that scheduler */
    int nkinds;
    const ms_geom_t *geom[DRA_MAX_MODELS];   /* each matching model */
    int prof[DRA_MAX_MODELS];      /* its smallest matching profile */
    int nmodels;
    bool refused;                  /* an expression migsched cannot evaluate: why says */
    char why[320];
} dra_want_t;

/* One device a pod waits for, on the reserve path. */
typedef struct dra_slot {
    dra_claim_t *c;
    dra_cstate_t *cs;
    int req, k;                    /* the request and which of its count */
    const dra_want_t *w;
    int32_t slot;                  /* reserved in ms_sched, -1 */
    int gpu;                       /* the map GPU it got */
} dra_slot_t;

/* What request r of claim c may get (class and request selectors on every
 * device kind): 0; w->sched -1 when nothing matches (why says). */
void dra_place_want(svc_dra_t *x, const dra_claim_t *c, int r, dra_want_t *w);
/* The ms_sched request for w in one scheduler's queue: a profile and
 * model, or memory and compute that resolve to w's profile on each model
 * that matches and to nothing on the rest. false when none does. */
bool dra_place_req(const svc_dra_t *x, const dra_want_t *w, ms_sched_req_t *r);
/* The device of map GPU gpu at (prof, start) that one of kinds allows, -1. */
int dra_place_device(const svc_dra_t *x, const int *kinds, int nkinds, int gpu, int prof, int start);
/* Reserve every slot on one node (the node given, else any but the
 * excluded ones; a matchAttribute on a GPU's uuid keeps those on one GPU),
 * and bind them: 0, or -1 (nothing reserved). */
int dra_place_reserve(svc_dra_t *x, const dra_pstate_t *ps, dra_slot_t *sl, int n, const char *node, double now);

/* dra_decide.c (loop) */
typedef struct dra_pclaim {
    dra_claim_t *c;
    dra_cstate_t *cs;
    bool todo;                     /* managed, unallocated: ours to decide */
} dra_pclaim_t;
/* Try the pod: decide what it lacks, or ungate it, or wait. */
void dra_decide_pod(svc_dra_t *x, dra_pod_t *p, double now);
/* Jobs that ms_sched placed (the executor callback's STARTs): their
 * claims' decisions, and the writes of pods that have all they need. */
void dra_decide_started(svc_dra_t *x, double now);
/* The pod's claims: 1 wait (one is missing, being deleted, or in
 * progress), -1 refused (why), 0: *n of them, *node where those allocated
 * are. */
int dra_decide_resolve(svc_dra_t *x, const dra_pod_t *p, dra_pclaim_t *pc, int *n, const char **node, char *why,
                       size_t wl);
/* dra_commit.c (loop) */
/* Post an event on a pod once per distinct reason. */
void dra_decide_event(svc_dra_t *x, const dra_pod_t *p, const char *reason, const char *msg, double now);
/* Does the pod carry our gate (others: any other)? */
bool dra_decide_gated(const dra_pod_t *p, bool *others);
/* A write job for the pod, with its other gates. */
dra_work_t *dra_decide_work(const dra_pod_t *p, int kind);
/* Remove our gate (nothing else to write). */
void dra_commit_ungate(svc_dra_t *x, const dra_pod_t *p, dra_pstate_t *ps);
/* Every device of the pod is placed: write them (and ungate). */
void dra_commit_pod(svc_dra_t *x, const char *uid, double now);
/* A writer's outcome. */
void dra_decide_written(svc_dra_t *x, dra_work_t *w, double now);
/* Record a gate-to-allocation latency. */
void dra_stats_lat(svc_dra_t *x, double s);

/* dra_review.c (loop): the webhook's question: does this pod need our gate? */
void dra_decide_review(svc_dra_t *x, dra_msg_t *m);

/* dra_loop.c */
void *dra_loop_main(void *arg);
/* One batch (tests drive the loop with it). */
void dra_loop_batch(svc_dra_t *x, svc_qlink_t *batch, double now);
void dra_loop_tick(svc_dra_t *x, double now);
bool dra_leading(svc_dra_t *x, double now);
/* Until when (the daemon's monotonic clock) it leads: INFINITY without an
 * election; what a write's deadline is made of (dra_write.c). */
double dra_lead_until(svc_dra_t *x);
/* Hand a write to the writers (the loop). */
void dra_write_push(svc_dra_t *x, dra_work_t *w);
void dra_work_free(dra_work_t *w);
void dra_msg_free(dra_msg_t *m);
/* /dra/status as JSON (loop). */
char *dra_status_json(svc_dra_t *x, double now);

/* dra_write.c (the writer threads) */
void *dra_write_main(void *arg);
/* One job, its outcome in w (tests call it with a fake API server). */
void dra_write_run(svc_dra_t *x, dra_work_t *w);

/* dra_watch.c (the watch threads; dra_watch_start: main) */
void *dra_watch_main(void *arg);
int dra_watch_start(svc_dra_t *x, int kind);
/* The watch's event handler (tests feed it objects). */
void dra_watch_event(svc_dra_t *x, int kind, const char *type, json_t *obj, int *epoch);

/* dra_hook.c (the webhook worker) */
void *dra_hook_main(void *arg);
/* One request: method and path after /dra/, the body; *status and *out,
 * answered by deadline (ms_clock_mono() seconds: real time, whatever the
 * daemon's svc_clock is): what the loop or the API
 * server has not answered by then is answered without them. */
void dra_hook_serve(svc_dra_t *x, const char *verb, const char *body, size_t len, double deadline, int *status,
                    char **out);

/* dra_msg.c: the loop's call and wait (any thread but the loop's). 0
 * answered, -1 not queued (the loop has stopped; m is still the caller's),
 * 1 no answer within timeout_s (< 0: no limit): m is the loop's from then
 * on and the caller never touches it again. */
int dra_call_within(svc_dra_t *x, dra_msg_t *m, double timeout_s);
int dra_call(svc_dra_t *x, dra_msg_t *m);
/* The loop: wake m's caller, or free m if the caller gave up. */
void dra_msg_answer(dra_msg_t *m);

/* A new DRA state (tests: without threads). */
svc_dra_t *dra_new(svc_t *d, const svc_dra_cfg_t *cfg);
void dra_free(svc_dra_t *x);

#endif
