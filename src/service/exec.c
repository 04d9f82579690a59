/* exec.c - the executor thread: runs the ops of each plan on the backend in
 * order, one plan after another, and posts every outcome to the loop. After
 * a failed op, the rest of its plan and every plan made before the loop
 * heard of the failure (same epoch or older) are posted as discarded: the
 * scheduler rolls all of them back when it hears of it (sched/ops.c), and
 * what it decides afterwards carries a newer epoch.
 */
#include <stdlib.h>
#include <string.h>

#include "service/svc.h"

void svc_xplan_free(svc_xplan_t *p)
{
    if (p != NULL) {
        free(p->ops);
        free(p);
    }
}

void svc_exec_push(svc_t *d, svc_xplan_t *p)
{
    pthread_mutex_lock(&d->xmu);
    p->next = NULL;
    if (d->xtail != NULL)
        d->xtail->next = p;
    else
        d->xhead = p;
    d->xtail = p;
    pthread_cond_signal(&d->xcv);
    pthread_mutex_unlock(&d->xmu);
}

static void post(svc_t *d, const svc_xplan_t *p, const svc_xop_t *x, int result)
{
    svc_msg_t *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        svc_log("error", "executor: out of memory posting an op outcome", NULL);
        return;
    }
    m->kind = SVC_M_OPRESULT;
    m->plan_id = p->plan_id;
    m->idx = x->idx;
    m->op_id = x->op_id;
    m->result = result;
    m->op_kind = x->op.kind;
    m->op_bbm = x->op.bbm;
    m->job = x->jp;
    svc_post(d, m);
}

static void *run(void *arg)
{
    svc_t *d = arg;

    for (;;) {
        svc_xplan_t *p;
        int i;
        bool failed = false;

        pthread_mutex_lock(&d->xmu);
        while (d->xhead == NULL && !d->xstop)
            pthread_cond_wait(&d->xcv, &d->xmu);
        if (d->xstop) {
            pthread_mutex_unlock(&d->xmu);
            break;
        }
        p = d->xhead;
        d->xhead = p->next;
        if (d->xhead == NULL)
            d->xtail = NULL;
        if (d->xdiscarding && p->epoch > d->xdiscard)
            d->xdiscarding = false;
        failed = d->xdiscarding;
        pthread_mutex_unlock(&d->xmu);
        for (i = 0; i < p->n; i++) {
            const svc_xop_t *x = &p->ops[i];
            const char *why = "";

            if (failed) {
                post(d, p, x, 2);
                continue;
            }
            if (svc_backend_op(d->be, &x->op, x->job, x->prof_name, &why) != 0) {
                svc_log("warn", "op failed",
                        json_pack("{s:I,s:i,s:i,s:i,s:i,s:s,s:s}", "plan", (json_int_t)p->plan_id, "idx",
                                  x->idx, "kind", (int)x->op.kind, "gpu", (int)x->op.gpu, "start",
                                  (int)x->op.start, "job", x->job, "why", why));
                failed = true;
                pthread_mutex_lock(&d->xmu);
                d->xdiscarding = true;
                if (p->epoch > d->xdiscard)
                    d->xdiscard = p->epoch;
                pthread_mutex_unlock(&d->xmu);
                post(d, p, x, 1);
                continue;
            }
            post(d, p, x, 0);
        }
        svc_xplan_free(p);
    }
    return NULL;
}

int svc_exec_start(svc_t *d)
{
    d->xstop = false;
    return pthread_create(&d->exec_th, NULL, run, d) == 0 ? 0 : -1;
}

/* Finish the op in progress, then stop; plans still queued stay pending in
 * the journal and are reconciled at the next start. */
void svc_exec_stop(svc_t *d)
{
    svc_xplan_t *p;

    pthread_mutex_lock(&d->xmu);
    d->xstop = true;
    pthread_cond_signal(&d->xcv);
    pthread_mutex_unlock(&d->xmu);
    pthread_join(d->exec_th, NULL);
    while ((p = d->xhead) != NULL) {
        d->xhead = p->next;
        svc_xplan_free(p);
    }
    d->xtail = NULL;
}
