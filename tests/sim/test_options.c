/* test_options.c - the one option table (options.h): every option lands
 * in its field, its range's ends are in and just past them out, numbers
 * are number.h's, an error changes nothing and names the option, a face
 * without a scope gets an error that says so, and help and ranges exist
 * for every row. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "migsched/options.h"

static ms_sim_cfg_t fresh(void)
{
    ms_sim_cfg_t c;

    ms_sim_cfg_defaults(&c);
    return c;
}

/* Every row: help and range text, a value at each end of a numeric range
 * accepted, one just outside rejected with the option named and the
 * configuration unchanged, hexadecimal and spaces rejected. */
static void test_every_row(void **state)
{
    int i;

    (void)state;
    for (i = 0; i < ms_opt_count(); i++) {
        const ms_opt_t *o = ms_opt_get(i);
        ms_sim_cfg_t c = fresh(), before;
        ms_opt_target_t t = ms_opt_target_sim(&c);
        char lo[64], hi[64], out[64], buf[512];
        ms_diag_t d;

        assert_non_null(o->help);
        assert_non_null(o->def);
        assert_true(strlen(ms_opt_help(o, buf, sizeof(buf))) > strlen(o->name));
        assert_non_null(strstr(buf, o->name));
        assert_ptr_equal(ms_opt_find(o->name, NULL), o);
        if (o->type != MS_OPT_DOUBLE && o->type != MS_OPT_INT)
            continue;
        snprintf(lo, sizeof(lo), "%.17g", o->lo);
        snprintf(hi, sizeof(hi), "%.17g", o->hi);
        assert_int_equal(ms_opt_set(&t, o->name, lo, &d), MS_OK);
        assert_int_equal(ms_opt_set(&t, o->name, hi, &d), MS_OK);
        before = c;
        snprintf(out, sizeof(out), "%.17g", o->hi * 2 + 1);
        assert_int_equal(ms_opt_set(&t, o->name, out, &d), MS_ERANGE);
        assert_string_equal(d.field, o->name);
        assert_non_null(strstr(d.msg, "out of range"));
        assert_memory_equal(&c, &before, sizeof(c));
        snprintf(out, sizeof(out), "%.17g", o->lo - 1);
        assert_int_equal(ms_opt_set(&t, o->name, out, &d), MS_ERANGE);
        assert_int_equal(ms_opt_set(&t, o->name, "0x1", &d), MS_ERANGE);
        assert_int_equal(ms_opt_set(&t, o->name, " 1", &d), MS_ERANGE);
        assert_int_equal(ms_opt_set(&t, o->name, NULL, &d), MS_EINVAL);
        assert_memory_equal(&c, &before, sizeof(c));
    }
}

/* Values land in their fields, in every scope. */
static void test_fields(void **state)
{
    ms_sim_cfg_t c = fresh();
    ms_opt_target_t t = ms_opt_target_sim(&c);
    ms_diag_t d;

    (void)state;
    assert_int_equal(ms_opt_set(&t, "lb-threshold", "0.25", &d), MS_OK);
    assert_true(c.sched.pcfg.lb_threshold == 0.25);
    assert_int_equal(ms_opt_set(&t, "no-migration", NULL, &d), MS_OK);
    assert_false(c.sched.pcfg.migration);
    assert_int_equal(ms_opt_set(&t, "migration", "on", &d), MS_OK);
    assert_true(c.sched.pcfg.migration);
    assert_int_equal(ms_opt_set(&t, "no-balance", "false", &d), MS_OK);   /* a file's line */
    assert_true(c.sched.pcfg.balance);
    assert_int_equal(ms_opt_set(&t, "balance", "0", &d), MS_OK);
    assert_false(c.sched.pcfg.balance);
    assert_int_equal(ms_opt_set(&t, "max-moves", "7", &d), MS_OK);
    assert_int_equal(c.sched.pcfg.max_moves, 7);
    assert_int_equal(ms_opt_set(&t, "replicas", "3", &d), MS_OK);
    assert_int_equal(c.sched.pcfg.replicas, 3);
    assert_int_equal(ms_opt_set(&t, "static-layout", "7g;4g+3g", &d), MS_OK);
    assert_string_equal(c.sched.pcfg.static_layout, "7g;4g+3g");
    assert_int_equal(ms_opt_set(&t, "seed", "18446744073709551615", &d), MS_OK);
    assert_true(c.sched.pcfg.seed == UINT64_MAX);
    assert_int_equal(ms_opt_set(&t, "queue", "fifo", &d), MS_OK);
    assert_int_equal(c.sched.queue, MS_QUEUE_FIFO);
    assert_int_equal(ms_opt_set(&t, "queue", "backfill", &d), MS_OK);
    assert_int_equal(c.sched.queue, MS_QUEUE_BACKFILL);
    assert_int_equal(ms_opt_set(&t, "backfill-bound", "inf", &d), MS_OK);
    assert_true(isinf(c.sched.backfill_bound_s));
    assert_int_equal(ms_opt_set(&t, "aging-rate", "0.5", &d), MS_OK);
    assert_true(c.sched.aging_rate == 0.5);
    assert_int_equal(ms_opt_set(&t, "default-estimate", "600", &d), MS_OK);
    assert_true(c.sched.default_estimate_s == 600.0);
    assert_int_equal(ms_opt_set(&t, "index", "scan", &d), MS_OK);
    assert_int_equal(c.sched.index_mode, MS_INDEX_SCAN);
    assert_int_equal(ms_opt_set(&t, "no-estimates", NULL, &d), MS_OK);
    assert_true(c.no_estimates);
    assert_int_equal(ms_opt_set(&t, "estimates", NULL, &d), MS_OK);
    assert_false(c.no_estimates);
    assert_int_equal(ms_opt_set(&t, "estimate-seed", "18446744073709551615", &d), MS_OK);
    assert_true(c.estimate_seed == UINT64_MAX);
    assert_int_equal(ms_opt_set(&t, "create-s", "3", &d), MS_OK);
    assert_true(c.create_s == 3.0);
    /* the simulator's costs are what fa+ weighs its moves by */
    assert_int_equal(ms_opt_set(&t, "beta", "0.2", &d), MS_OK);
    assert_true(c.beta == 0.2 && c.sched.pcfg.interference_beta == 0.2);
    assert_int_equal(ms_opt_set(&t, "migrate-s", "30", &d), MS_OK);
    assert_true(c.migrate_s == 30.0 && c.sched.pcfg.migrate_cost_s == 30.0);
    assert_int_equal(ms_opt_set(&t, "migrate-cost", "5", &d), MS_OK);
    assert_true(c.migrate_s == 30.0 && c.sched.pcfg.migrate_cost_s == 5.0);
}

/* The disagreements two parsers had (issue 21) have one answer: -1 is no
 * seed, 2^64 - 1 is, and hexadecimal is not a number. */
static void test_one_answer(void **state)
{
    ms_sim_cfg_t c = fresh();
    ms_opt_target_t t = ms_opt_target_sim(&c);
    ms_diag_t d;

    (void)state;
    assert_int_equal(ms_opt_set(&t, "seed", "-1", &d), MS_ERANGE);
    assert_string_equal(d.field, "seed");
    assert_string_equal(d.msg, "'-1' is out of range; expected an integer in "
                               "[0, 18446744073709551615]");
    assert_int_equal(ms_opt_set(&t, "seed", "18446744073709551616", &d), MS_ERANGE);
    assert_int_equal(ms_opt_set(&t, "lb-threshold", "0x0.8", &d), MS_ERANGE);
    assert_string_equal(d.msg, "'0x0.8' is not a decimal number; expected a number in [0, 1]");
    assert_true(c.sched.pcfg.lb_threshold == 0.4);
    assert_int_equal(ms_opt_set(&t, "lb-threshold", "nan", &d), MS_ERANGE);
    assert_int_equal(ms_opt_set(&t, "lb-threshold", "0.3x", &d), MS_ERANGE);
    assert_int_equal(ms_opt_set(&t, "max-moves", "99999999999999999999", &d), MS_ERANGE);
    assert_int_equal(ms_opt_set(&t, "max-moves", "1.5", &d), MS_ERANGE);
    assert_non_null(strstr(d.msg, "not an integer"));
    assert_int_equal(ms_opt_set(&t, "balance", "maybe", &d), MS_ERANGE);
    assert_int_equal(ms_opt_set(&t, "queue", "lifo", &d), MS_ERANGE);
    assert_non_null(strstr(d.msg, "easy, backfill or fifo"));
    assert_int_equal(ms_opt_set(&t, "backfill-bound", "-1", &d), MS_ERANGE);
    assert_int_equal(ms_opt_set(&t, "aging-rate", "inf", &d), MS_ERANGE);   /* only the bound */
    assert_int_equal(ms_opt_set(&t, "default-estimate", "0", &d), MS_ERANGE);
}

/* Names: unknown ones, "no-" of a non-boolean, and a scope the face does
 * not have (migschedd has no simulator). */
static void test_names_and_scopes(void **state)
{
    ms_policy_cfg_t p;
    ms_sched_cfg_t q;
    ms_opt_target_t t = { &p, &q, NULL };
    ms_diag_t d;
    bool neg = false;

    (void)state;
    ms_policy_cfg_defaults(&p);
    ms_sched_cfg_defaults(&q);
    assert_int_equal(ms_opt_set(&t, "nope", "1", &d), MS_ENOENT);
    assert_string_equal(d.field, "nope");
    assert_int_equal(ms_opt_set(&t, "no-replicas", NULL, &d), MS_ENOENT);
    assert_int_equal(ms_opt_set(&t, "beta", "0.1", &d), MS_ENOENT);
    assert_non_null(strstr(d.msg, "simulator option"));
    assert_int_equal(ms_opt_set(&t, "lb-threshold", "0.2", &d), MS_OK);
    assert_true(p.lb_threshold == 0.2);
    assert_int_equal(ms_opt_set(&t, "queue", "fifo", &d), MS_OK);
    assert_int_equal(q.queue, MS_QUEUE_FIFO);
    assert_non_null(ms_opt_find("no-dynamic", &neg));
    assert_true(neg);
    assert_null(ms_opt_find("no-seed", NULL));
    assert_null(ms_opt_get(ms_opt_count()));
    assert_null(ms_opt_get(-1));
}

/* Help lines wrap at 80 columns, continuation lines at column 24. */
static void test_help_wraps(void **state)
{
    char buf[512];
    int i;

    (void)state;
    for (i = 0; i < ms_opt_count(); i++) {
        const char *p = ms_opt_help(ms_opt_get(i), buf, sizeof(buf)), *nl;
        bool first = true;

        assert_true(strlen(p) > 0 && p[strlen(p) - 1] == '\n');
        for (; *p != '\0'; p = nl + 1, first = false) {
            nl = strchr(p, '\n');
            assert_non_null(nl);
            assert_true(nl - p <= 80);
            if (!first)
                assert_true(strncmp(p, "                        ", 24) == 0 && p[24] != ' ');
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_one_answer),
        cmocka_unit_test(test_names_and_scopes),
        cmocka_unit_test(test_help_wraps),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
