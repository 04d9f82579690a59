/* ext_msg.c - the extender's messages (any thread): made, freed, told
 * apart, answered (by the loop's handlers); and whether this replica serves
 * the extender at all.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"
#include "service/kctl.h"

ext_msg_t *svc_ext_msg_new(int verb)
{
    ext_msg_t *e = calloc(1, sizeof(*e));

    if (e != NULL)
        e->verb = verb;
    return e;
}

/* FNV-1a, 64 bits: a stable stand-in for a uid that cannot be an id as it
 * is (ids stay unique anyway: the callers skip ids that are taken). */
static uint64_t fnv64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static bool plain_uid(const char *u)
{
    size_t n = strlen(u), i;

    if (n == 0 || n > 64)
        return false;
    for (i = 0; i < n; i++)
        if (!((u[i] >= 'a' && u[i] <= 'z') || (u[i] >= 'A' && u[i] <= 'Z') || (u[i] >= '0' && u[i] <= '9') ||
              u[i] == '-'))
            return false;
    return true;
}

void svc_ext_job_id(const char *uid, const char *tag, int gen, char *buf, size_t len)
{
    char u[24];

    if (!plain_uid(uid)) {
        snprintf(u, sizeof(u), "x%016llx", (unsigned long long)fnv64(uid));
        uid = u;
    }
    if (gen <= 1 && (tag == NULL || tag[0] == '\0'))
        snprintf(buf, len, "k8s-%s", uid);
    else
        snprintf(buf, len, "k8s-%s.%.4s%d", uid, tag != NULL ? tag : "", gen);
}

void svc_ext_msg_free(void *p)
{
    ext_msg_t *e = p;
    int i;

    if (e == NULL)
        return;
    svc_ext_args_free(&e->args);
    svc_ext_bind_free(&e->bind);
    for (i = 0; i < e->nuids; i++)
        free(e->uids[i]);
    free(e->uids);
    json_decref(e->pods);
    free(e->evict);
    free(e);
}

bool svc_ext_is_read(const svc_msg_t *m)
{
    const ext_msg_t *e = m->ext;

    return e != NULL && e->verb == EXT_STATE;
}

bool svc_ext_is_new(const svc_msg_t *m)
{
    const ext_msg_t *e = m->ext;

    return e != NULL && (e->verb == EXT_FILTER || e->verb == EXT_BIND);
}

void svc_ext_refuse(svc_msg_t *m, const char *why)
{
    ext_msg_t *e = m->ext;
    svc_err_t err;

    if (e != NULL)
        e->ok = false;
    svc_err_set(&err, 503, "", "%s", why);
    m->status = 503;
    m->body = svc_err_body(&err);
}

/* The end of this replica's leadership by the daemon's monotonic clock
 * (the election's clock is the daemon's, kctl_open.c): INFINITY without an
 * election; 0 before it starts or after it ended. */
static double leader_until(const svc_t *d)
{
    const svc_kctl_t *c = atomic_load(&d->kctl);

    return c != NULL ? svc_kctl_leader_until(c) : d->cfg->leader_elect ? 0 : INFINITY;
}

double svc_ext_write_deadline(const svc_t *d, double max_s)
{
    return svc_clock_real_deadline(d->clock, leader_until(d), max_s);
}

void svc_ext_stall(const char *prefix, const char *name, const char *ns, const char *msg)
{
    if (prefix[0] == '\0' || strncmp(name, prefix, strlen(prefix)) != 0)
        return;
    ms_log("warning", msg, json_pack("{s:s,s:s}", "pod", name, "namespace", ns));
    ms_clock_sleep(5.0);
}

bool svc_ext_serving(const svc_t *d)
{
    double until = leader_until(d);

    return isinf(until) || svc_clock_mono(d->clock) < until;
}

void svc_ext_reply(svc_msg_t *m, int status, char *body)
{
    m->status = body != NULL ? status : 500;
    m->body = body != NULL ? body : strdup("{\"error\":{\"message\":\"out of memory\"}}");
}
