/* experiment_svg.c - the experiment's plots: bars per policy and load,
 * FragCost over time, a Gantt chart, waiting-time CDFs, and the t, beta and
 * migration-cost sweeps.
 */
#include <string.h>

#include "migsched/research/report.h"
#include "migsched/research/svg.h"
#include "research/experiment_int.h"

#define F(field) MS__XP_F(field)

/* Grouped bars of one metric: groups = loads, series = variants. */
static ms_status_t svg_metric_bars(const ms__xp_opts_t *o, const ms__xp_results_t *r,
                                   const char *file, const char *title, const char *ylabel, size_t off)
{
    double val[MS__XP_NLOAD * MS__XP_NVAR], err[MS__XP_NLOAD * MS__XP_NVAR];
    const char *series[MS__XP_NVAR], *groups[MS__XP_NLOAD];
    ms_svg_chart_t ch;
    ms_svg_bars_t b;
    FILE *f;
    int v, l;
    ms_status_t st;

    for (v = 0; v < MS__XP_NVAR; v++)
        series[v] = ms__xp_variants[v].label;
    for (l = 0; l < MS__XP_NLOAD; l++) {
        groups[l] = ms__xp_load_names[l];
        for (v = 0; v < MS__XP_NVAR; v++) {
            val[l * MS__XP_NVAR + v] = ms__xp_mean(MS__XP_MAIN(r, v, l, 0), r->nseeds, off);
            err[l * MS__XP_NVAR + v] = ms__xp_sd(MS__XP_MAIN(r, v, l, 0), r->nseeds, off);
        }
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = title;
    ch.ylabel = ylabel;
    ch.xlabel = "offered load (low 0.5, medium 0.8, high 1.1); error bars: sd over seeds";
    ch.width = 900;
    b.ngroups = MS__XP_NLOAD;
    b.nseries = MS__XP_NVAR;
    b.groups = groups;
    b.series = series;
    b.value = val;
    b.err = err;
    if ((st = ms_report_fopen(o->out, file, &f)) != MS_OK)
        return st;
    return ms__xp_close_checked(f, ms_svg_bars(f, &ch, &b));
}

static ms_status_t svg_lines_file(const ms__xp_opts_t *o, const char *file,
                                  const ms_svg_chart_t *ch, const ms_svg_series_t *s, int n)
{
    FILE *f;
    ms_status_t st;

    if ((st = ms_report_fopen(o->out, file, &f)) != MS_OK)
        return st;
    return ms__xp_close_checked(f, ms_svg_lines(f, ch, s, n));
}

ms_status_t ms__xp_write_svgs(const ms__xp_opts_t *o, const ms_geom_t *g, const ms__xp_results_t *r)
{
    ms_status_t st;
    ms_svg_chart_t ch;
    ms_svg_series_t ser[MS__XP_NBETAVAR > 2 ? MS__XP_NBETAVAR : 2];
    double xs[MS__XP_NT_MAX > MS__XP_NMIG ? MS__XP_NT_MAX : MS__XP_NMIG];
    double ys[MS__XP_NBETAVAR][MS__XP_NT_MAX > MS__XP_NBETA ? MS__XP_NT_MAX : MS__XP_NBETA];
    int i, k, l;
    FILE *f;

    if ((st = svg_metric_bars(o, r, "makespan.svg", "Makespan by policy and load", "makespan (s)",
                              F(makespan_s))) != MS_OK ||
        (st = svg_metric_bars(o, r, "wait.svg", "Mean waiting time by policy and load",
                              "mean wait (s)", F(mean_wait_s))) != MS_OK ||
        (st = svg_metric_bars(o, r, "exec.svg", "Mean execution time by policy and load",
                              "mean execution time (s)", F(mean_exec_s))) != MS_OK)
        return st;

    memset(ser, 0, sizeof(ser));   /* the options not set below: none */
    /* FragCost over time, medium load, first seed */
    memset(&ch, 0, sizeof(ch));
    ch.title = "Mean FragCost over time (medium load, seed 1)";
    ch.xlabel = "time (s)";
    ch.ylabel = "mean FragCost over the 4 GPUs";
    ch.y_from_zero = true;
    ch.step = true;
    for (k = 0; k < MS__XP_NBETAVAR; k++) {
        ser[k].name = ms__xp_variants[ms__xp_beta_vars[k]].label;
        ser[k].x = r->ft[ms__xp_beta_vars[k]];
        ser[k].y = r->fv[ms__xp_beta_vars[k]];
        ser[k].n = r->fn[ms__xp_beta_vars[k]];
    }
    if ((st = svg_lines_file(o, "fragcost_time.svg", &ch, ser, MS__XP_NBETAVAR)) != MS_OK)
        return st;

    /* Gantt of fa, medium load, first seed */
    memset(&ch, 0, sizeof(ch));
    ch.title = "Slice map over time: fa+, medium load, seed 1";
    ch.xlabel = "time (s); rows: GPU x memory slice";
    ch.width = 1200;
    if ((st = ms_report_fopen(o->out, "gantt_faplus_medium.svg", &f)) != MS_OK)
        return st;
    if ((st = ms__xp_close_checked(f, ms_svg_gantt(f, &ch, g, o->ngpus, r->gantt, r->ngantt))) != MS_OK)
        return st;

    /* wait CDFs, all seeds pooled, medium and high load */
    for (l = MS__XP_L_MED; l <= MS__XP_L_HIGH; l++) {
        const double *samples[MS__XP_NVAR];
        size_t n[MS__XP_NVAR];
        const char *names[MS__XP_NVAR];
        char file[64], title[96];
        int v;
        for (v = 0; v < MS__XP_NVAR; v++) {
            samples[v] = r->waits + ((size_t)v * MS__XP_NLOAD + (size_t)l) * (size_t)r->nseeds * r->njobs;
            n[v] = (size_t)r->nseeds * r->njobs;
            names[v] = ms__xp_variants[v].label;
        }
        snprintf(file, sizeof(file), "wait_cdf_%s.svg", ms__xp_load_names[l]);
        snprintf(title, sizeof(title), "Waiting-time CDF, %s load (all seeds)", ms__xp_load_names[l]);
        memset(&ch, 0, sizeof(ch));
        ch.title = title;
        ch.xlabel = "waiting time (s)";
        ch.ylabel = "fraction of jobs";
        if ((st = ms_report_fopen(o->out, file, &f)) != MS_OK)
            return st;
        if ((st = ms__xp_close_checked(f, ms_svg_cdf(f, &ch, names, samples, n, MS__XP_NVAR))) != MS_OK)
            return st;
    }

    /* t sweep: four charts, medium and high load */
    {
        static const struct { const char *file, *title, *ylabel; size_t off; } TS[] = {
            { "sweep_t_makespan.svg", "fa: makespan vs threshold t", "makespan (s)", F(makespan_s) },
            { "sweep_t_wait.svg", "fa: mean wait vs threshold t", "mean wait (s)", F(mean_wait_s) },
            { "sweep_t_fragcost.svg", "fa: mean FragCost vs threshold t", "mean FragCost", F(mean_fragcost) },
            { "sweep_t_slowdown.svg", "fa: mean slowdown vs threshold t", "mean slowdown (exec / duration)", F(mean_slowdown) },
        };
        int c;
        for (i = 0; i < r->nt; i++)
            xs[i] = r->tval[i];
        for (c = 0; c < 4; c++) {
            for (k = 0; k < 2; k++) {
                for (i = 0; i < r->nt; i++)
                    ys[k][i] = ms__xp_tsw(r, i, k, TS[c].off);
                ser[k].name = ms__xp_load_names[MS__XP_L_MED + k];
                ser[k].x = xs;
                ser[k].y = ys[k];
                ser[k].n = (size_t)r->nt;
            }
            memset(&ch, 0, sizeof(ch));
            ch.title = TS[c].title;
            ch.xlabel = "load-balancing threshold t";
            ch.ylabel = TS[c].ylabel;
            if ((st = svg_lines_file(o, TS[c].file, &ch, ser, 2)) != MS_OK)
                return st;
        }
    }

    /* beta sweep: mean JCT per policy */
    for (i = 0; i < r->nbeta; i++)
        xs[i] = ms__xp_betas[i];
    for (k = 0; k < MS__XP_NBETAVAR; k++) {
        for (i = 0; i < r->nbeta; i++)
            ys[k][i] = ms__xp_mean(&r->bsweep[((size_t)i * MS__XP_NBETAVAR + (size_t)k) * (size_t)r->nsw],
                               r->nsw, F(mean_jct_s));
        ser[k].name = ms__xp_variants[ms__xp_beta_vars[k]].label;
        ser[k].x = xs;
        ser[k].y = ys[k];
        ser[k].n = (size_t)r->nbeta;
    }
    memset(&ch, 0, sizeof(ch));
    ch.title = "Interference: mean job completion time vs beta (medium load)";
    ch.xlabel = "beta (slowdown per other busy instance on the GPU)";
    ch.ylabel = "mean JCT (s)";
    if ((st = svg_lines_file(o, "sweep_beta.svg", &ch, ser, MS__XP_NBETAVAR)) != MS_OK)
        return st;

    /* migration cost sweep: fa's mean JCT vs the no-migration variant */
    {
        double base[2][MS__XP_NMIG];
        ms_svg_series_t ms4[4] = { 0 };
        static const char *const NM[4] = { "fa, medium", "fa-lb-dp (no migration), medium",
                                           "fa, high", "fa-lb-dp (no migration), high" };
        for (i = 0; i < r->nmig; i++)
            xs[i] = ms__xp_migs[i];
        for (k = 0; k < 2; k++)
            for (i = 0; i < r->nmig; i++) {
                ys[k][i] = ms__xp_msw(r, i, k, F(mean_jct_s));
                base[k][i] = ms__xp_nomig(r, k, F(mean_jct_s));
            }
        for (k = 0; k < 4; k++) {
            ms4[k].name = NM[k];
            ms4[k].x = xs;
            ms4[k].y = k % 2 == 0 ? ys[k / 2] : base[k / 2];
            ms4[k].n = (size_t)r->nmig;
        }
        memset(&ch, 0, sizeof(ch));
        ch.title = "Migration cost: mean JCT vs time per move";
        ch.xlabel = "migrate_s (no progress while a job moves)";
        ch.ylabel = "mean JCT (s)";
        if ((st = svg_lines_file(o, "sweep_migration.svg", &ch, ms4, 4)) != MS_OK)
            return st;
    }
    return MS_OK;
}
