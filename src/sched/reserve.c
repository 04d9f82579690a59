/* reserve.c - what the Kubernetes extender and a restarting service need:
 * restricted placement ("the best placement for this job among these
 * nodes"), per-node scores 0-10, reservations that hold a placement until
 * they are bound or expire, ticks, and adopting an inventory.
 *
 * Restricted placement scores each GPU of the allowed nodes on its own, so
 * it costs O(GPUs of those nodes x starts), never O(cluster). The rule, for
 * a single-GPU job on a MIG GPU: an idle GI that covers the request first
 * (the least oversized), else (for policies that partition dynamically) a
 * new GI at the legal start that leaves the lowest FragCost, then the
 * fuller GPU, then the lower start; on a time-sliced GPU the fullest GPU
 * with a free slot. Gangs take the first node with enough empty GPUs.
 * Scores: 10 x (0.5 x (1 - FragCost after) + 0.5 x utilisation after),
 * rounded; -1 where the node cannot host the job now.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_int.h"

#define KEY_NONE UINT64_MAX

/* Does this group's policy create GIs on demand? (static layouts and
 * node-level layouts only use GIs that exist.) */
static bool grp_dynamic(const ms__grp_t *gr)
{
    const char *n = gr->pol->name;

    if (gr->c->share != MS_SHARE_MIG)
        return false;
    if (strcmp(n, "static") == 0 || strcmp(n, "node-profile") == 0)
        return false;
    return strncmp(n, "fa", 2) != 0 || gr->pcfg.dynamic;
}

static ms_status_t grp_frag(const ms__grp_t *gr, const ms_frag_table_t **out)
{
    *out = gr->ft;   /* made with the group */
    return gr->ft != NULL ? MS_OK : MS_ESTATE;
}

/* Best placement of profile k on local GPU g: its key (lower is better),
 * start, whether a GI is created, and the score inputs. */
static uint64_t gpu_best(ms__grp_t *gr, int g, int k, int *start, bool *create, double *frag,
                         double *util)
{
    const ms_cluster_t *c = gr->c;
    const ms_gpu_t *gpu = &c->gpus[g];
    const ms_geom_t *geom = gr->geom;
    const ms_frag_table_t *ft = NULL;
    int C = ms_geom_compute(geom), i;
    uint64_t best = KEY_NONE;

    if (c->share != MS_SHARE_MIG) {
        int used = 0;

        for (i = 0; i < gpu->ninst; i++)
            used += gpu->inst[i].job >= 0;
        if (used >= c->replicas)
            return KEY_NONE;
        *start = -1;
        *create = false;
        *frag = 0.0;
        *util = (double)(used + 1) / c->replicas;
        return (uint64_t)(c->replicas - used);
    }
    if (grp_frag(gr, &ft) != MS_OK)
        return KEY_NONE;
    for (i = 0; i < gpu->ninst; i++) {
        const ms_inst_t *in = &gpu->inst[i];
        uint64_t key;

        if (in->job >= 0 || !ms_geom_covers(geom, in->prof, k))
            continue;
        key = ((uint64_t)(ms_geom_profile(geom, in->prof)->msize - ms_geom_profile(geom, k)->msize) << 8) |
              (uint64_t)in->start;
        if (key < best) {
            best = key;
            *start = in->start;
            *create = false;
            *frag = ft->cost[gpu->state];
            *util = (double)(gpu->busy + ms_geom_profile(geom, in->prof)->cslices) / C;
        }
    }
    if (best != KEY_NONE || !grp_dynamic(gr))
        return best;
    {
        uint16_t fit = ms_state_fit(geom, gpu->state, k);
        int st;

        for (st = 0; fit != 0 && st < ms_geom_width(geom); st++) {
            ms_state_t ns;
            double f;
            uint64_t key;
            int busy;

            if (!(fit & (1u << st)))
                continue;
            ns = ms_state_place(geom, gpu->state, k, st);
            if (ns == MS_STATE_NONE)
                continue;
            f = ft->cost[ns];
            busy = gpu->busy + ms_geom_profile(geom, k)->cslices;
            key = (1ull << 60) | ((uint64_t)llround(f * 1e6) << 24) |
                  ((uint64_t)(C - (busy > C ? C : busy)) << 8) | (uint64_t)st;
            if (key < best) {
                best = key;
                *start = st;
                *create = true;
                *frag = f;
                *util = (double)busy / C;
            }
        }
    }
    return best;
}

/* The local GPUs [*lo, *hi) of local node ln of gr. A group's last node
 * may have fewer GPUs than gpn (a smaller node of the same model joins the
 * group of the bigger one, and `--gpus 10 --gpus-per-node 4` ends with a
 * node of 2): the range stops at the group's last GPU (issue 20, defect 4:
 * `big=2xH100-80GB` then `small=1xH100-80GB` read past the group's GPUs). */
static void node_gpus(const ms__grp_t *gr, int ln, int *lo, int *hi)
{
    *lo = ln * gr->gpn;
    *hi = *lo + gr->gpn < gr->ngpus ? *lo + gr->gpn : gr->ngpus;
}

/* Gang: the first allowed node of group gi with `gang` empty GPUs. */
static bool gang_fit(const ms__grp_t *gr, int lnode, int gang, int *first)
{
    int g, lo, hi, n = 0;

    node_gpus(gr, lnode, &lo, &hi);
    for (g = lo; g < hi && n < gang; g++)
        if (gr->c->gpus[g].ninst == 0)
            first[n++] = g;
    return n == gang;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

/* The listed nodes of group gi, by local index, ascending and without
 * repeats: the order of a scan of the whole group, so that ties break as
 * they would. O(listed nodes log), where a scan with a membership test was
 * O(group x listed): thousands of nodes per extender call. */
static int local_nodes(const ms_sched_t *s, int gi, const int32_t *nodes, int nn, int32_t *out)
{
    int i, n = 0, m = 0;

    for (i = 0; i < nn; i++)
        if (s->node_grp[nodes[i]] == gi)
            out[n++] = s->node_lidx[nodes[i]];
    qsort(out, (size_t)n, sizeof(*out), cmp_i32);
    for (i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    return m;
}

/* Build the plan for slot on the best allowed GPU(s) of group gi: MS_ENOFIT
 * if none. */
static ms_status_t plan_on_group(ms_sched_t *s, int gi, int32_t slot, const int32_t *nodes,
                                 int nn, double *score)
{
    ms__grp_t *gr = &s->grp[gi];
    const ms__job_t *j = &s->jobs[slot];
    int k = s->cls[j->cls].prof[gi], ln, g, bg = -1, bstart = -1, li, nl;
    uint64_t best = KEY_NONE;
    bool bcreate = false;
    double bf = 0.0, bu = 0.0;
    int32_t lbuf[16], *lns = NULL;
    ms_status_t st = MS_ENOFIT;

    if (k < 0)
        return MS_ENOFIT;
    ms_plan_clear(&s->plan);
    if (nodes != NULL) {
        lns = nn <= (int)(sizeof(lbuf) / sizeof(lbuf[0])) ? lbuf : ms__salloc(s, (size_t)nn * sizeof(*lns));
        if (lns == NULL)
            return MS_ENOMEM;
        nl = local_nodes(s, gi, nodes, nn, lns);
    } else {
        nl = gr->nnodes;
    }
    if (j->gang > 1) {
        int first[MS_MAX_INST * 4];
        int full = gr->c->share == MS_SHARE_MIG ? ms_geom_full_profile(gr->geom) : k, q;

        if (j->gang > (int)(sizeof(first) / sizeof(first[0])) || full < 0)
            goto out;
        for (li = 0; li < nl; li++) {
            ln = lns != NULL ? lns[li] : li;
            if (!gang_fit(gr, ln, j->gang, first))
                continue;
            for (q = 0; q < j->gang; q++) {
                int st0 = gr->c->share == MS_SHARE_MIG ? ms_geom_first_start(gr->geom, full) : -1;

                if (gr->c->share == MS_SHARE_MIG &&
                    (st = ms_plan_add_create(&s->plan, first[q], full, st0)) != MS_OK)
                    goto out;
                if ((st = ms_plan_add_start(&s->plan, slot, first[q], st0, full)) != MS_OK)
                    goto out;
            }
            if (score != NULL)
                *score = 1.0;
            st = MS_OK;
            goto out;
        }
        st = MS_ENOFIT;
        goto out;
    }
    for (li = 0; li < nl; li++) {
        int lo, hi;

        ln = lns != NULL ? lns[li] : li;
        node_gpus(gr, ln, &lo, &hi);
        for (g = lo; g < hi; g++) {
            int start;
            bool create;
            double f, u;
            uint64_t key = gpu_best(gr, g, k, &start, &create, &f, &u);

            if (key < best) {
                best = key;
                bg = g;
                bstart = start;
                bcreate = create;
                bf = f;
                bu = u;
            }
        }
    }
    st = MS_ENOFIT;
    if (best == KEY_NONE)
        goto out;
    if (bcreate && (st = ms_plan_add_create(&s->plan, bg, k, bstart)) != MS_OK)
        goto out;
    if (gr->c->share == MS_SHARE_MIG) {
        const ms_gpu_t *gpu = &gr->c->gpus[bg];
        int ii = ms_gpu_find_inst(gpu, bstart);

        st = ms_plan_add_start(&s->plan, slot, bg, bstart,
                           bcreate || ii < 0 ? k : gpu->inst[ii].prof);
    } else {
        st = ms_plan_add_start(&s->plan, slot, bg, -1, k);
    }
    if (st == MS_OK && score != NULL)
        *score = 0.5 * (1.0 - bf) + 0.5 * (bu > 1.0 ? 1.0 : bu);
out:
    if (lns != NULL && lns != lbuf)
        ms__sfree(s, lns);
    return st;
}

ms_status_t ms__sched_place_on(ms_sched_t *s, int32_t slot, const int32_t *nodes, int nn,
                               double now)
{
    const ms__cls_t *c = &s->cls[s->jobs[slot].cls];
    int i;
    ms_status_t st;

    for (i = 0; i < c->norder; i++) {
        int gi = c->order[i];

        st = plan_on_group(s, gi, slot, nodes, nn, NULL);
        if (st == MS_ENOFIT)
            continue;
        if (st != MS_OK)
            return st;
        s->placing = slot;
        st = ms__sched_run_plan(s, gi, MS_PK_PLACE, now);
        s->placing = -1;
        return st;
    }
    return MS_ENOFIT;
}

static ms_status_t node_list(const ms_sched_t *s, const char *const *names, int n,
                             int32_t **out, ms_diag_t *diag)
{
    int i;

    *out = NULL;
    if (names == NULL)
        return MS_OK;
    if (n < 0)
        return MS_EINVAL;
    if ((*out = ms__salloc(s, (size_t)(n > 0 ? n : 1) * sizeof(**out))) == NULL)
        return MS_ENOMEM;
    for (i = 0; i < n; i++)
        if (((*out)[i] = ms_sched_node_find(s, names[i])) < 0) {
            ms_diag_set(diag, NULL, 0, "nodes", "no node named '%s'", names[i]);
            ms__sfree(s, *out);
            *out = NULL;
            return MS_ENOENT;
        }
    return MS_OK;
}

static ms_status_t resv_add(ms_sched_t *s, int32_t slot)
{
    if (s->nresv == s->capresv) {
        int cap = s->capresv ? s->capresv * 2 : 16;
        int32_t *v = ms__srealloc(s, s->resv, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return MS_ENOMEM;
        s->resv = v;
        s->capresv = cap;
    }
    s->resv[s->nresv++] = slot;
    return MS_OK;
}

void ms__sched_resv_del(ms_sched_t *s, int32_t slot)
{
    int i;

    for (i = 0; i < s->nresv; i++)
        if (s->resv[i] == slot) {
            s->resv[i] = s->resv[--s->nresv];
            return;
        }
}

ms_status_t ms_sched_reserve(ms_sched_t *s, const ms_sched_req_t *req,
                             const char *const *nodes, int nnodes, double ttl_s, double now,
                             int32_t *slot, ms_diag_t *diag)
{
    int32_t *nl = NULL, cls, k;
    ms__job_t *j;
    ms_status_t st;
    bool lim = false;   /* its tenant's limit kept it off a group */

    if (req == NULL || !(ttl_s > 0.0 && ttl_s <= 1e9)) {
        ms_diag_set(diag, NULL, 0, "ttl", "a reservation needs a request and a ttl in (0, 1e9] s");
        return MS_EINVAL;
    }
    s->diag = diag;
    if ((st = ms__sched_resolve(s, req, &cls, diag)) != MS_OK)
        goto out;
    if ((st = node_list(s, nodes, nnodes, &nl, diag)) != MS_OK)
        goto out;
    if ((st = ms__sched_job_alloc(s, req->id, &k)) != MS_OK) {
        ms_diag_set(diag, NULL, 0, "id", "%s", st == MS_EEXIST ? "the id is taken" : ms_strerror(st));
        goto out;
    }
    ms__sched_job_fill(s, k, cls, req, now);
    j = &s->jobs[k];
    if (j->gang > 1 && (j->insts = ms__scalloc(s, (size_t)j->gang, sizeof(*j->insts))) == NULL) {
        ms__sched_job_release(s, k);
        st = MS_ENOMEM;
        goto out;
    }
    {
        const ms__cls_t *c = &s->cls[cls];
        int i;

        st = MS_ENOFIT;
        for (i = 0; i < c->norder && st == MS_ENOFIT; i++) {
            int gi = c->order[i];

            if (!ms__tenant_fits(s, k, gi)) {
                lim = true;   /* its tenant's limit: a hold is a start too */
                continue;
            }
            if (nl == NULL && c->node < 0) {
                /* any node: the policy's own choice, at the policy's cost */
                ms__grp_t *gr = &s->grp[gi];
                ms_job_t v = ms__sched_view(s, k, gi);

                ms_plan_clear(&s->plan);
                st = gr->pol->place(gr->self, gr->c, &v, &s->plan);
            } else {
                st = plan_on_group(s, gi, k, nl != NULL ? nl : &c->node, nl != NULL ? nnodes : 1,
                                   NULL);
            }
            if (st == MS_OK) {
                s->placing = k;
                st = ms__sched_run_quiet(s, gi, MS_PK_PLACE, now);
                s->placing = -1;
            }
        }
    }
    if (st != MS_OK) {
        if (st == MS_ENOFIT && lim)
            ms_diag_set(diag, NULL, 0, "tenant", "its tenant would go over its limit");
        else if (st == MS_ENOFIT)
            ms_diag_set(diag, NULL, 0, "nodes", "none of the nodes can host it now");
        ms__sched_job_release(s, k);
        goto out;
    }
    s->st.running--;
    s->reserved++;
    j->state = MS_JOB_RESERVED;
    j->expires_t = now + ttl_s;
    if ((st = resv_add(s, k)) != MS_OK) {
        (void)ms__sched_release(s, k, MS_JOB_CANCELLED, now);
        goto out;
    }
    *slot = k;
out:
    ms__sfree(s, nl);
    s->diag = NULL;
    return st;
}

ms_status_t ms_sched_bind(ms_sched_t *s, int32_t slot, double now)
{
    ms__job_t *j;
    ms__grp_t *gr;
    const ms_sched_inst_t *in;
    ms_sched_plan_t gp;
    uint64_t plan_id = 0;
    int i, n = 0;
    ms_status_t st;

    if (slot < 0 || slot >= s->njobs || s->jobs[slot].state == MS__SLOT_FREE)
        return MS_ENOENT;
    j = &s->jobs[slot];
    if (j->state != MS_JOB_RESERVED)
        return MS_ESTATE;
    gr = &s->grp[j->group];
    in = ms__sched_insts(j);
    /* the view has the placement already: send its ops, CREATE where the GI
     * is the job's own (not persistent), then START */
    ms_plan_clear(&s->plan);
    for (i = 0; i < j->ninst; i++) {
        int g = s->g2l[in[i].gpu];

        if (gr->c->share == MS_SHARE_MIG && !(gr->persist[g] & (1u << in[i].start)) &&
            (st = ms_plan_add_create(&s->plan, g, in[i].prof, in[i].start)) != MS_OK)
            return st;
        if ((st = ms_plan_add_start(&s->plan, slot, g, in[i].start, in[i].prof)) != MS_OK)
            return st;
    }
    if ((st = ms__sched_grow_gops(s, s->plan.n)) != MS_OK)
        return st;
    for (i = 0; i < s->plan.n; i++) {
        const ms_op_t *op = &s->plan.ops[i];
        ms_sched_op_t *go = &s->gops[n++];

        go->op = *op;
        go->op.gpu = gr->l2g[op->gpu];
        go->op.from_gpu = -1;
        go->fresh = op->kind == MS_OP_START && i > 0 && s->plan.ops[i - 1].kind == MS_OP_CREATE;
        go->id = 0;
        if (s->cfg.track_ops) {
            if ((st = ms__sched_pend_push(s, j->group, MS_PK_PLACE, op, go->fresh, 0, -1, plan_id,
                                          &go->id)) != MS_OK)
                return st;
            if (plan_id == 0)
                plan_id = go->id;
        }
        if (op->kind == MS_OP_CREATE)
            s->st.reconfigurations++;
    }
    ms__sched_resv_del(s, slot);
    s->reserved--;
    s->st.running++;
    s->st.changes++;
    j->state = s->cfg.track_ops ? MS_JOB_STARTING : MS_JOB_RUNNING;
    j->start_t = now;
    for (i = 0; i < j->ninst; i++)   /* its expected end moved: the EASY trackers */
        ms__resv_touch(s, j->group, s->g2l[in[i].gpu]);
    if (s->cfg.exec.plan == NULL)
        return MS_OK;
    gp.kind = MS_PK_PLACE;
    gp.now = now;
    gp.n = n;
    gp.ops = s->gops;
    return s->cfg.exec.plan(s->cfg.exec.ctx, &gp);
}

ms_status_t ms_sched_tick(ms_sched_t *s, double now)
{
    int i;
    ms_status_t st;

    /* expire reservations: the list only shrinks while we walk it */
    for (i = 0; i < s->nresv;) {
        int32_t k = s->resv[i];

        if (s->jobs[k].expires_t <= now) {
            /* the release takes k off the list */
            if ((st = ms__sched_release(s, k, MS_JOB_CANCELLED, now)) != MS_OK)
                return st;
            continue;
        }
        i++;
    }
    return ms__sched_schedule(s, now);
}

/* The class's kept scores (NULL: none can be kept: a gang, whose score
 * depends on its size, not its class; a class pinned to one node, which
 * would cost a table of every node for one; out of memory). */
static ms__nscore_t *kept_table(ms_sched_t *s, int32_t cls, int gang)
{
    ms__nscore_t *t;

    if (gang > 1 || s->cls[cls].node >= 0)
        return NULL;
    if (cls >= s->nnsc) {
        int32_t n = cls + 1;

        if ((t = ms__scalloc(s, (size_t)n, sizeof(*t))) == NULL)
            return NULL;
        if (s->nnsc > 0)
            memcpy(t, s->nsc, (size_t)s->nnsc * sizeof(*t));
        ms__sfree(s, s->nsc);
        s->nsc = t;
        s->nnsc = n;
    }
    t = &s->nsc[cls];
    if (t->score == NULL) {
        t->score = ms__scalloc(s, (size_t)s->nnodes, sizeof(*t->score));
        t->gen = ms__scalloc(s, (size_t)s->nnodes, sizeof(*t->gen));
        if (t->score == NULL || t->gen == NULL) {
            ms__sfree(s, t->score);
            ms__sfree(s, t->gen);
            t->score = NULL;
            t->gen = NULL;
            return NULL;
        }
    }
    return t;
}

/* ms_sched_node_scores; keep: take and keep the class's scores of nodes
 * whose GPUs have not changed since (s->node_gen). A node's score is its
 * best placement among its own GPUs (plan_on_group over that node alone):
 * it reads only those GPUs, the group's geometry, fragmentation table
 * and policy settings (fixed at creation), and the request's class and
 * gang; every change to a GPU goes through ms__sched_cluster_op, which
 * moves its node's gen. */
static ms_status_t node_scores(ms_sched_t *s, const ms_sched_req_t *req, const char *const *nodes,
                               int nnodes, int *scores, bool keep, ms_diag_t *diag)
{
    int32_t cls, k, *nl = NULL;
    ms__nscore_t *t = NULL;
    ms_status_t st;
    int i;

    if ((st = ms__sched_resolve(s, req, &cls, diag)) != MS_OK)
        return st;
    if (nodes == NULL || nnodes < 0)
        return MS_EINVAL;
    if ((st = node_list(s, nodes, nnodes, &nl, diag)) != MS_OK)
        return st;
    /* a scratch job record that never enters a queue */
    if ((st = ms__sched_job_alloc(s, NULL, &k)) != MS_OK) {
        ms__sfree(s, nl);
        return st;
    }
    s->jobs[k].cls = cls;
    s->jobs[k].gang = (int16_t)(req->gang > 1 ? req->gang : 1);
    if (keep)
        t = kept_table(s, cls, req->gang);
    for (i = 0; i < nnodes; i++) {
        int gi = s->node_grp[nl[i]];
        double sc = 0.0;

        if (t != NULL && t->gen[nl[i]] == s->node_gen[nl[i]] + 1) {
            scores[i] = t->score[nl[i]];
            continue;
        }
        scores[i] = -1;
        if (s->cls[cls].prof[gi] >= 0 && (s->cls[cls].node < 0 || s->cls[cls].node == nl[i])) {
            st = plan_on_group(s, gi, k, &nl[i], 1, &sc);
            if (st != MS_OK && st != MS_ENOFIT)
                break;
            if (st == MS_OK) {
                scores[i] = (int)lround(10.0 * sc);
                if (scores[i] < 0)
                    scores[i] = 0;
                if (scores[i] > 10)
                    scores[i] = 10;
            }
        }
        if (t != NULL) {
            t->score[nl[i]] = (int8_t)scores[i];
            t->gen[nl[i]] = s->node_gen[nl[i]] + 1;
        }
    }
    ms_plan_clear(&s->plan);
    ms__sched_job_release(s, k);
    ms__sfree(s, nl);
    return st == MS_ENOFIT ? MS_OK : st;
}

ms_status_t ms_sched_node_scores(ms_sched_t *s, const ms_sched_req_t *req,
                                 const char *const *nodes, int nnodes, int *scores,
                                 ms_diag_t *diag)
{
    return node_scores(s, req, nodes, nnodes, scores, false, diag);
}

ms_status_t ms_sched_node_scores_kept(ms_sched_t *s, const ms_sched_req_t *req,
                                      const char *const *nodes, int nnodes, int *scores,
                                      ms_diag_t *diag)
{
    return node_scores(s, req, nodes, nnodes, scores, true, diag);
}

ms_status_t ms_sched_adopt(ms_sched_t *s, int32_t gpu, int prof, int start,
                           const ms_sched_req_t *job, double now, ms_diag_t *diag)
{
    ms__grp_t *gr;
    int gi, g;
    int32_t k = -1;
    ms_status_t st;

    if (gpu < 0 || gpu >= s->ngpus) {
        ms_diag_set(diag, NULL, 0, "gpu", "no GPU %d", (int)gpu);
        return MS_EINVAL;
    }
    gi = s->g2grp[gpu];
    gr = &s->grp[gi];
    g = s->g2l[gpu];
    if (prof < 0 || prof >= ms_geom_nprofiles(gr->geom)) {
        ms_diag_set(diag, NULL, 0, "profile", "no profile %d on %s", prof,
                    ms_geom_model(gr->geom)->name);
        return MS_EINVAL;
    }
    s->diag = diag;
    if (gr->c->share == MS_SHARE_MIG && ms_gpu_find_inst(&gr->c->gpus[g], start) < 0) {
        ms_plan_clear(&s->plan);
        if ((st = ms_plan_add_create(&s->plan, g, prof, start)) != MS_OK ||
            (st = ms__sched_run_quiet(s, gi, MS_PK_SETUP, now)) != MS_OK) {
            ms_diag_set(diag, NULL, 0, "placement", "instance %s at slice %d does not fit GPU %d",
                        ms_geom_profile(gr->geom, prof)->name, start, (int)gpu);
            s->diag = NULL;
            return st == MS_ESTATE ? MS_EINVAL : st;
        }
    }
    if (job == NULL) {
        s->diag = NULL;
        return MS_OK;
    }
    if (job->id != NULL)
        k = ms_sched_find(s, job->id);
    if (k < 0) {
        int32_t cls;

        if ((st = ms__sched_resolve(s, job, &cls, diag)) != MS_OK ||
            (st = ms__sched_job_alloc(s, job->id, &k)) != MS_OK) {
            s->diag = NULL;
            return st;
        }
        ms__sched_job_fill(s, k, cls, job, now);
        if (s->jobs[k].gang > 1 &&
            (s->jobs[k].insts = ms__scalloc(s, (size_t)s->jobs[k].gang, sizeof(*s->jobs[k].insts))) == NULL) {
            ms__sched_job_release(s, k);
            s->diag = NULL;
            return MS_ENOMEM;
        }
    }
    ms_plan_clear(&s->plan);
    if ((st = ms_plan_add_start(&s->plan, k, g, gr->c->share == MS_SHARE_MIG ? start : -1, prof)) == MS_OK) {
        s->placing = k;
        st = ms__sched_run_quiet(s, gi, MS_PK_PLACE, now);
        s->placing = -1;
    }
    if (st == MS_OK && gr->c->share == MS_SHARE_MIG && grp_dynamic(gr))
        gr->persist[g] = (uint16_t)(gr->persist[g] & ~(1u << start));   /* job-scoped */
    if (st == MS_OK && s->jobs[k].state == MS_JOB_STARTING)
        s->jobs[k].state = MS_JOB_RUNNING;   /* it runs already */
    s->diag = NULL;
    return st;
}
