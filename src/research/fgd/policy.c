/* policy.c - filters, placement and the six score functions, fgd.md
 * §1.5-1.6 (scores are the Go plugins' integers, MaxNodeScore = 100). */
#include "migsched/research/fgd.h"

#include <math.h>
#include <string.h>

static const char *const NAMES[MS_FGD_NPOLICIES] = {
    "random", "dot-product", "clustering", "packing", "best-fit", "fgd",
};

const char *ms_fgd_policy_name(ms_fgd_policy_t p)
{
    return (unsigned)p < MS_FGD_NPOLICIES ? NAMES[p] : "unknown";
}

ms_status_t ms_fgd_policy_parse(const char *s, ms_fgd_policy_t *out)
{
    for (int i = 0; i < MS_FGD_NPOLICIES; i++)
        if (s != NULL && strcmp(s, NAMES[i]) == 0) {
            *out = (ms_fgd_policy_t)i;
            return MS_OK;
        }
    return MS_ENOENT;
}

static bool is_share(const ms_fgd_pod_t *p)
{
    return p->num_gpu == 1 && p->gpu_milli < MS_FGD_MILLI;
}

bool ms_fgd_fits(const ms_fgd_res_t *r, const ms_fgd_pod_t *p)
{
    int fit = 0;

    if (r->cpu_left < p->cpu_milli || r->mem_left < p->mem_mib)
        return false;                               /* NodeResourcesFit */
    if (p->num_gpu == 0)
        return true;
    if (r->model < 0 || ((p->access >> r->model) & 1u) == 0)
        return false;                               /* model allow-list */
    for (int i = 0; i < r->ngpu; i++)
        if (r->gpu_left[i] >= p->gpu_milli && ++fit >= p->num_gpu)
            return true;                            /* per-GPU fit */
    return false;
}

void ms_fgd_place(ms_fgd_res_t *r, const ms_fgd_pod_t *p, int gpu)
{
    r->cpu_left -= p->cpu_milli;
    r->mem_left -= p->mem_mib;
    if (p->num_gpu == 0)
        return;
    if (is_share(p)) {
        r->gpu_left[gpu] -= p->gpu_milli;
        r->tags[0]++;
        return;
    }
    /* AllocateExclusiveGpuId: the first fully free GPUs by index */
    for (int i = 0, need = p->num_gpu; i < r->ngpu && need > 0; i++)
        if (r->gpu_left[i] == MS_FGD_MILLI) {
            r->gpu_left[i] = 0;
            need--;
        }
    r->tags[p->num_gpu]++;
}

int ms_fgd_gpu_best(const ms_fgd_res_t *r, const ms_fgd_pod_t *p)
{
    int best = -1;

    if (!is_share(p))
        return -1;
    for (int i = 0; i < r->ngpu; i++)
        if (r->gpu_left[i] >= p->gpu_milli && (best < 0 || r->gpu_left[i] < r->gpu_left[best]))
            best = i;
    return best;
}

/* dot_product_score.go, dimExt=merge, norm=max. */
int ms_fgd_score_dotprod(const ms_fgd_res_t *r, const ms_fgd_pod_t *p)
{
    double node[2], pod[2], dot;

    if (r->cpu_left < p->cpu_milli)
        return 0;
    node[0] = (double)r->cpu_left / MS_FGD_MAX_CPU;
    node[1] = (double)ms_fgd_res_idle(r) / MS_FGD_MAX_GPU_MILLI;
    pod[0] = (double)p->cpu_milli / MS_FGD_MAX_CPU;
    pod[1] = (double)(p->gpu_milli * p->num_gpu) / MS_FGD_MAX_GPU_MILLI;
    dot = node[0] * pod[0] + node[1] * pod[1];
    dot /= 2.0;
    return (int)(100.0 * (1.0 - dot));
}

/* gpu_packing_score.go */
int ms_fgd_score_packing(const ms_fgd_res_t *r, const ms_fgd_pod_t *p)
{
    int free_gpus = 0, need = p->num_gpu, fully_used = 0, ratio = 0, s;
    int order[MS_FGD_MAX_GPU], used[MS_FGD_MAX_GPU], nused = 0;

    if (p->gpu_milli <= 0)
        return 0;
    for (int i = 0; i < r->ngpu; i++)
        if (r->gpu_left[i] == MS_FGD_MILLI)
            free_gpus++;
    if (free_gpus == r->ngpu) {                       /* case 3: an idle node */
        s = 100 / 3 - free_gpus;
        return s > free_gpus ? s : free_gpus;
    }
    for (int i = 0; i < r->ngpu; i++) {               /* stable ascending by free milli */
        int j = i;

        while (j > 0 && r->gpu_left[order[j - 1]] > r->gpu_left[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (int k = 0; k < r->ngpu && need > 0; k++) {
        int idx = order[k];

        if (p->gpu_milli <= r->gpu_left[idx]) {
            need--;
            used[nused++] = idx;
            if (r->gpu_left[idx] == MS_FGD_MILLI)
                fully_used++;
        }
    }
    if (need != 0)
        return 0;
    if (fully_used > 0) {                             /* case 2 */
        s = 100 / 2 - fully_used;
        return s > 100 / 3 ? s : 100 / 3;
    }
    for (int k = 0; k < nused; k++)                   /* case 1 */
        ratio += r->gpu_left[used[k]] * 100 / MS_FGD_MILLI;
    s = 100 - ratio / 10;
    return s > 100 / 2 ? s : 100 / 2;
}

/* gpu_clustering_score.go */
int ms_fgd_score_clustering(const ms_fgd_res_t *r, const ms_fgd_pod_t *p)
{
    int tag, ntags = 0, bonus;

    if (p->num_gpu == 0)
        return 0;
    tag = is_share(p) ? 0 : p->num_gpu;
    for (int t = 0; t < MS_FGD_NTAGS; t++)
        if (r->tags[t] > 0)
            ntags++;
    bonus = 100 / 4 * (MS_FGD_MAX_GPU_MILLI - ms_fgd_res_idle(r)) / MS_FGD_MAX_GPU_MILLI;
    if (r->tags[tag] > 0)
        return bonus + (ntags == 1 ? 100 * 3 / 4 : 100 * 2 / 4);
    return bonus + (ntags == 0 ? 100 / 4 : 0);
}

/* best_fit_score.go (before NormalizeScore). */
int ms_fgd_score_bestfit_raw(const ms_fgd_res_t *r, const ms_fgd_pod_t *p)
{
    double s = 0;

    s += (double)(r->cpu_left - p->cpu_milli) / MS_FGD_MAX_CPU * 0.5;
    s += (double)(ms_fgd_res_idle(r) - p->gpu_milli * p->num_gpu) / MS_FGD_MAX_GPU_MILLI * 0.5;
    return (int)((1.0 - s) * 100.0);
}

void ms_fgd_normalize(int *scores, size_t n)
{
    int lo, hi;

    if (n == 0)
        return;
    lo = hi = scores[0];
    for (size_t i = 1; i < n; i++) {
        if (scores[i] < lo)
            lo = scores[i];
        if (scores[i] > hi)
            hi = scores[i];
    }
    for (size_t i = 0; i < n; i++)
        scores[i] = hi == lo ? 0 : (scores[i] - lo) * 100 / (hi - lo);
}

int ms_fgd_sigmoid_score(double x)
{
    return (int)(1.0 / (1.0 + exp(-x)) * 100.0);
}

/* calculateGpuShareFragExtendScore, with F in exact count units. */
int ms_fgd_score_fgd(const ms_fgd_res_t *r, const ms_fgd_pod_t *p, const ms_fgd_classes_t *c,
                     int64_t before_num, int *gpu)
{
    double scale = 1000.0 * (double)(c->covered > 0 ? c->covered : 1);
    ms_fgd_res_t n = *r;
    int best = 0;

    *gpu = -1;
    n.cpu_left -= p->cpu_milli;
    if (is_share(p)) {
        for (int i = 0; i < r->ngpu; i++) {
            bool seen = false;
            int s;

            if (r->gpu_left[i] < p->gpu_milli)
                continue;
            for (int j = 0; j < i && !seen; j++)      /* same free milli, same score */
                seen = r->gpu_left[j] == r->gpu_left[i];
            if (seen)
                continue;
            n.gpu_left[i] -= p->gpu_milli;
            s = ms_fgd_sigmoid_score((double)(before_num - ms_fgd_frag_num(&n, c)) / scale);
            n.gpu_left[i] += p->gpu_milli;
            if (*gpu < 0 || s > best) {
                best = s;
                *gpu = i;
            }
        }
        return best;
    }
    if (p->num_gpu > 0)
        for (int i = 0, need = p->num_gpu; i < n.ngpu && need > 0; i++)
            if (n.gpu_left[i] == MS_FGD_MILLI) {
                n.gpu_left[i] = 0;
                need--;
            }
    return ms_fgd_sigmoid_score((double)(before_num - ms_fgd_frag_num(&n, c)) / scale);
}
