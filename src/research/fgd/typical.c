/* typical.c - the "typical pods" (task classes with popularity p_m),
 * fgd.md §1.2 / utils.GetTypicalPods. */
#include "migsched/research/fgd.h"

#include <stdlib.h>
#include <string.h>

/* The Go tuple order PodResource.Less: cpu, gpu_milli, num_gpu, gpu_spec. */
static int tuple_cmp(const ms_fgd_class_t *a, const ms_fgd_class_t *b, char *const *specs)
{
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli < b->cpu_milli ? -1 : 1;
    if (a->gpu_milli != b->gpu_milli)
        return a->gpu_milli < b->gpu_milli ? -1 : 1;
    if (a->num_gpu != b->num_gpu)
        return a->num_gpu < b->num_gpu ? -1 : 1;
    return strcmp(specs[a->spec], specs[b->spec]);
}

/* Count descending; equal counts: larger tuple first (sort.Reverse of Less). */
static void sort_classes(ms_fgd_class_t *v, size_t n, char *const *specs)
{
    for (size_t i = 1; i < n; i++) {             /* insertion sort: n is ~100 */
        ms_fgd_class_t x = v[i];
        size_t j = i;

        while (j > 0) {
            const ms_fgd_class_t *y = &v[j - 1];
            bool before = x.count > y->count ||
                          (x.count == y->count && tuple_cmp(&x, y, specs) > 0);
            if (!before)
                break;
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

ms_status_t ms_fgd_typical(const ms_fgd_pods_t *pods, double threshold_pct,
                           ms_fgd_classes_t *out)
{
    ms_fgd_class_t *v = NULL;
    size_t n = 0, cap = 0, kept = 0;
    double expected, cum = 0;

    memset(out, 0, sizeof(*out));
    if (pods == NULL || pods->n == 0 || !(threshold_pct > 0) || threshold_pct > 100)
        return MS_EINVAL;
    for (size_t i = 0; i < pods->n; i++) {
        const ms_fgd_pod_t *p = &pods->v[i];
        size_t k;

        for (k = 0; k < n; k++)
            if (v[k].cpu_milli == p->cpu_milli && v[k].gpu_milli == p->gpu_milli &&
                v[k].num_gpu == p->num_gpu && v[k].spec == p->spec)
                break;
        if (k == n) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                ms_fgd_class_t *nv = realloc(v, ncap * sizeof(*nv));

                if (nv == NULL) {
                    free(v);
                    return MS_ENOMEM;
                }
                v = nv;
                cap = ncap;
            }
            memset(&v[n], 0, sizeof(v[n]));
            v[n].cpu_milli = p->cpu_milli;
            v[n].gpu_milli = p->gpu_milli;
            v[n].num_gpu = p->num_gpu;
            v[n].spec = p->spec;
            v[n].access = p->access;
            n++;
        }
        v[k].count++;
    }
    sort_classes(v, n, pods->specs);
    expected = threshold_pct * (double)pods->n / 100.0;
    while (cum < expected && kept < n)   /* at most n classes */
        cum += (double)v[kept++].count;
    out->v = v;
    out->n = kept;
    out->ndistinct = n;
    out->total = (long)pods->n;
    out->covered = (long)cum;
    for (size_t k = 0; k < kept; k++)
        v[k].p = (double)v[k].count / cum;
    return MS_OK;
}

void ms_fgd_classes_free(ms_fgd_classes_t *c)
{
    if (c == NULL)
        return;
    free(c->v);
    memset(c, 0, sizeof(*c));
}
