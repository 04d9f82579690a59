/* worker.c - the lane workers: threads that each run one node's op (a
 * MOVE's migration hook first, hook.c) or one GPU's probe on the backend
 * at a time, within --op-timeout, and hand the outcome back to the
 * executor through its queue. They touch nothing else of the executor's.
 * The executor starts them as they are needed (a node at most one op in
 * flight, so at most one worker per busy node, XS_MAX_WORKERS in all) and
 * joins them when it ends; a worker blocked on a hung agent holds only that
 * node's lane until the op's deadline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/exec_int.h"

#define WORKER_STACK (512 * 1024)

void xs_work_run(svc_t *d, xs_work_t *w)
{
    double timeout = d->exec.xs->op_timeout_s;
    ms_diag_t diag;

    ms_diag_clear(&diag);
    w->why[0] = '\0';
    if (w->probe) {
        w->st = ms_backend_probe(d->be, w->gpu, timeout, &diag);
    } else {
        const svc_xop_t *x = &w->p->ops[w->idx];
        ms_backend_op_t op;

        if (x->op.kind == MS_OP_MOVE && d->cfg->migrate_hook != NULL &&
            svc_hook_run(d, x, w->why, sizeof(w->why)) != 0) {
            w->st = MS_EIO;   /* the workload did not move: the op's own failure */
            w->fault = MS_BF_OP;
            return;
        }
        memset(&op, 0, sizeof(op));
        op.op = x->op;
        op.job = x->job;
        op.profile = x->prof_name;
        op.timeout_s = timeout;
        w->st = ms_backend_run(d->be, &op, &diag);
    }
    w->fault = w->st == MS_OK ? MS_BF_OP : ms_backend_fault(w->st, &diag);
    if (w->st != MS_OK)
        snprintf(w->why, sizeof(w->why), "%s", diag.msg[0] != '\0' ? diag.msg : ms_strerror(w->st));
}

static void *worker_main(void *arg)
{
    svc_t *d = arg;
    svc_qlink_t *l;

    while ((l = svc_queue_pop(&d->exec.xs->workq)) != NULL) {
        xs_work_t *w = SVC_QITEM(l, xs_work_t, wlink);

        xs_work_run(d, w);
        /* the executor closes its queue only once every worker has ended */
        (void)svc_queue_push(&d->exec.q, &w->hdr.link);
    }
    return NULL;
}

int xs_worker_hand(svc_t *d, xs_work_t *w)
{
    struct svc_xs *x = d->exec.xs;

    if (!x->workq_init) {
        if (svc_queue_init(&x->workq) != 0)
            return -1;
        x->workq_init = true;
    }
    /* nflight counts w: a worker each, up to the cap */
    if (x->nworkers < x->nflight && x->nworkers < XS_MAX_WORKERS) {
        pthread_attr_t at;
        pthread_t *v = realloc(x->workers, (size_t)(x->nworkers + 1) * sizeof(*v));
        int rc = -1;

        if (v != NULL) {
            x->workers = v;
            if (pthread_attr_init(&at) == 0) {
                (void)pthread_attr_setstacksize(&at, WORKER_STACK);
                rc = pthread_create(&x->workers[x->nworkers], &at, worker_main, d);
                pthread_attr_destroy(&at);
            }
        }
        if (rc == 0)
            x->nworkers++;
        else if (x->nworkers == 0)
            return -1;   /* no thread at all: the caller runs it */
        else
            ms_log("warn", "executor: cannot start another lane worker; the op waits for one", NULL);
    }
    return svc_queue_push(&x->workq, &w->wlink) == 0 ? 0 : -1;
}

void xs_workers_stop(svc_t *d)
{
    struct svc_xs *x = d->exec.xs;
    int i;

    if (!x->workq_init)
        return;
    svc_queue_close(&x->workq);
    for (i = 0; i < x->nworkers; i++)
        pthread_join(x->workers[i], NULL);
    free(x->workers);
    x->workers = NULL;
    x->nworkers = 0;
    svc_queue_destroy(&x->workq);
    x->workq_init = false;
}
