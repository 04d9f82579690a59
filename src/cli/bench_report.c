/* bench_report.c - `migsched bench`: the tables on stdout and the JSON.
 *
 * Each section prints a title and column names, then one row per case as
 * it finishes (stdout is flushed after each, so a long run shows progress).
 * The JSON is one object, {"model", "quick", "seed", "clock_pair_ns",
 * "results": [...]}, with one object per row, tagged by "section" (place,
 * migration, simulate, scaling). Nothing here measures.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/bench.h"

static void json_lat(FILE *f, const char *name, const lat_t *l)
{
    fprintf(f, "\"%s\": {\"n\": %ld, \"p50_us\": %.4f, \"p99_us\": %.4f, \"max_us\": %.4f, "
               "\"mean_us\": %.4f}", name, l->n, l->p50_us, l->p99_us, l->max_us, l->mean_us);
}

static void machine_line(FILE *f)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    fprintf(f, "machine: %ld online CPUs; compiler %s; one thread\n", cpus,
#if defined(__VERSION__)
            __VERSION__
#else
            "unknown"
#endif
    );
}

/* --- preamble ------------------------------------------------------------------- */

void ms__bench_preamble(const bopts_t *o, const char *model, FILE *json)
{
    printf("migsched bench%s: model %s, seed %llu\n", o->quick ? " --quick" : "", model,
           (unsigned long long)o->seed);
    machine_line(stdout);
    printf("clock_gettime(CLOCK_MONOTONIC) pair: %.0f ns (included in every latency below)\n",
           ms__bench_clock_pair_ns());
    if (json != NULL)
        fprintf(json, "{\"model\": \"%s\", \"quick\": %s, \"seed\": %llu, \"clock_pair_ns\": %.0f,"
                      " \"results\": [", model, o->quick ? "true" : "false",
                (unsigned long long)o->seed, ms__bench_clock_pair_ns());
}

void ms__bench_json_end(FILE *json)
{
    fprintf(json, "\n]}\n");
}

/* --- placement ------------------------------------------------------------------ */

void ms__bench_place_header(const bopts_t *o)
{
    printf("\nPlacement: one decision (place() only), steady state at ~%.0f%% busy compute,\n"
           "uniform profile mix; departures while at/above target, then one arrival\n", o->occupancy * 100);
    printf("%-13s %-6s %7s %7s %6s %5s %9s %9s %9s %12s %7s\n", "policy", "index", "GPUs",
           "n", "occ%", "nofit", "p50 us", "p99 us", "max us", "decisions/s", "fill s");
}

void ms__bench_place_unknown(const char *policy)
{
    printf("%-13s (not in the registry; skipped)\n", policy);
}

void ms__bench_place_skipped(const char *name, const char *index, long ngpus, long scan_max)
{
    printf("%-13s %-6s %7ld  skipped: above --scan-max %ld\n", name, index, ngpus, scan_max);
}

void ms__bench_place_failed(const char *name, const char *index, long ngpus, ms_status_t st)
{
    printf("%-13s %-6s %7ld  failed: %s\n", name, index, ngpus, ms_strerror(st));
}

void ms__bench_place_row(const char *name, const char *policy, bool no_mig,
                         const place_res_t *r, FILE *json, bool *first)
{
    printf("%-13s %-6s %7ld %7ld %6.1f %5.3f %9.3f %9.3f %9.1f %12.0f %7.2f\n", name,
           r->index, r->ngpus, r->lat.n, r->occ * 100, r->nofit_frac, r->lat.p50_us,
           r->lat.p99_us, r->lat.max_us, r->per_s, r->fill_s);
    fflush(stdout);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"place\", \"policy\": \"%s\", "
                      "\"migration\": %s, \"index\": \"%s\", \"gpus\": %ld, "
                      "\"occupancy\": %.4f, \"nofit_frac\": %.4f, "
                      "\"decisions_per_s\": %.0f, \"fill_s\": %.3f, ",
                *first ? "" : ",", policy, no_mig ? "false" : "true", r->index,
                r->ngpus, r->occ, r->nofit_frac, r->per_s, r->fill_s);
        json_lat(json, "latency", &r->lat);
        fprintf(json, "}");
        *first = false;
    }
}

/* --- migration search ------------------------------------------------------------ */

void ms__bench_mig_header(const bopts_t *o, bool have_fa)
{
    printf("\nMigration search: fa, every technique on, bucket index, ~%.0f%% busy compute;\n"
           "on_finish() after each departure, make_room() after each MS_ENOFIT\n",
           o->mig_occupancy * 100);
    if (!have_fa) {
        printf("(fa is not in the registry; skipped)\n");
        return;
    }
    printf("%7s %6s %-10s %7s %9s %9s %9s %9s\n", "GPUs", "occ%", "call", "n", "p50 us",
           "p99 us", "max us", "made room");
}

void ms__bench_mig_failed(long ngpus, ms_status_t st)
{
    printf("%7ld  failed: %s\n", ngpus, ms_strerror(st));
}

void ms__bench_mig_row(const mig_res_t *r, FILE *json, bool *first)
{
    int k;

    for (k = 0; k < 3; k++) {
        const lat_t *l = k == 0 ? &r->place : k == 1 ? &r->fin : &r->room;
        const char *nm = k == 0 ? "place" : k == 1 ? "on_finish" : "make_room";
        printf("%7ld %6.1f %-10s %7ld %9.3f %9.3f %9.1f", r->ngpus, r->occ * 100, nm, l->n,
               l->p50_us, l->p99_us, l->max_us);
        if (k == 2)
            printf(" %9ld", r->room_ok);
        printf("\n");
    }
    fflush(stdout);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"migration\", \"policy\": \"fa\", \"gpus\": %ld, "
                      "\"occupancy\": %.4f, \"made_room\": %ld, ",
                *first ? "" : ",", r->ngpus, r->occ, r->room_ok);
        json_lat(json, "place", &r->place);
        fprintf(json, ", ");
        json_lat(json, "on_finish", &r->fin);
        fprintf(json, ", ");
        json_lat(json, "make_room", &r->room);
        fprintf(json, "}");
        *first = false;
    }
}

/* --- simulation ------------------------------------------------------------------- */

void ms__bench_sim_header(const bopts_t *o)
{
    printf("\nSimulation: Poisson arrivals, the classic profiles uniformly, lognormal durations\n"
           "(mean %.0f s, sigma 1), nodes of 8 GPUs, each policy with its defaults and the default\n"
           "queue; one forked child per case (peak RSS is the case's)\n", o->mean_s);
    printf("%-9s %5s %9s %7s %7s %8s %8s %10s %12s %8s %9s %8s %10s %6s\n", "policy", "load",
           "jobs", "GPUs", "gen s", "sim s", "cpu s", "events", "events/s", "RSS MB", "completed",
           "migr", "mean wait", "util");
}

void ms__bench_sim_row(const sim_res_t *r, const char *tag, FILE *json, bool *first)
{
    if (r->status != MS_OK) {
        printf("%-9s %5.2f %9ld %7ld  failed: %s\n", r->policy, r->load, r->njobs, r->ngpus,
               r->status < 0 ? "child died" : ms_strerror((ms_status_t)r->status));
    } else {
        printf("%-9s %5.2f %9ld %7ld %7.2f %8.2f %8.2f %10ld %12.0f %8.1f %9ld %8ld %10.0f %6.3f\n",
               r->policy, r->load, r->njobs, r->ngpus, r->gen_s, r->sim_s, r->cpu_s, r->events,
               r->sim_s > 0 ? (double)r->events / r->sim_s : 0.0, (double)r->rss_kb / 1024.0,
               r->completed, r->migrations, r->mean_wait_s, r->util);
    }
    fflush(stdout);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"simulate\", \"case\": \"%s\", \"policy\": \"%s\", "
                      "\"load\": %.4f, \"jobs\": %ld, \"gpus\": %ld, \"status\": %d, \"gen_s\": %.4f, "
                      "\"sim_s\": %.4f, \"cpu_s\": %.4f, \"events\": %ld, \"events_per_s\": %.0f, "
                      "\"peak_rss_kb\": %ld, \"completed\": %ld, \"rejected\": %ld, "
                      "\"migrations\": %ld, \"makespan_s\": %.3f, \"mean_wait_s\": %.3f, "
                      "\"utilization\": %.4f}",
                *first ? "" : ",", tag, r->policy, r->load, r->njobs, r->ngpus, r->status, r->gen_s, r->sim_s,
                r->cpu_s, r->events, r->sim_s > 0 ? (double)r->events / r->sim_s : 0.0, r->rss_kb,
                r->completed, r->rejected, r->migrations, r->makespan_s, r->mean_wait_s,
                r->util);
        *first = false;
    }
}

void ms__bench_scaling(const bopts_t *o, const sim_res_t *small, const sim_res_t *big,
                       FILE *json, bool *first)
{
    double ratio, cratio;

    if (small->status != MS_OK || big->status != MS_OK || !(small->sim_s > 0))
        return;
    ratio = big->sim_s / small->sim_s;
    cratio = small->cpu_s > 0 ? big->cpu_s / small->cpu_s : 0.0;
    printf("scaling: %ld jobs on %ld GPUs took %.2fx the wall time (%.2fx the CPU time) "
           "on %ld GPUs\n", o->scale_jobs, o->scale_large, ratio, cratio, o->scale_small);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"scaling\", \"jobs\": %ld, \"small_gpus\": %ld, "
                      "\"large_gpus\": %ld, \"ratio\": %.4f, \"cpu_ratio\": %.4f}",
                *first ? "" : ",", o->scale_jobs, o->scale_small, o->scale_large, ratio,
                cratio);
        *first = false;
    }
}

void ms__bench_queue_header(void)
{
    printf("\nQueue depth: the cost of one event (an end or an arrival, with its scheduling pass)\n"
           "with `depth` jobs waiting, the default queue (EASY after the 3600 s bound; the head\n"
           "past it), A100-40GB in nodes of 8, lognormal durations (mean 600 s), exact estimates;\n"
           "per event: placements offered to the policy, GPUs evaluated for reservations,\n"
           "blocked heads skipped, calm passes (nothing changed since the last: no class\n"
           "walked); x none: mean cost against depth 0\n");
    printf("%-9s %7s %7s %8s %9s %9s %9s %8s %7s %8s %8s %6s %8s %7s\n", "policy", "GPUs",
           "depth", "events", "mean us", "p50 us", "p99 us", "x none", "offers", "resv", "skipped",
           "calm", "waiting", "fill s");
}

void ms__bench_queue_row(const queue_res_t *r, const queue_res_t *none, FILE *json, bool *first)
{
    double x = none != NULL && none->status == MS_OK && none->lat.mean_us > 0
                   ? r->lat.mean_us / none->lat.mean_us : 0.0;

    if (r->status != MS_OK) {
        printf("%-9s %7ld %7ld  failed: %s\n", r->policy, r->ngpus, r->depth,
               ms_strerror((ms_status_t)r->status));
        return;
    }
    printf("%-9s %7ld %7ld %8ld %9.3f %9.3f %9.3f %8.2f %7.2f %8.2f %8.2f %6.2f %8ld %7.2f\n",
           r->policy, r->ngpus, r->depth, r->events, r->lat.mean_us, r->lat.p50_us, r->lat.p99_us,
           x, r->place_calls, r->resv_evals, r->skipped, r->calm, r->waiting, r->fill_s);
    fflush(stdout);
    if (json != NULL) {
        fprintf(json, "%s\n    {\"section\": \"queue\", \"policy\": \"%s\", \"gpus\": %ld, "
                      "\"depth\": %ld, \"events\": %ld, \"mean_us\": %.4f, \"p50_us\": %.4f, "
                      "\"p99_us\": %.4f, \"vs_empty\": %.4f, \"offers_per_event\": %.4f, "
                      "\"resv_evals_per_event\": %.4f, \"skipped_per_event\": %.4f, "
                      "\"calm_per_event\": %.4f, \"waiting\": %ld, \"running\": %ld}",
                *first ? "" : ",", r->policy, r->ngpus, r->depth, r->events, r->lat.mean_us,
                r->lat.p50_us, r->lat.p99_us, x, r->place_calls, r->resv_evals, r->skipped,
                r->calm, r->waiting, r->running);
        *first = false;
    }
}
