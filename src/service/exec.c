/* exec.c - the executor thread: runs the ops of each plan on the backend in
 * order, one plan after another, and posts every outcome to the loop. After
 * a failed op, the rest of its plan and every plan made before the loop
 * heard of the failure (same epoch or older) are posted as discarded: the
 * scheduler rolls all of them back when it hears of it (sched/ops.c), and
 * what it decides afterwards carries a newer epoch.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "service/backend.h"
#include "service/svc.h"

extern char **environ;

/* The migration hook (docs/service.md): sh -c CMD with the move in its
 * environment; exit 0 within the deadline means the work moved. Runs on the
 * executor thread, so at most one migration is in flight at a time. */
static int run_hook(svc_t *d, const svc_xop_t *x, const char **why)
{
    static __thread char msg[160];
    char env[10][160], *envp[64], from_uuid[48], to_uuid[48];
    char *argv[] = { (char *)"sh", (char *)"-c", d->cfg->migrate_hook, NULL };
    const ms_op_t *op = &x->op;
    struct timespec t0, now, nap = { 0, 10 * 1000 * 1000 };
    pid_t pid;
    int i = 0, n = 0, status = 0, rc;

    svc_backend_inst_uuid(d->be, op->from_gpu, op->from_start, x->job, from_uuid, sizeof(from_uuid));
    svc_backend_inst_uuid(d->be, op->gpu, op->start, NULL, to_uuid, sizeof(to_uuid));
    snprintf(env[0], sizeof(env[0]), "MIGSCHED_JOB=%s", x->job);
    snprintf(env[1], sizeof(env[1]), "MIGSCHED_PROFILE=%s", x->prof_name);
    snprintf(env[2], sizeof(env[2]), "MIGSCHED_FROM_GPU=%d", (int)op->from_gpu);
    snprintf(env[3], sizeof(env[3]), "MIGSCHED_FROM_START=%d", (int)op->from_start);
    snprintf(env[4], sizeof(env[4]), "MIGSCHED_FROM_UUID=%s", from_uuid);
    snprintf(env[5], sizeof(env[5]), "MIGSCHED_TO_GPU=%d", (int)op->gpu);
    snprintf(env[6], sizeof(env[6]), "MIGSCHED_TO_START=%d", (int)op->start);
    snprintf(env[7], sizeof(env[7]), "MIGSCHED_TO_UUID=%s", to_uuid);
    snprintf(env[8], sizeof(env[8]), "MIGSCHED_MOVE=%s", op->bbm ? "break-before-make" : "make-before-break");
    for (i = 0; i < 9; i++)
        envp[n++] = env[i];
    for (i = 0; environ != NULL && environ[i] != NULL && n < 63; i++)
        if (strncmp(environ[i], "MIGSCHED_", 9) != 0)
            envp[n++] = environ[i];
    envp[n] = NULL;
    if ((rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, envp)) != 0) {
        snprintf(msg, sizeof(msg), "migration hook: cannot start /bin/sh: %s", strerror(rc));
        *why = msg;
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);

        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            *why = "migration hook: lost its process";
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 >
            d->cfg->migrate_timeout_s) {
            kill(pid, SIGKILL);
            (void)waitpid(pid, &status, 0);
            snprintf(msg, sizeof(msg), "migration hook: no answer within %.0f s", d->cfg->migrate_timeout_s);
            *why = msg;
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    snprintf(msg, sizeof(msg), "migration hook failed (%s %d)",
             WIFEXITED(status) ? "exit" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    *why = msg;
    return -1;
}

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
            if ((x->op.kind == MS_OP_MOVE && d->cfg->migrate_hook != NULL &&
                 run_hook(d, x, &why) != 0) ||
                svc_backend_op(d->be, &x->op, x->job, x->prof_name, &why) != 0) {
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
