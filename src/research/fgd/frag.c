/* frag.c - node state and FGD's fragmentation measure, fgd.md §1.3-1.4
 * (utils.GetNodePodFrag + NodeGpuShareFragAmountScore). */
#include "migsched/research/fgd.h"

#include <string.h>

void ms_fgd_res_init(ms_fgd_res_t *r, const ms_fgd_node_spec_t *spec)
{
    memset(r, 0, sizeof(*r));
    r->cpu_left = spec->cpu_milli;
    r->mem_left = spec->mem_mib;
    r->ngpu = spec->ngpu;
    r->model = spec->model;
    for (int i = 0; i < r->ngpu; i++)
        r->gpu_left[i] = MS_FGD_MILLI;
}

int ms_fgd_res_idle(const ms_fgd_res_t *r)
{
    int idle = 0;

    for (int i = 0; i < r->ngpu; i++)
        idle += r->gpu_left[i];
    return idle;
}

static bool has_access(const ms_fgd_res_t *r, uint32_t access)
{
    return r->model >= 0 && ((access >> r->model) & 1u) != 0;
}

/* The cases of §1.3, in order. */
static int frag_class(const ms_fgd_res_t *r, const ms_fgd_class_t *m, int idle)
{
    int fit = 0, partial = 0;

    if (m->gpu_milli == 0)                     /* CPU-only: xl_satisfied/xr_lack_cpu */
        return idle;
    if (!has_access(r, m->access))             /* no_access */
        return idle;
    for (int i = 0; i < r->ngpu; i++) {
        if (r->gpu_left[i] >= m->gpu_milli)
            fit++;
        else
            partial += r->gpu_left[i];
    }
    if (fit >= m->num_gpu && r->cpu_left >= m->cpu_milli)
        return partial;                        /* q3: only the too-small leftovers */
    return idle;                               /* q1, q2, q4 */
}

int ms_fgd_frag_class(const ms_fgd_res_t *r, const ms_fgd_class_t *m)
{
    return frag_class(r, m, ms_fgd_res_idle(r));
}

int64_t ms_fgd_frag_num(const ms_fgd_res_t *r, const ms_fgd_classes_t *c)
{
    int idle = ms_fgd_res_idle(r);
    int64_t acc = 0;

    if (idle == 0)
        return 0;
    for (size_t k = 0; k < c->n; k++)
        acc += (int64_t)c->v[k].count * frag_class(r, &c->v[k], idle);
    return acc;
}

double ms_fgd_frag(const ms_fgd_res_t *r, const ms_fgd_classes_t *c)
{
    if (c->covered <= 0)
        return 0.0;
    return (double)ms_fgd_frag_num(r, c) / (double)c->covered;
}
