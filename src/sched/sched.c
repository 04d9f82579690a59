/* sched.c - the scheduler object: configuration, node groups, creation
 * (with the policies' setup plans) and the read-only view.
 *
 * Node groups: nodes with the same geometry, mode, replicas and GPU count
 * form one group, whatever their order in the configuration; each group
 * is one homogeneous ms_cluster_t with its own policy instance and state
 * index. Global GPU numbers follow the configuration's node order; a group
 * numbers its GPUs locally in the same order.
 */
#include "migsched/sched.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

static const char *const JOB_STATE_NAME[MS_JOB_NSTATES] = {
    "queued", "reserved", "starting", "running", "migrating", "done", "cancelled", "failed"
};
static const char *const PLAN_KIND_NAME[MS_PK_NKINDS] = {
    "setup", "place", "make_room", "on_finish", "on_idle", "stop", "rollback"
};

const char *ms_job_state_name(ms_job_state_t st)
{
    return (unsigned)st < MS_JOB_NSTATES ? JOB_STATE_NAME[st] : "?";
}

const char *ms_plan_kind_name(ms_plan_kind_t k)
{
    return (unsigned)k < MS_PK_NKINDS ? PLAN_KIND_NAME[k] : "?";
}

void ms_sched_cfg_defaults(ms_sched_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    ms_policy_cfg_defaults(&cfg->pcfg);
    cfg->index_mode = MS_INDEX_BUCKET;
    /* EASY after the bound: the zoo's choice (docs/zoo.md, "Queue disciplines") */
    cfg->queue = MS_QUEUE_EASY;
    cfg->backfill_bound_s = 3600.0;
    cfg->default_estimate_s = 3600.0;
    cfg->preempt_grace_s = 60.0;
    cfg->preempt_rate = 10;
}

/* --- allocation ---------------------------------------------------------- */

static void *raw_alloc(void *(*fn)(void *, void *, size_t), void *ctx, void *p, size_t n)
{
    if (fn != NULL)
        return fn(ctx, p, n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, n);
}

void *ms__salloc(const ms_sched_t *s, size_t n)
{
    return raw_alloc(s->cfg.alloc, s->cfg.alloc_ctx, NULL, n > 0 ? n : 1);
}

void *ms__scalloc(const ms_sched_t *s, size_t n, size_t size)
{
    void *p;

    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    p = ms__salloc(s, n * size);
    if (p != NULL)
        memset(p, 0, n * size > 0 ? n * size : 1);
    return p;
}

void *ms__srealloc(const ms_sched_t *s, void *p, size_t n)
{
    return raw_alloc(s->cfg.alloc, s->cfg.alloc_ctx, p, n > 0 ? n : 1);
}

void ms__sfree(const ms_sched_t *s, void *p)
{
    if (p != NULL)
        (void)raw_alloc(s->cfg.alloc, s->cfg.alloc_ctx, p, 0);
}

static void grp_fini(ms_sched_t *s, ms__grp_t *gr)
{
    if (gr->self != NULL)
        gr->pol->destroy(gr->self);
    ms_cluster_destroy(gr->c);
    ms__sfree(s, gr->persist);
    ms__sfree(s, gr->ft);
    ms__sfree(s, gr->l2g);
    ms__sfree(s, gr->lnode);
}

/* FNV-1a, for the node-name index */
static uint32_t name_hash(const char *p)
{
    uint32_t h = 2166136261u;

    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

void ms_sched_destroy(ms_sched_t *s)
{
    int i;

    if (s == NULL)
        return;
    ms__resv_fini(s);
    ms__tenant_fini(s);
    ms__preempt_fini(s);
    for (i = 0; i < s->ngroups; i++)
        grp_fini(s, &s->grp[i]);
    for (i = 0; s->names != NULL && i < s->nnodes; i++)
        ms__sfree(s, s->names[i]);
    ms__sfree(s, s->names);
    for (i = 0; i < s->njobs; i++) {
        ms__sfree(s, s->jobs[i].id);
        ms__sfree(s, s->jobs[i].insts);
    }
    ms__sfree(s, s->nodes);
    ms__sfree(s, s->g2grp);
    ms__sfree(s, s->g2l);
    ms__sfree(s, s->node_grp);
    ms__sfree(s, s->node_first);
    ms__sfree(s, s->node_hash);
    ms__sfree(s, s->node_lidx);
    ms__sfree(s, s->node_gen);
    for (i = 0; i < s->nnsc; i++) {
        ms__sfree(s, s->nsc[i].score);
        ms__sfree(s, s->nsc[i].gen);
    }
    ms__sfree(s, s->nsc);
    ms__sfree(s, s->jobs);
    ms__sfree(s, s->free_slots);
    ms__idmap_fini(&s->ids);
    ms__sfree(s, s->cls);
    ms__sfree(s, s->pmemo);
    ms__sfree(s, s->cwatch);
    ms__sfree(s, s->pord);
    ms__sfree(s, s->pdirty);
    ms__sfree(s, s->gops);
    ms__sfree(s, s->pend);
    ms__sfree(s, s->resv);
    ms__sfree(s, s->easy_gpu);
    ms__sfree(s, s->easy_mask);
    ms__sfree(s, s->easy_tmp);
    ms__sfree(s, s->fence);
    ms__sfree(s, s->fence_of);
    ms_plan_fini(&s->plan);
    ms__sfree(s, s);
}

static char *dup_str(const ms_sched_t *s, const char *x)
{
    size_t n = strlen(x) + 1;
    char *d = ms__salloc(s, n);

    if (d != NULL)
        memcpy(d, x, n);
    return d;
}

/* Can node a join group g? Same geometry, mode and replicas, and the
 * group's GPU count per node; a group's LAST node may be shorter (the
 * `--gpus 10 --gpus-per-node 4` shorthand), after which it takes no more. */
static bool same_kind(const ms_node_spec_t *a, const ms__grp_t *g)
{
    return a->geom == g->geom && a->mode == g->mode && !g->short_tail &&
           a->ngpus <= g->gpn && (a->mode == MS_NODE_MIG || a->replicas == g->pcfg.replicas);
}

static ms_status_t check_cfg(const ms_sched_cfg_t *cfg, ms_diag_t *diag)
{
    const char *why = NULL, *field = "cluster";
    int i;

    if (cfg->policy == NULL || cfg->policy->create == NULL || cfg->policy->destroy == NULL ||
        cfg->policy->place == NULL) {
        field = "policy";
        why = "a policy with create, destroy and place is required";
    } else if (cfg->policy->abi != MS_POLICY_ABI) {
        field = "policy";
        why = "policy ABI mismatch";
    } else if (cfg->nnodes <= 0 || cfg->nodes == NULL) {
        why = "at least one node is required";
    } else if (!(cfg->backfill_bound_s >= 0.0)) {
        field = "backfill-bound";
        why = "must be >= 0";
    } else if ((unsigned)cfg->queue > MS_QUEUE_EASY) {
        field = "queue";
        why = "must be backfill, fifo or easy";
    } else if (!(cfg->aging_rate >= 0.0 && cfg->aging_rate <= 1e6)) {
        field = "aging-rate";
        why = "must be in [0, 1e6] priority points per hour";
    } else if (!(cfg->default_estimate_s > 0.0 && cfg->default_estimate_s <= 1e12)) {
        field = "default-estimate";
        why = "must be in (0, 1e12] seconds";
    } else if (!(cfg->preempt_grace_s >= 0.0 && cfg->preempt_grace_s <= 1e12)) {
        field = "preempt-grace";
        why = "must be in [0, 1e12] seconds";
    } else if (!(cfg->preempt_max_lost_s >= 0.0 && cfg->preempt_max_lost_s <= 1e12)) {
        field = "preempt-max-lost";
        why = "must be in [0, 1e12] seconds (0: no bound)";
    } else if (!(cfg->preempt_after_s >= 0.0 && cfg->preempt_after_s <= 1e12)) {
        field = "preempt-after";
        why = "must be in [0, 1e12] seconds";
    } else if (!(cfg->tenant_half_life_s >= 0.0 && cfg->tenant_half_life_s <= 1e12)) {
        field = "tenant-half-life";
        why = "must be in [0, 1e12] seconds (0: no decay)";
    } else if (cfg->preempt_rate < 0 || cfg->preempt_rate > 1000000) {
        field = "preempt-rate";
        why = "must be in [0, 1000000] preemptions per minute (0: no limit)";
    }
    for (i = 0; why == NULL && i < cfg->nnodes; i++) {
        const ms_node_spec_t *n = &cfg->nodes[i];

        if (n->name == NULL || n->name[0] == '\0' || n->geom == NULL || n->ngpus <= 0 ||
            n->replicas < 0 || n->replicas > MS_MAX_INST || (unsigned)n->mode > MS_NODE_WHOLE)
            why = "a node needs a name, a geometry, >= 1 GPU, a mode and 0..16 replicas";
    }
    if (why == NULL)
        return MS_OK;
    ms_diag_set(diag, NULL, 0, field, "%s", why);
    return MS_EINVAL;
}

/* Nodes -> groups, global <-> local GPU numbers. */
static ms_status_t build_groups(ms_sched_t *s, ms_diag_t *diag)
{
    const ms_sched_cfg_t *cfg = &s->cfg;
    int i, k, gpu = 0;
    long total = 0;

    for (i = 0; i < cfg->nnodes; i++) {
        total += cfg->nodes[i].ngpus;
        if (total > INT32_MAX / 2) {
            ms_diag_set(diag, NULL, 0, "cluster", "too many GPUs");
            return MS_ERANGE;
        }
    }
    s->ngpus = (int)total;
    s->nnodes = cfg->nnodes;
    s->nodes = ms__scalloc(s, (unsigned)s->nnodes, sizeof(*s->nodes));
    s->names = ms__scalloc(s, (unsigned)s->nnodes, sizeof(*s->names));
    s->node_grp = ms__salloc(s, (unsigned)s->nnodes * sizeof(*s->node_grp));
    s->node_first = ms__salloc(s, (unsigned)s->nnodes * sizeof(*s->node_first));
    s->g2grp = ms__salloc(s, (unsigned)s->ngpus * sizeof(*s->g2grp));
    s->g2l = ms__salloc(s, (unsigned)s->ngpus * sizeof(*s->g2l));
    if (s->nodes == NULL || s->names == NULL || s->node_grp == NULL || s->node_first == NULL || s->g2grp == NULL ||
        s->g2l == NULL)
        return MS_ENOMEM;
    for (i = 0; i < s->nnodes; i++) {
        const ms_node_spec_t *n = &cfg->nodes[i];
        ms__grp_t *gr = NULL;

        s->nodes[i] = *n;
        if ((s->names[i] = dup_str(s, n->name)) == NULL)
            return MS_ENOMEM;
        s->nodes[i].name = s->names[i];
        if (n->mode == MS_NODE_WHOLE)
            s->nodes[i].replicas = 1;
        else if (n->mode == MS_NODE_TIMESLICE && n->replicas == 0)
            s->nodes[i].replicas = cfg->pcfg.replicas > 0 ? cfg->pcfg.replicas : 4;
        for (k = 0; k < s->ngroups; k++)
            if (same_kind(&s->nodes[i], &s->grp[k])) {
                gr = &s->grp[k];
                break;
            }
        if (gr == NULL) {
            if (s->ngroups == MS__MAX_GROUPS) {
                ms_diag_set(diag, NULL, 0, "cluster",
                            "more than %d distinct kinds of node (model, mode, GPU count)",
                            MS__MAX_GROUPS);
                return MS_ERANGE;
            }
            gr = &s->grp[s->ngroups++];
            gr->geom = n->geom;
            gr->mode = n->mode;
            gr->gpn = n->ngpus;
            gr->pcfg = cfg->pcfg;
            /* how long jobs may pass the head (policy.h) */
            gr->pcfg.pass_bound_s = cfg->queue == MS_QUEUE_FIFO ? 0.0 : cfg->backfill_bound_s;
            if (n->mode != MS_NODE_MIG)
                gr->pcfg.replicas = s->nodes[i].replicas;
        }
        if (n->ngpus < gr->gpn)
            gr->short_tail = true;
        s->node_grp[i] = (int32_t)(gr - s->grp);
        s->node_first[i] = gpu;
        gr->nnodes++;
        gr->ngpus += n->ngpus;
        gpu += n->ngpus;
    }
    for (s->node_hcap = 16; s->node_hcap < 2u * (uint32_t)s->nnodes; s->node_hcap *= 2)
        ;
    if ((s->node_hash = ms__scalloc(s, s->node_hcap, sizeof(*s->node_hash))) == NULL ||
        (s->node_lidx = ms__scalloc(s, (unsigned)s->nnodes, sizeof(*s->node_lidx))) == NULL ||
        (s->node_gen = ms__scalloc(s, (unsigned)s->nnodes, sizeof(*s->node_gen))) == NULL)
        return MS_ENOMEM;
    for (i = 0; i < s->nnodes; i++) {
        uint32_t h = name_hash(s->nodes[i].name) & (s->node_hcap - 1);

        while (s->node_hash[h] != 0 && strcmp(s->nodes[s->node_hash[h] - 1].name, s->nodes[i].name) != 0)
            h = (h + 1) & (s->node_hcap - 1);
        if (s->node_hash[h] == 0)   /* the first of a name wins, as the linear search did */
            s->node_hash[h] = i + 1;
    }
    for (k = 0; k < s->ngroups; k++) {
        ms__grp_t *gr = &s->grp[k];

        gr->l2g = ms__salloc(s, (unsigned)gr->ngpus * sizeof(*gr->l2g));
        gr->lnode = ms__salloc(s, (unsigned)gr->nnodes * sizeof(*gr->lnode));
        gr->persist = ms__scalloc(s, (unsigned)gr->ngpus, sizeof(*gr->persist));
        if (gr->l2g == NULL || gr->lnode == NULL || gr->persist == NULL)
            return MS_ENOMEM;
        gr->nnodes = 0;
        gr->ngpus = 0;
    }
    for (i = 0; i < s->nnodes; i++) {
        ms__grp_t *gr = &s->grp[s->node_grp[i]];
        int g;

        s->node_lidx[i] = gr->nnodes;
        gr->lnode[gr->nnodes++] = i;
        for (g = 0; g < s->nodes[i].ngpus; g++) {
            int gg = s->node_first[i] + g;

            s->g2grp[gg] = (int16_t)s->node_grp[i];
            s->g2l[gg] = gr->ngpus;
            gr->l2g[gr->ngpus++] = gg;
        }
    }
    return MS_OK;
}

static ms_status_t create_group(ms_sched_t *s, int k, ms_diag_t *diag)
{
    ms__grp_t *gr = &s->grp[k];
    ms_cluster_cfg_t cc;
    ms_status_t st;
    int p, w;

    if (gr->mode == MS_NODE_MIG) {
        gr->pol = s->cfg.policy;
    } else if ((gr->pol = ms_policy_find("timeslice")) == NULL) {
        ms_diag_set(diag, NULL, 0, "policy", "no timeslice policy for time-sliced nodes");
        return MS_ENOENT;
    }
    if (!(gr->pol->flags & MS_POLICY_PURE_PLACE))
        s->impure = true;   /* its classes are offered in every pass */
    if ((gr->ft = ms__salloc(s, sizeof(*gr->ft))) == NULL)
        return MS_ENOMEM;
    for (p = 0; p < ms_geom_nprofiles(gr->geom); p++) {
        const ms_profile_t *pr = ms_geom_profile(gr->geom, p);

        for (w = 0; w < MS_MAX_WIDTH; w++)   /* the starts first_start walks, in its order */
            if (pr->start_mask >> w & 1u) {
                gr->pmask[p][w] = ms_geom_profile_mask(gr->geom, p, w);
                gr->smask[p][gr->nstarts[p]++] = gr->pmask[p][w];
            }
    }
    ms_frag_table_fill(gr->geom, &gr->pcfg.frag, gr->ft);
    memset(&cc, 0, sizeof(cc));
    cc.geom = gr->geom;
    cc.ngpus = gr->ngpus;
    cc.gpus_per_node = gr->gpn;
    cc.share = gr->mode == MS_NODE_MIG ? gr->pol->share : MS_SHARE_TIMESLICE;
    cc.replicas = gr->pcfg.replicas > 0 ? gr->pcfg.replicas : 4;
    if (cc.replicas > MS_MAX_INST)
        cc.replicas = MS_MAX_INST;
    cc.index_mode = s->cfg.index_mode;
    if ((st = ms_cluster_create(&cc, &gr->c)) != MS_OK) {
        ms_diag_set(diag, NULL, 0, "cluster", "cannot create the cluster: %s", ms_strerror(st));
        return st;
    }
    if ((st = gr->pol->create(&gr->pcfg, gr->c, &gr->self)) != MS_OK) {
        gr->self = NULL;
        ms_diag_set(diag, NULL, 0, "policy", "policy %s: create failed: %s", gr->pol->name,
                    ms_strerror(st));
    }
    return st;
}

ms_status_t ms_sched_create(const ms_sched_cfg_t *cfg, double now, ms_sched_t **out,
                            ms_diag_t *diag)
{
    ms_sched_t *s;
    ms_status_t st;
    int k;

    *out = NULL;
    if (cfg == NULL)
        return MS_EINVAL;
    if ((st = check_cfg(cfg, diag)) != MS_OK)
        return st;
    if ((s = raw_alloc(cfg->alloc, cfg->alloc_ctx, NULL, sizeof(*s))) == NULL)
        return MS_ENOMEM;
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;   /* cfg.nodes is the caller's until build_groups copied it */
    ms__sched_ids_init(s);
    s->placing = -1;
    s->easy_head = -1;
    s->easy_want = -1;
    s->rc_head = -1;
    s->next_op = 1;
    ms_plan_init(&s->plan);
    s->diag = diag;
    st = build_groups(s, diag);
    s->cfg.nodes = s->nodes;
    if (st != MS_OK)
        goto fail;
    for (k = 0; k < s->ngroups; k++)
        if ((st = create_group(s, k, diag)) != MS_OK)
            goto fail;
    ms__tenant_init(s);
    for (k = 0; k < s->ngroups; k++) {
        ms__grp_t *gr = &s->grp[k];

        if (gr->pol->setup == NULL)
            continue;
        ms_plan_clear(&s->plan);
        if ((st = gr->pol->setup(gr->self, gr->c, &s->plan)) != MS_OK) {
            ms_diag_set(diag, NULL, 0, "policy", "policy %s: setup failed: %s", gr->pol->name,
                        ms_strerror(st));
            goto fail;
        }
        if ((st = ms__sched_run_plan(s, k, MS_PK_SETUP, now)) != MS_OK)
            goto fail;
    }
    s->diag = NULL;
    *out = s;
    return MS_OK;
fail:
    if (st == MS_ENOMEM && diag != NULL && diag->msg[0] == '\0')
        ms_diag_set(diag, NULL, 0, "sched", "out of memory");
    ms_sched_destroy(s);
    return st;
}

void ms_sched_set_exec(ms_sched_t *s, const ms_sched_exec_t *exec)
{
    s->cfg.exec = *exec;
}

/* --- the view ----------------------------------------------------------- */

void ms_sched_stats(const ms_sched_t *s, ms_sched_stats_t *out)
{
    *out = s->st;
}

int ms_sched_ngpus(const ms_sched_t *s) { return s->ngpus; }
int ms_sched_nnodes(const ms_sched_t *s) { return s->nnodes; }
int ms_sched_ngroups(const ms_sched_t *s) { return s->ngroups; }
int32_t ms_sched_slots(const ms_sched_t *s) { return s->njobs; }

const ms_node_spec_t *ms_sched_node(const ms_sched_t *s, int node)
{
    return node >= 0 && node < s->nnodes ? &s->nodes[node] : NULL;
}

int ms_sched_node_find(const ms_sched_t *s, const char *name)
{
    uint32_t h;

    if (name == NULL || s->node_hash == NULL)
        return -1;
    for (h = name_hash(name) & (s->node_hcap - 1); s->node_hash[h] != 0; h = (h + 1) & (s->node_hcap - 1))
        if (strcmp(s->nodes[s->node_hash[h] - 1].name, name) == 0)
            return s->node_hash[h] - 1;
    return -1;
}

int ms_sched_node_first_gpu(const ms_sched_t *s, int node)
{
    return node >= 0 && node < s->nnodes ? s->node_first[node] : -1;
}

void ms_sched_gpu_where(const ms_sched_t *s, int gpu, int *node, int *group, int *local)
{
    const ms__grp_t *gr = &s->grp[s->g2grp[gpu]];
    int l = s->g2l[gpu];

    if (node != NULL)
        *node = gr->lnode[l / gr->gpn];
    if (group != NULL)
        *group = s->g2grp[gpu];
    if (local != NULL)
        *local = l;
}

const ms_cluster_t *ms_sched_group_cluster(const ms_sched_t *s, int group)
{
    return group >= 0 && group < s->ngroups ? s->grp[group].c : NULL;
}

ms_node_mode_t ms_sched_group_mode(const ms_sched_t *s, int group)
{
    return s->grp[group].mode;
}

const ms_gpu_t *ms_sched_gpu(const ms_sched_t *s, int gpu, const ms_geom_t **geom)
{
    const ms__grp_t *gr = &s->grp[s->g2grp[gpu]];

    if (geom != NULL)
        *geom = gr->geom;
    return &gr->c->gpus[s->g2l[gpu]];
}

ms_status_t ms_sched_job(const ms_sched_t *s, int32_t slot, ms_sched_job_info_t *out)
{
    const ms__job_t *j;

    if (slot < 0 || slot >= s->njobs || s->jobs[slot].state == MS__SLOT_FREE)
        return MS_ENOENT;
    j = &s->jobs[slot];
    out->id = j->id;
    out->state = (ms_job_state_t)j->state;
    out->group = j->group;
    out->ninst = j->ninst;
    out->inst = j->gang > 1 ? j->insts : &j->inst1;
    out->submit_t = j->submit_t;
    out->start_t = j->start_t;
    out->end_t = j->end_t;
    out->priority = j->priority;
    out->gang = j->gang;
    out->migratable = j->migratable != 0;
    out->tenant = j->cls >= 0 ? s->cls[j->cls].tenant : 0;
    out->preemptions = j->npreempt;
    out->kept_s = j->done;
    return MS_OK;
}

ms_status_t ms_sched_check(const ms_sched_t *s)
{
    int32_t i;
    int k, g, q;
    long queued = 0, inq = 0;

    for (k = 0; k < s->ngroups; k++)
        if (ms_cluster_check(s->grp[k].c) != MS_OK)
            return MS_ESTATE;
    for (i = 0; i < s->njobs; i++) {
        const ms__job_t *j = &s->jobs[i];

        if (j->state == MS__SLOT_FREE)
            continue;
        if (j->state == MS_JOB_QUEUED)
            queued++;
        if (j->state == MS_JOB_STARTING || j->state == MS_JOB_RUNNING ||
            j->state == MS_JOB_MIGRATING || j->state == MS_JOB_RESERVED) {
            const ms_sched_inst_t *in = j->gang > 1 ? j->insts : &j->inst1;
            const ms__grp_t *gr;

            if (j->ninst != j->gang || j->group < 0)
                return MS_ESTATE;
            gr = &s->grp[j->group];
            for (q = 0; q < j->ninst; q++) {
                const ms_gpu_t *gpu;
                int ii;

                if (in[q].gpu < 0 || in[q].gpu >= s->ngpus || s->g2grp[in[q].gpu] != j->group)
                    return MS_ESTATE;
                gpu = &gr->c->gpus[s->g2l[in[q].gpu]];
                ii = gr->c->share == MS_SHARE_MIG ? ms_gpu_find_inst(gpu, in[q].start)
                                                  : ms_gpu_find_job(gpu, i);
                if (ii < 0 || gpu->inst[ii].job != i)
                    return MS_ESTATE;
            }
        } else if (j->ninst != 0) {
            return MS_ESTATE;
        }
    }
    for (k = 0; k < s->ncls; k++)
        for (i = s->cls[k].qhead; i >= 0; i = s->jobs[i].next) {
            if (s->jobs[i].state != MS_JOB_QUEUED || s->jobs[i].cls != k)
                return MS_ESTATE;
            if (++inq > queued)
                return MS_ESTATE;
        }
    if (inq != queued || queued != s->st.waiting)
        return MS_ESTATE;
    for (k = 0; k < s->ngroups; k++) {
        const ms__grp_t *gr = &s->grp[k];

        for (g = 0; g < gr->ngpus; g++) {
            const ms_gpu_t *gpu = &gr->c->gpus[g];
            uint16_t have = 0;

            for (q = 0; q < gpu->ninst; q++) {
                int32_t jj = gpu->inst[q].job;

                if (gpu->inst[q].start >= 0)
                    have = (uint16_t)(have | (1u << gpu->inst[q].start));
                if (jj >= 0 && (jj >= s->njobs || s->jobs[jj].ninst == 0))
                    return MS_ESTATE;
            }
            if ((gr->persist[g] & ~have) != 0)
                return MS_ESTATE;
        }
    }
    if (ms__tenant_check(s) != MS_OK || ms__sched_order_check(s) != MS_OK)
        return MS_ESTATE;
    return ms__preempt_check(s);
}
