/* report_exp_json.c - the readers of the fill experiments' JSON
 * (fgd-experiment, import-alibaba --fill) over the JSON tree of
 * report_json.c, and the published FGD table (see report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "migsched/number.h"
#include "research/report_int.h"

/* Both readers' opening: the file parsed into *root and a zeroed result
 * of size bytes, or NULL with *st saying why (root then holds nothing). */
static void *doc_open(FILE *f, const char *name, size_t size, ms__jnode_t *root, ms_status_t *st,
                      ms_diag_t *diag)
{
    void *r;

    if ((*st = ms__jparse_file(f, name, root, diag)) != MS_OK)
        return NULL;
    if ((r = calloc(1, size)) == NULL) {
        ms__jfree(root);
        *st = MS_ENOMEM;
    }
    return r;
}

/* --- fgd-experiment ---------------------------------------------------- */

void ms_report_fgd_free(ms_report_fgd_t *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->npol; i++) {
        free(r->pol[i].policy);
        free(r->pol[i].arrived);
        free(r->pol[i].unalloc);
        free(r->pol[i].unalloc_sd);
    }
    free(r->pol);
    free(r->trace);
    free(r->pods);
    free(r);
}

ms_status_t ms_report_read_fgd(FILE *f, const char *name, ms_report_fgd_t **out,
                               ms_diag_t *diag)
{
    ms__jnode_t root;
    ms__jctx_t c = { name, diag, MS_OK };
    const ms__jnode_t *pols, *v;
    ms_report_fgd_t *r;
    size_t np = 0, i;
    ms_status_t st;

    if (f == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if ((r = doc_open(f, name, sizeof(*r), &root, &st, diag)) == NULL)
        return st;
    pols = ms__jhead(&c, &root, true, &r->pods, &r->trace, &r->nseeds, &np);
    if (c.st == MS_OK) {
        r->gpus = ms__jcount_opt(&c, &root, "", "gpus");
        r->pol = calloc(np, sizeof(*r->pol));
        if (r->pol == NULL)
            c.st = MS_ENOMEM;
        else
            r->npol = np;
        for (i = 0; c.st == MS_OK && i < np; i++) {
            const ms__jnode_t *p = &pols[i];
            ms_report_fgd_pol_t *q = &r->pol[i];
            char pre[32];
            size_t n2 = 0, n3 = 0;

            if (pols == &root)
                pre[0] = '\0';
            else
                snprintf(pre, sizeof(pre), "policies[%zu]", i);
            v = ms__jreq(&c, p, pre, "policy", MS__J_STR);
            if (v == NULL)
                break;
            q->policy = ms__jdup(&c, v->str);
            q->at100 = ms__jnum(&c, p, pre, "unallocated_pct_at_100");
            q->at100_sd = ms__jnum(&c, p, pre, "unallocated_pct_sd_at_100");
            q->failed_pods_mean = ms__jnum_opt(p, "failed_pods_mean");
            q->arrived = ms__jnums(&c, p, pre, "arrived_pct", 0, &q->n);
            if (c.st == MS_OK)
                q->unalloc = ms__jnums(&c, p, pre, "unallocated_pct", q->n, &n2);
            if (c.st == MS_OK && ms__jget(p, "unallocated_pct_sd") != NULL)
                q->unalloc_sd = ms__jnums(&c, p, pre, "unallocated_pct_sd", q->n, &n3);
        }
    }
    ms__jfree(&root);
    if (c.st != MS_OK) {
        ms_report_fgd_free(r);
        return c.st;
    }
    *out = r;
    return MS_OK;
}

/* --- import-alibaba --fill --------------------------------------------- */

void ms_report_fill_free(ms_report_fill_t *r)
{
    size_t i;

    if (r == NULL)
        return;
    for (i = 0; i < r->npol; i++) {
        free(r->pol[i].policy);
        free(r->pol[i].compute_pct);
        free(r->pol[i].gpu_pct);
        free(r->pol[i].fragcost_curve);
    }
    free(r->pol);
    free(r->trace);
    free(r->pods);
    free(r->model);
    free(r->mapping);
    free(r);
}

static ms_report_stat_t jstat(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix,
                              const char *key)
{
    ms_report_stat_t s = { NAN, NAN };
    const ms__jnode_t *v = ms__jreq(c, o, prefix, key, MS__J_OBJ);
    char pre[96];

    if (v == NULL)
        return s;
    snprintf(pre, sizeof(pre), "%s.%s", prefix, key);
    s.mean = ms__jnum(c, v, pre, "mean");
    s.sd = ms__jnum(c, v, pre, "sd");
    return s;
}

/* Mean over the runs of curve[key]; every run's curve must have the same
 * length. */
static double *curve_mean(ms__jctx_t *c, const ms__jnode_t *runs, const char *prefix,
                          const char *key, size_t *n)
{
    double *acc = NULL;
    size_t *cnt = NULL;
    size_t r, i, len = 0;

    *n = 0;
    for (r = 0; c->st == MS_OK && r < runs->nkid; r++) {
        char pre[96];
        const ms__jnode_t *cv;
        double *v;
        size_t m;

        snprintf(pre, sizeof(pre), "%s.runs[%zu]", prefix, r);
        cv = ms__jreq(c, &runs->kid[r], pre, "curve", MS__J_OBJ);
        if (cv == NULL)
            break;
        snprintf(pre, sizeof(pre), "%s.runs[%zu].curve", prefix, r);
        v = ms__jnums(c, cv, pre, key, len, &m);
        if (v == NULL)
            break;
        if (acc == NULL) {
            len = m;
            acc = calloc(len, sizeof(*acc));
            cnt = calloc(len, sizeof(*cnt));
            if (acc == NULL || cnt == NULL) {
                free(v);
                c->st = MS_ENOMEM;
                break;
            }
        }
        for (i = 0; i < len; i++)
            if (isfinite(v[i])) {
                acc[i] += v[i];
                cnt[i]++;
            }
        free(v);
    }
    if (c->st != MS_OK || acc == NULL) {
        free(acc);
        free(cnt);
        return NULL;
    }
    for (i = 0; i < len; i++)
        acc[i] = cnt[i] > 0 ? acc[i] / (double)cnt[i] : NAN;
    free(cnt);
    *n = len;
    return acc;
}

ms_status_t ms_report_read_fill(FILE *f, const char *name, ms_report_fill_t **out,
                                ms_diag_t *diag)
{
    ms__jnode_t root;
    ms__jctx_t c = { name, diag, MS_OK };
    const ms__jnode_t *pols, *v;
    ms_report_fill_t *r;
    size_t np = 0, i;
    ms_status_t st;

    if (f == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if ((r = doc_open(f, name, sizeof(*r), &root, &st, diag)) == NULL)
        return st;
    pols = ms__jhead(&c, &root, false, &r->pods, &r->trace, &r->nseeds, &np);
    if (c.st == MS_OK) {
        v = ms__jget(&root, "model");
        r->model = ms__jdup(&c, v != NULL && v->type == MS__J_STR ? v->str : "");
        v = ms__jget(&root, "mapping");
        r->mapping = ms__jdup(&c, v != NULL && v->type == MS__J_STR ? v->str : "");
        r->ngpus = ms__jcount_opt(&c, &root, "", "ngpus");
        if (c.st == MS_OK) {
            r->pol = calloc(np, sizeof(*r->pol));
            if (r->pol == NULL)
                c.st = MS_ENOMEM;
            else
                r->npol = np;
        }
        for (i = 0; c.st == MS_OK && i < np; i++) {
            const ms__jnode_t *p = &pols[i], *a, *runs;
            ms_report_fill_pol_t *q = &r->pol[i];
            char pre[32], pre2[48];
            size_t n2 = 0, n3 = 0;

            snprintf(pre, sizeof(pre), "policies[%zu]", i);
            v = ms__jreq(&c, p, pre, "policy", MS__J_STR);
            if (v == NULL)
                break;
            q->policy = ms__jdup(&c, v->str);
            a = ms__jreq(&c, p, pre, "at_100", MS__J_OBJ);
            if (a == NULL)
                break;
            snprintf(pre2, sizeof(pre2), "%s.at_100", pre);
            q->compute = jstat(&c, a, pre2, "unalloc_compute_pct");
            q->mem = jstat(&c, a, pre2, "unalloc_mem_pct");
            q->gpu = jstat(&c, a, pre2, "unalloc_gpu_pct");
            q->fragcost = jstat(&c, a, pre2, "fragcost");
            q->failed = jstat(&c, a, pre2, "failed_pods_pct");
            runs = ms__jreq(&c, p, pre, "runs", MS__J_ARR);
            if (runs == NULL)
                break;
            if (runs->nkid == 0) {
                ms__jmiss(&c, p, pre, "runs", "no run");
                break;
            }
            q->compute_pct = curve_mean(&c, runs, pre, "unalloc_compute_pct", &q->n);
            if (c.st == MS_OK)
                q->gpu_pct = curve_mean(&c, runs, pre, "unalloc_gpu_pct", &n2);
            if (c.st == MS_OK)
                q->fragcost_curve = curve_mean(&c, runs, pre, "fragcost", &n3);
            if (c.st == MS_OK && (n2 != q->n || n3 != q->n)) {
                ms__jmiss(&c, p, pre, "runs", "curves of different lengths");
            }
        }
    }
    ms__jfree(&root);
    if (c.st != MS_OK) {
        ms_report_fill_free(r);
        return c.st;
    }
    *out = r;
    return MS_OK;
}

/* --- the published FGD numbers ----------------------------------------- */

/* Unallocated GPU % at 100 % arrived, mean of 10 seeds, from Weng et al.,
 * "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
 * Fragmentation Gradient Descent", USENIX ATC '23, Figs. 9, 11-14, as
 * reconstructed from the authors' cached expected_results in
 * shared/reference/fgd.md §2 (the table "Unallocated GPU % at arrived =
 * 100%"). Columns: Random, DotProd, Clustering, Packing, BestFit, FGD. */
static const char *const PUB_POLICY[6] = { "random", "dot-product", "clustering", "packing",
                                           "best-fit", "fgd" };
static const struct { const char *trace; double v[6]; } PUB[] = {
    { "default",     { 13.70,  9.38,  8.35,  8.22,  7.14,  4.77 } },
    { "cpu050",      { 10.98,  6.97,  6.48,  6.54,  6.44,  5.00 } },
    { "cpu200",      { 16.97, 12.55, 10.33, 10.02,  7.85,  5.18 } },
    { "cpu250",      { 20.00, 16.43, 12.25, 11.95,  8.79,  6.80 } },
    { "gpushare60",  { 17.19, 13.18, 13.10, 12.85, 10.94,  8.75 } },
    { "gpushare100", { 21.10, 18.02, 17.78, 17.87, 15.38, 13.36 } },
    { "multigpu20",  { 13.08,  8.15,  6.66,  6.50,  6.27,  4.47 } },
    { "multigpu40",  { 14.62,  5.96,  4.65,  4.41,  4.90,  3.09 } },
    { "multigpu50",  { 18.72,  5.27,  4.31,  3.94,  4.38,  2.91 } },
    { "gpuspec10",   { 13.74,  9.83,  8.04,  7.76,  6.90,  5.34 } },
    { "gpuspec25",   { 14.58, 14.56, 13.59, 13.23, 14.33,  6.09 } },
    { "gpuspec33",   { 16.13, 20.18, 18.91, 17.78, 19.61, 12.16 } },
};
/* Same source: the seed-to-seed population sd at 100 %, default trace. */
static const double PUB_SD_DEFAULT[6] = { 0.31, 0.18, 0.58, 0.50, 0.14, 0.10 };

bool ms_report_fgd_published(const char *trace, const char *policy, double *v, double *sd)
{
    size_t i;
    int k;

    if (sd != NULL)
        *sd = NAN;
    if (trace == NULL || policy == NULL)
        return false;
    for (k = 0; k < 6; k++)
        if (strcmp(policy, PUB_POLICY[k]) == 0)
            break;
    if (k == 6)
        return false;
    for (i = 0; i < sizeof(PUB) / sizeof(PUB[0]); i++)
        if (strcmp(trace, PUB[i].trace) == 0) {
            if (v != NULL)
                *v = PUB[i].v[k];
            if (sd != NULL && i == 0)
                *sd = PUB_SD_DEFAULT[k];
            return true;
        }
    return false;
}
