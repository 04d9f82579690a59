/* bench_sim.c - `migsched bench`: whole-simulation cases.
 *
 * Each case runs in a forked child (so the peak RSS, from getrusage in the
 * child, is that case's), generating a Poisson trace in memory with
 * ms_trace_generate() (the classic profiles uniformly, lognormal durations
 * with sigma 1: `gen-trace --dist lognormal`) and replaying it with
 * ms_sim_run(), the case's policy with its defaults and the default queue,
 * nodes of 8 GPUs. The child sends its sim_res_t back through a pipe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/bench.h"
#include "core/fdio.h"
#include "migsched/geometry.h"
#include "migsched/policy.h"
#include "migsched/sim.h"
#include "migsched/trace.h"

static double cpu_now(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void sim_child(const bopts_t *o, const ms_geom_t *g, sim_res_t *r)
{
    double c0;
    ms_gen_cfg_t gc;
    ms_sim_cfg_t sc;
    ms_trace_t *tr = NULL;
    ms_metrics_t m;
    ms_diag_t d;
    struct rusage ru;
    int64_t t0;
    ms_status_t st;

    memset(&gc, 0, sizeof(gc));
    gc.njobs = (size_t)r->njobs;
    gc.load = r->load;
    gc.ngpus = (int)r->ngpus;
    gc.dist = 2;
    gc.sigma = 1.0;
    gc.mean_s = o->mean_s;
    gc.seed = o->seed;
    t0 = ms__bench_now_ns();
    st = ms_trace_generate(g, &gc, &tr);
    r->gen_s = (double)(ms__bench_now_ns() - t0) / 1e9;
    if (st == MS_OK) {
        ms_sim_cfg_defaults(&sc);
        sc.sched.policy = ms_policy_find(r->policy);
        sc.sched.pcfg.seed = o->seed;
        sc.ngpus = (int)r->ngpus;
        sc.gpus_per_node = 8;
        sc.sched.index_mode = MS_INDEX_BUCKET;
        memset(&m, 0, sizeof(m));
        ms_diag_clear(&d);
        c0 = cpu_now();
        t0 = ms__bench_now_ns();
        st = sc.sched.policy == NULL ? MS_ENOENT : ms_sim_run(&sc, tr, &m, &d);
        r->sim_s = (double)(ms__bench_now_ns() - t0) / 1e9;
        r->cpu_s = cpu_now() - c0;
        r->events = m.events;
        r->completed = m.jobs_completed;
        r->rejected = m.jobs_rejected;
        r->migrations = m.migrations;
        r->makespan_s = m.makespan_s;
        r->mean_wait_s = m.mean_wait_s;
        r->util = m.mean_utilization;
    }
    ms_trace_free(tr);
    r->status = (int)st;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        r->rss_kb = ru.ru_maxrss;
}

void ms__bench_sim(const bopts_t *o, const ms_geom_t *g, const char *policy, double load,
                   long njobs, long ngpus, sim_res_t *r)
{
    int fds[2], wst = 0;
    pid_t pid;
    sim_res_t got;
    long got_n;

    memset(r, 0, sizeof(*r));
    snprintf(r->policy, sizeof(r->policy), "%s", policy);
    r->load = load;
    r->njobs = njobs;
    r->ngpus = ngpus;
    r->status = -1;
    fflush(NULL);
    if (pipe(fds) != 0)
        return;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        sim_child(o, g, r);
        (void)ms__write_all(fds[1], r, sizeof(*r));   /* a short one: the parent sees it */
        close(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    got_n = ms__read_full(fds[0], &got, sizeof(got));
    close(fds[0]);
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    if (got_n == (long)sizeof(got) && WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
        *r = got;
}
