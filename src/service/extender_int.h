/* extender_int.h - private to extender*.c: the extender's state and
 * messages. */
#ifndef MIGSCHED_SVC_EXTENDER_INT_H
#define MIGSCHED_SVC_EXTENDER_INT_H

#include "service/extender.h"

/* A pod the extender has seen: its current job (a reservation, or the
 * instance it runs on). */
typedef struct ext_pod {
    char *uid;
    svc_job_t *job;
    int gen;                       /* jobs made for it (their ids) */
    double expires;                /* its reservation's end */
    bool want_release;             /* gone while its instance was starting */
    bool release_finished;
} ext_pod_t;

#define EXT_TOMB ((ext_pod_t *)1)

typedef struct svc_ext {
    ext_pod_t **slots;             /* open addressing by uid */
    size_t cap, used, n;
    double ttl_s;
} svc_ext_t;

enum { EXT_FILTER = 1, EXT_PRIORITIZE, EXT_BIND, EXT_STATE, EXT_RELEASE, EXT_RESYNC, EXT_ADOPT };

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
    char node[64], profile[32], gpu_uuid[48], inst_uuid[48];
    int gpu, start, ninst;
    char why[300];
} ext_msg_t;

/* Post e to the loop and wait; returns e (with its replies) or NULL. */
ext_msg_t *svc__ext_call(svc_t *d, ext_msg_t *e, int *status, char **body);
/* extender_kube.c: a bind in --kube mode (frees e). */
void svc__ext_kube_bind(svc_t *d, ext_msg_t *e, int *status, char **body);

#endif
