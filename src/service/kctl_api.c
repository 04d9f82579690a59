/* kctl_api.c - the control loops' API-server helpers and the Lease's times
 * (the kctl thread; the main thread after it ended, to release the
 * Lease), and the leader flag, which any thread reads.
 *
 * Both decisions are the library's (src/control/); these only read what
 * they need and write what they say. A write that fails is logged and
 * retried at the next period: every write is idempotent (a label set twice,
 * a cordon repeated), and a Lease update carries the resourceVersion it
 * read, so of two replicas writing at once one wins and the other is told
 * 409 Conflict.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/kctl_int.h"

/* --- times ----------------------------------------------------------------- */

bool svc_kctl_time_parse(const char *s, double *out)
{
    struct tm tm;
    int y, mo, d, h, mi, sec, n = 0;
    double frac = 0, scale = 0.1;
    time_t t;

    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
        return false;
    s += n;
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return false;
        for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
            frac += (*s - '0') * scale;
    }
    if (strcmp(s, "Z") != 0)
        return false;                /* the API server always writes UTC */
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return false;
    t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *out = (double)t + frac;
    return true;
}

void svc_kctl_time_format(double t, char *buf, size_t len)
{
    time_t s = (time_t)floor(t);
    long us = (long)((t - floor(t)) * 1e6);
    struct tm tm;
    char base[32];

    if (us > 999999)
        us = 999999;
    gmtime_r(&s, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06ldZ", base, us);
}

/* --- API helpers ------------------------------------------------------------- */

/* The failpoint stall-before-node-write (c->stall_node): 5 s to an
 * absolute time between a node write's deadline and its request, so that
 * a replica frozen (kill -STOP) there goes on at once, as a stale leader,
 * when continued (tests/k8s/test_e2e_nodecfg_stale.sh). */
static void stall_before_node_write(const svc_kctl_t *c, const char *method, const char *path)
{
    static const char nodes[] = "/api/v1/nodes/";

    if (c->stall_node[0] == '\0' || strcmp(method, "PATCH") != 0 || strncmp(path, nodes, strlen(nodes)) != 0 ||
        strncmp(path + strlen(nodes), c->stall_node, strlen(c->stall_node)) != 0)
        return;
    ms_log("warning", "failpoint stall-before-node-write: the writer sleeps 5 s", json_pack("{s:s}", "path", path));
    ms_clock_sleep(5.0);
}

/* A request whose JSON answer is parsed; *status the HTTP status. NULL when
 * no answer came or it is not JSON. */
json_t *svc_kctl_api_json(svc_kctl_t *c, const char *method, const char *path, json_t *body, double until,
                          long *status)
{
    char err[256], *resp = NULL, *b = NULL;
    json_t *j = NULL;
    double deadline = svc_clock_real_deadline(c->clock, until, 30.0);
    int rc;

    *status = 0;
    if (body && !(b = json_dumps(body, JSON_COMPACT)))
        return NULL;
    stall_before_node_write(c, method, path);
    rc = ms_kube_request_by(c->kube, method, path, b, deadline, status, &resp, err, sizeof(err));
    if (rc == MS_KUBE_LATE) {
        /* a round held up past the leadership (the process paused) */
        ms_log("warn", "write refused: not the leader",
               json_pack("{s:s, s:s, s:s}", "method", method, "path", path, "when",
                         "the leadership ended before the request was sent"));
    } else if (rc != 0) {
        ms_log("warn", "kube request failed",
                json_pack("{s:s, s:s, s:s}", "method", method, "path", path, "error", err));
    } else if (resp) {
        j = json_loads(resp, 0, NULL);
    }
    free(b);
    free(resp);
    return j;
}

/* A write; true on a 2xx. When rv is given, the object's new
 * resourceVersion goes there (the next update's precondition). */
bool svc_kctl_api_write(svc_kctl_t *c, const char *method, const char *path, json_t *body,
                      const char *what, bool as_leader, char *rv, size_t rvlen)
{
    long status;
    json_t *r = svc_kctl_api_json(c, method, path, body, as_leader ? svc_kctl_leader_until(c) : INFINITY,
                                  &status);
    bool ok = status >= 200 && status < 300;
    const char *v = json_string_value(json_object_get(json_object_get(r, "metadata"), "resourceVersion"));

    if (ok && rv != NULL && v != NULL)
        snprintf(rv, rvlen, "%s", v);
    if (!ok && status)
        ms_log("warn", what,
                json_pack("{s:s, s:i, s:s}", "path", path, "status", (int)status, "message",
                          r && json_is_string(json_object_get(r, "message"))
                              ? json_string_value(json_object_get(r, "message")) : ""));
    json_decref(r);
    return ok;
}

double svc_kctl_leader_until(const svc_kctl_t *c)
{
    return !c || !c->cfg.elect ? INFINITY : atomic_load(&c->leader_until);
}

double svc_kctl_lease_until(const svc_kctl_t *c)
{
    return !c || !c->cfg.elect ? INFINITY : atomic_load(&c->lease_until);
}

bool svc_kctl_is_leader(const svc_kctl_t *c)
{
    double until = svc_kctl_leader_until(c);

    /* the deadline, not a flag: a replica cut off from the API server stops
     * by itself, between two rounds as well */
    return isinf(until) || svc_clock_mono(c->clock) < until;
}

bool svc_kctl_may_act(const svc_kctl_t *c)
{
    double until = svc_kctl_lease_until(c);

    return isinf(until) || svc_clock_mono(c->clock) < until;
}

const char *svc_kctl_identity(const svc_kctl_t *c)
{
    return c ? c->id : "";
}
