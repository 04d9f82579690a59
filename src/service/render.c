/* render.c - GET /v1/cluster (JSON) and GET /metrics (Prometheus text
 * format 0.0.4), both from the loop thread's view, on the loop thread. Label names follow DCGM
 * where they mean the same thing (UUID, modelName, GPU_I_PROFILE), so a
 * PromQL join with dcgm-exporter's series works.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/frag.h"
#include "service/svc.h"

static double gpu_util(const ms_gpu_t *gpu, const ms_geom_t *g, ms_node_mode_t mode, int replicas)
{
    int i, used = 0;

    if (mode == MS_NODE_MIG)
        return (double)gpu->busy / ms_geom_compute(g);
    for (i = 0; i < gpu->ninst; i++)
        used += gpu->inst[i].job >= 0;
    return replicas > 0 ? (double)used / replicas : 0.0;
}

static const char *mode_name(ms_node_mode_t m)
{
    return m == MS_NODE_TIMESLICE ? "timeslice" : m == MS_NODE_WHOLE ? "whole" : "mig";
}

/* Does the backend hold exactly the view's instances? Only meaningful when
 * no op is pending. */
static bool in_sync(svc_t *d, long *ninv)
{
    ms_binst_t *inv = NULL;
    int n = 0, i, g, k, nview = 0;
    bool ok = true;

    if (ms_backend_inventory(d->be, &inv, &n, NULL) != MS_OK)
        return false;
    *ninv = n;
    for (g = 0; g < ms_sched_ngpus(d->sched); g++) {
        const ms_geom_t *geom;
        const ms_gpu_t *gpu = ms_sched_gpu(d->sched, g, &geom);

        for (k = 0; k < gpu->ninst; k++) {
            const ms_inst_t *in = &gpu->inst[k];
            svc_job_t *j = in->job >= 0 ? svc_jobs_by_slot(&d->jobs, in->job) : NULL;
            bool found = false;

            nview++;
            for (i = 0; i < n && !found; i++)
                found = inv[i].gpu == g && inv[i].start == in->start && inv[i].prof == in->prof &&
                        strcmp(inv[i].job, j != NULL ? j->id : "") == 0;
            ok &= found;
        }
    }
    free(inv);
    return ok && nview == n;
}

json_t *svc_cluster_json(svc_t *d)
{
    json_t *o = json_object(), *nodes = json_array(), *queue = json_array();
    ms_sched_stats_t st;
    double t = d->cfg->pcfg.lb_threshold;
    long lazy = 0, busy = 0, queued = 0, ninv = 0;
    int nn = ms_sched_nnodes(d->sched), n, g, k;
    size_t i;

    for (n = 0; n < nn; n++) {
        const ms_node_spec_t *ns = ms_sched_node(d->sched, n);
        int first = ms_sched_node_first_gpu(d->sched, n), node, grp, local;
        json_t *gpus = json_array();

        ms_sched_gpu_where(d->sched, first, &node, &grp, &local);
        for (g = 0; g < ns->ngpus; g++) {
            const ms_geom_t *geom;
            const ms_gpu_t *gpu = ms_sched_gpu(d->sched, first + g, &geom);
            ms_node_mode_t mode = ms_sched_group_mode(d->sched, grp);
            int replicas = ms_sched_group_cluster(d->sched, grp)->replicas;
            double u = gpu_util(gpu, geom, mode, replicas);
            double f = mode == MS_NODE_MIG ? ms_frag_cost(geom, gpu->state, &d->cfg->pcfg.frag) : 0.0;
            json_t *insts = json_array(), *go;

            for (k = 0; k < gpu->ninst; k++) {
                const ms_inst_t *in = &gpu->inst[k];
                svc_job_t *j = in->job >= 0 ? svc_jobs_by_slot(&d->jobs, in->job) : NULL;
                const ms_profile_t *p = ms_geom_profile(geom, in->prof);
                json_t *io = json_pack("{s:i,s:i,s:s,s:s?}", "start", (int)in->start, "size",
                                       in->start >= 0 ? (int)p->msize : 0, "profile", p->name, "job",
                                       j != NULL ? j->id : NULL);
                char buf[48];

                if (io != NULL && in->start >= 0) {
                    ms_backend_inst_uuid(d->be, first + g, in->start, NULL, buf, sizeof(buf));
                    if (buf[0])
                        json_object_set_new(io, "uuid", json_string(buf));
                }
                json_array_append_new(insts, io);
            }
            if (u < t)
                lazy++;
            else
                busy++;
            go = json_pack("{s:i,s:i,s:s,s:i,s:i,s:f,s:f,s:s,s:o}", "gpu", g, "global", first + g, "uuid",
                           ms_backend_gpu_uuid(d->be, first + g), "width", ms_geom_width(geom), "mask",
                           (int)ms_state_mask(geom, gpu->state), "fragcost", f, "util", u, "load",
                           u < t ? "lazy" : "busy", "instances", insts);
            if (mode != MS_NODE_MIG)
                json_object_set_new(go, "replicas", json_integer(replicas));
            json_object_set_new(go, "healthy", json_boolean(svc_gpu_healthy(d, first + g)));
            if (!svc_gpu_healthy(d, first + g))
                json_object_set_new(go, "health", json_string(d->health[first + g].why));
            json_array_append_new(gpus, go);
        }
        json_array_append_new(nodes, json_pack("{s:s,s:s,s:s,s:o}", "name", ns->name, "model",
                                               ms_geom_model(ns->geom)->name, "mode", mode_name(ns->mode),
                                               "gpus", gpus));
    }
    for (i = 0; i < d->jobs.n; i++)
        if (d->jobs.v[i]->state == MS_JOB_QUEUED && queued++ < 1000)
            json_array_append_new(queue, json_string(d->jobs.v[i]->id));
    ms_sched_stats(d->sched, &st);
    json_object_set_new(o, "nodes", nodes);
    json_object_set_new(o, "queue", queue);
    json_object_set_new(o, "queued", json_integer(queued));
    json_object_set_new(o, "gpus", json_pack("{s:I,s:I}", "lazy", (json_int_t)lazy, "busy", (json_int_t)busy));
    json_object_set_new(o, "policy", json_string(d->cfg->policy));
    json_object_set_new(o, "lb_threshold", json_real(t));
    json_object_set_new(o, "stats", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "running", (json_int_t)st.running,
                                              "waiting", (json_int_t)st.waiting, "reconfigurations",
                                              (json_int_t)st.reconfigurations, "migrations",
                                              (json_int_t)st.migrations, "ops_done", (json_int_t)st.ops_done,
                                              "ops_failed", (json_int_t)st.ops_failed));
    {
        size_t pend = ms_sched_pending(d->sched);
        bool sync = in_sync(d, &ninv);

        json_object_set_new(o, "backend", json_pack("{s:s,s:I,s:I,s:o}", "kind", ms_backend_name(d->be),
                                                    "instances", (json_int_t)ninv, "pending_ops",
                                                    (json_int_t)pend, "in_sync",
                                                    pend == 0 ? json_boolean(sync) : json_null()));
    }
    return o;
}

/* --- the exposition ----------------------------------------------------- */

typedef struct buf {
    char *s;
    size_t n, cap;
    bool oom;
} buf_t;

static void put(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>

static void put(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (b->oom)
        return;
    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        {
            size_t cap = (b->cap + (size_t)k + 1) * 2;
            char *v = realloc(b->s, cap);

            if (v == NULL) {
                b->oom = true;
                return;
            }
            b->s = v;
            b->cap = cap;
        }
    }
}

/* One histogram's samples; labels is "" or 'k="v",' pairs, each ending in
 * a comma (le follows them). */
static void hist_samples(buf_t *b, const char *name, const char *labels, const svc_hist_t *h)
{
    size_t n = strlen(labels);
    uint64_t c = 0;
    int i;

    for (i = 0; i < h->n; i++) {
        c += h->bucket[i];
        put(b, "%s_bucket{%sle=\"%g\"} %" PRIu64 "\n", name, labels, h->le[i], c);
    }
    put(b, "%s_bucket{%sle=\"+Inf\"} %" PRIu64 "\n", name, labels, h->count);
    if (n == 0)
        put(b, "%s_sum %.6f\n%s_count %" PRIu64 "\n", name, h->sum, name, h->count);
    else   /* the labels without their last comma */
        put(b, "%s_sum{%.*s} %.6f\n%s_count{%.*s} %" PRIu64 "\n", name, (int)(n - 1), labels, h->sum, name,
            (int)(n - 1), labels, h->count);
}

static void hist(buf_t *b, const char *name, const char *help, const svc_hist_t *h)
{
    put(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    hist_samples(b, name, "", h);
}

/* Per tenant and GPU model with a limit@MODEL or guarantee@MODEL: the
 * limit, the guarantee (each only where declared) and the usage on that
 * model; a tenant without either has none of the series. */
static void tenant_model_metrics(buf_t *b, const ms_sched_tenant_info_t *ti, int k)
{
    int i, m;

    put(b, "# HELP migsched_tenant_limit_model_slices Compute slices a tenant may hold at most on GPUs "
           "of one model (limit@MODEL; absent: no such limit).\n"
           "# TYPE migsched_tenant_limit_model_slices gauge\n");
    for (i = 0; i < k; i++)
        for (m = 0; m < ti[i].nmodel_limits; m++)
            if (ti[i].model_limits[m].limit >= 0)
                put(b, "migsched_tenant_limit_model_slices{tenant=\"%s\",model=\"%s\"} %ld\n", ti[i].name,
                    ti[i].model_limits[m].model, ti[i].model_limits[m].limit);
    put(b, "# HELP migsched_tenant_guarantee_model_slices Compute slices guaranteed to a tenant on GPUs "
           "of one model (guarantee@MODEL; absent: no such guarantee).\n"
           "# TYPE migsched_tenant_guarantee_model_slices gauge\n");
    for (i = 0; i < k; i++)
        for (m = 0; m < ti[i].nmodel_limits; m++)
            if (ti[i].model_limits[m].guarantee > 0)
                put(b, "migsched_tenant_guarantee_model_slices{tenant=\"%s\",model=\"%s\"} %ld\n",
                    ti[i].name, ti[i].model_limits[m].model, ti[i].model_limits[m].guarantee);
    put(b, "# HELP migsched_tenant_usage_model_slices Compute slices a tenant's live jobs hold on GPUs "
           "of a model it has a limit@MODEL or guarantee@MODEL for.\n"
           "# TYPE migsched_tenant_usage_model_slices gauge\n");
    for (i = 0; i < k; i++)
        for (m = 0; m < ti[i].nmodel_limits; m++)
            put(b, "migsched_tenant_usage_model_slices{tenant=\"%s\",model=\"%s\"} %ld\n", ti[i].name,
                ti[i].model_limits[m].model, ti[i].model_limits[m].usage);
}

/* Per tenant (docs/tenants.md): what the scheduler keeps, never a scan of
 * the jobs. A limit of none is left out of its gauge. */
static void tenant_metrics(buf_t *b, svc_t *d)
{
    ms_sched_tenant_info_t ti[64];
    int n = ms_sched_ntenants(d->sched), i, k = 0;

    for (i = 0; i < n && k < (int)(sizeof(ti) / sizeof(ti[0])); i++)
        if (ms_sched_tenant_info(d->sched, i, &ti[k]) == MS_OK)
            k++;
    put(b, "# HELP migsched_tenant_usage_slices Compute slices a tenant's live jobs hold.\n"
           "# TYPE migsched_tenant_usage_slices gauge\n");
    for (i = 0; i < k; i++)
        put(b, "migsched_tenant_usage_slices{tenant=\"%s\"} %ld\n", ti[i].name, ti[i].usage);
    put(b, "# HELP migsched_tenant_usage_memory_bytes GPU memory a tenant's live jobs hold (their "
           "profiles' GB x 1e9).\n# TYPE migsched_tenant_usage_memory_bytes gauge\n");
    for (i = 0; i < k; i++)
        put(b, "migsched_tenant_usage_memory_bytes{tenant=\"%s\"} %.0f\n", ti[i].name, ti[i].mem_gb * 1e9);
    put(b, "# HELP migsched_tenant_share A tenant's dominant share of the cluster (0..1).\n"
           "# TYPE migsched_tenant_share gauge\n");
    for (i = 0; i < k; i++)
        put(b, "migsched_tenant_share{tenant=\"%s\"} %.6f\n", ti[i].name, ti[i].share);
    put(b, "# HELP migsched_tenant_weight A tenant's weight in the fair share.\n"
           "# TYPE migsched_tenant_weight gauge\n");
    for (i = 0; i < k; i++)
        put(b, "migsched_tenant_weight{tenant=\"%s\"} %g\n", ti[i].name, ti[i].weight);
    put(b, "# HELP migsched_tenant_guarantee_slices Compute slices guaranteed to a tenant.\n"
           "# TYPE migsched_tenant_guarantee_slices gauge\n");
    for (i = 0; i < k; i++)
        put(b, "migsched_tenant_guarantee_slices{tenant=\"%s\"} %ld\n", ti[i].name, ti[i].guarantee);
    put(b, "# HELP migsched_tenant_limit_slices Compute slices a tenant may hold at most (absent: no limit).\n"
           "# TYPE migsched_tenant_limit_slices gauge\n");
    for (i = 0; i < k; i++)
        if (ti[i].limit >= 0)
            put(b, "migsched_tenant_limit_slices{tenant=\"%s\"} %ld\n", ti[i].name, ti[i].limit);
    put(b, "# HELP migsched_tenant_limit_memory_bytes GPU memory a tenant's live jobs may hold at most "
           "(mem-limit GB x 1e9; absent: no limit).\n"
           "# TYPE migsched_tenant_limit_memory_bytes gauge\n");
    for (i = 0; i < k; i++)
        if (ti[i].mem_limit_gb > 0.0)
            put(b, "migsched_tenant_limit_memory_bytes{tenant=\"%s\"} %.0f\n", ti[i].name, ti[i].mem_limit_gb * 1e9);
    put(b, "# HELP migsched_tenant_guarantee_memory_bytes GPU memory guaranteed to a tenant "
           "(mem-guarantee GB x 1e9; absent: none).\n"
           "# TYPE migsched_tenant_guarantee_memory_bytes gauge\n");
    for (i = 0; i < k; i++)
        if (ti[i].mem_guarantee_gb > 0.0)
            put(b, "migsched_tenant_guarantee_memory_bytes{tenant=\"%s\"} %.0f\n", ti[i].name,
                ti[i].mem_guarantee_gb * 1e9);
    tenant_model_metrics(b, ti, k);
    put(b, "# HELP migsched_tenant_jobs A tenant's jobs: live (starting, running, reserved) or waiting.\n"
           "# TYPE migsched_tenant_jobs gauge\n");
    for (i = 0; i < k; i++)
        put(b, "migsched_tenant_jobs{tenant=\"%s\",state=\"running\"} %ld\n"
               "migsched_tenant_jobs{tenant=\"%s\",state=\"waiting\"} %ld\n",
            ti[i].name, ti[i].running, ti[i].name, ti[i].waiting);
    put(b, "# HELP migsched_preemptions_total Jobs of a tenant stopped and queued again (pods: evicted) for "
           "a job of higher priority or a guarantee's reclaim (--preempt), since start.\n"
           "# TYPE migsched_preemptions_total counter\n");
    for (i = 0; i < n && i < (int)(sizeof(d->met.preempted) / sizeof(d->met.preempted[0])); i++)
        if (ms_sched_tenant_info(d->sched, i, &ti[0]) == MS_OK)
            put(b, "migsched_preemptions_total{tenant=\"%s\"} %" PRIu64 "\n", ti[0].name, d->met.preempted[i]);
}

char *svc_metrics_text(svc_t *d)
{
    static const char *const OPN[] = { "?", "create", "destroy", "start", "move", "stop" };
    static const char *const RES[] = { "success", "failed", "discarded" };
    buf_t b = { NULL, 0, 0, false };
    ms_sched_stats_t st;
    long nst[MS_JOB_NSTATES] = { 0 }, lazy = 0, busy = 0;
    int n, g, k, r;
    size_t i;
    double t = d->cfg->pcfg.lb_threshold;

    if ((b.s = malloc(4096)) == NULL)
        return NULL;
    b.cap = 4096;
    b.s[0] = '\0';
    put(&b, "# HELP migsched_build_info The daemon's version.\n# TYPE migsched_build_info gauge\n"
            "migsched_build_info{version=\"0.1\",policy=\"%s\",backend=\"%s\"} 1\n",
        d->cfg->policy, ms_backend_name(d->be));
    put(&b, "# HELP migsched_gpu_fragcost FragCost of a MIG GPU (0 best, 1 worst).\n"
            "# TYPE migsched_gpu_fragcost gauge\n");
    for (n = 0; n < ms_sched_nnodes(d->sched); n++) {
        const ms_node_spec_t *ns = ms_sched_node(d->sched, n);
        int first = ms_sched_node_first_gpu(d->sched, n), node, grp, local;

        ms_sched_gpu_where(d->sched, first, &node, &grp, &local);
        for (g = 0; g < ns->ngpus; g++) {
            const ms_geom_t *geom;
            const ms_gpu_t *gpu = ms_sched_gpu(d->sched, first + g, &geom);
            ms_node_mode_t mode = ms_sched_group_mode(d->sched, grp);
            double u = gpu_util(gpu, geom, mode, ms_sched_group_cluster(d->sched, grp)->replicas);

            if (u < t)
                lazy++;
            else
                busy++;
            if (mode != MS_NODE_MIG)
                continue;
            put(&b, "migsched_gpu_fragcost{node=\"%s\",gpu=\"%d\",UUID=\"%s\",model=\"%s\"} %.6f\n", ns->name,
                g, ms_backend_gpu_uuid(d->be, first + g), ms_geom_model(geom)->name,
                ms_frag_cost(geom, gpu->state, &d->cfg->pcfg.frag));
        }
    }
    put(&b, "# HELP migsched_gpu_healthy 0 while a GPU is unhealthy (its ops kept failing, or it fell off the bus) until it "
            "answers a probe; 1 otherwise.\n"
            "# TYPE migsched_gpu_healthy gauge\n");
    for (n = 0; n < ms_sched_nnodes(d->sched); n++) {
        const ms_node_spec_t *ns = ms_sched_node(d->sched, n);
        int first = ms_sched_node_first_gpu(d->sched, n);

        for (g = 0; g < ns->ngpus; g++)
            put(&b, "migsched_gpu_healthy{node=\"%s\",gpu=\"%d\",UUID=\"%s\"} %d\n", ns->name, g,
                ms_backend_gpu_uuid(d->be, first + g), svc_gpu_healthy(d, first + g) ? 1 : 0);
    }
    put(&b, "# HELP migsched_gpus GPUs by load: lazy (busy compute below the threshold) or busy.\n"
            "# TYPE migsched_gpus gauge\nmigsched_gpus{state=\"lazy\"} %ld\nmigsched_gpus{state=\"busy\"} %ld\n",
        lazy, busy);
    ms_sched_stats(d->sched, &st);
    put(&b, "# HELP migsched_reconfigurations_total GPU instances created or destroyed outside setup.\n"
            "# TYPE migsched_reconfigurations_total counter\nmigsched_reconfigurations_total %ld\n",
        st.reconfigurations);
    put(&b, "# HELP migsched_migrations_total Job migrations executed, by kind and result.\n"
            "# TYPE migsched_migrations_total counter\n");
    for (k = 0; k < 2; k++)
        for (r = 0; r < 2; r++)
            put(&b, "migsched_migrations_total{kind=\"%s\",result=\"%s\"} %" PRIu64 "\n",
                k ? "break-before-make" : "make-before-break", RES[r], d->met.migrations[k][r]);
    for (i = 0; i < d->jobs.n; i++)
        nst[d->jobs.v[i]->state]++;
    put(&b, "# HELP migsched_jobs Jobs the daemon knows, by state.\n# TYPE migsched_jobs gauge\n");
    for (k = 0; k < MS_JOB_NSTATES; k++)
        put(&b, "migsched_jobs{state=\"%s\"} %ld\n", ms_job_state_name((ms_job_state_t)k), nst[k]);
    hist(&b, "migsched_job_wait_seconds", "Seconds from submission to placement.", &d->met.wait);
    tenant_metrics(&b, d);
    put(&b, "# HELP migsched_plan_ops_total Plan ops run by the executor, by op and result.\n"
            "# TYPE migsched_plan_ops_total counter\n");
    for (k = 1; k <= MS_OP_STOP; k++)
        for (r = 0; r < 3; r++)
            put(&b, "migsched_plan_ops_total{op=\"%s\",result=\"%s\"} %" PRIu64 "\n", OPN[k], RES[r],
                d->met.ops[k][r]);
    put(&b, "# HELP migsched_pending_ops Plan ops sent to the backend and not yet confirmed.\n"
            "# TYPE migsched_pending_ops gauge\nmigsched_pending_ops %zu\n", ms_sched_pending(d->sched));
    put(&b, "# HELP migsched_loop_batches_total Batches the loop handled (one transaction each).\n"
            "# TYPE migsched_loop_batches_total counter\nmigsched_loop_batches_total %" PRIu64 "\n"
            "# HELP migsched_loop_messages_total Messages (requests, op outcomes) the loop handled.\n"
            "# TYPE migsched_loop_messages_total counter\nmigsched_loop_messages_total %" PRIu64 "\n",
        d->met.loop_batches, d->met.loop_msgs);
    put(&b, "# HELP migsched_loop_seconds_total Where the loop's time goes: queue_wait (summed over messages),"
            " decide (handling and scheduling), commit (writing the WAL), reply (handing the batch to the syncer).\n"
            "# TYPE migsched_loop_seconds_total counter\n"
            "migsched_loop_seconds_total{phase=\"queue_wait\"} %.6f\n"
            "migsched_loop_seconds_total{phase=\"decide\"} %.6f\n"
            "migsched_loop_seconds_total{phase=\"commit\"} %.6f\n"
            "migsched_loop_seconds_total{phase=\"reply\"} %.6f\n",
        d->met.loop_wait_s, d->met.loop_decide_s, d->met.loop_commit_s, d->met.loop_reply_s);
    put(&b, "# HELP migsched_store_syncs_total fsyncs of the store (each makes every commit before it durable).\n"
            "# TYPE migsched_store_syncs_total counter\nmigsched_store_syncs_total %llu\n"
            "# HELP migsched_store_sync_seconds_total Seconds the syncer spent in fsync (off the loop).\n"
            "# TYPE migsched_store_sync_seconds_total counter\nmigsched_store_sync_seconds_total %.6f\n",
        atomic_load(&d->met.syncs), (double)atomic_load(&d->met.sync_ns) * 1e-9);
    put(&b, "# HELP migsched_store_writable 1 while the store commits, 0 while it cannot (a full disk:"
            " answers and plans are held, new submissions refused).\n"
            "# TYPE migsched_store_writable gauge\nmigsched_store_writable %d\n"
            "# HELP migsched_store_commit_failures_total Commits that failed and were held in memory.\n"
            "# TYPE migsched_store_commit_failures_total counter\nmigsched_store_commit_failures_total %" PRIu64
            "\n", d->loop.store_down ? 0 : 1, d->met.store_failures);
    put(&b, "# HELP migsched_unowned_instances Instances no pod or job owns, held in the view (Kubernetes mode:"
            " destroyed by the leader after --unowned-grace unless an owner appears).\n"
            "# TYPE migsched_unowned_instances gauge\nmigsched_unowned_instances %d\n"
            "# HELP migsched_unowned_destroyed_total Unowned instances destroyed after the grace period.\n"
            "# TYPE migsched_unowned_destroyed_total counter\nmigsched_unowned_destroyed_total %ld\n",
        atomic_load(&d->own.unowned), d->own.destroyed);
    pthread_mutex_lock(&d->met.http_mu);
    put(&b, "# HELP migsched_http_requests_total HTTP requests answered, by status code.\n"
            "# TYPE migsched_http_requests_total counter\n");
    for (k = 100; k < 600; k++)
        if (d->met.http_codes[k] > 0)
            put(&b, "migsched_http_requests_total{code=\"%d\"} %" PRIu64 "\n", k, d->met.http_codes[k]);
    put(&b, "# HELP migsched_http_request_duration_seconds Seconds to answer an HTTP request, by method and"
            " route (only routes that were called).\n# TYPE migsched_http_request_duration_seconds histogram\n");
    for (k = 0; k < SVC_RT_N; k++) {
        char labels[96];

        if (d->met.http_dur[k].count == 0)
            continue;
        snprintf(labels, sizeof(labels), "method=\"%s\",route=\"%s\",", svc_rt_method[k], svc_rt_path[k]);
        hist_samples(&b, "migsched_http_request_duration_seconds", labels, &d->met.http_dur[k]);
    }
    pthread_mutex_unlock(&d->met.http_mu);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
