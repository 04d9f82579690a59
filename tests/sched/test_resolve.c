/* test_resolve.c - requests that name a profile name one that exists; sizes
 * round up and say to what (issue 20, defect 19: "5g.25gb", a profile no
 * model has, was accepted and placed as 7g.40gb).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/sched.h"

typedef struct world {
    ms_cluster_spec_t *cs;
    ms_sched_t *s;
} world_t;

static void world_make(world_t *w, const char *const *nodes, int n)
{
    ms_sched_cfg_t cfg;
    ms_diag_t d;
    int i;

    assert_int_equal(ms_cluster_spec_create(&w->cs), MS_OK);
    for (i = 0; i < n; i++)
        assert_int_equal(ms_cluster_spec_add(w->cs, nodes[i], 0, &d), MS_OK);
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("fa+");
    cfg.nodes = ms_cluster_spec_nodes(w->cs);
    cfg.nnodes = ms_cluster_spec_nnodes(w->cs);
    assert_int_equal(ms_sched_create(&cfg, 0.0, &w->s, &d), MS_OK);
}

static void world_free(world_t *w)
{
    ms_sched_destroy(w->s);
    ms_cluster_spec_destroy(w->cs);
}

/* Every entry point answers st for q, with the diagnostic on `field`
 * containing each of the words, and keeps nothing. */
static void refused(world_t *w, const ms_sched_req_t *q0, ms_status_t st, const char *field,
                    const char *const *words, int nwords)
{
    ms_sched_req_t q = *q0;
    ms_sched_resolution_t r;
    ms_diag_t d;
    int32_t slot = -1, before = ms_sched_slots(w->s);
    int i, k, scores[1];
    const char *node = ms_sched_node(w->s, 0)->name;

    for (k = 0; k < 4; k++) {
        ms_status_t got;

        ms_diag_clear(&d);
        q.id = "x";
        switch (k) {
        case 0: got = ms_sched_resolve_req(w->s, &q, &r, &d); break;
        case 1: got = ms_sched_submit(w->s, &q, 1.0, &slot, &d); break;
        case 2: got = ms_sched_reserve(w->s, &q, &node, 1, 10.0, 1.0, &slot, &d); break;
        default: got = ms_sched_node_scores(w->s, &q, &node, 1, scores, &d); break;
        }
        if (got != st)
            fail_msg("%s: call %d answers %s, want %s (%s)", q.profile != NULL ? q.profile : "?", k,
                     ms_strerror(got), ms_strerror(st), d.msg);
        assert_string_equal(d.field, field);
        for (i = 0; i < nwords; i++)
            if (strstr(d.msg, words[i]) == NULL)
                fail_msg("'%s' not in \"%s\"", words[i], d.msg);
    }
    assert_int_equal(ms_sched_slots(w->s), before);
    assert_int_equal(ms_sched_find(w->s, "x"), -1);
}

static void test_unknown_product_name(void **state)
{
    static const char *const a100[] = { "a=2xA100-40GB" };
    static const char *const h100[] = { "h=2xH100-80GB" };
    static const char *const words[] = { "5g.25gb", "4g.20gb (A100-40GB)", "7g.40gb (A100-40GB)" };
    static const char *const words_h[] = { "3g.20gb", "3g.40gb (H100-80GB)" };
    world_t w;
    ms_sched_req_t q;

    (void)state;
    world_make(&w, a100, 1);
    memset(&q, 0, sizeof(q));
    q.profile = "5g.25gb";   /* no model has it */
    refused(&w, &q, MS_ENOENT, "profile", words, 3);
    q.profile = "banana";    /* not a profile at all */
    refused(&w, &q, MS_EINVAL, "profile", (const char *const[]){ "banana", "3g.20gb" }, 2);
    q.profile = "2g.20gb";   /* an H100's (and A100-80GB's): not on this cluster */
    refused(&w, &q, MS_ENOENT, "profile", (const char *const[]){ "2g.20gb", "2g.10gb" }, 2);
    world_free(&w);

    /* an A100's product name on a cluster of H100s only */
    world_make(&w, h100, 1);
    q.profile = "3g.20gb";
    refused(&w, &q, MS_ENOENT, "profile", words_h, 2);
    world_free(&w);
}

static void expect(world_t *w, const ms_sched_req_t *q, const char *model, const char *prof,
                   bool rounded)
{
    ms_sched_resolution_t r;
    ms_diag_t d;
    int i;

    if (ms_sched_resolve_req(w->s, q, &r, &d) != MS_OK)
        fail_msg("%s: %s", q->profile != NULL ? q->profile : "mem_gb", d.msg);
    for (i = 0; i < r.n; i++)
        if (strcmp(r.on[i].model, model) == 0) {
            assert_string_equal(r.on[i].profile, prof);
            assert_int_equal(r.on[i].rounded, rounded);
            return;
        }
    fail_msg("no line for %s", model);
}

static void test_sizes_round_up(void **state)
{
    static const char *const nodes[] = { "a=1xA100-40GB", "h=1xH100-80GB", "t=1xA30-24GB" };
    world_t w;
    ms_sched_req_t q;
    int32_t slot;
    ms_diag_t d;
    ms_sched_job_info_t ji;
    const ms_geom_t *g;

    (void)state;
    world_make(&w, nodes, 3);
    memset(&q, 0, sizeof(q));
    q.profile = "3g.20gb";   /* the A100's own; on the H100 by memory and share */
    expect(&w, &q, "A100-40GB", "3g.20gb", false);
    expect(&w, &q, "H100-80GB", "3g.40gb", true);
    q.profile = "3g";        /* a size: the A30 has no 3g, so 4g */
    expect(&w, &q, "A100-40GB", "3g.20gb", false);
    expect(&w, &q, "A30", "4g.24gb", true);
    q.profile = NULL;
    q.mem_gb = 10;           /* exactly a 2g.10gb on the A100, a 1g.10gb on the H100 */
    expect(&w, &q, "A100-40GB", "2g.10gb", false);
    expect(&w, &q, "H100-80GB", "1g.10gb", false);
    q.mem_gb = 12;           /* rounds up */
    expect(&w, &q, "A100-40GB", "3g.20gb", true);
    expect(&w, &q, "H100-80GB", "2g.20gb", true);
    /* and what is resolved is what runs */
    q.model = "A100-40GB";
    assert_int_equal(ms_sched_submit(w.s, &q, 0.0, &slot, &d), MS_OK);
    assert_int_equal(ms_sched_job(w.s, slot, &ji), MS_OK);
    ms_sched_gpu(w.s, ji.inst[0].gpu, &g);
    assert_string_equal(ms_geom_profile(g, ji.inst[0].prof)->name, "3g.20gb");
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_product_name),
        cmocka_unit_test(test_sizes_round_up),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
