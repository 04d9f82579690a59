/* experiment.c - one seed of FGD's fill experiment, fgd.md §4:
 * shuffle, inflate to tune × capacity, one-pass fill with no departures,
 * log after every pod, bin by arrived %. */
#include "migsched/research/fgd.h"
#include "migsched/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
    const ms_fgd_nodes_t *nodes;
    const ms_fgd_pods_t *pods;
    const ms_fgd_classes_t *c;
    ms_fgd_policy_t policy;
    ms_rng_t rng;
    size_t nn;
    ms_fgd_res_t *res;
    int64_t *fnum;          /* cached F_n · covered per node */
    size_t *byrank;         /* node indices in tie-break order */
    size_t *scratch_node;   /* feasible nodes (random, best-fit) */
    int *scratch_score;
    int *tuple;             /* original pod -> distinct tuple id */
    int ntuples;
    uint32_t *ver;          /* node version, bumped on every placement */
    uint32_t *cver;         /* FGD score cache [tuple][node] */
    int8_t *cscore, *cgpu;
    size_t *list;           /* the pods to attempt (original indices) */
    size_t nlist;
} run_t;

static void run_free(run_t *r)
{
    free(r->res);
    free(r->fnum);
    free(r->byrank);
    free(r->scratch_node);
    free(r->scratch_score);
    free(r->tuple);
    free(r->ver);
    free(r->cver);
    free(r->cscore);
    free(r->cgpu);
    free(r->list);
}

static int64_t pod_gpu(const ms_fgd_pod_t *p)
{
    return (int64_t)p->num_gpu * p->gpu_milli;
}

static int cmp_pod_name(const void *a, const void *b)
{
    const ms_fgd_pod_t *x = *(const ms_fgd_pod_t *const *)a;
    const ms_fgd_pod_t *y = *(const ms_fgd_pod_t *const *)b;
    int c = strcmp(x->name, y->name);

    return c != 0 ? c : (x < y ? -1 : x > y);
}

static ms_status_t assign_tuples(run_t *r)
{
    const ms_fgd_pods_t *pods = r->pods;
    size_t *first = malloc(pods->n * sizeof(*first));

    r->tuple = malloc(pods->n * sizeof(*r->tuple));
    if (first == NULL || r->tuple == NULL) {
        free(first);
        return MS_ENOMEM;
    }
    r->ntuples = 0;
    for (size_t i = 0; i < pods->n; i++) {
        const ms_fgd_pod_t *p = &pods->v[i];
        int k;

        for (k = 0; k < r->ntuples; k++) {
            const ms_fgd_pod_t *q = &pods->v[first[k]];
            if (q->cpu_milli == p->cpu_milli && q->gpu_milli == p->gpu_milli &&
                q->num_gpu == p->num_gpu && q->spec == p->spec)
                break;
        }
        if (k == r->ntuples)
            first[r->ntuples++] = i;
        r->tuple[i] = k;
    }
    free(first);
    return MS_OK;
}

static void fgd_req(const void *pods, size_t i, int *num_gpu, int *gpu_milli)
{
    const ms_fgd_pod_t *p = (const ms_fgd_pod_t *)pods + i;

    *num_gpu = p->num_gpu;
    *gpu_milli = p->gpu_milli;
}

ms_status_t ms_fgd_shuffle_tune(ms_rng_t *rng, size_t **list, size_t *n, size_t *cap,
                                const void *pods, size_t npods, ms_fgd_req_fn req,
                                int64_t total, double target, bool tune)
{
    int ng, milli;

    for (size_t i = *n; i > 1; i--) {          /* Fisher-Yates */
        size_t j = (size_t)ms_rng_below(rng, i), t = (*list)[i - 1];
        (*list)[i - 1] = (*list)[j];
        (*list)[j] = t;
    }
    if (!tune || npods == 0)
        return MS_OK;
    if ((double)total < target) {
        /* tuneUpPods: the test adds the candidate's per-GPU milli, the
         * update its total milli (the quirk of §4 item 4).
         * Termination: only a pod with GPU demand (num_gpu x milli > 0)
         * moves total towards target, so without one the loop would never
         * end: that list is MS_EINVAL. With one, each draw hits it with
         * probability >= 1/npods; and the list may grow to at most
         * MS_FGD_TUNE_MAX(npods) entries, past which it is MS_ERANGE (a
         * list far too small for the cluster), so memory stays bounded. */
        size_t limit = MS_FGD_TUNE_MAX(npods);
        bool demand = false;

        for (size_t i = 0; i < npods && !demand; i++) {
            req(pods, i, &ng, &milli);
            demand = ng > 0 && milli > 0;
        }
        if (!demand)
            return MS_EINVAL;
        for (;;) {
            size_t idx = (size_t)ms_rng_below(rng, npods);

            req(pods, idx, &ng, &milli);
            if ((double)(total + milli) > target)
                break;
            if (*n >= limit)
                return MS_ERANGE;
            if (*n == *cap) {
                size_t *nl = realloc(*list, *cap * 2 * sizeof(*nl));
                if (nl == NULL)
                    return MS_ENOMEM;
                *list = nl;
                *cap *= 2;
            }
            (*list)[(*n)++] = idx;
            total += (int64_t)ng * milli;
        }
    } else {
        /* tuneDownPods: remove random pods until at or below the target;
         * each pass removes one entry, so at most *n passes */
        while ((double)total > target && *n > 0) {
            size_t idx = (size_t)ms_rng_below(rng, *n);

            req(pods, (*list)[idx], &ng, &milli);
            total -= (int64_t)ng * milli;
            memmove(&(*list)[idx], &(*list)[idx + 1], (*n - idx - 1) * sizeof(**list));
            (*n)--;
        }
    }
    return MS_OK;
}

/* Sort by name, shuffle, then tune (§4 items 3-4). */
static ms_status_t build_list(run_t *r, double tune)
{
    const ms_fgd_pods_t *pods = r->pods;
    const ms_fgd_pod_t **ptr = malloc(pods->n * sizeof(*ptr));
    size_t cap = pods->n * 2 + 16;
    double target = tune * (double)r->nodes->total_gpus * MS_FGD_MILLI;
    int64_t total = 0;

    r->list = malloc(cap * sizeof(*r->list));
    if (ptr == NULL || r->list == NULL) {
        free(ptr);
        return MS_ENOMEM;
    }
    for (size_t i = 0; i < pods->n; i++)
        ptr[i] = &pods->v[i];
    qsort(ptr, pods->n, sizeof(*ptr), cmp_pod_name);
    for (size_t i = 0; i < pods->n; i++) {
        r->list[i] = (size_t)(ptr[i] - pods->v);
        total += pod_gpu(ptr[i]);
    }
    free(ptr);
    r->nlist = pods->n;
    return ms_fgd_shuffle_tune(&r->rng, &r->list, &r->nlist, &cap, pods->v, pods->n, fgd_req,
                               total, target, tune > 0);
}

static ms_status_t setup(run_t *r, const ms_fgd_opts_t *o)
{
    size_t nn = r->nodes->n;
    ms_status_t st;

    r->nn = nn;
    r->res = calloc(nn, sizeof(*r->res));
    r->fnum = calloc(nn, sizeof(*r->fnum));
    r->byrank = calloc(nn, sizeof(*r->byrank));
    r->scratch_node = calloc(nn, sizeof(*r->scratch_node));
    r->scratch_score = calloc(nn, sizeof(*r->scratch_score));
    r->ver = calloc(nn, sizeof(*r->ver));
    if (r->res == NULL || r->fnum == NULL || r->byrank == NULL || r->scratch_node == NULL ||
        r->scratch_score == NULL || r->ver == NULL)
        return MS_ENOMEM;
    if ((st = assign_tuples(r)) != MS_OK)
        return st;
    if (r->policy == MS_FGD_FGD) {
        size_t cells = (size_t)r->ntuples * nn;
        r->cver = calloc(cells, sizeof(*r->cver));
        r->cscore = calloc(cells, sizeof(*r->cscore));
        r->cgpu = calloc(cells, sizeof(*r->cgpu));
        if (r->cver == NULL || r->cscore == NULL || r->cgpu == NULL)
            return MS_ENOMEM;
    }
    ms_rng_seed(&r->rng, o->seed);
    if ((st = build_list(r, o->tune)) != MS_OK)
        return st;
    /* the "%04d-" name prefix from a seeded permutation = a random node order */
    for (size_t i = 0; i < nn; i++)
        r->byrank[i] = i;
    for (size_t i = nn; i > 1; i--) {
        size_t j = (size_t)ms_rng_below(&r->rng, i), t = r->byrank[i - 1];
        r->byrank[i - 1] = r->byrank[j];
        r->byrank[j] = t;
    }
    for (size_t i = 0; i < nn; i++) {
        ms_fgd_res_init(&r->res[i], &r->nodes->v[i]);
        r->fnum[i] = ms_fgd_frag_num(&r->res[i], r->c);
        r->ver[i] = 1;
    }
    return MS_OK;
}

static int random_gpu(run_t *r, const ms_fgd_res_t *res, const ms_fgd_pod_t *p)
{
    int fit[MS_FGD_MAX_GPU], n = 0;

    for (int i = 0; i < res->ngpu; i++)
        if (res->gpu_left[i] >= p->gpu_milli)
            fit[n++] = i;
    return n > 0 ? fit[ms_rng_below(&r->rng, (uint64_t)n)] : -1;
}

/* Pick a node (and GPU for a sharing pod); returns the node or -1. */
static long choose(run_t *r, size_t pod_idx, int *gpu)
{
    const ms_fgd_pod_t *p = &r->pods->v[pod_idx];
    bool share = p->num_gpu == 1 && p->gpu_milli < MS_FGD_MILLI;
    long best = -1;
    int best_score = 0, best_gpu = -1;
    size_t nf = 0;

    *gpu = -1;
    if (r->policy == MS_FGD_RANDOM || r->policy == MS_FGD_BESTFIT) {
        for (size_t k = 0; k < r->nn; k++) {
            size_t n = r->byrank[k];
            if (ms_fgd_fits(&r->res[n], p))
                r->scratch_node[nf++] = n;
        }
        if (nf == 0)
            return -1;
        if (r->policy == MS_FGD_RANDOM) {
            best = (long)r->scratch_node[ms_rng_below(&r->rng, nf)];
            if (share)
                *gpu = random_gpu(r, &r->res[best], p);
            return best;
        }
        for (size_t k = 0; k < nf; k++)
            r->scratch_score[k] = ms_fgd_score_bestfit_raw(&r->res[r->scratch_node[k]], p);
        ms_fgd_normalize(r->scratch_score, nf);
        for (size_t k = 0; k < nf; k++)
            if (best < 0 || r->scratch_score[k] > best_score) {
                best = (long)r->scratch_node[k];
                best_score = r->scratch_score[k];
            }
        if (share)
            *gpu = ms_fgd_gpu_best(&r->res[best], p);
        return best;
    }
    for (size_t k = 0; k < r->nn; k++) {
        size_t n = r->byrank[k];
        const ms_fgd_res_t *res = &r->res[n];
        int s, g = -1;

        if (!ms_fgd_fits(res, p))
            continue;
        switch (r->policy) {
        case MS_FGD_DOTPROD: s = ms_fgd_score_dotprod(res, p); break;
        case MS_FGD_PACKING: s = ms_fgd_score_packing(res, p); break;
        case MS_FGD_CLUSTERING: s = ms_fgd_score_clustering(res, p); break;
        default: {
            size_t cell = (size_t)r->tuple[pod_idx] * r->nn + n;
            if (r->cver[cell] == r->ver[n]) {
                s = r->cscore[cell];
                g = r->cgpu[cell];
            } else {
                s = ms_fgd_score_fgd(res, p, r->c, r->fnum[n], &g);
                r->cver[cell] = r->ver[n];
                r->cscore[cell] = (int8_t)s;
                r->cgpu[cell] = (int8_t)g;
            }
            break;
        }
        }
        if (best < 0 || s > best_score) {
            best = (long)n;
            best_score = s;
            best_gpu = g;
        }
    }
    if (best >= 0 && share)
        *gpu = r->policy == MS_FGD_FGD ? best_gpu : ms_fgd_gpu_best(&r->res[best], p);
    return best;
}

ms_status_t ms_fgd_run(const ms_fgd_nodes_t *nodes, const ms_fgd_pods_t *pods,
                       const ms_fgd_classes_t *c, const ms_fgd_opts_t *o,
                       ms_fgd_curve_t *out)
{
    run_t r;
    ms_status_t st;
    double sum_a[MS_FGD_NBINS] = { 0 }, sum_r[MS_FGD_NBINS] = { 0 }, sum_f[MS_FGD_NBINS] = { 0 };
    long cnt[MS_FGD_NBINS] = { 0 };
    int64_t arrived = 0, used = 0, fsum = 0, idle = 0;
    double cap_milli, cov;

    if (nodes == NULL || pods == NULL || c == NULL || o == NULL || out == NULL ||
        (unsigned)o->policy >= MS_FGD_NPOLICIES || nodes->n == 0 || pods->n == 0 ||
        nodes->total_gpus <= 0 || c->covered <= 0)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    r.nodes = nodes;
    r.pods = pods;
    r.c = c;
    r.policy = o->policy;
    if ((st = setup(&r, o)) != MS_OK) {
        run_free(&r);
        return st;
    }
    cap_milli = (double)nodes->total_gpus * MS_FGD_MILLI;
    cov = (double)c->covered;
    for (size_t i = 0; i < r.nn; i++) {
        fsum += r.fnum[i];
        idle += ms_fgd_res_idle(&r.res[i]);
    }
    for (size_t k = 0; k < r.nlist; k++) {
        size_t pi = r.list[k];
        const ms_fgd_pod_t *p = &pods->v[pi];
        int gpu;
        long n;
        double x;

        arrived += pod_gpu(p);
        n = choose(&r, pi, &gpu);
        if (n < 0) {
            out->nfailed++;
        } else {
            ms_fgd_res_t *res = &r.res[n];
            int64_t f;

            ms_fgd_place(res, p, gpu);
            f = ms_fgd_frag_num(res, c);
            fsum += f - r.fnum[n];
            r.fnum[n] = f;
            r.ver[n]++;
            used += pod_gpu(p);
            idle -= pod_gpu(p);
        }
        /* merge_alloc_discrete.py: x = round(arrived / total_gpus / 10) */
        x = rint((double)arrived / (double)nodes->total_gpus / 10.0);
        if (x >= 0 && x < MS_FGD_NBINS) {
            int b = (int)x;
            sum_a[b] += (double)used / cap_milli * 100.0;
            sum_r[b] += idle > 0 ? (double)fsum / cov / (double)idle * 100.0 : 0.0;
            sum_f[b] += (double)fsum / cov / cap_milli * 100.0;
            cnt[b]++;
        }
    }
    out->npods = r.nlist;
    out->final_unalloc_pct = 100.0 - (double)used / cap_milli * 100.0;
    for (int b = 0; b < MS_FGD_NBINS; b++) {
        double a = sum_a[b], fr = sum_r[b], fa = sum_f[b];
        long m = cnt[b];

        if (m == 0) {                                 /* fall back to bins b-1..b+1 */
            for (int e = b - 1; e <= b + 1; e += 2)
                if (e >= 0 && e < MS_FGD_NBINS) {
                    a += sum_a[e];
                    fr += sum_r[e];
                    fa += sum_f[e];
                    m += cnt[e];
                }
        }
        if (m == 0)
            continue;
        out->have[b] = true;
        out->unalloc_pct[b] = 100.0 - a / (double)m;
        out->frag_rate_pct[b] = fr / (double)m;
        out->frag_amount_pct[b] = fa / (double)m;
    }
    run_free(&r);
    return MS_OK;
}
