/* test_cluster.c - plans applied to clusters; the index agrees with a scan. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "migsched/frag.h"
#include "migsched/plan.h"
#include "migsched/rank.h"

#include "core/index.h"

typedef struct fixture {
    ms_geom_t *g;
    ms_cluster_t *bucket, *scan;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    ms_cluster_cfg_t cfg = {0};

    assert_non_null(f);
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &f->g), MS_OK);
    cfg.geom = f->g;
    cfg.ngpus = 300;          /* more than one summary word of 64 */
    cfg.index_mode = MS_INDEX_BUCKET;
    assert_int_equal(ms_cluster_create(&cfg, &f->bucket), MS_OK);
    cfg.index_mode = MS_INDEX_SCAN;
    assert_int_equal(ms_cluster_create(&cfg, &f->scan), MS_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    ms_cluster_destroy(f->bucket);
    ms_cluster_destroy(f->scan);
    ms_geom_destroy(f->g);
    free(f);
    return 0;
}

static void test_apply_and_invalid(void **state)
{
    fixture_t *f = *state;
    ms_plan_t p;
    int k3 = ms_geom_profile_find(f->g, "3g"), k4 = ms_geom_profile_find(f->g, "4g");
    int failed = -1;

    ms_plan_init(&p);
    assert_int_equal(ms_plan_add_create(&p, 5, k4, 0), MS_OK);
    assert_int_equal(ms_plan_add_start(&p, 7, 5, 0, k4), MS_OK);
    assert_int_equal(ms_cluster_apply(f->bucket, &p, &failed), MS_OK);
    assert_int_equal(f->bucket->gpus[5].busy, 4);
    assert_int_equal(ms_cluster_check(f->bucket), MS_OK);
    /* overlapping create fails and names the op */
    ms_plan_clear(&p);
    assert_int_equal(ms_plan_add_create(&p, 5, k3, 4), MS_OK);
    assert_int_equal(ms_plan_add_create(&p, 5, k3, 0), MS_OK);
    assert_int_equal(ms_cluster_apply(f->bucket, &p, &failed), MS_ESTATE);
    assert_int_equal(failed, 1);
    /* destroying a busy GI is refused */
    ms_plan_clear(&p);
    assert_int_equal(ms_plan_add_destroy(&p, 5, 0), MS_OK);
    assert_int_equal(ms_cluster_apply(f->bucket, &p, NULL), MS_ESTATE);
    /* mbb move 4g@0 job -> GPU 6 then bbm back inside GPU 6 */
    ms_plan_clear(&p);
    assert_int_equal(ms_plan_add_move_mbb(&p, 7, 5, 0, 6, 0, k4), MS_OK);
    assert_int_equal(ms_cluster_apply(f->bucket, &p, NULL), MS_OK);
    assert_int_equal(f->bucket->gpus[5].ninst, 1);      /* the 3g@4 left above */
    assert_int_equal(f->bucket->gpus[6].busy, 4);
    ms_plan_clear(&p);
    assert_int_equal(ms_plan_add_move_bbm(&p, 7, 6, 0, 4, k3), MS_OK);
    assert_int_equal(ms_cluster_apply(f->bucket, &p, NULL), MS_OK);
    assert_int_equal(f->bucket->gpus[6].inst[0].start, 4);
    assert_int_equal(f->bucket->gpus[6].busy, 3);
    assert_int_equal(ms_cluster_check(f->bucket), MS_OK);
    ms_plan_fini(&p);
}

static uint64_t key_frag(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    (void)ctx;
    return ms_rank_score_key(ms_frag_cost(g, ms_state_place(g, s, k, st), NULL));
}

static uint64_t key_first(void *ctx, const ms_geom_t *g, ms_state_t s, int k, int st)
{
    (void)ctx; (void)g; (void)s; (void)k; (void)st;
    return 0;
}

/* Random creates/destroys applied to both clusters; the bucket search and
 * the scan always agree, and invariants hold. The index's count of GPUs
 * with room for a profile is zero exactly when the first-fit rank (every
 * candidate) finds nothing, and the run reaches that for some profile. */
static void test_index_matches_scan(void **state)
{
    fixture_t *f = *state;
    ms_rank_t ranks[2][MS_MAX_PROFILES] = {{{0}}};
    ms_plan_t p;
    uint64_t x = 12345;
    int step, k, np = ms_geom_nprofiles(f->g), full = 0, few = 0, many = 0;

    ms_plan_init(&p);
    for (k = 0; k < np; k++) {
        assert_int_equal(ms_rank_build(&ranks[0][k], f->g, k, key_frag, NULL), MS_OK);
        assert_int_equal(ms_rank_build(&ranks[1][k], f->g, k, key_first, NULL), MS_OK);
    }
    for (step = 0; step < 4000; step++) {
        int r, gb, sb, gs, ss;
        ms_status_t a, b;

        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        k = (int)((x >> 33) % (uint64_t)np);
        r = (int)((x >> 20) & 1);
        /* the bucket search by the states in use (few of them against the
         * candidates) and by the walk of the candidates: both are met */
        if ((size_t)f->bucket->index->nused * (size_t)ranks[r][k].width < (size_t)ranks[r][k].n)
            few++;
        else
            many++;
        a = ms_rank_find(&ranks[r][k], f->bucket, &gb, &sb);
        b = ms_rank_find(&ranks[r][k], f->scan, &gs, &ss);
        assert_int_equal(a, b);
        if (r == 1)
            assert_int_equal(a == MS_ENOFIT, f->bucket->index->nfit[k] == 0);
        full += f->bucket->index->nfit[k] == 0;
        if (a == MS_OK) {
            assert_int_equal(gb, gs);
            assert_int_equal(sb, ss);
        }
        ms_plan_clear(&p);
        if (a == MS_OK && ((x >> 40) % 3) != 0) {
            assert_int_equal(ms_plan_add_create(&p, gb, k, sb), MS_OK);
        } else {
            /* destroy some instance somewhere */
            int g = (int)((x >> 12) % 300);
            if (f->bucket->gpus[g].ninst > 0)
                assert_int_equal(ms_plan_add_destroy(&p, g, f->bucket->gpus[g].inst[0].start), MS_OK);
        }
        assert_int_equal(ms_cluster_apply(f->bucket, &p, NULL), MS_OK);
        assert_int_equal(ms_cluster_apply(f->scan, &p, NULL), MS_OK);
        if (step % 500 == 0) {
            assert_int_equal(ms_cluster_check(f->bucket), MS_OK);
            assert_int_equal(ms_cluster_check(f->scan), MS_OK);
        }
    }
    assert_true(full > 0);
    assert_true(few > 0 && many > 0);
    for (k = 0; k < np; k++) {
        ms_rank_fini(&ranks[0][k]);
        ms_rank_fini(&ranks[1][k]);
    }
    ms_plan_fini(&p);
}

static void test_timeslice(void **state)
{
    fixture_t *f = *state;
    ms_cluster_cfg_t cfg = {0};
    ms_cluster_t *c;
    ms_plan_t p;
    ms_op_t stop = {0};

    cfg.geom = f->g;
    cfg.ngpus = 2;
    cfg.share = MS_SHARE_TIMESLICE;
    cfg.replicas = 2;
    assert_int_equal(ms_cluster_create(&cfg, &c), MS_OK);
    ms_plan_init(&p);
    assert_int_equal(ms_plan_add_start(&p, 1, 0, -1, 0), MS_OK);
    assert_int_equal(ms_plan_add_start(&p, 2, 0, -1, 4), MS_OK);
    assert_int_equal(ms_cluster_apply(c, &p, NULL), MS_OK);
    assert_int_equal(ms_cluster_apply(c, &p, NULL), MS_ESTATE);  /* replicas full */
    stop.kind = MS_OP_STOP;
    stop.job = 1;
    stop.gpu = 0;
    stop.start = -1;
    assert_int_equal(ms_cluster_apply_op(c, &stop), MS_OK);
    assert_int_equal(c->gpus[0].ninst, 1);
    assert_int_equal(ms_cluster_check(c), MS_OK);
    ms_plan_fini(&p);
    ms_cluster_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_apply_and_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_matches_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeslice, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
