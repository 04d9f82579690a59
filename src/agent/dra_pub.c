/* dra_pub.c - the node's ResourceSlices kept true on the API server (dra.h).
 *
 * Two threads. The watcher lists and watches this driver's slices of this
 * node (fieldSelector spec.nodeName, spec.driver) and marks them dirty on
 * every event; the writer reconciles whenever they are dirty, and at least
 * every --dra-resync seconds:
 *   1. list our slices (only this driver's, only this node's: the items are
 *      checked again, a slice of anyone else is never written or deleted);
 *   2. build the slices (dra_slices.c) at the highest generation found: if
 *      every one is there, covers what we publish, and nothing else of ours
 *      is, the pool is in line and nothing is written;
 *   3. otherwise publish every slice at that generation + 1 (create, or
 *      replace with the resourceVersion read: a concurrent writer gets a
 *      Conflict and the round is retried), then delete our slices that are
 *      no longer part of the pool (with their uid as a precondition).
 * So the slices come back when someone deletes them: a kubelet that starts
 * wipes every ResourceSlice of its node, and one whose plugin stays away
 * for a while wipes the driver's (pkg/kubelet/cm/dra/plugin). A failed
 * round is retried after 0.5 s, doubling to 10 s; every API call has the
 * kube client's deadline (30 s, connect 10 s). The GPUs are read once at
 * start: the agent learns of a changed node by being restarted, and then
 * publishes the new slices under a new generation.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "agent/dra.h"

#define BACKOFF_MIN_S 0.5
#define BACKOFF_MAX_S 10.0
#define MIN_GAP_S 0.2
#define SLICES "/apis/resource.k8s.io/v1/resourceslices"

struct ag_dra_pub {
    ag_t *a;
    ms_kube_t *kube;
    char *driver;
    double resync_s;
    ag_dra_gpu_t *gpus;
    char selector[600];          /* the escaped fieldSelector */
    char node_uid[64];
    pthread_t watcher, writer;
    bool watcher_on, writer_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool dirty, stop;
    volatile int wstop;
    long long gen;               /* the highest generation seen or published (writer) */
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_event(void *ctx, const char *type, json_t *obj)
{
    ag_dra_pub_t *p = ctx;

    (void)type;
    (void)obj;
    pthread_mutex_lock(&p->mu);
    p->dirty = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *watch_main(void *arg)
{
    ag_dra_pub_t *p = arg;

    ms_kube_watch(p->kube, SLICES, p->selector, on_event, p, &p->wstop);
    return NULL;
}

/* GET/POST/PUT/DELETE with a JSON body; the answer parsed into *resp when
 * asked. The HTTP status, or 0 when no answer came (why). */
static long call(ag_dra_pub_t *p, const char *method, const char *path, json_t *body, json_t **resp, char *why,
                 size_t whylen)
{
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL, *ans = NULL, err[256];
    long status = 0;

    if (resp != NULL)
        *resp = NULL;
    if (body != NULL && text == NULL) {
        snprintf(why, whylen, "out of memory");
        return 0;
    }
    if (ms_kube_request(p->kube, method, path, text, &status, &ans, err, sizeof(err)) != 0) {
        snprintf(why, whylen, "%s %s: %s", method, path, err);
        status = 0;
    } else if (status >= 300) {
        json_t *o = ans != NULL ? json_loads(ans, 0, NULL) : NULL;
        const char *m = json_string_value(json_object_get(o, "message"));

        snprintf(why, whylen, "%s %s: %ld %s", method, path, status, m != NULL ? m : "");
        json_decref(o);
    } else if (resp != NULL && ans != NULL) {
        *resp = json_loads(ans, 0, NULL);
    }
    free(text);
    free(ans);
    return status;
}

/* Our slices on the API server (an array, borrowed from *list). */
static json_t *ours(ag_dra_pub_t *p, json_t **list, char *why, size_t whylen)
{
    char path[800];
    json_t *items, *keep, *it;
    size_t i;

    snprintf(path, sizeof(path), SLICES "?%s", p->selector);
    if (call(p, "GET", path, NULL, list, why, whylen) != 200 || *list == NULL)
        return NULL;
    items = json_object_get(*list, "items");
    if ((keep = json_array()) == NULL || json_object_set_new(*list, "ours", keep) != 0 || !json_is_array(items))
        return NULL;
    json_array_foreach(items, i, it) {
        json_t *spec = json_object_get(it, "spec");
        const char *d = json_string_value(json_object_get(spec, "driver"));
        const char *n = json_string_value(json_object_get(spec, "nodeName"));

        if (d != NULL && n != NULL && strcmp(d, p->driver) == 0 && strcmp(n, p->a->cfg->node_name) == 0)
            json_array_append(keep, it);
    }
    return keep;
}

static json_t *by_name(json_t *arr, const char *name)
{
    json_t *it;
    size_t i;

    json_array_foreach(arr, i, it) {
        const char *n = json_string_value(json_object_get(json_object_get(it, "metadata"), "name"));

        if (n != NULL && strcmp(n, name) == 0)
            return it;
    }
    return NULL;
}

static const char *name_of(const json_t *o)
{
    const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));

    return n != NULL ? n : "";
}

static json_t *build(ag_dra_pub_t *p, long long gen, char *why, size_t whylen)
{
    ag_dra_node_t nd = { p->a->cfg->node_name, p->driver, p->gpus, p->a->ngpus,
                         p->node_uid[0] != '\0' ? p->node_uid : NULL };

    return ag_dra_slices(&nd, gen, why, whylen);
}

/* The node's uid for ownerReferences (the slices go with their Node),
 * once known. */
static void learn_node_uid(ag_dra_pub_t *p)
{
    char path[600], esc[520], why[256];
    json_t *o = NULL;
    const char *uid;

    if (p->node_uid[0] != '\0' || !ms_kube_escape(p->a->cfg->node_name, esc, sizeof(esc)))
        return;
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", esc);
    if (call(p, "GET", path, NULL, &o, why, sizeof(why)) == 200 &&
        (uid = json_string_value(json_object_get(json_object_get(o, "metadata"), "uid"))) != NULL &&
        strlen(uid) < sizeof(p->node_uid))
        snprintf(p->node_uid, sizeof(p->node_uid), "%s", uid);
    json_decref(o);
}

static int publish(ag_dra_pub_t *p, json_t *have, long long gen, char *why, size_t whylen)
{
    json_t *want = build(p, gen, why, whylen), *w, *h;
    char path[800];
    size_t i;
    long st;
    int rc = -1, ndev = 0;

    if (want == NULL)
        return -1;
    json_array_foreach(want, i, w) {
        h = by_name(have, name_of(w));
        ndev += (int)json_array_size(json_object_get(json_object_get(w, "spec"), "devices"));
        if (h != NULL) {
            json_t *rv = json_object_get(json_object_get(h, "metadata"), "resourceVersion");

            if (!json_is_string(rv) || json_object_set(json_object_get(w, "metadata"), "resourceVersion", rv) != 0)
                goto out;
            snprintf(path, sizeof(path), SLICES "/%s", name_of(w));
            st = call(p, "PUT", path, w, NULL, why, whylen);
        } else {
            st = call(p, "POST", SLICES, w, NULL, why, whylen);
        }
        if (st != 200 && st != 201)
            goto out;
    }
    json_array_foreach(have, i, h) {
        json_t *pre;

        if (by_name(want, name_of(h)) != NULL)
            continue;
        pre = json_pack("{s:{s:O}}", "preconditions", "uid", json_object_get(json_object_get(h, "metadata"), "uid"));
        snprintf(path, sizeof(path), SLICES "/%s", name_of(h));
        st = call(p, "DELETE", path, pre, NULL, why, whylen);
        json_decref(pre);
        if (st != 200 && st != 202 && st != 404)
            goto out;
    }
    ms_log("info", "dra: slices published",
            json_pack("{s:s,s:s,s:I,s:i,s:i}", "driver", p->driver, "pool", p->a->cfg->node_name, "generation",
                      (json_int_t)gen, "slices", (int)json_array_size(want), "devices", ndev));
    p->gen = gen;
    rc = 0;
out:
    json_decref(want);
    return rc;
}

/* One round (the writer thread). 0 in line, -1 failed (why). */
static int reconcile(ag_dra_pub_t *p, char *why, size_t whylen)
{
    json_t *list = NULL, *have, *want = NULL, *it;
    long long gen = 0;
    size_t i;
    bool in_line;
    int rc = -1;

    learn_node_uid(p);
    if ((have = ours(p, &list, why, whylen)) == NULL)
        goto out;
    json_array_foreach(have, i, it) {
        json_t *g = json_object_get(json_object_get(json_object_get(it, "spec"), "pool"), "generation");

        if (json_is_integer(g) && json_integer_value(g) > gen)
            gen = json_integer_value(g);
    }
    if ((want = build(p, gen > 0 ? gen : 1, why, whylen)) == NULL)
        goto out;
    in_line = gen > 0 && json_array_size(have) == json_array_size(want);
    json_array_foreach(want, i, it) {
        json_t *h = by_name(have, name_of(it));

        /* a list's items carry no apiVersion and kind: compare what we set */
        in_line = in_line && h != NULL && ag_dra_covers(json_object_get(h, "metadata"), json_object_get(it, "metadata")) &&
                  ag_dra_covers(json_object_get(h, "spec"), json_object_get(it, "spec"));
    }
    if (in_line) {
        p->gen = gen;
        rc = 0;
        goto out;
    }
    /* never back: after a wipe the pool comes back above what it was */
    rc = publish(p, have, (gen > p->gen ? gen : p->gen) + 1, why, whylen);
out:
    json_decref(want);
    json_decref(list);
    return rc;
}

static void *write_main(void *arg)
{
    ag_dra_pub_t *p = arg;
    double backoff = 0, next = 0, last = 0;
    char why[512];

    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        double t = now_s(), wake = p->dirty ? (backoff > 0 ? next : last + MIN_GAP_S) : last + p->resync_s;
        struct timespec ts;
        int rc;

        if (backoff > 0 && wake < next)
            wake = next;
        if (t < wake) {
            ts = ms_clock_after(CLOCK_REALTIME, wake - t);
            pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            continue;
        }
        p->dirty = false;
        pthread_mutex_unlock(&p->mu);
        rc = reconcile(p, why, sizeof(why));
        pthread_mutex_lock(&p->mu);
        last = now_s();
        if (rc == 0) {
            backoff = 0;
            continue;
        }
        backoff = backoff > 0 ? backoff * 2 : BACKOFF_MIN_S;
        if (backoff > BACKOFF_MAX_S)
            backoff = BACKOFF_MAX_S;
        next = last + backoff;
        p->dirty = true;
        ms_log("warn", "dra: publishing the slices failed; retrying",
                json_pack("{s:s,s:f}", "error", why, "retry_s", backoff));
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int ag_dra_pub_start(ag_t *a, ms_kube_t *kube, const char *driver, double resync_s, ag_dra_pub_t **out)
{
    ag_dra_pub_t *p = calloc(1, sizeof(*p));
    char sel[600];

    *out = NULL;
    if (p == NULL)
        return -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->a = a;
    p->kube = kube;
    p->resync_s = resync_s;
    p->dirty = true;
    snprintf(sel, sizeof(sel), "spec.nodeName=%s,spec.driver=%s", a->cfg->node_name, driver);
    memcpy(p->selector, "fieldSelector=", 14);
    if ((p->driver = strdup(driver)) == NULL || ag_dra_x_gpus(a, &p->gpus) != 0 ||
        !ms_kube_escape(sel, p->selector + 14, sizeof(p->selector) - 14))
        goto fail;
    if (pthread_create(&p->writer, NULL, write_main, p) != 0)
        goto fail;
    p->writer_on = true;
    if (pthread_create(&p->watcher, NULL, watch_main, p) != 0)
        goto fail;
    p->watcher_on = true;
    *out = p;
    return 0;
fail:
    ag_dra_pub_stop(p, false);
    return -1;
}

static void cleanup(ag_dra_pub_t *p)
{
    json_t *list = NULL, *have, *it;
    char why[512], path[800];
    size_t i;
    int n = 0;

    if ((have = ours(p, &list, why, sizeof(why))) == NULL) {
        ms_log("error", "dra: --dra-cleanup: cannot list the slices", json_pack("{s:s}", "error", why));
        json_decref(list);
        return;
    }
    json_array_foreach(have, i, it) {
        json_t *pre = json_pack("{s:{s:O}}", "preconditions", "uid", json_object_get(json_object_get(it, "metadata"), "uid"));
        long st;

        snprintf(path, sizeof(path), SLICES "/%s", name_of(it));
        st = call(p, "DELETE", path, pre, NULL, why, sizeof(why));
        json_decref(pre);
        if (st == 200 || st == 202)
            n++;
        else if (st != 404)
            ms_log("error", "dra: --dra-cleanup: cannot delete a slice", json_pack("{s:s,s:s}", "slice", name_of(it),
                                                                                     "error", why));
    }
    ms_log("info", "dra: slices deleted (--dra-cleanup)", json_pack("{s:i}", "slices", n));
    json_decref(list);
}

void ag_dra_pub_stop(ag_dra_pub_t *p, bool clean)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    p->wstop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->watcher_on)
        pthread_join(p->watcher, NULL);
    if (p->writer_on)
        pthread_join(p->writer, NULL);
    if (clean)
        cleanup(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->gpus);
    free(p->driver);
    free(p);
}
