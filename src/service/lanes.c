/* lanes.c - the executor thread: its plans' places in the lanes
 * (exec_int.h): each GPU's FIFO of the plans that touch it, in the order
 * they arrived (the order ms_sched issued them), the registered plans, and
 * the lists plans wait on. A plan may run once it heads the FIFO of every
 * GPU it touches; when it is done it leaves them all, and each plan behind
 * it that now heads all of its own becomes runnable. Also the plans' own
 * memory (svc_xplan_free).
 */
#include <stdlib.h>
#include <string.h>

#include "service/exec_int.h"

void svc_xplan_free(svc_xplan_t *p)
{
    if (p == NULL || p->what != SVC_X_PLAN)
        return;   /* a lane's result or the stop marker: the executor's own memory */
    free(p->rt);
    free(p->ops);
    free(p);
}

void svc_xplan_free_chain(svc_qlink_t *l)
{
    svc_qlink_t *next;

    for (; l != NULL; l = next) {
        next = l->next;
        svc_xplan_free(SVC_QITEM(l, svc_xplan_t, link));
    }
}

void xs_list_push(xs_list_t *l, svc_xplan_t *p)
{
    if (p->rt->waiting)
        return;
    p->rt->waiting = true;
    p->rt->wnext = NULL;
    if (l->tail != NULL)
        l->tail->rt->wnext = p;
    else
        l->head = p;
    l->tail = p;
}

svc_xplan_t *xs_list_pop(xs_list_t *l)
{
    svc_xplan_t *p = l->head;

    if (p == NULL)
        return NULL;
    l->head = p->rt->wnext;
    if (l->head == NULL)
        l->tail = NULL;
    p->rt->wnext = NULL;
    p->rt->waiting = false;
    return p;
}

void xs_list_wake(svc_t *d, xs_list_t *src)
{
    svc_xplan_t *p;

    while ((p = xs_list_pop(src)) != NULL)
        xs_list_push(&d->exec.xs->runnable, p);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return x < y ? -1 : x > y;
}

/* The distinct GPUs p's ops touch (a MOVE both of its), into g (room for
 * 2n); how many. */
static int plan_gpus(const struct svc_xs *x, const svc_xplan_t *p, int32_t *g)
{
    int i, n = 0, k = 0;

    for (i = 0; i < p->n; i++) {
        const ms_op_t *op = &p->ops[i].op;

        if (op->gpu >= 0 && op->gpu < x->ngpus)
            g[n++] = op->gpu;
        if (op->kind == MS_OP_MOVE && op->from_gpu >= 0 && op->from_gpu < x->ngpus)
            g[n++] = op->from_gpu;
    }
    if (n == 0)
        return 0;
    qsort(g, (size_t)n, sizeof(*g), cmp_i32);
    for (i = 1; i < n; i++)
        if (g[i] != g[k])
            g[++k] = g[i];
    return k + 1;
}

int xs_register(svc_t *d, svc_xplan_t *p)
{
    struct svc_xs *x = d->exec.xs;
    int32_t *g = malloc((size_t)(2 * p->n + 1) * sizeof(*g));
    xs_run_t *rt;
    int n, i;

    if (g == NULL)
        return -1;
    n = plan_gpus(x, p, g);
    if ((rt = calloc(1, sizeof(*rt) + (size_t)n * sizeof(xs_ref_t))) == NULL) {
        free(g);
        return -1;
    }
    rt->end = p->n;
    rt->nref = n;
    p->rt = rt;
    for (i = 0; i < n; i++) {
        xs_gpu_t *gp = &x->gpu[g[i]];
        xs_ref_t *r = &rt->ref[i];

        r->p = p;
        r->gpu = g[i];
        if (gp->tail != NULL)
            gp->tail->next = r;
        else {
            gp->head = r;
            rt->heads++;
        }
        gp->tail = r;
    }
    free(g);
    rt->rprev = x->reg_tail;
    if (x->reg_tail != NULL)
        x->reg_tail->rt->rnext = p;
    else
        x->reg_head = p;
    x->reg_tail = p;
    x->nreg++;
    x->last_epoch = p->epoch;
    if (rt->heads == rt->nref)
        xs_list_push(&x->runnable, p);
    return 0;
}

void xs_unregister(svc_t *d, svc_xplan_t *p)
{
    struct svc_xs *x = d->exec.xs;
    xs_run_t *rt = p->rt;
    int i;

    for (i = 0; i < rt->nref; i++) {
        xs_gpu_t *gp = &x->gpu[rt->ref[i].gpu];
        xs_ref_t *nx = rt->ref[i].next;

        /* it heads them all: it ran */
        gp->head = nx;
        if (nx == NULL)
            gp->tail = NULL;
        else if (++nx->p->rt->heads == nx->p->rt->nref)
            xs_list_push(&x->runnable, nx->p);
    }
    if (rt->rprev != NULL)
        rt->rprev->rt->rnext = rt->rnext;
    else
        x->reg_head = rt->rnext;
    if (rt->rnext != NULL)
        rt->rnext->rt->rprev = rt->rprev;
    else
        x->reg_tail = rt->rprev;
    x->nreg--;
    svc_xplan_free(p);
}

void xs_op_nodes(const struct svc_xs *x, const ms_op_t *op, int *n1, int *n2)
{
    *n1 = op->gpu >= 0 && op->gpu < x->ngpus ? x->gpu[op->gpu].node : -1;
    *n2 = -1;
    if (op->kind == MS_OP_MOVE && op->from_gpu >= 0 && op->from_gpu < x->ngpus &&
        x->gpu[op->from_gpu].node != *n1)
        *n2 = x->gpu[op->from_gpu].node;
}

bool xs_places_on(const ms_op_t *op, int g)
{
    return op->gpu == g && (op->kind == MS_OP_CREATE || op->kind == MS_OP_START || op->kind == MS_OP_MOVE);
}
