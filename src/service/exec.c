/* exec.c - the executor thread: plans into lanes (lanes.c), their ops to
 * the lane workers (worker.c), each outcome to the loop (SVC_M_OPRESULT),
 * backoff and GPU health (health.c). Its structures are its own
 * (exec_int.h); the workers hand results back through its queue.
 *
 * THE CONTRACT with ms_sched (docs/sched.md): after a failure every op
 * issued before the scheduler heard of it is discarded; ops of one plan
 * keep their order; a MOVE across nodes orders both lanes. With lanes, ops
 * issued after a failed one may already be done or in flight on other
 * nodes, so the executor keeps it with a rule and a barrier:
 *   - the rule: failure f of op id_f is the m_f-th the executor reports;
 *     the loop has handled it when its epoch (svc_exec_t.epoch, carried by
 *     every plan made since) reaches m_f. An op X is discarded iff some f
 *     has id_f < X.op_id and X.epoch < m_f: issued after the failed op and
 *     before the scheduler heard of it. Those are exactly the ops
 *     ms_sched_op_failed rolls back (every pending op after the failed
 *     one but other STOP plans, which it issues again and which the rule,
 *     by the new epoch, lets run);
 *   - the barrier: f is posted only once no op with an id above id_f is in
 *     flight, so every such op that did run is reported done before the
 *     scheduler rolls back (it skips ops done), and none starts after: the
 *     rule is set when f happens. Failures are posted in the order of m,
 *     discards only after the failures they follow (a job's in-flight
 *     count must not reach 0 before its STOP plan is issued again).
 * A STOP or DESTROY is never reported failed: it is tried again, after the
 * GPU's or node's backoff, until it succeeds (defect 5), so the view never
 * hands its slices out while the hardware still has them: the ops that
 * would use them come after it in its GPU's FIFO. A create the backend
 * refused (its slices are taken) fails with the GPU named, so that the
 * loop holds what the backend reports there before the scheduler places
 * again. When a GPU becomes unhealthy, every op that would put something
 * on it (and has not run) fails, after the loop heard of the GPU (defect
 * 6). Stopping (SIGTERM, svc_exec_stop) lets each lane finish the op in
 * progress; nothing more starts, and the rest stays pending in the
 * journal for the next start (defect 8).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/exec_int.h"

/* --- outcomes to the loop --------------------------------------------------- */

static svc_msg_t *outcome(const svc_xplan_t *p, const svc_xop_t *o, int result)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        ms_log("error", "executor: out of memory for an op outcome; the op stays pending",
               json_pack("{s:I,s:i}", "plan", (json_int_t)p->plan_id, "idx", o->idx));
        return NULL;
    }
    m->kind = SVC_M_OPRESULT;
    m->plan_id = p->plan_id;
    m->idx = o->idx;
    m->op_id = o->op_id;
    m->result = result;
    m->op_kind = o->op.kind;
    m->op_bbm = o->op.bbm;
    m->gpu = o->op.gpu;
    m->job = o->jp;
    return m;
}

/* Discards go out after every failure posted so far. */
static void discard(svc_t *d, const svc_xplan_t *p, int from, int to)
{
    struct svc_xs *x = d->exec.xs;
    int i;

    for (i = from; i < to; i++) {
        svc_msg_t *m = outcome(p, &p->ops[i], 2);

        if (m == NULL)
            continue;
        if (x->nposted == x->nfails) {
            svc_post(d, m);
            continue;
        }
        m->link.next = NULL;
        *x->held_tail = &m->link;
        x->held_tail = &m->link.next;
    }
}

static bool flight_above(const struct svc_xs *x, uint64_t op_id)
{
    int i;

    for (i = 0; i < x->nflight; i++)
        if (!x->flight[i]->probe && x->flight[i]->p->ops[x->flight[i]->idx].op_id > op_id)
            return true;
    return false;
}

/* Post the failures whose barrier is clear, in order; then what waited. */
static void post_ready(svc_t *d)
{
    struct svc_xs *x = d->exec.xs;
    svc_qlink_t *l, *next;
    uint64_t low;
    int k;

    while (x->nposted < x->nfails && !flight_above(x, x->fails[x->nposted].op_id)) {
        svc_post(d, x->fails[x->nposted].msg);
        x->fails[x->nposted++].msg = NULL;
    }
    if (x->nposted < x->nfails)
        return;
    for (l = x->held; l != NULL; l = next) {
        next = l->next;
        svc_post(d, SVC_QITEM(l, svc_msg_t, link));
    }
    x->held = NULL;
    x->held_tail = &x->held;
    /* a rule every plan here and to come is past: no plan of an older
     * epoch is registered, and plans arrive in epoch order */
    low = x->reg_head != NULL && x->reg_head->epoch < x->last_epoch ? x->reg_head->epoch : x->last_epoch;
    for (k = 0; k < x->nposted && x->fails[k].m <= low; k++)
        ;
    if (k > 0) {
        memmove(x->fails, x->fails + k, (size_t)(x->nfails - k) * sizeof(*x->fails));
        x->nfails -= k;
        x->nposted -= k;
    }
}

/* Is op o (of a plan of epoch) discarded by a failure's rule? */
static bool ruled_out(const struct svc_xs *x, const svc_xop_t *o, uint64_t epoch)
{
    int i;

    for (i = x->nfails - 1; i >= 0 && x->fails[i].m > epoch; i--)
        if (o->op_id > x->fails[i].op_id)
            return true;
    return false;
}

/* The plans that now have ops the rules discard: the rest of each from
 * there (plans in flight: after their op, at its result). */
static void sweep(svc_t *d)
{
    struct svc_xs *x = d->exec.xs;
    svc_xplan_t *p;

    for (p = x->reg_head; p != NULL; p = p->rt->rnext) {
        xs_run_t *rt = p->rt;
        int i;

        if (rt->running)
            continue;
        for (i = rt->next; i < rt->end && !ruled_out(x, &p->ops[i], p->epoch); i++)
            ;
        if (i < rt->end) {
            discard(d, p, i, rt->end);
            rt->end = i;
            if (rt->heads == rt->nref)
                xs_list_push(&x->runnable, p);   /* done, or its prefix goes on */
        }
    }
}

/* Op idx of p fails (it ran and failed, or it will not run): its rule,
 * its message after its barrier, the rest of p discarded. */
static void fail_op(svc_t *d, svc_xplan_t *p, int idx, bool refused)
{
    struct svc_xs *x = d->exec.xs;
    const svc_xop_t *o = &p->ops[idx];
    svc_msg_t *m = outcome(p, o, 1);
    int end = p->rt->end;

    if (m == NULL)
        return;   /* logged: it stays pending, and so do the ops after it */
    if (x->nfails == x->capfails) {
        int cap = x->capfails ? x->capfails * 2 : 16;
        xs_fail_t *v = realloc(x->fails, (size_t)cap * sizeof(*v));

        if (v == NULL) {
            ms_log("error", "executor: out of memory for a failure; the op stays pending", NULL);
            svc_msg_free(m);
            return;
        }
        x->fails = v;
        x->capfails = cap;
    }
    m->refused = refused;
    x->fails[x->nfails].op_id = o->op_id;
    x->fails[x->nfails].m = ++x->m;
    x->fails[x->nfails].msg = m;
    x->nfails++;
    p->rt->end = idx;
    discard(d, p, idx + 1, end);
    sweep(d);
    if (p->rt->heads == p->rt->nref && !p->rt->running)
        xs_list_push(&x->runnable, p);
    post_ready(d);
}

/* GPU g became unhealthy: every op not run that would put something on
 * it fails (the loop heard of the GPU first: its cordon). */
static void fail_placements(svc_t *d, int g)
{
    struct svc_xs *x = d->exec.xs;
    xs_ref_t *r;

    for (r = x->gpu[g].head; r != NULL; r = r->next) {
        xs_run_t *rt = r->p->rt;
        int i;

        for (i = rt->next + (rt->running ? 1 : 0); i < rt->end && !xs_places_on(&r->p->ops[i].op, g); i++)
            ;
        if (i < rt->end)
            fail_op(d, r->p, i, false);
    }
}

static void newly_unhealthy(svc_t *d)
{
    struct svc_xs *x = d->exec.xs;
    int i;

    for (i = 0; i < x->nnewly; i++)
        fail_placements(d, x->newly[i]);
    x->nnewly = 0;
}

/* --- dispatch --------------------------------------------------------------- */

static int flight_add(struct svc_xs *x, xs_work_t *w)
{
    if (x->nflight == x->capflight) {
        int cap = x->capflight ? x->capflight * 2 : 16;
        xs_work_t **v = realloc(x->flight, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return -1;
        x->flight = v;
        x->capflight = cap;
    }
    x->flight[x->nflight++] = w;
    return 0;
}

static void flight_del(struct svc_xs *x, const xs_work_t *w)
{
    int i;

    for (i = 0; i < x->nflight; i++)
        if (x->flight[i] == w) {
            x->flight[i] = x->flight[--x->nflight];
            return;
        }
}

static void on_result(svc_t *d, xs_work_t *w, double now);

/* Start w (its nodes free) the way the mode says. */
static void hand(svc_t *d, xs_work_t *w, double now)
{
    struct svc_xs *x = d->exec.xs;

    w->hdr.what = SVC_X_RESULT;
    w->seq = ++x->seq;
    w->t0 = now;
    x->node[w->node].busy = true;
    if (w->node2 >= 0)
        x->node[w->node2].busy = true;
    if (!w->probe)
        w->p->rt->running = true;
    if (d->exec.mode == SVC_EXEC_MANUAL) {
        w->wlink.next = NULL;
        if (x->manual == NULL)
            x->manual = w;
        else {
            xs_work_t *t = x->manual;

            while (t->wlink.next != NULL)
                t = SVC_QITEM(t->wlink.next, xs_work_t, wlink);
            t->wlink.next = &w->wlink;
        }
        return;
    }
    if (d->exec.mode == SVC_EXEC_INLINE || xs_worker_hand(d, w) != 0) {
        xs_work_run(d, w);
        on_result(d, w, now);
    }
}

/* Run op idx of p on its node(s), or put p where it waits. */
static void try_op(svc_t *d, svc_xplan_t *p, double now)
{
    struct svc_xs *x = d->exec.xs;
    const svc_xop_t *o = &p->ops[p->rt->next];
    int n1, n2, g = o->op.gpu;
    double t;
    xs_work_t *w;

    xs_op_nodes(x, &o->op, &n1, &n2);
    if (n1 < 0 || g < 0 || g >= x->ngpus) {   /* a GPU the lanes do not know: the backend says no */
        fail_op(d, p, p->rt->next, false);
        return;
    }
    if (x->gpu[g].unhealthy && !xs_places_on(&o->op, g) && o->op.kind != MS_OP_MOVE) {
        xs_list_push(&x->gpu[g].wait, p);   /* a STOP or DESTROY waits for the GPU's health */
        return;
    }
    if (x->node[n1].busy || (n2 >= 0 && x->node[n2].busy)) {
        xs_list_push(&x->node[x->node[n1].busy ? n1 : n2].wait, p);
        return;
    }
    if ((t = xs_not_before(x, &o->op)) > now) {
        /* the GPU's timer is armed at its not_before, the node's at its own */
        if (t == x->gpu[g].not_before)
            xs_list_push(&x->gpu[g].wait, p);
        else
            xs_list_push(&x->node[x->node[n1].not_before == t ? n1 : n2].wait, p);
        return;
    }
    w = &x->node[n1].work;
    memset(w, 0, sizeof(*w));
    w->p = p;
    w->idx = p->rt->next;
    w->gpu = g;
    w->node = n1;
    w->node2 = n2;
    if (flight_add(x, w) != 0) {
        xs_list_push(&x->gpu[g].wait, p);   /* out of memory: again at the GPU's next wake */
        (void)xs_timer(x, g, now + XS_BACKOFF_MIN_S);
        return;
    }
    hand(d, w, now);
}

/* Move p on: done, discarded, failed, waiting or dispatched. */
static void advance(svc_t *d, svc_xplan_t *p, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_run_t *rt = p->rt;

    if (rt->running || rt->heads < rt->nref)
        return;   /* woken again when it heads them all or its op returns */
    if (rt->next >= rt->end) {
        xs_unregister(d, p);
        return;
    }
    if (ruled_out(x, &p->ops[rt->next], p->epoch)) {
        discard(d, p, rt->next, rt->end);
        rt->end = rt->next;
        xs_unregister(d, p);
        return;
    }
    if (x->stopping)
        return;   /* pending in the journal */
    if (xs_places_on(&p->ops[rt->next].op, p->ops[rt->next].op.gpu) && p->ops[rt->next].op.gpu >= 0 &&
        p->ops[rt->next].op.gpu < x->ngpus && x->gpu[p->ops[rt->next].op.gpu].unhealthy) {
        fail_op(d, p, rt->next, false);   /* pushes p back: its end is its next now */
        return;
    }
    try_op(d, p, now);
}

/* Probes that are due, on nodes that are free. */
static void probes(svc_t *d, double now)
{
    struct svc_xs *x = d->exec.xs;
    int i = 0;

    while (i < x->nprobeq) {
        int g = x->probeq[i], n = x->gpu[g].node;
        xs_work_t *w;

        if (!x->gpu[g].unhealthy || !x->gpu[g].probe_due) {
            x->gpu[g].probe_due = false;
            x->probeq[i] = x->probeq[--x->nprobeq];
            continue;
        }
        if (x->node[n].busy || x->node[n].not_before > now) {
            i++;
            continue;
        }
        x->gpu[g].probe_due = false;
        x->probeq[i] = x->probeq[--x->nprobeq];
        w = &x->node[n].work;
        memset(w, 0, sizeof(*w));
        w->probe = true;
        w->gpu = g;
        w->node = n;
        w->node2 = -1;
        if (flight_add(x, w) != 0) {
            (void)xs_timer(x, x->ngpus + x->nnodes + g, now + XS_PROBE_MIN_S);
            continue;
        }
        hand(d, w, now);
    }
}

static void pump(svc_t *d, double now)
{
    struct svc_xs *x = d->exec.xs;
    svc_xplan_t *p;

    if (!x->stopping)
        probes(d, now);
    while ((p = xs_list_pop(&x->runnable)) != NULL)
        advance(d, p, now);
}

static void on_result(svc_t *d, xs_work_t *w, double now)
{
    struct svc_xs *x = d->exec.xs;
    svc_xplan_t *p = w->p;
    const svc_xop_t *o = w->probe ? NULL : &p->ops[w->idx];

    flight_del(x, w);
    if (o != NULL && w->st != MS_OK && w->fault == MS_BF_OP &&
        ((o->op.kind == MS_OP_STOP && w->st == MS_ESTATE) || (o->op.kind == MS_OP_DESTROY && w->st == MS_ENOENT))) {
        /* what it was to undo is not there (the job is not on that
         * instance, or the instance is gone): the state it was to reach */
        ms_log("info", "a stop or destroy found nothing to undo; taken as done",
               json_pack("{s:i,s:s,s:s}", "gpu", w->gpu, "op", ms_backend_op_name(o->op.kind), "why", w->why));
        w->st = MS_OK;
    }
    x->node[w->node].busy = false;
    xs_list_wake(d, &x->node[w->node].wait);
    if (w->node2 >= 0) {
        x->node[w->node2].busy = false;
        xs_list_wake(d, &x->node[w->node2].wait);
    }
    (void)xs_health_outcome(d, w, o != NULL ? ms_backend_op_name(o->op.kind) : "probe", now);
    if (o != NULL) {
        p->rt->running = false;
        if (w->st == MS_OK) {
            svc_msg_t *m = outcome(p, o, 0);

            if (m != NULL)
                svc_post(d, m);
            p->rt->next++;
        } else if (ruled_out(x, o, p->epoch)) {
            discard(d, p, w->idx, p->rt->end);   /* rolled back anyway: it changed nothing */
            p->rt->end = w->idx;
        } else if (o->op.kind != MS_OP_STOP && o->op.kind != MS_OP_DESTROY) {
            fail_op(d, p, w->idx, w->fault == MS_BF_REFUSED && o->op.kind == MS_OP_CREATE);
        }   /* a STOP or DESTROY: tried again after the backoff */
        xs_list_push(&x->runnable, p);
    }
    newly_unhealthy(d);
    post_ready(d);
}

/* --- the thread, its start and stop ------------------------------------------ */

/* Register what arrived, in order (a plan that cannot be registered for
 * want of memory holds back the ones after it: order is the contract). */
static void intake(svc_t *d)
{
    struct svc_xs *x = d->exec.xs;

    while (x->intake != NULL) {
        svc_xplan_t *p = SVC_QITEM(x->intake, svc_xplan_t, link);
        svc_qlink_t *next = x->intake->next;

        if (xs_register(d, p) != 0) {
            ms_log("error", "executor: out of memory registering a plan; it waits", NULL);
            return;
        }
        x->intake = next;
        if (next == NULL)
            x->intake_tail = &x->intake;
    }
}

/* Items from the executor's queue: plans, results, the stop marker. */
static void take(svc_t *d, svc_qlink_t *l, double now)
{
    struct svc_xs *x = d->exec.xs;
    svc_qlink_t *next;

    for (; l != NULL; l = next) {
        svc_xplan_t *p = SVC_QITEM(l, svc_xplan_t, link);

        next = l->next;
        if (p->what == SVC_X_RESULT) {
            on_result(d, (xs_work_t *)(void *)p, now);
        } else if (p->what == SVC_X_STOP) {
            x->stopping = true;
        } else if (x->stopping) {
            svc_xplan_free(p);   /* pending in the journal */
        } else {
            l->next = NULL;
            *x->intake_tail = l;
            x->intake_tail = &l->next;
        }
    }
    intake(d);
}

int svc_exec_step(svc_t *d, double now)
{
    struct svc_xs *x = d->exec.xs;
    uint64_t seq = x->seq;

    if (atomic_load(&d->exec.stop))
        x->stopping = true;
    take(d, svc_queue_drain(&d->exec.q), now);
    xs_timers_fire(d, now);
    pump(d, now);
    return (int)(x->seq - seq);
}

void *svc_exec_main(void *arg)
{
    svc_t *d = arg;
    struct svc_xs *x = d->exec.xs;

    for (;;) {
        double now = svc_clock_mono(d->clock), wait = -1;
        const ms__ev_t *e = ms__evheap_top(&x->timers);
        svc_qlink_t *l;

        if (atomic_load(&d->exec.stop))
            x->stopping = true;
        if (x->stopping && x->nflight == 0)
            break;
        if (e != NULL && !x->stopping)
            wait = e->t > now ? e->t - now : 0;
        l = svc_queue_take(&d->exec.q, wait, NULL);
        now = svc_clock_mono(d->clock);
        take(d, l, now);
        if (!x->stopping)
            xs_timers_fire(d, now);
        pump(d, now);
    }
    /* what comes now stays pending in the journal: the syncer frees it */
    svc_queue_close(&d->exec.q);
    svc_xplan_free_chain(svc_queue_drain(&d->exec.q));
    xs_workers_stop(d);
    post_ready(d);
    return NULL;
}

void svc_exec_stop(svc_t *d)
{
    atomic_store(&d->exec.stop, true);
    if (d->exec.xs != NULL && svc_queue_push(&d->exec.q, &d->exec.xs->stop_item.link) != 0)
        return;   /* closed: the thread has ended or was never started */
    if (d->exec.running) {
        pthread_join(d->exec.th, NULL);
        d->exec.running = false;
    }
}

int svc_exec_init(svc_t *d)
{
    /* no spec (a unit test of another thread): no lanes, every op fails */
    const ms_node_spec_t *nd = d->spec != NULL ? ms_cluster_spec_nodes(d->spec) : NULL;
    int nn = d->spec != NULL ? ms_cluster_spec_nnodes(d->spec) : 0;
    int ng = d->spec != NULL ? ms_cluster_spec_ngpus(d->spec) : 0, i, g, k = 0;
    struct svc_xs *x = calloc(1, sizeof(*x));
    int32_t ids;

    if (x == NULL)
        return -1;
    d->exec.xs = x;
    x->ngpus = ng;
    x->nnodes = nn;
    x->gpu = calloc((size_t)(ng > 0 ? ng : 1), sizeof(*x->gpu));
    x->node = calloc((size_t)(nn > 0 ? nn : 1), sizeof(*x->node));
    x->newly = calloc((size_t)(ng > 0 ? ng : 1), sizeof(*x->newly));
    x->probeq = calloc((size_t)(ng > 0 ? ng : 1), sizeof(*x->probeq));
    if (x->gpu == NULL || x->node == NULL || x->newly == NULL || x->probeq == NULL)
        return -1;
    for (i = 0; i < nn; i++) {
        x->node[i].first = k;
        x->node[i].n = nd[i].ngpus;
        for (g = 0; g < nd[i].ngpus; g++)
            x->gpu[k++].node = i;
    }
    x->unhealthy_after = d->cfg != NULL && d->cfg->unhealthy_after > 0 ? d->cfg->unhealthy_after : 3;
    x->op_timeout_s = d->cfg != NULL && d->cfg->op_timeout_s > 0 ? d->cfg->op_timeout_s : 30.0;
    x->held_tail = &x->held;
    x->intake_tail = &x->intake;
    x->stop_item.what = SVC_X_STOP;
    ms_rng_seed(&x->rng, (uint64_t)(svc_clock_wall(d->clock) * 1e6) ^ ((uint64_t)getpid() << 32));
    ms__evheap_init(&x->timers);
    /* every timer's room now, so that arming one never fails later */
    ids = 2 * ng + nn;
    if (ms__evheap_ids(&x->timers, ids) != 0)
        return -1;
    for (i = 0; i < ids; i++)
        if (ms__evheap_set(&x->timers, i, 0) != 0)
            return -1;
    for (i = 0; i < ids; i++)
        ms__evheap_del(&x->timers, i);
    return 0;
}

void svc_exec_fini(svc_t *d)
{
    struct svc_xs *x = d->exec.xs;
    svc_qlink_t *l, *next;
    int i;

    if (x == NULL)
        return;
    xs_workers_stop(d);
    while (x->reg_head != NULL) {
        svc_xplan_t *p = x->reg_head;

        x->reg_head = p->rt->rnext;
        svc_xplan_free(p);
    }
    svc_xplan_free_chain(x->intake);
    for (i = 0; i < x->nfails; i++)
        svc_msg_free(x->fails[i].msg);
    for (l = x->held; l != NULL; l = next) {
        next = l->next;
        svc_msg_free(SVC_QITEM(l, svc_msg_t, link));
    }
    free(x->fails);
    free(x->flight);
    free(x->gpu);
    free(x->node);
    free(x->newly);
    free(x->probeq);
    ms__evheap_fini(&x->timers);
    free(x);
    d->exec.xs = NULL;
}

/* --- the tests' lane (SVC_EXEC_MANUAL) -------------------------------------- */

bool svc_exec_manual_peek(svc_t *d, int64_t *plan_id, int *idx, int *gpu)
{
    const xs_work_t *w = d->exec.xs->manual;

    if (w == NULL)
        return false;
    *plan_id = w->probe ? -1 : w->p->plan_id;
    *idx = w->probe ? -1 : w->idx;
    *gpu = w->gpu;
    return true;
}

static xs_work_t *manual_next(const xs_work_t *w)
{
    return w->wlink.next != NULL ? SVC_QITEM(w->wlink.next, xs_work_t, wlink) : NULL;
}

void svc_exec_manual_done(svc_t *d, int64_t plan_id, int idx, ms_status_t st, const char *field, double now)
{
    struct svc_xs *x = d->exec.xs;
    xs_work_t *w, *prev = NULL;
    ms_diag_t why;

    for (w = x->manual; w != NULL; prev = w, w = manual_next(w))
        if (w->probe ? plan_id < 0 : (w->p->plan_id == plan_id && w->idx == idx))
            break;
    if (w == NULL)
        return;
    if (prev == NULL)
        x->manual = manual_next(w);
    else
        prev->wlink.next = w->wlink.next;
    ms_diag_clear(&why);
    snprintf(why.field, sizeof(why.field), "%s", field != NULL ? field : "");
    w->st = st;
    w->fault = st == MS_OK ? MS_BF_OP : ms_backend_fault(st, &why);
    snprintf(w->why, sizeof(w->why), "%s", st == MS_OK ? "" : "failed (a test's lane)");
    on_result(d, w, now);
    pump(d, now);
}
