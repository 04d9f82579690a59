/* test_nodecfg.c - the node-configuration controller against a fake
 * mig-manager: demand-driven and time-window switches, drain without
 * eviction, failure and revert, timeouts, restarts, and the no-flapping
 * property under alternating load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/nodecfg.h"

/* --- a fake cluster and mig-manager ---------------------------------------- */

#define NN 4

typedef struct fnode {
    char name[16];
    char config[32];          /* "" none */
    char state[16];           /* "" none */
    bool unsched, ours;
    int gpu_pods;
    int apply_left;           /* steps until mig-manager reports */
    bool fail_next;           /* the next apply fails */
    bool hang;                /* mig-manager never answers */
    int sets, cordons, uncordons, evicts;
    int bad_sets;             /* SET_CONFIG while GPU pods ran */
} fnode_t;

typedef struct world {
    fnode_t n[NN];
    int nn;
    ms_nodecfg_t *nc;
    double now;
} world_t;

static const char *const PEAK[] = { "1g.5gb" };
static const int PEAK_N[] = { 7 };
static const char *const BAL[] = { "1g.5gb", "2g.10gb", "3g.20gb" };
static const int BAL_N[] = { 2, 1, 1 };
static const char *const TRAIN[] = { "7g.40gb" };
static const int TRAIN_N[] = { 1 };

static void world_init(world_t *w, int nn, const ms_nodecfg_cfg_t *cfg)
{
    ms_diag_t d;
    int i;

    memset(w, 0, sizeof(*w));
    w->nn = nn;
    w->now = 1000000;                 /* some epoch time, 13:46 UTC */
    for (i = 0; i < nn; i++) {
        snprintf(w->n[i].name, sizeof(w->n[i].name), "gpu-%d", i);
        snprintf(w->n[i].config, sizeof(w->n[i].config), "inference-peak");
        snprintf(w->n[i].state, sizeof(w->n[i].state), "success");
    }
    assert_int_equal(ms_nodecfg_create(cfg, &w->nc, &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(w->nc, "inference-peak", "A100-40GB", PEAK, PEAK_N, 1,
                                           -1, -1, &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(w->nc, "balanced", "A100-40GB", BAL, BAL_N, 3, -1, -1,
                                           &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(w->nc, "training", "A100-40GB", TRAIN, TRAIN_N, 1, -1,
                                           -1, &d), MS_OK);
}

static void observe_all(world_t *w)
{
    int i;

    for (i = 0; i < w->nn; i++) {
        fnode_t *f = &w->n[i];
        ms_nodecfg_obs_t o = { f->name, "A100-40GB", 8, f->config[0] ? f->config : NULL,
                               f->state[0] ? f->state : NULL, f->unsched, f->ours, f->gpu_pods };
        assert_int_equal(ms_nodecfg_observe(w->nc, &o, NULL), MS_OK);
    }
}

static fnode_t *by_name(world_t *w, const char *name)
{
    int i;

    for (i = 0; i < w->nn; i++)
        if (strcmp(w->n[i].name, name) == 0)
            return &w->n[i];
    fail_msg("unknown node %s", name);
    return NULL;
}

/* mig-manager: a set label goes to pending, then success/failed */
static void mig_manager(world_t *w)
{
    int i;

    for (i = 0; i < w->nn; i++) {
        fnode_t *f = &w->n[i];
        if (strcmp(f->state, "pending") != 0 || f->hang)
            continue;
        if (--f->apply_left <= 0) {
            snprintf(f->state, sizeof(f->state), "%s", f->fail_next ? "failed" : "success");
            f->fail_next = false;
        }
    }
}

/* one step: observe, decide, carry out; returns the number of actions */
static int step(world_t *w, double dt)
{
    const ms_nodecfg_act_t *a;
    int n, i;

    w->now += dt;
    mig_manager(w);
    observe_all(w);
    assert_int_equal(ms_nodecfg_step(w->nc, w->now, &a, &n), MS_OK);
    for (i = 0; i < n; i++) {
        fnode_t *f = by_name(w, a[i].node);
        assert_true(a[i].reason[0] != '\0');
        switch (a[i].kind) {
        case MS_NODECFG_CORDON: f->unsched = f->ours = true; f->cordons++; break;
        case MS_NODECFG_UNCORDON: f->unsched = f->ours = false; f->uncordons++; break;
        case MS_NODECFG_EVICT: f->gpu_pods = 0; f->evicts++; break;
        case MS_NODECFG_SET_CONFIG:
            assert_non_null(a[i].config);
            if (f->gpu_pods > 0)
                f->bad_sets++;
            assert_true(f->unsched);
            snprintf(f->config, sizeof(f->config), "%s", a[i].config);
            snprintf(f->state, sizeof(f->state), "pending");  /* the driver clears the state */
            f->apply_left = 2;
            f->sets++;
            break;
        }
    }
    return n;
}

static ms_nodecfg_phase_t phase(world_t *w, int i)
{
    ms_nodecfg_node_info_t inf;

    assert_int_equal(ms_nodecfg_node(w->nc, w->n[i].name, &inf), MS_OK);
    return inf.phase;
}

static ms_nodecfg_cfg_t quick_cfg(void)
{
    ms_nodecfg_cfg_t c;

    ms_nodecfg_cfg_defaults(&c);
    c.hysteresis_s = 0;
    c.max_switches_per_hour = 4;
    c.drain_timeout_s = 600;
    c.apply_timeout_s = 300;
    return c;
}

/* --- tests ------------------------------------------------------------------ */

/* Three waiting 7g jobs switch exactly one node to training, after its GPU
 * pods finish, and it is uncordoned when mig-manager reports success. */
static void test_demand_switches_one_node(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    ms_nodecfg_node_info_t inf;
    world_t w;
    int k, i;

    (void)st;
    world_init(&w, 3, &c);
    w.n[0].gpu_pods = 2;
    step(&w, 10);                               /* first sight: observe only */
    for (k = 0; k < 3; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 3), MS_OK);
        step(&w, 10);
    }
    assert_true(w.n[0].unsched && w.n[0].ours);
    assert_int_equal(w.n[0].sets, 0);            /* pods still run */
    assert_false(w.n[1].unsched || w.n[2].unsched);   /* the demand went to node 0 only */
    assert_int_equal(phase(&w, 0), MS_NODECFG_DRAINING);
    w.n[0].gpu_pods = 0;
    for (k = 0; k < 4; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 3), MS_OK);
        step(&w, 10);
    }
    assert_string_equal(w.n[0].config, "training");
    assert_string_equal(w.n[0].state, "success");
    assert_false(w.n[0].unsched);
    assert_int_equal(ms_nodecfg_node(w.nc, "gpu-0", &inf), MS_OK);
    assert_int_equal(inf.phase, MS_NODECFG_STEADY);
    assert_int_equal(inf.switches, 1);
    for (i = 0; i < 3; i++)
        assert_int_equal(w.n[i].bad_sets, 0);
    assert_int_equal(w.n[1].cordons + w.n[2].cordons, 0);
    ms_nodecfg_destroy(w.nc);
}

/* Right after a switch, the new layout's free capacity still counts
 * against the demand (pods take a while to land), but capacity its pods
 * already use does not: a full node does not hide real demand. */
static void test_settle_counts_free_capacity(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    world_t w;
    int k;

    (void)st;
    world_init(&w, 2, &c);
    step(&w, 10);
    for (k = 0; k < 5; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 3), MS_OK);
        step(&w, 10);
    }
    assert_string_equal(w.n[0].config, "training");
    assert_false(w.n[0].unsched);
    /* the 3 land, yet the same 3 still show as uncovered once: no switch */
    w.n[0].gpu_pods = 3;
    assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 3), MS_OK);
    step(&w, 10);
    assert_int_equal(w.n[1].cordons, 0);
    /* gpu-0 full (8 7g pods) and 4 more waiting: gpu-1 switches at once */
    w.n[0].gpu_pods = 8;
    for (k = 0; k < 5; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 4), MS_OK);
        step(&w, 10);
    }
    assert_int_equal(w.n[1].cordons, 1);
    assert_string_equal(w.n[1].config, "training");
    ms_nodecfg_destroy(w.nc);
}

/* A small demand that the current layout already serves, or a gain below
 * min_gain, switches nothing. */
static void test_no_gain_no_switch(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    world_t w;
    int k, i;

    (void)st;
    world_init(&w, 2, &c);
    step(&w, 10);
    for (k = 0; k < 10; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 1, 20), MS_OK);  /* peak serves it */
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 2, 2), MS_OK);   /* 4 slices < 7 */
        assert_int_equal(step(&w, 60), 0);
    }
    for (i = 0; i < 2; i++)
        assert_int_equal(w.n[i].cordons, 0);
    ms_nodecfg_destroy(w.nc);
}

/* GPU pods that never finish: the drain is abandoned at the timeout and the
 * node uncordoned; nothing is evicted unless the configuration says so. */
static void test_drain_timeout_never_evicts(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    ms_nodecfg_node_info_t inf;
    world_t w;
    int k;

    (void)st;
    c.hysteresis_s = 3600;
    world_init(&w, 1, &c);
    w.n[0].gpu_pods = 5;
    step(&w, 0);
    w.now += 3600;
    for (k = 0; k < 20; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 8), MS_OK);
        step(&w, 60);
    }
    assert_int_equal(w.n[0].evicts, 0);
    assert_int_equal(w.n[0].sets, 0);
    assert_int_equal(w.n[0].cordons, 1);
    assert_int_equal(w.n[0].uncordons, 1);
    assert_false(w.n[0].unsched);
    assert_int_equal(ms_nodecfg_node(w.nc, "gpu-0", &inf), MS_OK);
    assert_int_equal(inf.drain_giveups, 1);
    assert_string_equal(w.n[0].config, "inference-peak");
    ms_nodecfg_destroy(w.nc);

    /* told to evict: it evicts once the drain times out, then switches */
    c.evict = true;
    world_init(&w, 1, &c);
    w.n[0].gpu_pods = 5;
    step(&w, 0);
    w.now += 3600;
    for (k = 0; k < 20; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 8), MS_OK);
        step(&w, 60);
    }
    assert_int_equal(w.n[0].evicts, 1);
    assert_string_equal(w.n[0].config, "training");
    assert_false(w.n[0].unsched);
    assert_int_equal(w.n[0].bad_sets, 0);
    ms_nodecfg_destroy(w.nc);
}

/* mig-manager fails: the old layout is set back and the node uncordoned;
 * when the revert fails too, the node stays cordoned for an operator. */
static void test_failure_reverts(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    ms_nodecfg_node_info_t inf;
    world_t w;
    int k;

    (void)st;
    world_init(&w, 1, &c);
    w.n[0].fail_next = true;
    step(&w, 10);
    for (k = 0; k < 8; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 8), MS_OK);
        step(&w, 10);
    }
    assert_string_equal(w.n[0].config, "inference-peak");
    assert_string_equal(w.n[0].state, "success");
    assert_false(w.n[0].unsched);
    assert_int_equal(ms_nodecfg_node(w.nc, "gpu-0", &inf), MS_OK);
    assert_int_equal(inf.failures, 1);
    assert_int_equal(inf.switches, 0);
    assert_int_equal(w.n[0].sets, 2);            /* training, then back */
    ms_nodecfg_destroy(w.nc);

    /* the revert fails as well */
    world_init(&w, 1, &c);
    w.n[0].fail_next = true;
    step(&w, 10);
    for (k = 0; k < 12; k++) {
        if (strcmp(w.n[0].config, "inference-peak") == 0 && strcmp(w.n[0].state, "pending") == 0)
            w.n[0].fail_next = true;
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 8), MS_OK);
        step(&w, 10);
    }
    assert_int_equal(phase(&w, 0), MS_NODECFG_BROKEN);
    assert_true(w.n[0].unsched);
    assert_int_equal(w.n[0].uncordons, 0);
    /* an operator uncordons it: it serves again and is not touched at once */
    w.n[0].unsched = w.n[0].ours = false;
    snprintf(w.n[0].state, sizeof(w.n[0].state), "success");
    step(&w, 10);
    assert_int_equal(phase(&w, 0), MS_NODECFG_STEADY);
    ms_nodecfg_destroy(w.nc);
}

/* mig-manager never answers: the apply times out and is reverted. */
static void test_apply_timeout(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    ms_nodecfg_node_info_t inf;
    world_t w;
    int k;

    (void)st;
    world_init(&w, 1, &c);
    step(&w, 10);
    assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 8), MS_OK);
    step(&w, 10);                               /* cordon */
    assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 8), MS_OK);
    step(&w, 10);                               /* set training */
    assert_string_equal(w.n[0].config, "training");
    w.n[0].hang = true;
    for (k = 0; k < 5; k++)
        step(&w, 100);                          /* 500 s > apply_timeout_s */
    assert_string_equal(w.n[0].config, "inference-peak");
    w.n[0].hang = false;
    for (k = 0; k < 4; k++)
        step(&w, 10);
    assert_false(w.n[0].unsched);
    assert_int_equal(ms_nodecfg_node(w.nc, "gpu-0", &inf), MS_OK);
    assert_int_equal(inf.failures, 1);
    ms_nodecfg_destroy(w.nc);
}

/* A layout's time window sets the target in the window, across midnight. */
static void test_time_window(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    ms_diag_t d;
    world_t w;
    double day = 86400.0 * 20000;                 /* midnight UTC */
    int k;

    (void)st;
    world_init(&w, 2, &c);
    ms_nodecfg_destroy(w.nc);
    assert_int_equal(ms_nodecfg_create(&c, &w.nc, &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(w.nc, "inference-peak", "A100-40GB", PEAK, PEAK_N, 1,
                                           6 * 60, 22 * 60, &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(w.nc, "training", "A100-40GB", TRAIN, TRAIN_N, 1,
                                           22 * 60, 6 * 60, &d), MS_OK);
    w.now = day + 12 * 3600;                      /* noon: peak, as they are */
    for (k = 0; k < 5; k++)
        assert_int_equal(step(&w, 60), 0);
    w.now = day + 23 * 3600;                      /* 23:00: training */
    for (k = 0; k < 8; k++)
        step(&w, 60);
    assert_string_equal(w.n[0].config, "training");
    assert_string_equal(w.n[1].config, "training");
    assert_false(w.n[0].unsched || w.n[1].unsched);
    w.now = day + 86400 + 3 * 3600;               /* 03:00 next day: still training */
    for (k = 0; k < 5; k++)
        assert_int_equal(step(&w, 60), 0);
    w.now = day + 86400 + 7 * 3600;               /* 07:00: back to peak */
    for (k = 0; k < 8; k++)
        step(&w, 60);
    assert_string_equal(w.n[0].config, "inference-peak");
    ms_nodecfg_destroy(w.nc);
}

/* A restarted controller finds a node it cordoned with the label pending
 * and finishes the switch; a node an admin cordoned is never touched. */
static void test_restart_and_admin_cordon(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    world_t w;
    int k;

    (void)st;
    world_init(&w, 2, &c);
    w.n[0].unsched = w.n[0].ours = true;
    snprintf(w.n[0].config, sizeof(w.n[0].config), "training");
    snprintf(w.n[0].state, sizeof(w.n[0].state), "pending");
    w.n[0].apply_left = 3;
    w.n[1].unsched = true;                        /* an admin's cordon */
    for (k = 0; k < 6; k++) {
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", 7, 16), MS_OK);
        step(&w, 10);
    }
    assert_false(w.n[0].unsched);
    assert_string_equal(w.n[0].config, "training");
    assert_int_equal(w.n[1].cordons + w.n[1].uncordons + w.n[1].sets, 0);
    assert_true(w.n[1].unsched);
    ms_nodecfg_destroy(w.nc);
}

/* Load that flips between 7g and 1g demand every few minutes for ten hours:
 * no node switches more than the budget in any hour, none switches sooner
 * than the hysteresis after its last change, and no label is ever set on a
 * node that runs GPU pods. */
static void test_no_flapping(void **st)
{
    ms_nodecfg_cfg_t c;
    world_t w;
    double last_done[NN], t0;
    int k, i, prev_sets[NN], prev_unc[NN];
    double starts[NN][64];
    int nstarts[NN];

    (void)st;
    ms_nodecfg_cfg_defaults(&c);
    c.hysteresis_s = 1200;
    c.max_switches_per_hour = 2;
    world_init(&w, NN, &c);
    memset(nstarts, 0, sizeof(nstarts));
    for (i = 0; i < NN; i++) {
        last_done[i] = -1e18;
        prev_sets[i] = prev_unc[i] = 0;
    }
    t0 = w.now;
    for (k = 0; k < 10 * 60; k++) {               /* one step a minute */
        int phasek = (k / 7) % 2;
        for (i = 0; i < NN; i++)
            w.n[i].gpu_pods = (k + i) % 5 == 0 ? 0 : (w.n[i].unsched ? w.n[i].gpu_pods / 2 : 3);
        assert_int_equal(ms_nodecfg_demand(w.nc, "A100-40GB", phasek ? 7 : 1, phasek ? 16 : 200),
                         MS_OK);
        step(&w, 60);
        for (i = 0; i < NN; i++) {
            if (w.n[i].cordons > nstarts[i]) {       /* a switch began */
                assert_true(w.now - last_done[i] >= c.hysteresis_s);
                starts[i][nstarts[i]++] = w.now;
                assert_true(nstarts[i] < 64);
            }
            if (w.n[i].uncordons > prev_unc[i])
                last_done[i] = w.now;
            prev_unc[i] = w.n[i].uncordons;
            prev_sets[i] = w.n[i].sets;
            assert_int_equal(w.n[i].bad_sets, 0);
        }
    }
    for (i = 0; i < NN; i++) {
        int a, b;
        for (a = 0; a < nstarts[i]; a++) {
            int in_hour = 0;
            for (b = a; b < nstarts[i] && starts[i][b] - starts[i][a] < 3600; b++)
                in_hour++;
            assert_true(in_hour <= c.max_switches_per_hour);
        }
    }
    assert_true(w.now - t0 >= 10 * 3600 - 1);
    /* not vacuous: the load did drive switches, both ways */
    {
        int total = 0, to_peak = 0;
        for (i = 0; i < NN; i++) {
            ms_nodecfg_node_info_t inf;
            assert_int_equal(ms_nodecfg_node(w.nc, w.n[i].name, &inf), MS_OK);
            total += (int)inf.switches;
            to_peak += w.n[i].sets;
        }
        print_message("no-flapping: %d switches on %d nodes in 10 h\n", total, NN);
        assert_true(total >= NN);
        assert_true(to_peak >= 2 * NN);
    }
    (void)prev_sets;
    ms_nodecfg_destroy(w.nc);
}

static void test_bad_input(void **st)
{
    ms_nodecfg_cfg_t c;
    ms_nodecfg_t *nc;
    ms_diag_t d;
    const char *const bad[] = { "x.5gb" };
    const char *const big[] = { "1g.5gb" };
    const int one[] = { 1 }, many[] = { 99 };
    ms_nodecfg_obs_t o = { "n", "A100-40GB", 0, NULL, NULL, false, false, 0 };

    (void)st;
    ms_nodecfg_cfg_defaults(&c);
    c.max_switches_per_hour = 0;
    assert_int_equal(ms_nodecfg_create(&c, &nc, &d), MS_ERANGE);
    assert_string_equal(d.field, "max_switches_per_hour");
    ms_nodecfg_cfg_defaults(&c);
    assert_int_equal(ms_nodecfg_create(&c, &nc, &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(nc, "l", "A100-40GB", bad, one, 1, -1, -1, &d), MS_EINVAL);
    assert_string_equal(d.field, "mig-devices");
    assert_non_null(strstr(d.msg, "x.5gb"));
    assert_int_equal(ms_nodecfg_add_layout(nc, "l", "A100-40GB", big, many, 1, -1, -1, &d), MS_ERANGE);
    assert_int_equal(ms_nodecfg_add_layout(nc, "l", "A100-40GB", big, one, 1, 60, 60, &d), MS_ERANGE);
    assert_string_equal(d.field, "window");
    assert_int_equal(ms_nodecfg_add_layout(nc, "l", "A100-40GB", big, one, 1, 60, -1, &d), MS_ERANGE);
    assert_int_equal(ms_nodecfg_add_layout(nc, "l", "A100-40GB", big, one, 1, -1, -1, &d), MS_OK);
    assert_int_equal(ms_nodecfg_add_layout(nc, "l", "A100-40GB", big, one, 1, -1, -1, &d), MS_EEXIST);
    assert_int_equal(ms_nodecfg_observe(nc, &o, &d), MS_EINVAL);
    assert_int_equal(ms_nodecfg_demand(nc, "A100-40GB", 9, 1), MS_EINVAL);
    assert_int_equal(ms_nodecfg_demand(nc, "A100-40GB", 3, -1), MS_EINVAL);
    ms_nodecfg_destroy(nc);
    ms_nodecfg_destroy(NULL);
}

/* Nodes that are no longer observed are forgotten; many nodes stay cheap to
 * find (the name map survives growth and removal). */
static void test_many_nodes_and_forget(void **st)
{
    ms_nodecfg_cfg_t c = quick_cfg();
    ms_nodecfg_t *nc;
    ms_nodecfg_node_info_t inf;
    const ms_nodecfg_act_t *a;
    char name[32];
    int i, n;

    (void)st;
    assert_int_equal(ms_nodecfg_create(&c, &nc, NULL), MS_OK);
    for (i = 0; i < 5000; i++) {
        ms_nodecfg_obs_t o = { name, "A100-40GB", 8, "x", "success", false, false, 0 };
        snprintf(name, sizeof(name), "node-%d", i);
        assert_int_equal(ms_nodecfg_observe(nc, &o, NULL), MS_OK);
    }
    assert_int_equal(ms_nodecfg_step(nc, 100, &a, &n), MS_OK);
    assert_int_equal(n, 0);
    assert_int_equal(ms_nodecfg_node(nc, "node-4999", &inf), MS_OK);
    for (i = 0; i < 5000; i += 2) {
        ms_nodecfg_obs_t o = { name, "A100-40GB", 8, "x", "success", false, false, 0 };
        snprintf(name, sizeof(name), "node-%d", i);
        assert_int_equal(ms_nodecfg_observe(nc, &o, NULL), MS_OK);
    }
    assert_int_equal(ms_nodecfg_step(nc, 200, &a, &n), MS_OK);
    for (i = 0; i < 5000; i++) {   /* every kept node by name, none of the others */
        snprintf(name, sizeof(name), "node-%d", i);
        assert_int_equal(ms_nodecfg_node(nc, name, &inf), i % 2 == 0 ? MS_OK : MS_ENOENT);
    }
    for (i = 0; i < 5000; i++) {   /* all of them again: the forgotten come back */
        ms_nodecfg_obs_t o = { name, "A100-40GB", 8, "x", "success", false, false, 0 };
        snprintf(name, sizeof(name), "node-%d", i);
        assert_int_equal(ms_nodecfg_observe(nc, &o, NULL), MS_OK);
    }
    assert_int_equal(ms_nodecfg_step(nc, 300, &a, &n), MS_OK);
    for (i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "node-%d", i);
        assert_int_equal(ms_nodecfg_node(nc, name, &inf), MS_OK);
    }
    ms_nodecfg_destroy(nc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demand_switches_one_node),
        cmocka_unit_test(test_settle_counts_free_capacity),
        cmocka_unit_test(test_no_gain_no_switch),
        cmocka_unit_test(test_drain_timeout_never_evicts),
        cmocka_unit_test(test_failure_reverts),
        cmocka_unit_test(test_apply_timeout),
        cmocka_unit_test(test_time_window),
        cmocka_unit_test(test_restart_and_admin_cordon),
        cmocka_unit_test(test_no_flapping),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_many_nodes_and_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
