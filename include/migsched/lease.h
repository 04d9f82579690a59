/* lease.h - leader election on a coordination.k8s.io Lease, as a decision
 * procedure without I/O.
 *
 * Two or more migschedd replicas share one Lease. Each calls ms_lease_decide
 * every retry_s with the Lease it just read, writes what it is told (create,
 * or update with the resourceVersion it read, so that of two candidates
 * writing at once exactly one succeeds) and reports the outcome. The rules
 * are those of client-go's leader election:
 *   - expiry is judged by the candidate's own monotonic clock, from the
 *     moment it saw the record last change, never from the renewTime
 *     written by another machine (clocks of two machines need not agree);
 *   - a holder renews every retry_s and is the leader only while its last
 *     successful renewal is younger than renew_deadline_s, which is shorter
 *     than the lease duration: a leader cut off from the API server stops
 *     acting (binding pods) before anyone else may take the lease, so two
 *     leaders never bind at once;
 *   - a released Lease (empty holder) may be taken at once.
 * With the defaults (duration 10 s, renew deadline 7 s, retry 2 s) a
 * standby takes over at most about 12 s after the leader's last renewal.
 */
#ifndef MIGSCHED_LEASE_H
#define MIGSCHED_LEASE_H

#include <stdbool.h>

#include "migsched/status.h"

#define MS_LEASE_ID_MAX 253

typedef struct ms_lease_cfg {
    const char *identity;        /* this replica (pod name), 1..253 characters */
    double duration_s;           /* leaseDurationSeconds (default 10) */
    double renew_deadline_s;     /* (default 7); < duration_s */
    double retry_s;              /* how often the driver calls (default 2); < renew_deadline_s */
} ms_lease_cfg_t;

void ms_lease_cfg_defaults(ms_lease_cfg_t *cfg);

/* A Lease's spec, as read or to be written. Times: seconds since the epoch. */
typedef struct ms_lease_record {
    bool exists;
    char holder[MS_LEASE_ID_MAX + 1];  /* holderIdentity, "" none */
    double duration_s;           /* leaseDurationSeconds */
    double acquire_t, renew_t;   /* acquireTime, renewTime */
    long transitions;            /* leaseTransitions */
} ms_lease_record_t;

typedef enum ms_lease_do {
    MS_LEASE_WAIT = 0,           /* someone else holds it: write nothing */
    MS_LEASE_CREATE,             /* POST the Lease in *write */
    MS_LEASE_UPDATE              /* PUT *write with the resourceVersion read */
} ms_lease_do_t;

typedef struct ms_lease ms_lease_t;

ms_status_t ms_lease_create(const ms_lease_cfg_t *cfg, ms_lease_t **out, ms_diag_t *diag);
void ms_lease_destroy(ms_lease_t *l);          /* NULL-safe */

/* seen: the Lease as read now (exists false after a 404). mono_now: the
 * caller's monotonic clock; wall_now: the epoch time to write. */
ms_lease_do_t ms_lease_decide(ms_lease_t *l, const ms_lease_record_t *seen, double mono_now,
                              double wall_now, ms_lease_record_t *write);
/* The write that decide asked for succeeded (ok) or was refused (conflict,
 * timeout, any error). mono_now: when the write was sent, not answered, so a
 * slow answer never extends the leadership. */
void ms_lease_written(ms_lease_t *l, bool ok, double mono_now);
/* True while this replica may act as the leader. */
bool ms_lease_is_leader(const ms_lease_t *l, double mono_now);
/* The monotonic time until which it may (0 when it does not hold the
 * Lease): a driver can publish this one number to other threads. */
double ms_lease_leader_until(const ms_lease_t *l);
/* On shutdown: the record that hands the Lease over at once (holder "").
 * false when this replica does not hold it. */
bool ms_lease_release(ms_lease_t *l, double wall_now, ms_lease_record_t *write);

#endif
