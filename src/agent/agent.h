/* agent.h - private to migsched-agent, the per-node executor (docs/agent.md).
 *
 * The agent serves one node's GPUs over HTTP/JSON. It executes through the
 * same backends as migschedd (src/backend/: sim, dry-run, nvml), numbering
 * the node's GPUs from 0, and writes one CDI spec file per
 * instance. It keeps no state of its own: the backend's inventory (for nvml,
 * the hardware) is the truth, and the CDI directory is reconciled to it at
 * start-up and after every change.
 *
 * Threads: libmicrohttpd runs one thread per connection; every request that
 * reads or changes instances takes ag_t.mu, so a check ("is it there?") and
 * the change it leads to are atomic: a retried create cannot create twice.
 */
#ifndef MIGSCHED_AGENT_H
#define MIGSCHED_AGENT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "daemon/daemon.h"
#include "migsched/sched.h"

typedef struct ag_dp_cfg ag_dp_cfg_t;   /* dp.h: the kubelet device plugin's options */
typedef struct ag_dp ag_dp_t;
typedef struct ag_dra_cfg ag_dra_cfg_t;  /* dra.h: the DRA driver's options */

typedef struct ag_cfg {
    char *listen;                  /* HOST:PORT */
    char *state_dir;               /* the backend's inventory file */
    char *backend;                 /* sim, dry-run, nvml */
    char *node_spec;               /* COUNTxMODEL[:mig|:whole], NULL: from NVML */
    char *node_name;               /* for logs and made-up uuids (default: hostname) */
    char *cdi_dir;                 /* default /var/run/cdi */
    char *caps_root;               /* /proc/driver/nvidia/capabilities: MIG capability minors */
    char *dev_root;                /* where the driver's /dev is on this host (CDI hostPath); NULL: / */
    char *token_file;
    char *tls_cert, *tls_key;      /* HTTPS when both are given */
    char *sim_fail;
    double op_delay_s;
    long max_body;
    int max_conns, max_conns_per_ip;
    double header_timeout_s, body_timeout_s;   /* slow clients (src/daemon/http_guard.h) */
    bool allow_remote;
    ag_dp_cfg_t *dp;               /* NULL: no device-plugin option given */
    ag_dra_cfg_t *dra;             /* NULL: no DRA option given */
} ag_cfg_t;

/* Parse argv. 0 ok; 2 usage error (printed); -1 after --help. */
int ag_cfg_parse(ag_cfg_t *c, int argc, char **argv);
void ag_cfg_free(ag_cfg_t *c);

/* --- requests (req.c): pure parsers, fuzzed by fuzz/fuzz_agent_request.c */

typedef struct ag_err {
    int code;                      /* HTTP status */
    char reason[32];               /* machine-readable: invalid, conflict, insufficient-resources, ... */
    char field[32];
    char msg[256];
} ag_err_t;

void ag_err_set(ag_err_t *e, int code, const char *reason, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* {"error": {"reason", "field", "message"}}, malloc'd (NULL: out of memory). */
char *ag_err_body(const ag_err_t *e);

/* POST /v1/instances {gpu, profile, start, job} */
typedef struct ag_create {
    int gpu, start;
    char profile[32];
    char job[128];                 /* "" : an idle instance */
} ag_create_t;

/* POST /v1/ops {op, gpu, start, profile, job, from_gpu, from_start, bbm}:
 * one op of an ms_sched plan, node-local GPU numbers (migschedd's agent
 * backend); op "reap" destroys an instance whether or not a job runs on it
 * (migschedd's start-up reconciliation). */
enum { AG_OP_REAP = 6 };
typedef struct ag_op {
    int kind;                      /* MS_OP_CREATE .. MS_OP_STOP, AG_OP_REAP */
    int gpu, start, from_gpu, from_start;
    bool bbm;
    char profile[32];
    char job[128];
} ag_op_t;

int ag_parse_create(const char *body, size_t len, ag_create_t *out, ag_err_t *e);
int ag_parse_op(const char *body, size_t len, ag_op_t *out, ag_err_t *e);
/* An instance uuid as the URL carries it: 1-47 of A-Z a-z 0-9 - _ . :, not
 * "." or ".." */
bool ag_uuid_valid(const char *s);
/* A job id: "" or 1-127 of A-Z a-z 0-9 - _ . :, not "." or ".." (migschedd's
 * id rule) */
bool ag_job_valid(const char *s);

/* --- the agent --------------------------------------------------------- */

typedef struct ag_stats {
    uint64_t created, create_existing, create_refused, create_failed;
    uint64_t deleted, delete_gone, delete_failed;
    uint64_t ops_ok, ops_failed;
    uint64_t cdi_written, cdi_removed;
} ag_stats_t;

typedef struct ag {
    ag_cfg_t *cfg;
    int ngpus;
    const ms_geom_t **geom;        /* [ngpus] */
    bool *mig;                     /* [ngpus] MIG enabled */
    int replicas;                  /* a time-sliced node's shares per GPU; 0 otherwise */
    char (*model)[32];             /* [ngpus] model name */
    ms_cluster_spec_t *spec;       /* --node-spec's geometries */
    ms_geom_t **own;               /* discovered: one geometry per GPU */
    ms_backend_t *be;
    pthread_mutex_t mu;            /* every inventory read and change, the CDI dir, stats */
    ag_stats_t st;
    _Atomic uint64_t http[6];      /* answers by status class: [2] 2xx ... [5] 5xx */
    char *token;                   /* NULL: no token required */
    size_t token_len;
    uint32_t salt;
} ag_t;

/* node.c: the node's GPUs from --node-spec or NVML. 0, or -1 (printed). */
int ag_node_init(ag_t *a);
void ag_node_free(ag_t *a);

/* ops.c: each fills *status and returns the body (malloc'd JSON; NULL on
 * out of memory). They take a->mu. */
char *ag_inventory(ag_t *a, int *status);
char *ag_create(ag_t *a, const ag_create_t *rq, int *status);
char *ag_delete(ag_t *a, const char *uuid, int *status);
char *ag_op(ag_t *a, const ag_op_t *rq, int *status);
char *ag_metrics(ag_t *a);
void ag_http_count(ag_t *a, int status);
/* Reconcile the CDI directory to the inventory (start-up; a->mu not held). */
int ag_reconcile(ag_t *a);

/* cdi.c (a->mu held) */
/* Write the spec of every instance with a uuid whose file is missing
 * (all of them when rewrite), remove our spec files of instances that do
 * not exist (and stale temporary files). Counts into a->st. 0 or -1. */
int ag_cdi_sync(ag_t *a, const ms_binst_t *inv, int n, bool rewrite);
/* The spec of one instance (exposed for the tests' sake via the API). */
json_t *ag_cdi_spec(const ag_t *a, const ms_binst_t *in);
/* Append the device nodes of instance in (a MIG instance, or a whole GPU
 * or time-slice slot: start < 0) to the JSON array nodes. 0 or -1. */
int ag_cdi_nodes(const ag_t *a, const ms_binst_t *in, json_t *nodes);
/* Write text to DIR/name atomically (a temporary, fsync, rename): 0 or -1. */
int ag_cdi_write_file(const ag_t *a, const char *name, const char *text);

/* http.c */
typedef struct ag_http ag_http_t;
int ag_http_start(ag_t *a, ag_http_t **out);
void ag_http_stop(ag_http_t *h);
int ag_token_load(ag_t *a);

#endif
