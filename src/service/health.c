/* health.c - the executor thread: failures back off, GPUs that keep
 * failing are unhealthy until a probe finds them answering (issue 20,
 * defect 6: failed ops were retried at once, about 2,400 times a second,
 * and a GPU that fell off the bus kept getting its job).
 *
 *   - Backoff, per GPU and per node: after a failure the next op there
 *     waits delay x U(0.5, 1) (equal jitter, so lanes that failed together
 *     do not come back together), delay doubling from XS_BACKOFF_MIN_S to
 *     XS_BACKOFF_MAX_S; a success ends it. The node's when it did not
 *     answer ("unreachable"), the GPU's otherwise (a refused create
 *     included: the re-plan waits a little too).
 *   - Health: a GPU whose ops fail --unhealthy-after times in a row, a GPU
 *     the backend says failed ("gpu-lost"), and every GPU of a node that
 *     did not answer that many times in a row become unhealthy: the loop
 *     hears it first (SVC_M_HEALTH: the scheduler cordons the GPU), then
 *     the executor fails the ops that would put something on it (exec.c).
 *     Its STOP and DESTROY ops wait. It is probed (ms_backend_probe) after
 *     XS_PROBE_MIN_S, the wait doubling to XS_BACKOFF_MAX_S, with jitter;
 *     the first probe it answers makes it healthy again.
 *   - Logs: one line when a GPU or node starts failing, one when it becomes
 *     unhealthy or answers again (with the count), and one every
 *     XS_LOG_EVERY failures between; the store holds one outcome per op
 *     the scheduler hears of, and backoff bounds how many there are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/exec_int.h"

static double grow(double delay, double min)
{
    return delay <= 0 ? min : delay * 2 > XS_BACKOFF_MAX_S ? XS_BACKOFF_MAX_S : delay * 2;
}

static double jitter(struct svc_xs *x, double delay)
{
    return delay * (0.5 + 0.5 * ms_rng_unit(&x->rng));
}

int xs_timer(struct svc_xs *x, int32_t id, double t)
{
    return ms__evheap_set(&x->timers, id, t);
}

double xs_not_before(const struct svc_xs *x, const ms_op_t *op)
{
    double t = 0;
    int n1, n2;

    xs_op_nodes(x, op, &n1, &n2);
    if (op->gpu >= 0 && op->gpu < x->ngpus && x->gpu[op->gpu].not_before > t)
        t = x->gpu[op->gpu].not_before;
    if (op->kind == MS_OP_MOVE && op->from_gpu >= 0 && op->from_gpu < x->ngpus &&
        x->gpu[op->from_gpu].not_before > t)
        t = x->gpu[op->from_gpu].not_before;
    if (n1 >= 0 && x->node[n1].not_before > t)
        t = x->node[n1].not_before;
    if (n2 >= 0 && x->node[n2].not_before > t)
        t = x->node[n2].not_before;
    return t;
}

static void post_health(svc_t *d, int g, bool healthy, const char *why)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    if (m == NULL || (m->why = strdup(why)) == NULL) {
        free(m);
        ms_log("error", "executor: out of memory telling the loop of a GPU's health", json_pack("{s:i}", "gpu", g));
        return;
    }
    m->kind = SVC_M_HEALTH;
    m->gpu = g;
    m->healthy = healthy;
    svc_post(d, m);
}

void xs_health_set(svc_t *d, int g, bool healthy, const char *why, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_gpu_t *gp = &x->gpu[g];
    int32_t probe = x->ngpus + x->nnodes + g;

    if (gp->unhealthy == !healthy)
        return;
    gp->unhealthy = !healthy;
    post_health(d, g, healthy, why);   /* before any failure it causes */
    if (!healthy) {
        ms_log("error", "GPU unhealthy: nothing is placed on it until it answers a probe",
               json_pack("{s:i,s:i,s:i,s:s}", "gpu", g, "node", gp->node, "failures", gp->fails, "why", why));
        /* a GPU that answers probes but fails its ops again waits longer
         * each time: the wait grows until an op works there */
        gp->probe_delay = gp->probe_delay > 0 ? grow(gp->probe_delay, XS_PROBE_MIN_S) : XS_PROBE_MIN_S;
        gp->probe_at = now + jitter(x, gp->probe_delay);
        (void)xs_timer(x, probe, gp->probe_at);   /* out of memory: probed at the next failure's timer */
        if (x->nnewly < x->ngpus)
            x->newly[x->nnewly++] = g;   /* exec.c fails what would go onto it */
        return;
    }
    ms_log("info", "GPU healthy again: it answered a probe",
           json_pack("{s:i,s:i,s:i}", "gpu", g, "node", gp->node, "failures", gp->fails));
    gp->fails = 0;
    gp->logged_at = 0;
    gp->probe_due = false;   /* its backoff stays: an op there waits it out */
    ms__evheap_del(&x->timers, probe);
    xs_list_wake(d, &gp->wait);
}

/* A node that did not answer: its backoff, and its GPUs unhealthy once it
 * failed unhealthy_after times in a row. */
static void node_failed(svc_t *d, const xs_work_t *w, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_node_t *nd = &x->node[w->node];
    char why[200];
    int g;

    nd->fails++;
    nd->delay = grow(nd->delay, XS_BACKOFF_MIN_S);
    nd->not_before = now + jitter(x, nd->delay);
    (void)xs_timer(x, x->ngpus + w->node, nd->not_before);
    if (nd->fails == 1 || nd->fails % XS_LOG_EVERY == 0)
        ms_log("warn", "a node did not answer; its ops back off",
               json_pack("{s:i,s:i,s:f,s:s}", "node", w->node, "failures", nd->fails, "wait_s",
                         nd->not_before - now, "why", w->why));
    if (nd->fails < x->unhealthy_after || w->probe)
        return;
    snprintf(why, sizeof(why), "its node did not answer %d times: %.120s", nd->fails, w->why);
    for (g = nd->first; g < nd->first + nd->n; g++)
        xs_health_set(d, g, false, why, now);
}

/* An op on the GPU failed (its own fault, the GPU's or a refusal). */
static void gpu_failed(svc_t *d, const xs_work_t *w, const char *what, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_gpu_t *gp = &x->gpu[w->gpu];
    char why[200];

    gp->delay = grow(gp->delay, XS_BACKOFF_MIN_S);
    gp->not_before = now + jitter(x, gp->delay);
    (void)xs_timer(x, w->gpu, gp->not_before);
    if (w->fault == MS_BF_REFUSED) {
        ms_log("info", "a create was refused (its slices are taken): re-planned with the node's inventory",
               json_pack("{s:i,s:s}", "gpu", w->gpu, "why", w->why));
        return;
    }
    if (w->fault == MS_BF_GATE)
        return;   /* never sent: the Lease was lost meanwhile, which says nothing of the GPU */
    gp->fails++;
    if (gp->fails == 1 || gp->fails - gp->logged_at >= XS_LOG_EVERY) {
        ms_log("warn", "op failed; the GPU's ops back off",
               json_pack("{s:i,s:s,s:i,s:f,s:s}", "gpu", w->gpu, "op", what, "failures", gp->fails, "wait_s",
                         gp->not_before - now, "why", w->why));
        gp->logged_at = gp->fails;
    }
    if (w->fault == MS_BF_GPU || gp->fails >= x->unhealthy_after) {
        snprintf(why, sizeof(why), "%s: %d failures in a row: %.120s", w->fault == MS_BF_GPU ? "it failed" : "its ops fail",
                 gp->fails, w->why);
        xs_health_set(d, w->gpu, false, why, now);
    }
}

static void probed(svc_t *d, const xs_work_t *w, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_gpu_t *gp = &x->gpu[w->gpu];

    if (w->st == MS_OK) {
        xs_health_set(d, w->gpu, true, "it answered a probe", now);
        return;
    }
    gp->probe_delay = grow(gp->probe_delay, XS_PROBE_MIN_S);
    gp->probe_at = now + jitter(x, gp->probe_delay);
    (void)xs_timer(x, x->ngpus + x->nnodes + w->gpu, gp->probe_at);
}

bool xs_health_outcome(svc_t *d, const xs_work_t *w, const char *what, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_node_t *nd = &x->node[w->node];
    xs_gpu_t *gp = &x->gpu[w->gpu];
    int before = x->nnewly;

    if (w->st == MS_OK) {
        if (nd->fails > 0)
            ms_log("info", "a node answers again", json_pack("{s:i,s:i}", "node", w->node, "failures", nd->fails));
        nd->fails = 0;
        nd->delay = 0;
        nd->not_before = 0;
    } else if (w->fault == MS_BF_NODE) {
        node_failed(d, w, now);
    }
    if (w->probe) {
        probed(d, w, now);
        return x->nnewly > before;
    }
    if (w->st == MS_OK) {
        if (gp->fails > 0 && !gp->unhealthy)
            ms_log("info", "a GPU's ops work again", json_pack("{s:i,s:i}", "gpu", w->gpu, "failures", gp->fails));
        if (!gp->unhealthy) {
            gp->fails = 0;
            gp->logged_at = 0;
        }
        gp->delay = 0;
        gp->not_before = 0;
        gp->probe_delay = 0;
    } else if (w->fault != MS_BF_NODE) {
        gpu_failed(d, w, what, now);
    }
    return x->nnewly > before;
}

void xs_timers_fire(svc_t *d, double now)
{
    struct svc_xs *x = d->exec.xs;
    const ms__ev_t *e;

    while ((e = ms__evheap_top(&x->timers)) != NULL && e->t <= now) {
        int32_t id = e->id;

        ms__evheap_pop(&x->timers);
        if (id < x->ngpus)
            xs_list_wake(d, &x->gpu[id].wait);
        else if (id < x->ngpus + x->nnodes)
            xs_list_wake(d, &x->node[id - x->ngpus].wait);
        else {
            int32_t g = id - x->ngpus - x->nnodes;

            if (x->gpu[g].unhealthy && !x->gpu[g].probe_due) {
                x->gpu[g].probe_due = true;
                x->probeq[x->nprobeq++] = g;
            }
        }
    }
}
