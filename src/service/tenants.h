/* tenants.h - migschedd's tenants (tenants.c; docs/tenants.md,
 * "migschedd"): the declared set (svc_t.tenants) applied to the scheduler,
 * GET /v1/tenants, and the SIGHUP reload. The quotas themselves are the
 * scheduler's (ms_sched_tenant_set, src/sched/tenant.c). */
#ifndef MIGSCHED_SERVICE_TENANTS_H
#define MIGSCHED_SERVICE_TENANTS_H

#include "service/svc.h"

/* Loop (main at start-up, before the loop runs): make ts the declared set.
 * Each of its tenants is set in the scheduler; a tenant the scheduler has
 * and ts lacks (removed by a reload, or named by a stored job only) goes
 * back to weight 1, no guarantee, no limit, keeps its jobs' charge and
 * takes no new submission. 0, or -1 with why. */
int svc_tenants_apply(svc_t *d, const ms_sim_tenants_t *ts, char *why, size_t len);
/* Loop: whether a submission may name this tenant (NULL, "default" or a
 * declared one). */
bool svc_tenant_declared(const svc_t *d, const char *name);
/* Main at start-up: a stored job's tenant that is no longer declared is
 * given to the scheduler undeclared (weight 1, no quota) so the job keeps
 * its tenant; 0, or -1 (logged). */
int svc_tenant_keep(svc_t *d, const char *name);
/* What SIGHUP reads again: the declared set and --tenant-half-life. */
typedef struct svc_tenset {
    ms_sim_tenants_t ts;
    double half_life_s;
} svc_tenset_t;

/* Loop: GET /v1/tenants; SIGHUP's new set (m->ext: an svc_tenset_t). */
void svc_h_tenants(svc_t *d, svc_msg_t *m, double now);
void svc_h_tenset(svc_t *d, svc_msg_t *m, double now);
/* Loop: the tenants as /v1/tenants and `migsched status` show them. */
json_t *svc_tenants_json(svc_t *d);
/* Main (SIGHUP): hand the tenants read again from the configuration
 * (svc_cfg_tenants, by the caller: this file does not call config.c, whose
 * --dra settings lead back here through start-up) to the loop, and log
 * what came of it. set stays the caller's. */
void svc_tenants_reload(svc_t *d, svc_tenset_t *set);

#endif
