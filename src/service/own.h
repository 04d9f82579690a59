/* own.h - who owns which instance (own.c, recover.c; docs/operations.md):
 * the functions that put the backend's instances into the view with their
 * owner, and start-up's rule for a lost or damaged store. The state they
 * keep is svc_t.own (svc.h). */
#ifndef MIGSCHED_SERVICE_OWN_H
#define MIGSCHED_SERVICE_OWN_H

#include "service/svc.h"

/* own.c (loop; main at start-up): instances into the view with their
 * owner (docs/operations.md). svc_own_sort orders an inventory by tag, and
 * svc_own_group_end gives the end of the run of inv[i]'s tag. */
void svc_own_sort(ms_binst_t *inv, int n);
int svc_own_group_end(const ms_binst_t *inv, int i, int n);
/* Adopt j's instances inst[0..n) (all of a gang, or none; j in the table):
 * 0, or -1 with why and nothing changed. */
int svc_own_adopt(svc_t *d, svc_job_t *j, const ms_binst_t *inst, int n, double now, char *why, size_t len);
/* A job of its own for instances whose tag no job has (their tag its id,
 * their profile and count its request, labels {label: "true"}), adopted
 * and added to the table; NULL with why. */
svc_job_t *svc_own_found(svc_t *d, const ms_binst_t *inst, int n, const char *label, double now, char *why,
                         size_t len);
/* The same for a job not in the table yet: added to it when adopted (0),
 * else -1 with why and j still the caller's. */
int svc_own_adopt_new(svc_t *d, svc_job_t *j, const ms_binst_t *inst, int n, double now, char *why, size_t len);
/* A new leader's view after the pods it adopted (Kubernetes mode): inv, a
 * fresh inventory, sorted here; every instance no job in the view holds
 * becomes a found job (unowned: destroyed after --unowned-grace unless
 * claimed; another owner's: held for good), an idle one an idle GI. No
 * GPU is stale after. */
void svc_own_takeover(svc_t *d, ms_binst_t *inv, int n, double now);
/* An idle instance as an idle GI of the view; false when it does not fit. */
bool svc_own_idle(svc_t *d, const ms_binst_t *b);
/* Every GPU stale (Kubernetes mode's start-up); -1 out of memory. */
int svc_own_all_stale(svc_t *d);
bool svc_own_stale(const svc_t *d, int gpu);
bool svc_own_node_stale(const svc_t *d, int node);
void svc_own_free(svc_t *d);
/* j was made from instances no pod or job owned (Kubernetes mode): it is
 * destroyed once unowned for --unowned-grace, unless an owner claims it
 * (svc_own_claimed) first; -1 out of memory. */
int svc_own_unowned(svc_t *d, svc_job_t *j, double mono);
void svc_own_claimed(svc_t *d, svc_job_t *j);
/* The tick: the found jobs that ended or were claimed leave the list; the
 * leader cancels those unowned past the grace period (their plan destroys
 * the instance). */
void svc_own_tick(svc_t *d, double now);

/* recover.c (main, start-up): outside Kubernetes, a lost or damaged store
 * or instances of unknown jobs stop start-up (0 go on, -1 refuse with
 * d->start_why) unless --recovery adopt; in Kubernetes mode the store is a
 * cache (svc_recover_cache notes the damage and goes on). */
int svc_recover_check(svc_t *d, const ms_binst_t *inv, int n);
int svc_recover_cache(svc_t *d);

#endif
