/* inv.c - the inventory model of the sim, dry-run and nvml backends
 * (backend_int.h): instances in an array under one mutex, and what each op
 * does to them. Any thread; the functions marked "mu held" in
 * backend_int.h expect the caller to hold inv->mu. What also writes the
 * files (a clean stop, a uuid taken over) is inv_file.c's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"

char *ms__path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);

    if (p != NULL)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

ms_status_t ms__inv_init(ms__inv_t *inv, int ngpus, const char *state_dir, const char *base,
                         ms_diag_t *why)
{
    char name[64];
    size_t n;

    memset(inv, 0, sizeof(*inv));
    inv->jfd = -1;
    inv->ngpus = ngpus;
    if (pthread_mutex_init(&inv->mu, NULL) != 0) {
        ms_diag_set(why, NULL, 0, "", "out of resources");
        return MS_ENOMEM;
    }
    inv->mu_init = true;
    snprintf(name, sizeof(name), "%s.json", base);
    inv->path = ms__path_join(state_dir, name);
    snprintf(name, sizeof(name), "%s.json.tmp", base);
    inv->tmp = ms__path_join(state_dir, name);
    snprintf(name, sizeof(name), "%s.journal", base);
    inv->jpath = ms__path_join(state_dir, name);
    n = (size_t)(ngpus > 0 ? ngpus : 1);
    inv->gpu_uuid = calloc(n, sizeof(*inv->gpu_uuid));
    if (inv->path == NULL || inv->tmp == NULL || inv->jpath == NULL || inv->gpu_uuid == NULL) {
        ms_diag_set(why, NULL, 0, "", "out of memory");
        return MS_ENOMEM;
    }
    return MS_OK;
}

int ms__inv_find(const ms__inv_t *inv, int gpu, int start, const char *job)
{
    int i;

    for (i = 0; i < inv->n; i++) {
        if (inv->v[i].gpu != gpu || inv->v[i].start != start)
            continue;
        if (start >= 0 || job == NULL || strcmp(inv->v[i].job, job) == 0)
            return i;
    }
    return -1;
}

ms_status_t ms__inv_add(ms__inv_t *inv, int gpu, int start, int prof, const char *job)
{
    ms_binst_t *in;

    if (inv->n == inv->cap) {
        int cap = inv->cap ? inv->cap * 2 : 64;
        ms_binst_t *v = realloc(inv->v, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return MS_ENOMEM;
        inv->v = v;
        inv->cap = cap;
    }
    in = &inv->v[inv->n++];
    memset(in, 0, sizeof(*in));
    in->gpu = gpu;
    in->start = (int8_t)start;
    in->prof = (int8_t)prof;
    snprintf(in->job, sizeof(in->job), "%s", job != NULL ? job : "");
    if (start >= 0)
        snprintf(in->uuid, sizeof(in->uuid), "MIG-%08x-%04x-4000-8000-%012" PRIx64,
                 (unsigned)gpu ^ inv->salt, (unsigned)start, ++inv->uuid_seq);
    return MS_OK;
}

void ms__inv_del(ms__inv_t *inv, int i)
{
    inv->v[i] = inv->v[--inv->n];
}

static ms_status_t refuse(ms_diag_t *why, ms_status_t st, const char *msg)
{
    ms_diag_set(why, NULL, 0, "", "%s", msg);
    return st;
}

/* MOVE: the job leaves its source for the target (break-before-make: the
 * source goes first, and the target is made in its place). */
static ms_status_t apply_move(ms__inv_t *inv, const ms_op_t *op, const char *job, ms_diag_t *why)
{
    int i, k;

    if ((i = ms__inv_find(inv, op->from_gpu, op->from_start, job)) < 0 || strcmp(inv->v[i].job, job) != 0)
        return refuse(why, MS_ESTATE, "the job is not on the source instance");
    if (op->from_start < 0 || op->bbm) {
        ms__inv_del(inv, i);
        if (op->start >= 0 && ms__inv_find(inv, op->gpu, op->start, NULL) >= 0)
            return refuse(why, MS_EEXIST, "the target start is taken");
        return ms__inv_add(inv, op->gpu, op->start, op->prof, job) == MS_OK
                   ? MS_OK : refuse(why, MS_ENOMEM, "out of memory");
    }
    if ((k = ms__inv_find(inv, op->gpu, op->start, NULL)) < 0 || inv->v[k].job[0] != '\0')
        return refuse(why, MS_ESTATE, "no idle target instance");
    snprintf(inv->v[k].job, sizeof(inv->v[k].job), "%s", job);
    inv->v[i].job[0] = '\0';
    return MS_OK;
}

ms_status_t ms__inv_apply(ms__inv_t *inv, const ms_backend_op_t *bop, ms_diag_t *why)
{
    const ms_op_t *op = &bop->op;
    const char *job = bop->job != NULL ? bop->job : "";
    int i;

    switch (op->kind) {
    case MS_OP_CREATE:
        if (ms__inv_find(inv, op->gpu, op->start, NULL) >= 0)
            return refuse(why, MS_EEXIST, "an instance exists at that start");
        return ms__inv_add(inv, op->gpu, op->start, op->prof, NULL) == MS_OK
                   ? MS_OK : refuse(why, MS_ENOMEM, "out of memory");
    case MS_OP_DESTROY:
        if (bop->force) {   /* reconciliation: whatever runs on it */
            if ((i = ms__inv_find(inv, op->gpu, op->start, job)) < 0)
                return refuse(why, MS_ENOENT, "no such instance");
            ms__inv_del(inv, i);
            return MS_OK;
        }
        if ((i = ms__inv_find(inv, op->gpu, op->start, NULL)) < 0 || op->start < 0)
            return refuse(why, MS_ENOENT, "no such instance");
        if (inv->v[i].job[0] != '\0')
            return refuse(why, MS_ESTATE, "the instance runs a job");
        ms__inv_del(inv, i);
        return MS_OK;
    case MS_OP_START:
        if (op->start < 0)
            return ms__inv_add(inv, op->gpu, -1, op->prof, job) == MS_OK
                       ? MS_OK : refuse(why, MS_ENOMEM, "out of memory");
        if ((i = ms__inv_find(inv, op->gpu, op->start, NULL)) < 0 || inv->v[i].job[0] != '\0')
            return refuse(why, MS_ESTATE, "no idle instance at that start");
        snprintf(inv->v[i].job, sizeof(inv->v[i].job), "%s", job);
        return MS_OK;
    case MS_OP_MOVE:
        return apply_move(inv, op, job, why);
    case MS_OP_STOP:
        if ((i = ms__inv_find(inv, op->gpu, op->start, job)) < 0 || strcmp(inv->v[i].job, job) != 0)
            return refuse(why, MS_ESTATE, "the job is not on that instance");
        if (op->start < 0)
            ms__inv_del(inv, i);
        else
            inv->v[i].job[0] = '\0';
        return MS_OK;
    default:
        return refuse(why, MS_EINVAL, "unknown op");
    }
}

ms_status_t ms__inv_copy(ms__inv_t *inv, ms_binst_t **out, int *n, ms_diag_t *why)
{
    pthread_mutex_lock(&inv->mu);
    *out = malloc((size_t)(inv->n > 0 ? inv->n : 1) * sizeof(**out));
    if (*out == NULL) {
        pthread_mutex_unlock(&inv->mu);
        return refuse(why, MS_ENOMEM, "out of memory");
    }
    if (inv->n > 0)
        memcpy(*out, inv->v, (size_t)inv->n * sizeof(**out));
    *n = inv->n;
    pthread_mutex_unlock(&inv->mu);
    return MS_OK;
}

const char *ms__inv_gpu_uuid(const ms__inv_t *inv, int gpu)
{
    return gpu >= 0 && gpu < inv->ngpus ? inv->gpu_uuid[gpu] : "";
}

void ms__inv_inst_uuid(ms__inv_t *inv, int gpu, int start, const char *job, char *buf, size_t len)
{
    int i;

    pthread_mutex_lock(&inv->mu);
    i = ms__inv_find(inv, gpu, start, job);
    snprintf(buf, len, "%s", i >= 0 ? inv->v[i].uuid : "");
    pthread_mutex_unlock(&inv->mu);
}
