/* experiment_report.c - the experiment's text output: the main table (fixed
 * width or Markdown), the CSV files (summary, runs, the three sweeps) and
 * README.md with the set-up, results, claims, sweeps and recommendation.
 */
#include <math.h>

#include "migsched/research/report.h"
#include "research/experiment_int.h"

#define F(field) MS__XP_F(field)

void ms__xp_write_table(FILE *f, const ms__xp_results_t *r, bool md)
{
    int v, l;

    if (md)
        fprintf(f, "| policy | load | makespan s | mean wait s | p99 wait s | mean exec s | "
                   "makespan vs static | gap to bound | mean FragCost | migrations |\n"
                   "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, "%-13s %-6s %11s %9s %11s %9s %11s %10s %10s %6s\n", "policy", "load",
                "makespan_s", "wait_s", "p99wait_s", "exec_s", "vs_static", "gap_lb", "fragcost",
                "migr");
    for (l = 0; l < MS__XP_NLOAD; l++)
        for (v = 0; v < MS__XP_NVAR; v++) {
            const ms_metrics_t *m = MS__XP_MAIN(r, v, l, 0);
            const ms_metrics_t *b = MS__XP_MAIN(r, MS__XP_V_STATIC, l, 0);
            int n = r->nseeds;
            double imp = ms__xp_gain(b, m, n, F(makespan_s)), gap = ms__xp_gap(m, n);
            if (md)
                fprintf(f, "| %s | %s (%.1f) | %.0f ± %.0f | %.0f | %.0f | %.0f | %+.1f%% | %.1f%% | %.3f | %.1f |\n",
                        ms__xp_variants[v].label, ms__xp_load_names[l], ms__xp_loads[l], ms__xp_mean(m, n, F(makespan_s)),
                        ms__xp_sd(m, n, F(makespan_s)), ms__xp_mean(m, n, F(mean_wait_s)),
                        ms__xp_mean(m, n, F(p99_wait_s)), ms__xp_mean(m, n, F(mean_exec_s)), imp, gap,
                        ms__xp_mean(m, n, F(mean_fragcost)),
                        (double)ms__xp_sum_long(m, n, F(migrations)) / n);
            else
                fprintf(f, "%-13s %-6s %11.0f %9.0f %11.0f %9.0f %+10.1f%% %9.1f%% %10.3f %6.1f\n",
                        ms__xp_variants[v].label, ms__xp_load_names[l], ms__xp_mean(m, n, F(makespan_s)),
                        ms__xp_mean(m, n, F(mean_wait_s)), ms__xp_mean(m, n, F(p99_wait_s)),
                        ms__xp_mean(m, n, F(mean_exec_s)), imp, gap, ms__xp_mean(m, n, F(mean_fragcost)),
                        (double)ms__xp_sum_long(m, n, F(migrations)) / n);
        }
}

void ms_experiment_write_table(FILE *f, const ms_experiment_t *x, bool markdown)
{
    ms__xp_write_table(f, &x->r, markdown);
}

ms_status_t ms__xp_close_checked(FILE *f, ms_status_t st)
{
    if (ferror(f) && st == MS_OK)
        st = MS_EIO;
    if (fclose(f) != 0 && st == MS_OK)
        st = MS_EIO;
    return st;
}

ms_status_t ms__xp_write_csvs(const ms__xp_opts_t *o, const ms__xp_results_t *r)
{
    FILE *f;
    ms_status_t st;
    int v, l, s, i, k;
    int n = r->nseeds;

    if ((st = ms_report_fopen(o->out, "summary.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "policy,load_name,load,seeds,makespan_s,makespan_sd,mean_wait_s,mean_wait_sd,"
               "p99_wait_s,mean_exec_s,mean_jct_s,mean_slowdown,makespan_vs_static_pct,"
               "wait_vs_static_pct,gap_to_bound_pct,lower_bound_s,mean_fragcost,"
               "mean_utilization,migrations,reconfigurations,jobs_rejected\n");
    for (v = 0; v < MS__XP_NVAR; v++)
        for (l = 0; l < MS__XP_NLOAD; l++) {
            const ms_metrics_t *m = MS__XP_MAIN(r, v, l, 0), *b = MS__XP_MAIN(r, MS__XP_V_STATIC, l, 0);
            fprintf(f, "%s,%s,%.2f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.3f,%.3f,%.3f,"
                       "%.3f,%.5f,%.5f,%.2f,%.2f,%.2f\n",
                    ms__xp_variants[v].label, ms__xp_load_names[l], ms__xp_loads[l], n, ms__xp_mean(m, n, F(makespan_s)),
                    ms__xp_sd(m, n, F(makespan_s)), ms__xp_mean(m, n, F(mean_wait_s)),
                    ms__xp_sd(m, n, F(mean_wait_s)), ms__xp_mean(m, n, F(p99_wait_s)),
                    ms__xp_mean(m, n, F(mean_exec_s)), ms__xp_mean(m, n, F(mean_jct_s)),
                    ms__xp_mean(m, n, F(mean_slowdown)), ms__xp_gain(b, m, n, F(makespan_s)),
                    ms__xp_gain(b, m, n, F(mean_wait_s)), ms__xp_gap(m, n),
                    ms__xp_mean(m, n, F(lower_bound_s)), ms__xp_mean(m, n, F(mean_fragcost)),
                    ms__xp_mean(m, n, F(mean_utilization)),
                    (double)ms__xp_sum_long(m, n, F(migrations)) / n,
                    (double)ms__xp_sum_long(m, n, F(reconfigurations)) / n,
                    (double)ms__xp_sum_long(m, n, F(jobs_rejected)) / n);
        }
    if ((st = ms__xp_close_checked(f, MS_OK)) != MS_OK)
        return st;

    if ((st = ms_report_fopen(o->out, "runs.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "policy,load_name,load,seed,makespan_s,lower_bound_s,mean_wait_s,p99_wait_s,"
               "mean_exec_s,mean_jct_s,mean_slowdown,mean_fragcost,mean_utilization,migrations,"
               "migrations_bbm,reconfigurations,jobs_completed,jobs_rejected,wall_s\n");
    for (v = 0; v < MS__XP_NVAR; v++)
        for (l = 0; l < MS__XP_NLOAD; l++)
            for (s = 0; s < n; s++) {
                const ms_metrics_t *m = MS__XP_MAIN(r, v, l, s);
                fprintf(f, "%s,%s,%.2f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.5f,%.5f,%ld,%ld,"
                           "%ld,%ld,%ld,%.4f\n",
                        ms__xp_variants[v].label, ms__xp_load_names[l], ms__xp_loads[l], s + 1, m->makespan_s,
                        m->lower_bound_s, m->mean_wait_s, m->p99_wait_s, m->mean_exec_s,
                        m->mean_jct_s, m->mean_slowdown, m->mean_fragcost, m->mean_utilization,
                        m->migrations, m->migrations_bbm, m->reconfigurations, m->jobs_completed,
                        m->jobs_rejected, m->wall_s);
            }
    if ((st = ms__xp_close_checked(f, MS_OK)) != MS_OK)
        return st;

    n = r->nsw;   /* the sweeps have their own seeds */
    if ((st = ms_report_fopen(o->out, "sweep_t.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "t,load_name,makespan_s,mean_wait_s,p99_wait_s,mean_exec_s,mean_jct_s,"
               "mean_slowdown,mean_fragcost,migrations\n");
    for (i = 0; i < r->nt; i++)
        for (k = 0; k < 2; k++) {
            const ms_metrics_t *m = &r->tsweep[((size_t)i * 2 + (size_t)k) * (size_t)n];
            fprintf(f, "%.2f,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.5f,%.2f\n", r->tval[i],
                    ms__xp_load_names[MS__XP_L_MED + k], ms__xp_mean(m, n, F(makespan_s)),
                    ms__xp_mean(m, n, F(mean_wait_s)), ms__xp_mean(m, n, F(p99_wait_s)),
                    ms__xp_mean(m, n, F(mean_exec_s)), ms__xp_mean(m, n, F(mean_jct_s)),
                    ms__xp_mean(m, n, F(mean_slowdown)), ms__xp_mean(m, n, F(mean_fragcost)),
                    (double)ms__xp_sum_long(m, n, F(migrations)) / n);
        }
    if ((st = ms__xp_close_checked(f, MS_OK)) != MS_OK)
        return st;

    if ((st = ms_report_fopen(o->out, "sweep_beta.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "beta,policy,makespan_s,mean_wait_s,mean_exec_s,mean_jct_s,mean_slowdown\n");
    for (i = 0; i < r->nbeta; i++)
        for (k = 0; k < MS__XP_NBETAVAR; k++) {
            const ms_metrics_t *m = &r->bsweep[((size_t)i * MS__XP_NBETAVAR + (size_t)k) * (size_t)n];
            fprintf(f, "%.3f,%s,%.3f,%.3f,%.3f,%.3f,%.5f\n", ms__xp_betas[i],
                    ms__xp_variants[ms__xp_beta_vars[k]].label, ms__xp_mean(m, n, F(makespan_s)),
                    ms__xp_mean(m, n, F(mean_wait_s)), ms__xp_mean(m, n, F(mean_exec_s)),
                    ms__xp_mean(m, n, F(mean_jct_s)), ms__xp_mean(m, n, F(mean_slowdown)));
        }
    if ((st = ms__xp_close_checked(f, MS_OK)) != MS_OK)
        return st;

    if ((st = ms_report_fopen(o->out, "sweep_migration.csv", &f)) != MS_OK)
        return st;
    fprintf(f, "migrate_s,load_name,makespan_s,mean_wait_s,mean_exec_s,mean_jct_s,migrations,"
               "nomig_mean_jct_s\n");
    for (i = 0; i < r->nmig; i++)
        for (k = 0; k < 2; k++) {
            const ms_metrics_t *m = &r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)n];
            fprintf(f, "%.1f,%s,%.3f,%.3f,%.3f,%.3f,%.2f,%.3f\n", ms__xp_migs[i], ms__xp_load_names[MS__XP_L_MED + k],
                    ms__xp_mean(m, n, F(makespan_s)), ms__xp_mean(m, n, F(mean_wait_s)),
                    ms__xp_mean(m, n, F(mean_exec_s)), ms__xp_mean(m, n, F(mean_jct_s)),
                    (double)ms__xp_sum_long(m, n, F(migrations)) / n,
                    ms__xp_nomig(r, k, F(mean_jct_s)));
        }
    return ms__xp_close_checked(f, MS_OK);
}

ms_status_t ms__xp_write_readme(const ms__xp_opts_t *o, const ms__xp_results_t *r,
                                const ms__xp_reco_t *rc, double wall)
{
    FILE *f;
    ms_status_t st;
    int n = r->nseeds, i, k, l, v;

    if ((st = ms_report_fopen(o->out, "README.md", &f)) != MS_OK)
        return st;
    fprintf(f, "# migsched experiment: the fragmentation-aware scheduler, ablated\n\n"
               "Generated by `migsched experiment%s --seeds %d --sweep-seeds %d --jobs %zu` in %.1f s.\n"
               "docs/experiment.md explains the set-up and discusses the results.\n\n",
            o->quick ? " --quick" : "", n, r->nsw, r->njobs, wall);
    fprintf(f, "## Set-up\n\n"
               "- Cluster: one node, %d x A100-40GB, the five classic profiles "
               "(1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb).\n"
               "- Workload: %zu jobs per trace, Poisson arrivals at offered load 0.5 / 0.8 / 1.1 of "
               "the cluster's compute slices, profiles uniform over the five, durations lognormal "
               "(mean %.0f s, sigma %.1f); %d seeds per load (%d in the sweeps); every policy sees the same "
               "traces.\n"
               "- Simulator: interference beta %.2f (a job runs at 1/(1 + beta x other busy "
               "instances on its GPU)), GI creation %.0f s, migration %.0f s without progress, "
               "queue %s (docs/sched.md).\n"
               "- Variants:\n",
            o->ngpus, r->njobs, o->mean_s, o->sigma, n, r->nsw, o->beta, o->create_s, o->migrate_s,
            ms_queue_mode_name(o->queue));
    for (v = 0; v < MS__XP_NVAR; v++)
        fprintf(f, "  - `%s`: %s\n", ms__xp_variants[v].label, ms__xp_variants[v].what);
    fprintf(f, "\nMetrics are means over seeds (makespan also ± sd); \"makespan vs static\" is the "
               "mean paired improvement over the static baseline on the same trace (positive = "
               "better); \"gap to bound\" is makespan / lower bound - 1 (algorithms.md §7). "
               "Waiting time is first start minus arrival; execution time is first start to end, "
               "including interference slowdown and migrations.\n\n");
    fprintf(f, "## Results\n\n");
    ms__xp_write_table(f, r, true);

    fprintf(f, "\n## The seed's claims, measured\n\n"
               "| claim (seed 000) | load | measured |\n|---|---|---:|\n");
    for (l = 0; l < MS__XP_NLOAD; l++)
        fprintf(f, "| all three techniques: makespan 13-35%% better than static | %s | %+.1f%% |\n",
                ms__xp_load_names[l], ms__xp_gain(MS__XP_MAIN(r, MS__XP_V_STATIC, l, 0), MS__XP_MAIN(r, MS__XP_V_FA, l, 0), n, F(makespan_s)));
    for (l = 0; l < MS__XP_NLOAD; l++)
        fprintf(f, "| dynamic partitioning: mean wait >= 30%% lower than static (static -> fa-lb-dp / fa-lb -> fa-lb-dp) | %s | %+.1f%% / %+.1f%% |\n",
                ms__xp_load_names[l],
                ms__xp_gain(MS__XP_MAIN(r, MS__XP_V_STATIC, l, 0), MS__XP_MAIN(r, MS__XP_V_LBDP, l, 0), n, F(mean_wait_s)),
                ms__xp_gain(MS__XP_MAIN(r, MS__XP_V_LB, l, 0), MS__XP_MAIN(r, MS__XP_V_LBDP, l, 0), n, F(mean_wait_s)));
    for (l = 0; l < MS__XP_NLOAD; l++)
        fprintf(f, "| migration: execution time 6-10%% lower (fa-lb-dp -> fa) | %s | %+.1f%% |\n",
                ms__xp_load_names[l], ms__xp_gain(MS__XP_MAIN(r, MS__XP_V_LBDP, l, 0), MS__XP_MAIN(r, MS__XP_V_FA, l, 0), n, F(mean_exec_s)));
    fprintf(f, "\nPositive = lower (better) than the reference.\n\n");

    fprintf(f, "![makespan](makespan.svg)\n\n![mean wait](wait.svg)\n\n![mean execution time](exec.svg)\n\n"
               "![wait CDF medium](wait_cdf_medium.svg)\n\n![wait CDF high](wait_cdf_high.svg)\n\n"
               "![FragCost over time](fragcost_time.svg)\n\n![Gantt](gantt_faplus_medium.svg)\n\n");

    n = r->nsw;   /* the sweeps have their own seeds */
    fprintf(f, "## Sweep of the load-balancing threshold t (fa, all techniques on)\n\n"
               "%d seeds per point. Utilisation moves in steps of 1/7, so thresholds between two "
               "multiples of 1/7 (0.3 and 0.4, 0.6 and 0.7) classify GPUs identically. "
               "t = 0 and t = 1 switch balancing off (no GPU is Lazy, or every GPU is).\n\n"
               "| t | load | makespan s | mean wait s | mean exec s | mean JCT s | mean slowdown | mean FragCost | score |\n"
               "|---:|---|---:|---:|---:|---:|---:|---:|---:|\n", n);
    for (i = 0; i < r->nt; i++)
        for (k = 0; k < 2; k++)
            fprintf(f, "| %.1f | %s | %.0f | %.0f | %.0f | %.0f | %.4f | %.4f | %.4f |\n", r->tval[i],
                    ms__xp_load_names[MS__XP_L_MED + k], ms__xp_tsw(r, i, k, F(makespan_s)), ms__xp_tsw(r, i, k, F(mean_wait_s)),
                    ms__xp_tsw(r, i, k, F(mean_exec_s)), ms__xp_tsw(r, i, k, F(mean_jct_s)),
                    ms__xp_tsw(r, i, k, F(mean_slowdown)), ms__xp_tsw(r, i, k, F(mean_fragcost)),
                    rc->t_score[i]);
    fprintf(f, "\nScore per t (mean relative regret in makespan and mean JCT over medium and high "
               "load; 0 = best in both):");
    for (i = 0; i < r->nt; i++)
        fprintf(f, " t=%.1f: %.4f%s", r->tval[i], rc->t_score[i], i + 1 < r->nt ? ";" : "\n\n");
    fprintf(f, "![t vs makespan](sweep_t_makespan.svg)\n\n![t vs wait](sweep_t_wait.svg)\n\n"
               "![t vs FragCost](sweep_t_fragcost.svg)\n\n![t vs slowdown](sweep_t_slowdown.svg)\n\n");

    fprintf(f, "## Sweep of the interference beta (medium load, %d seeds)\n\n"
               "| beta | policy | makespan s | mean wait s | mean exec s | mean JCT s | mean slowdown |\n"
               "|---:|---|---:|---:|---:|---:|---:|\n", n);
    for (i = 0; i < r->nbeta; i++)
        for (k = 0; k < MS__XP_NBETAVAR; k++) {
            const ms_metrics_t *m = &r->bsweep[((size_t)i * MS__XP_NBETAVAR + (size_t)k) * (size_t)n];
            fprintf(f, "| %.2f | %s | %.0f | %.0f | %.0f | %.0f | %.4f |\n", ms__xp_betas[i],
                    ms__xp_variants[ms__xp_beta_vars[k]].label, ms__xp_mean(m, n, F(makespan_s)),
                    ms__xp_mean(m, n, F(mean_wait_s)), ms__xp_mean(m, n, F(mean_exec_s)),
                    ms__xp_mean(m, n, F(mean_jct_s)), ms__xp_mean(m, n, F(mean_slowdown)));
        }
    fprintf(f, "\n![beta sweep](sweep_beta.svg)\n\n");

    fprintf(f, "## Sweep of the migration cost (fa vs fa-lb-dp, which never migrates; %d seeds)\n\n"
               "| migrate_s | load | fa mean JCT s | fa-lb-dp mean JCT s | fa mean exec s | migrations per run |\n"
               "|---:|---|---:|---:|---:|---:|\n", n);
    for (i = 0; i < r->nmig; i++)
        for (k = 0; k < 2; k++)
            fprintf(f, "| %.0f | %s | %.0f | %.0f | %.0f | %.1f |\n", ms__xp_migs[i], ms__xp_load_names[MS__XP_L_MED + k],
                    ms__xp_msw(r, i, k, F(mean_jct_s)),
                    ms__xp_nomig(r, k, F(mean_jct_s)),
                    ms__xp_msw(r, i, k, F(mean_exec_s)),
                    (double)ms__xp_sum_long(&r->msweep[((size_t)i * 2 + (size_t)k) * (size_t)n], n,
                                     F(migrations)) / n);
    fprintf(f, "\n![migration sweep](sweep_migration.svg)\n\n");

    fprintf(f, "## Recommended deployment parameters (derived from the sweeps above)\n\n"
               "| parameter | value | why |\n|---|---|---|\n");
    fprintf(f, "| lb threshold t | %.1f | least mean relative regret in makespan and mean JCT at "
               "medium and high load (the seed's 0.4 scores %.4f, this t %.4f) |\n",
            rc->t_best, rc->t_score[rc->t_seed_i], rc->t_score[rc->t_best_i]);
    if (rc->mig_all)
        fprintf(f, "| migration | on; pays at every swept cost up to %.0f s per move "
                   "(%.0f%% of the mean duration) | fa's mean JCT stays below fa-lb-dp's at medium "
                   "and high load |\n", ms__xp_migs[r->nmig - 1], 100.0 * ms__xp_migs[r->nmig - 1] / o->mean_s);
    else if (isnan(rc->mig_limit))
        fprintf(f, "| migration | off | at no swept cost did fa's mean JCT beat fa-lb-dp's at both "
                   "medium and high load |\n");
    else
        fprintf(f, "| migration | on only if a move (checkpoint, copy, restore) costs <= %.0f s, "
                   "about %.0f%% of the mean job duration | at every swept cost up to this one "
                   "fa's mean JCT beats fa-lb-dp's at medium and high load; at the next swept cost "
                   "it no longer does at one of them |\n",
                rc->mig_limit, 100.0 * rc->mig_limit / o->mean_s);
    fprintf(f, "| max moves per trigger | 4 (default) | not swept: a bound on reconfiguration "
               "churn |\n"
               "| dynamic partitioning | on | see the ablation: it is what removes internal "
               "fragmentation |\n"
               "| monitoring | per-GPU FragCost, Lazy/Busy counts, reconfigurations and "
               "migrations per hour, wait-time p99 | as seed 000 lists; all are in runs.csv and the "
               "plots |\n\n");
    fprintf(f, "## Files\n\n"
               "- `summary.csv`: one row per policy and load (means over seeds)\n"
               "- `runs.csv`: one row per run\n"
               "- `sweep_t.csv`, `sweep_beta.csv`, `sweep_migration.csv`\n"
               "- `runs/faplus-medium/` (fa+), `runs/static-medium/`: trace, schedule and metrics of one "
               "run each (feed them to `migsched report --runs`)\n");
    return ms__xp_close_checked(f, MS_OK);
}
