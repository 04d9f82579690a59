/* kctl.c - the kctl thread: leader election on a coordination.k8s.io/v1
 * Lease (src/control/lease.c decides; this file reads and writes the
 * Lease) and the thread's loop, which also runs the node layout loop
 * (kctl_nodes.c) while this replica leads. On becoming the leader it calls
 * the takeover callback (kctl.h) and serves only once that succeeded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "service/kctl_int.h"

/* --- the Lease --------------------------------------------------------------- */

static void lease_path(const svc_kctl_t *c, bool item, char *buf, size_t len)
{
    char ns[256], name[256];

    if (!ms_kube_escape(c->cfg.ns, ns, sizeof(ns)) || !ms_kube_escape(c->cfg.lease, name, sizeof(name))) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len, "/apis/coordination.k8s.io/v1/namespaces/%s/leases%s%s", ns, item ? "/" : "",
             item ? name : "");
}

/* Read the Lease into *r (exists false on 404). false when it could not be read. */
static bool lease_read(svc_kctl_t *c, ms_lease_record_t *r)
{
    char path[768];
    long status;
    json_t *j, *spec;
    const char *h, *rv;

    memset(r, 0, sizeof(*r));
    lease_path(c, true, path, sizeof(path));
    j = svc_kctl_api_json(c, "GET", path, NULL, INFINITY, &status);
    if (status == 404) {
        json_decref(j);
        c->rv[0] = '\0';
        return true;
    }
    if (status != 200 || !j) {
        json_decref(j);
        return false;
    }
    spec = json_object_get(j, "spec");
    r->exists = true;
    h = json_string_value(json_object_get(spec, "holderIdentity"));
    snprintf(r->holder, sizeof(r->holder), "%s", h ? h : "");
    r->duration_s = (double)json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
    if (!svc_kctl_time_parse(json_string_value(json_object_get(spec, "acquireTime")), &r->acquire_t))
        r->acquire_t = 0;
    if (!svc_kctl_time_parse(json_string_value(json_object_get(spec, "renewTime")), &r->renew_t))
        r->renew_t = 0;
    r->transitions = (long)json_integer_value(json_object_get(spec, "leaseTransitions"));
    rv = json_string_value(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
    snprintf(c->rv, sizeof(c->rv), "%s", rv ? rv : "");
    json_decref(j);
    return true;
}

static json_t *lease_spec(const ms_lease_record_t *w)
{
    char acq[40], ren[40];

    svc_kctl_time_format(w->acquire_t, acq, sizeof(acq));
    svc_kctl_time_format(w->renew_t, ren, sizeof(ren));
    return json_pack("{s:s, s:i, s:s, s:s, s:I}", "holderIdentity", w->holder,
                     "leaseDurationSeconds", (int)ceil(w->duration_s), "acquireTime", acq,
                     "renewTime", ren, "leaseTransitions", (json_int_t)w->transitions);
}

bool svc_kctl_lease_write(svc_kctl_t *c, ms_lease_do_t what, const ms_lease_record_t *w)
{
    char path[768];
    json_t *body;
    bool ok;

    lease_path(c, what == MS_LEASE_UPDATE, path, sizeof(path));
    if (what == MS_LEASE_CREATE)
        body = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o}", "apiVersion", "coordination.k8s.io/v1",
                         "kind", "Lease", "metadata", "name", c->cfg.lease, "namespace", c->cfg.ns,
                         "spec", lease_spec(w));
    else    /* a merge patch that names the version read: refused (409) if it moved */
        body = json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion", c->rv, "spec", lease_spec(w));
    if (!body)
        return false;
    ok = svc_kctl_api_write(c, what == MS_LEASE_CREATE ? "POST" : "PATCH", path, body, "lease write refused", false,
                   c->rv, sizeof(c->rv));
    json_decref(body);
    return ok;
}

void svc_kctl_lease_round(svc_kctl_t *c)
{
    ms_lease_record_t seen, w;
    ms_lease_do_t what;
    double mono = svc_clock_mono(c->clock);
    bool was = c->leader, now_leader;

    if (lease_read(c, &seen)) {
        what = ms_lease_decide(c->lease, &seen, mono, svc_clock_wall(c->clock), &w);
        if (what != MS_LEASE_WAIT)
            ms_lease_written(c->lease, svc_kctl_lease_write(c, what, &w), mono);
    }
    {
        double until = ms_lease_leader_until(c->lease);

        /* the backend may be acted on from here (the takeover's own
         * creates): the Lease is held, serving waits for the takeover */
        atomic_store(&c->lease_until, until);
        if (until <= svc_clock_mono(c->clock))
            c->adopted = false;
        else if (!c->adopted && c->cfg.takeover != NULL) {
            /* serve only once the pods the last leader bound are ours */
            if (c->cfg.takeover(c->cfg.takeover_ctx) == 0)
                c->adopted = true;
            else
                until = 0;           /* try again next round */
        } else {
            c->adopted = true;
        }
        atomic_store(&c->leader_until, c->adopted ? until : 0.0);
    }
    now_leader = svc_kctl_is_leader(c);
    c->leader = now_leader;
    if (now_leader != was)
        ms_log("info", now_leader ? "became the leader" : "no longer the leader",
                json_pack("{s:s, s:s}", "identity", c->id, "lease", c->cfg.lease));
}

/* --- the thread --------------------------------------------------------------- */

void *svc_kctl_main(void *arg)
{
    svc_kctl_t *c = arg;
    double retry = c->cfg.lease_s / 5;

    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        struct timespec ts;
        double wake;

        pthread_mutex_unlock(&c->mu);
        if (c->cfg.elect)
            svc_kctl_lease_round(c);
        if (c->nc && svc_kctl_is_leader(c) && svc_clock_mono(c->clock) >= c->next_nodes) {
            svc_kctl_nodes_round(c);
            c->next_nodes = svc_clock_mono(c->clock) + c->cfg.period_s;
        }
        wake = c->cfg.elect ? retry : c->cfg.period_s;
        ts = ms_clock_after(CLOCK_REALTIME, wake);
        pthread_mutex_lock(&c->mu);
        while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}
