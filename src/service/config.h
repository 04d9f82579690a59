/* config.h - migschedd's settings (config.c: parsed on the main thread at
 * start-up from argv and --config FILE). Split from svc.h, which includes
 * it. */
#ifndef MIGSCHED_SERVICE_CONFIG_H
#define MIGSCHED_SERVICE_CONFIG_H

#include <stdbool.h>

#include "migsched/policy.h"
#include "migsched/sched.h"
#include "migsched/sim.h"

struct svc_dra_cfg;

/* --- configuration (config.c) -------------------------------------------- */

typedef struct svc_cfg {
    char *listen;                  /* "HOST:PORT" */
    char *state_dir;
    char *backend;                 /* sim, dry-run, nvml, agent */
    char **nodes;                  /* node spec texts */
    int nnodes;
    char *policy;
    ms_policy_cfg_t pcfg;
    ms_sched_cfg_t qcfg;           /* its queue fields only (queue, backfill-bound,
                                    * aging-rate, default-estimate: ms_opt_set) */
    char *static_layout;           /* owned copy behind pcfg.static_layout */
    double time_scale;             /* sim: duration_s / time_scale real seconds */
    double op_delay_s;             /* sim: seconds per op */
    char *sim_fail;                /* sim: "KIND:N" every Nth op of KIND fails */
    char *migrate_hook;            /* shell command that moves a job's work (MOVE ops) */
    double migrate_timeout_s;      /* the hook's deadline */
    double op_timeout_s;           /* every backend call's deadline (default 30 s) */
    int unhealthy_after;           /* consecutive failures that make a GPU unhealthy (3) */
    char *token_file, *tls_cert, *tls_key;
    long max_body;                 /* bytes */
    int max_conns;
    int max_conns_per_ip;          /* connections from one client address at most */
    double header_timeout_s;       /* a request's line and headers within this (slow clients) */
    double body_timeout_s;         /* its body within this of its headers */
    int http_threads;              /* libmicrohttpd's epoll threads (a pool when > 1) */
    double commit_delay_s;         /* a commit waits until this long after the last one */
    bool allow_remote;             /* listen beyond loopback */
    /* Kubernetes (extender.h, src/kube/kube.h) */
    bool kube;                     /* bind through the API server */
    char *kube_api, *kube_token_file, *kube_ca, *kubeconfig;
    double ext_ttl_s;              /* extender reservations (default 30 s) */
    int ext_filter_nodes;          /* a filter that holds passes at most this many
                                    * nodes, the held one first (16; 0: all) */
    /* Kubernetes control loops (kctl.h) */
    bool leader_elect;             /* take part in leader election on a Lease */
    char *lease;                   /* "NAMESPACE/NAME" (default migsched/migschedd) */
    double lease_s;                /* lease duration (default 10 s) */
    char *k8s_policy;              /* cluster policy file: node layouts to switch */
    char *k8s_tenant_label;        /* a pod's tenant: this label's value, else its namespace */
    double layout_period_s;        /* node layout loop period (default 5 s) */
    /* overrides of the policy's switching section; < 0: not given */
    double layout_hysteresis_s, layout_drain_s, layout_apply_s;
    int layout_budget, layout_min_gain;
    bool layout_evict;
    char **agents;                 /* backend agent: "NODE=URL" texts */
    int nagents;
    char *agent_token_file;        /* backend agent: bearer token for the agents */
    struct svc_dra_cfg *dra;       /* --dra* (dra.h); NULL when none was given */
    /* ownership (docs/operations.md) */
    bool recovery_adopt;           /* --recovery adopt: a lost or damaged store, or
                                    * unknown instances, do not stop start-up */
    double unowned_grace_s;        /* an instance nobody owns is destroyed after this (300 s) */
    long ext_max_body;             /* the extender's request bodies at most (bytes) */
    /* tenants (docs/tenants.md, "migschedd"): `tenant = NAME:weight=W,...`
     * lines and --tenant, parsed by the option table's own parser; SIGHUP
     * reads them again (svc_cfg_tenants) */
    ms_sim_tenants_t tenants;
    int argc;                      /* the command line, kept for the reload */
    char **argv;
} svc_cfg_t;

/* Parse argv (and --config FILE). Returns 0, or prints the error and returns
 * 2 (usage) / 1; returns -1 after --help. */
int svc_cfg_parse(svc_cfg_t *cfg, int argc, char **argv);
void svc_cfg_free(svc_cfg_t *cfg);
/* The tenants the config file and command line declare now (SIGHUP, main
 * thread): the whole configuration is read again as at start-up, and only
 * its tenants and their --tenant-half-life are taken. 0, or -1 with why
 * (the file, line and field). */
int svc_cfg_tenants(const svc_cfg_t *cfg, ms_sim_tenants_t *out, double *half_life_s, char *why,
                    size_t len);

#endif
