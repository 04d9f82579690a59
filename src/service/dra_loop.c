/* dra_loop.c - the DRA loop thread: owns every object the watches
 * deliver, the device map, both ms_sched instances and every decision.
 * Each iteration takes every message that arrived as one batch (watched
 * objects, writers' outcomes, the webhook's questions, the takeover,
 * /dra/status), then does once what the batch set off: the map and the
 * schedulers rebuilt if slices changed, the pods that may now be decided
 * tried. The tick (every 0.2 s) follows leadership, fences the managed
 * drivers, passes ms_sched's queues, retries failed pods and expires
 * allocations nobody reserved.
 *
 * Only the leader decides and writes: on losing the Lease (seen before
 * each batch and at each tick) the schedulers are dropped (a new leader
 * rebuilds everything from the API server), and the writers check
 * leadership before every request.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"
#include "service/kctl.h"

#define TICK_S 0.2
#define REBUILD_GAP_S 0.5          /* slices changing in a burst: one rebuild */

static bool all_synced(svc_dra_t *x)
{
    return atomic_load(&x->synced_kinds) == (1 << DRA_K_N) - 1;
}

/* Become the deciding replica: everything rebuilt from the objects. */
static int take_over(svc_dra_t *x, double now)
{
    if (!all_synced(x))
        return -1;   /* not every kind listed yet: kctl asks again */
    if (dra_map_build(x) != 0 || dra_sched_build(x, now) != 0)
        return -1;
    x->map_dirty = false;
    x->fence_sent = false;
    x->retry_named = true;
    ms_log("info", "dra: deciding", json_pack("{s:i,s:i,s:i}", "gpus", x->map.ngpu, "claims",
                                              (int)x->tab[DRA_K_CLAIM].n, "pods", (int)x->tab[DRA_K_POD].n));
    return 0;
}

static void handle(svc_dra_t *x, dra_msg_t *m, double now)
{
    switch (m->kind) {
    case DRA_M_OBJ:
        dra_model_apply(x, m, now);
        break;
    case DRA_M_SYNCED:
        dra_model_synced(x, m->okind, m->epoch, now);
        break;
    case DRA_M_WRITTEN:
        dra_decide_written(x, m->work, now);
        break;
    case DRA_M_HOOK:
        dra_decide_review(x, m);
        break;
    case DRA_M_TAKEOVER:
        m->rc = take_over(x, now);
        if (m->rc == 0)
            atomic_store(&x->takeover_us, (long long)(now * 1e6));
        break;
    case DRA_M_STATUS:
        m->body = dra_status_json(x, now);
        break;
    default:
        break;
    }
}

/* What the batch set off: the map rebuilt, the pods tried. */
static void after(svc_dra_t *x, double now)
{
    char **v;
    int i;

    if (x->map_dirty && x->built && now - x->last_build >= REBUILD_GAP_S) {
        if (dra_map_build(x) == 0 && dra_sched_build(x, now) == 0)
            x->retry_named = true;   /* new devices: every waiting pod again */
        x->map_dirty = false;
    }
    if (x->retry_named) {
        int32_t k;

        x->retry_named = false;
        for (k = 0; k < x->tab[DRA_K_POD].n; k++) {
            dra_pod_t *p = x->tab[DRA_K_POD].v[k];

            if (p != NULL && p->node == NULL && p->npc > 0 && !p->done)
                dra_model_retry(x, p->uid);
        }
    }
    v = x->retry;
    x->retry = NULL;
    for (i = 0; v != NULL && v[i] != NULL; i++) {
        dra_pstate_t *ps = dra_pstate(x, v[i], false);
        dra_pod_t *p = dra_tab_get(&x->tab[DRA_K_POD], v[i]);

        if (ps != NULL)
            ps->in_retry = false;
        if (p != NULL)
            dra_decide_pod(x, p, now);
        else
            (void)dra_tab_del(&x->pst, v[i]);   /* gone */
        free(v[i]);
    }
    free(v);
    dra_decide_started(x, now);
}

/* A replica that lost the Lease drops what it decided before it reads
 * another message: a replica frozen past its Lease (kill -STOP, a long
 * pause) wakes to the new leader's allocations in its first batch, which
 * its own stale decisions would report as overlaps. */
static void follow_lead(svc_dra_t *x, double now)
{
    if (x->built && !dra_leading(x, now)) {
        ms_log("info", "dra: no longer deciding (not the leader)", NULL);
        dra_sched_drop(x);
        atomic_store(&x->takeover_us, 0);
    }
}

void dra_loop_batch(svc_dra_t *x, svc_qlink_t *batch, double now)
{
    svc_qlink_t *l, *next;

    follow_lead(x, now);
    for (l = batch; l != NULL; l = next) {
        dra_msg_t *m = SVC_QITEM(l, dra_msg_t, link);

        next = l->next;
        handle(x, m, now);
        if (m->waiter != NULL)
            dra_msg_answer(m);   /* the caller frees it, or it did if the caller left */
        else
            dra_msg_free(m);
    }
    after(x, now);
}

/* Allocations of ours that no pod reserved within --dra-expire: cleared,
 * the finalizer and our annotation removed (the pod, if it still waits,
 * is decided again). */
static void expire(svc_dra_t *x, double now)
{
    double wall = svc_clock_wall(x->d->clock);
    int32_t i;

    for (i = 0; i < x->tab[DRA_K_CLAIM].n; i++) {
        dra_claim_t *c = x->tab[DRA_K_CLAIM].v[i];
        dra_cstate_t *cs;
        dra_work_t *w;

        if (c == NULL || !c->allocated || !c->ours || c->nreserved > 0 || c->reserved_other || c->deleting ||
            c->alloc_t <= 0 || wall - c->alloc_t < x->cfg->expire_s)
            continue;
        if ((cs = dra_cstate(x, c->uid, true)) == NULL || cs->expiring_rv != NULL)
            continue;
        if ((w = calloc(1, sizeof(*w))) == NULL)
            return;
        w->kind = DRA_W_DEALLOC;
        if ((w->path = dra_strf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", c->ns, c->name)) == NULL ||
            (w->body = c->rv != NULL ? strdup(c->rv) : NULL) == NULL || (w->patch = dra_out_claim_unmeta(c)) == NULL ||
            (w->claim_uid = strdup(c->uid)) == NULL || (cs->expiring_rv = strdup(c->rv)) == NULL) {
            dra_work_free(w);
            return;
        }
        ms_log("info", "dra: an allocation nobody reserved expires",
               json_pack("{s:s,s:s,s:f}", "claim", c->name, "namespace", c->ns, "age_s", wall - c->alloc_t));
        dra_write_push(x, w);
    }
    (void)now;
}

void dra_loop_tick(svc_dra_t *x, double now)
{
    int32_t i;
    int s;

    follow_lead(x, now);
    if (!x->built && x->d->kctl == NULL && !x->d->cfg->leader_elect && all_synced(x) && take_over(x, now) == 0)
        atomic_store(&x->takeover_us, (long long)(now * 1e6));
    if (!x->built)
        return;
    if (x->cfg->fence && !x->fence_sent) {
        for (s = 0; s < x->cfg->ndrivers; s++) {
            dra_work_t *w = calloc(1, sizeof(*w));

            if (w == NULL)
                break;
            w->kind = DRA_W_RULE;
            w->path = strdup("/apis/resource.k8s.io/v1/devicetaintrules");
            w->body = dra_out_taint_rule_named(x->cfg->drivers[s]);
            if (w->path == NULL || w->body == NULL) {
                dra_work_free(w);
                break;
            }
            dra_write_push(x, w);
        }
        x->fence_sent = true;
    }
    for (i = 0; i < x->pst.n; i++) {
        dra_pstate_t *ps = x->pst.v[i];

        if (ps != NULL && ps->retry_at > 0 && ps->retry_at <= now) {
            ps->retry_at = 0;
            dra_model_retry(x, ps->uid);
        }
    }
    if (now >= x->next_expire) {
        expire(x, now);
        x->next_expire = now + 1.0;
    }
    for (s = 0; s < 2; s++)
        if (x->sched[s] != NULL)
            (void)ms_sched_tick(x->sched[s], now);
    after(x, now);
}

void *dra_loop_main(void *arg)
{
    svc_dra_t *x = arg;
    double next_tick = 0;

    for (;;) {
        bool closed = false;
        double now = svc_clock_mono(x->d->clock), wait = next_tick - now;
        svc_qlink_t *b = svc_queue_take(&x->q, wait > 0 ? wait : 0, &closed);

        now = svc_clock_mono(x->d->clock);
        if (b != NULL)
            dra_loop_batch(x, b, now);
        if (now >= next_tick) {
            dra_loop_tick(x, now);
            next_tick = now + TICK_S;
        }
        if (closed && b == NULL)
            break;
    }
    return NULL;
}

/* --- /dra/status ------------------------------------------------------------------ */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y ? 1 : 0;
}

static int rank(double q, int n)
{
    int r = (int)ceil(q * n) - 1;

    return r < 0 ? 0 : r >= n ? n - 1 : r;
}

static json_t *latency(const dra_stats_t *st)
{
    double *v;
    json_t *o;

    if (st->nlat == 0 || (v = malloc((size_t)st->nlat * sizeof(*v))) == NULL)
        return json_pack("{s:i}", "count", st->nlat);
    memcpy(v, st->lat, (size_t)st->nlat * sizeof(*v));
    qsort(v, (size_t)st->nlat, sizeof(*v), cmp_d);
    /* nearest rank: the smallest value with at least q of them at or below it */
    o = json_pack("{s:i,s:f,s:f,s:f,s:f}", "count", st->nlat, "p50_s", v[rank(0.50, st->nlat)], "p90_s",
                  v[rank(0.90, st->nlat)], "p99_s", v[rank(0.99, st->nlat)], "max_s", v[st->nlat - 1]);
    free(v);
    return o;
}

char *dra_status_json(svc_dra_t *x, double now)
{
    double fc = 0;
    int n = 0, g, waiting = 0;
    int32_t i;
    ms_sched_stats_t ss[2];
    json_t *o;
    char *s;

    memset(ss, 0, sizeof(ss));
    for (g = 0; g < 2; g++)
        if (x->sched[g] != NULL)
            ms_sched_stats(x->sched[g], &ss[g]);
    if (x->sched[0] != NULL)
        for (g = 0; g < ms_sched_ngpus(x->sched[0]); g++) {
            const ms_geom_t *geom;
            const ms_gpu_t *gpu = ms_sched_gpu(x->sched[0], g, &geom);

            fc += ms_frag_cost(geom, gpu->state, &x->d->cfg->pcfg.frag);
            n++;
        }
    for (i = 0; i < x->pst.n; i++)
        waiting += x->pst.v[i] != NULL;
    o = json_pack("{s:b,s:b,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i},s:o}",
                  "leader", dra_leading(x, now), "deciding", x->built, "synced", atomic_load(&x->synced_kinds),
                  "gpus", x->map.ngpu, "kinds", x->map.nkind, "skipped", x->map.skipped, "claims",
                  (int)x->tab[DRA_K_CLAIM].n, "pods_waiting", waiting, "queued", (int)(ss[0].waiting + ss[1].waiting),
                  "running", (int)(ss[0].running + ss[1].running), "fragcost_mean", n > 0 ? fc / n : 0.0, "counts",
                  "decisions", (json_int_t)x->st.decisions, "writes_ok", (json_int_t)x->st.writes_ok, "writes_failed",
                  (json_int_t)x->st.writes_failed, "ungated", (json_int_t)x->st.ungated, "expired",
                  (json_int_t)x->st.expired, "conflicts", (json_int_t)x->st.conflicts, "wiped",
                  (json_int_t)x->st.wiped, "refused", (json_int_t)x->st.refused, "rebuilds", (json_int_t)x->st.rebuilds,
                  "fence_rules", x->fenced_n, "gate_to_allocation", latency(&x->st));
    if (o != NULL)
        json_object_set_new(o, "webhook_late", json_integer((json_int_t)atomic_load(&x->hook_late)));
    s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}
