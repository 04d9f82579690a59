/* report_fill.c - the fill experiments of a report directory
 * (report_dir.c): fgd-experiment JSON (unallocated GPUs against arrived
 * workload, beside FGD's published table) and import-alibaba --fill JSON
 * (the MIG fill), each as charts, CSV and a README section. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "research/report_int.h"

/* Points of (x, y) from the first x >= from: offset into the arrays. */
static size_t from_x(const double *x, size_t n, double from)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (x != NULL ? x[i] >= from : (double)i >= from)
            return i;
    return n;
}

static const char *const FGD_POLICIES[6] = { "random", "dot-product", "clustering", "packing",
                                             "best-fit", "fgd" };

static const ms_report_fgd_pol_t *fgd_find(const ms_report_fgd_t *r, const char *policy)
{
    size_t i;

    for (i = 0; i < r->npol; i++)
        if (strcmp(r->pol[i].policy, policy) == 0)
            return &r->pol[i];
    return NULL;
}

static ms_status_t fgd_chart(const char *out, const char *file, const ms_report_fgd_t *r,
                             double from, const char *title)
{
    ms_svg_series_t *s = calloc(r->npol, sizeof(*s));
    ms_svg_chart_t ch;
    ms_status_t st;
    size_t i;

    if (s == NULL)
        return MS_ENOMEM;
    for (i = 0; i < r->npol; i++) {
        size_t o = from_x(r->pol[i].arrived, r->pol[i].n, from);
        s[i].name = r->pol[i].policy;
        s[i].x = r->pol[i].arrived + o;
        s[i].y = r->pol[i].unalloc + o;
        s[i].n = r->pol[i].n - o;
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.xlabel = "arrived workload (% of cluster GPU capacity)";
    ch.ylabel = "unallocated GPUs (%)";
    ch.y_from_zero = true;
    st = ms__report_lines(out, file, &ch, s, (int)r->npol);
    free(s);
    return st;
}

ms_status_t ms__report_write_fgd(const char *out, ms_report_fgd_t *const *fr, size_t nf, FILE *md)
{
    FILE *tab, *cur;
    ms_status_t st;
    size_t k, i, j, ncell = 0, nwithin = 0;
    double worst = -1.0;
    const char *worst_t = "", *worst_p = "";

    if ((st = ms_report_fopen(out, "fgd_table.csv", &tab)) != MS_OK)
        return st;
    if ((st = ms_report_fopen(out, "fgd_curves.csv", &cur)) != MS_OK) {
        fclose(tab);
        return st;
    }
    fprintf(tab, "trace,policy,seeds,ours_mean,ours_sd,published,published_sd,diff,"
                 "within_1sd\n");
    fprintf(cur, "trace,policy,arrived_pct,unallocated_pct,unallocated_pct_sd\n");
    fprintf(md, "## FGD fill experiment (`migsched fgd-experiment`)\n\n"
                "Unallocated GPU %% at 100 %% arrived workload: ours (mean ± sd over seeds) / "
                "published (Weng et al., ATC '23, mean of 10 seeds; "
                "shared/reference/fgd.md §2). Δ = ours − published; a cell is marked * "
                "when |Δ| exceeds our sd.\n\n| trace | seeds |");
    for (j = 0; j < 6; j++)
        fprintf(md, " %s |", FGD_POLICIES[j]);
    fprintf(md, "\n|---|---:|");
    for (j = 0; j < 6; j++)
        fprintf(md, "---|");
    fputc('\n', md);
    for (k = 0; k < nf; k++) {
        const ms_report_fgd_t *r = fr[k];
        fprintf(md, "| %s | %zu |", r->trace, r->nseeds);
        for (j = 0; j < 6; j++) {
            const ms_report_fgd_pol_t *q = fgd_find(r, FGD_POLICIES[j]);
            double pub;
            if (q == NULL) {
                fprintf(md, " – |");
                continue;
            }
            if (ms_report_fgd_published(r->trace, q->policy, &pub, NULL))
                fprintf(md, " %.2f ± %.2f / %.2f%s |", q->at100, q->at100_sd, pub,
                        fabs(q->at100 - pub) > q->at100_sd ? " *" : "");
            else
                fprintf(md, " %.2f ± %.2f / – |", q->at100, q->at100_sd);
        }
        fputc('\n', md);
    }
    fputc('\n', md);

    for (k = 0; k < nf; k++) {
        const ms_report_fgd_t *r = fr[k];
        char *nm = ms__report_safe_name(k, r->trace);
        char file[160], zfile[160], title[200];

        if (nm == NULL) {
            st = MS_ENOMEM;
            break;
        }
        snprintf(file, sizeof(file), "fgd_%s.svg", nm);
        snprintf(zfile, sizeof(zfile), "fgd_%s_zoom.svg", nm);
        free(nm);
        snprintf(title, sizeof(title), "Unallocated GPUs vs arrived workload: %.60s (%zu seeds)",
                 r->trace, r->nseeds);
        st = fgd_chart(out, file, r, -INFINITY, title);
        snprintf(title, sizeof(title), "%.60s, from 85 %% arrived", r->trace);
        if (st == MS_OK)
            st = fgd_chart(out, zfile, r, 85.0, title);
        if (st != MS_OK)
            break;
        fprintf(md, "### %s\n\n`%s`, %ld GPUs, %zu seed(s).\n\n![%s](%s)\n![%s zoomed](%s)\n\n"
                    "| policy | ours at 100 %% | sd | published | Δ | within 1 sd | failed pods "
                    "(mean) |\n|---|---:|---:|---:|---:|---|---:|\n",
                r->trace, r->pods, r->gpus, r->nseeds, r->trace, file, r->trace, zfile);
        for (i = 0; i < r->npol; i++) {
            const ms_report_fgd_pol_t *q = &r->pol[i];
            double pub, psd;
            bool has = ms_report_fgd_published(r->trace, q->policy, &pub, &psd);
            bool within = has && fabs(q->at100 - pub) <= q->at100_sd;

            if (has) {
                ncell++;
                nwithin += within;
                if (fabs(q->at100 - pub) > worst) {
                    worst = fabs(q->at100 - pub);
                    worst_t = r->trace;
                    worst_p = q->policy;
                }
                fprintf(md, "| %s | %.2f | %.2f | %.2f | %+.2f | %s | %.1f |\n", q->policy,
                        q->at100, q->at100_sd, pub, q->at100 - pub, within ? "yes" : "**no**",
                        q->failed_pods_mean);
                char sdb[32] = "";
                if (!isnan(psd))
                    snprintf(sdb, sizeof(sdb), "%.2f", psd);
                fprintf(tab, "%s,%s,%zu,%.4f,%.4f,%.2f,%s,%.4f,%d\n", r->trace, q->policy,
                        r->nseeds, q->at100, q->at100_sd, pub, sdb, q->at100 - pub, within);
            } else {
                fprintf(md, "| %s | %.2f | %.2f | – | – | – | %.1f |\n", q->policy, q->at100,
                        q->at100_sd, q->failed_pods_mean);
                fprintf(tab, "%s,%s,%zu,%.4f,%.4f,,,,\n", r->trace, q->policy, r->nseeds,
                        q->at100, q->at100_sd);
            }
            for (j = 0; j < q->n; j++)
                fprintf(cur, "%s,%s,%g,%.4f,%.4f\n", r->trace, q->policy, q->arrived[j],
                        q->unalloc[j], q->unalloc_sd != NULL ? q->unalloc_sd[j] : NAN);
        }
        fputc('\n', md);
    }
    if (st == MS_OK && ncell > 0)
        fprintf(md, "Of the %zu cells with a published value, %zu are within one sd of ours; "
                    "the largest |Δ| is %.2f points (%s, %s).\n\n",
                ncell, nwithin, worst, worst_t, worst_p);
    fprintf(md, "CSV: `fgd_table.csv` (the table), `fgd_curves.csv` (every curve).\n\n");
    st = ms__report_closef(tab, st);
    st = ms__report_closef(cur, st);
    return st != MS_OK ? st : ferror(md) ? MS_EIO : MS_OK;
}

static ms_status_t fill_chart(const char *out, const char *file, const ms_report_fill_t *r,
                              bool gpu, const char *title)
{
    ms_svg_series_t *s = calloc(r->npol, sizeof(*s));
    ms_svg_chart_t ch;
    ms_status_t st;
    size_t i;

    if (s == NULL)
        return MS_ENOMEM;
    for (i = 0; i < r->npol; i++) {
        s[i].name = r->pol[i].policy;
        s[i].x = NULL;   /* point i is at i % arrived */
        s[i].y = gpu ? r->pol[i].gpu_pct : r->pol[i].compute_pct;
        s[i].n = r->pol[i].n;
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.xlabel = "arrived workload (% of cluster GPU capacity)";
    ch.ylabel = gpu ? "wholly free GPUs (%)" : "unallocated compute slices (%)";
    ch.y_from_zero = true;
    st = ms__report_lines(out, file, &ch, s, (int)r->npol);
    free(s);
    return st;
}

ms_status_t ms__report_write_fill(const char *out, ms_report_fill_t *const *fl, size_t nl,
                                  FILE *md)
{
    FILE *tab, *cur;
    ms_status_t st = MS_OK;
    size_t k, i, j;

    if ((st = ms_report_fopen(out, "fill_table.csv", &tab)) != MS_OK)
        return st;
    if ((st = ms_report_fopen(out, "fill_curves.csv", &cur)) != MS_OK) {
        fclose(tab);
        return st;
    }
    fprintf(tab, "trace,mapping,model,gpus,seeds,policy,unalloc_compute_mean,"
                 "unalloc_compute_sd,unalloc_mem_mean,unalloc_mem_sd,unalloc_gpu_mean,"
                 "unalloc_gpu_sd,fragcost_mean,fragcost_sd,failed_pods_pct_mean,"
                 "failed_pods_pct_sd\n");
    fprintf(cur, "trace,mapping,policy,arrived_pct,unalloc_compute_pct,unalloc_gpu_pct,"
                 "fragcost\n");
    fprintf(md, "## MIG fill experiment (`migsched import-alibaba --fill`)\n\n"
                "FGD's one-pass fill protocol on MIG GPUs; values at 100 %% arrived, "
                "mean ± sd over seeds.\n\n");
    for (k = 0; k < nl && st == MS_OK; k++) {
        const ms_report_fill_t *r = fl[k];
        char both[160], *nm;
        char cfile[200], gfile[200], title[240];

        snprintf(both, sizeof(both), "%.60s-%.30s", r->trace, r->mapping);
        nm = ms__report_safe_name(k, both);
        if (nm == NULL) {
            st = MS_ENOMEM;
            break;
        }
        snprintf(cfile, sizeof(cfile), "fill_%s_compute.svg", nm);
        snprintf(gfile, sizeof(gfile), "fill_%s_gpu.svg", nm);
        free(nm);
        snprintf(title, sizeof(title), "MIG fill, %.40s (%.20s): unallocated compute slices",
                 r->trace, r->mapping);
        st = fill_chart(out, cfile, r, false, title);
        snprintf(title, sizeof(title), "MIG fill, %.40s (%.20s): wholly free GPUs",
                 r->trace, r->mapping);
        if (st == MS_OK)
            st = fill_chart(out, gfile, r, true, title);
        if (st != MS_OK)
            break;
        fprintf(md, "### %s, %s mapping\n\n`%s`, %ld x %s, %zu seed(s).\n\n"
                    "![compute](%s)\n![GPUs](%s)\n\n"
                    "| policy | unalloc compute %% | unalloc memory %% | unalloc GPUs %% | "
                    "FragCost | failed pods %% |\n|---|---:|---:|---:|---:|---:|\n",
                r->trace, r->mapping, r->pods, r->ngpus, r->model, r->nseeds, cfile, gfile);
        for (i = 0; i < r->npol; i++) {
            const ms_report_fill_pol_t *q = &r->pol[i];
            fprintf(md, "| %s | %.2f ± %.2f | %.2f ± %.2f | %.2f ± %.2f | %.4f ± %.4f | "
                        "%.2f ± %.2f |\n", q->policy, q->compute.mean, q->compute.sd,
                    q->mem.mean, q->mem.sd, q->gpu.mean, q->gpu.sd, q->fragcost.mean,
                    q->fragcost.sd, q->failed.mean, q->failed.sd);
            fprintf(tab, "%s,%s,%s,%ld,%zu,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.6f,%.6f,%.4f,"
                         "%.4f\n", r->trace, r->mapping, r->model, r->ngpus, r->nseeds,
                    q->policy, q->compute.mean, q->compute.sd, q->mem.mean, q->mem.sd,
                    q->gpu.mean, q->gpu.sd, q->fragcost.mean, q->fragcost.sd, q->failed.mean,
                    q->failed.sd);
            for (j = 0; j < q->n; j++)
                fprintf(cur, "%s,%s,%s,%zu,%.4f,%.4f,%.6f\n", r->trace, r->mapping, q->policy,
                        j, q->compute_pct[j], q->gpu_pct[j], q->fragcost_curve[j]);
        }
        fputc('\n', md);
    }
    fprintf(md, "CSV: `fill_table.csv` (the tables), `fill_curves.csv` (every curve, mean over "
                "seeds).\n\n");
    st = ms__report_closef(tab, st);
    st = ms__report_closef(cur, st);
    return st != MS_OK ? st : ferror(md) ? MS_EIO : MS_OK;
}
