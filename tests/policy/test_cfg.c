/* test_cfg.c - policy options by name: values land in the right field,
 * out-of-range values and unknown names are errors that name the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/policy.h"

static void test_set_by_name(void **state)
{
    ms_policy_cfg_t c;
    ms_diag_t d;

    (void)state;
    ms_policy_cfg_defaults(&c);
    assert_int_equal(ms_policy_cfg_set(&c, "lb-threshold", "0.25", &d), MS_OK);
    assert_true(c.lb_threshold == 0.25);
    assert_int_equal(ms_policy_cfg_set(&c, "no-migration", NULL, &d), MS_OK);
    assert_false(c.migration);
    assert_int_equal(ms_policy_cfg_set(&c, "migration", "on", &d), MS_OK);
    assert_true(c.migration);
    assert_int_equal(ms_policy_cfg_set(&c, "balance", "false", &d), MS_OK);
    assert_false(c.balance);
    assert_int_equal(ms_policy_cfg_set(&c, "max-moves", "7", &d), MS_OK);
    assert_int_equal(c.max_moves, 7);
    assert_int_equal(ms_policy_cfg_set(&c, "replicas", "3", &d), MS_OK);
    assert_int_equal(c.replicas, 3);
    assert_int_equal(ms_policy_cfg_set(&c, "static-layout", "7g;4g+3g", &d), MS_OK);
    assert_string_equal(c.static_layout, "7g;4g+3g");
    assert_int_equal(ms_policy_cfg_set(&c, "seed", "18446744073709551615", &d), MS_OK);
    assert_true(c.seed == UINT64_MAX);
}

static void test_errors_name_the_option(void **state)
{
    ms_policy_cfg_t c;
    ms_diag_t d;

    (void)state;
    ms_policy_cfg_defaults(&c);
    assert_int_equal(ms_policy_cfg_set(&c, "lb-threshold", "1.5", &d), MS_ERANGE);
    assert_string_equal(d.field, "lb-threshold");
    assert_non_null(strstr(d.msg, "[0, 1]"));
    assert_true(c.lb_threshold == 0.4);   /* unchanged */
    assert_int_equal(ms_policy_cfg_set(&c, "lb-threshold", "nan", &d), MS_ERANGE);
    assert_int_equal(ms_policy_cfg_set(&c, "lb-threshold", "0.3x", &d), MS_ERANGE);
    assert_int_equal(ms_policy_cfg_set(&c, "replicas", "17", &d), MS_ERANGE);
    assert_int_equal(ms_policy_cfg_set(&c, "max-moves", "99999999999999999999", &d), MS_ERANGE);
    assert_int_equal(ms_policy_cfg_set(&c, "seed", "-1", &d), MS_ERANGE);
    assert_int_equal(ms_policy_cfg_set(&c, "balance", "maybe", &d), MS_EINVAL);
    assert_int_equal(ms_policy_cfg_set(&c, "no-replicas", NULL, &d), MS_ENOENT);
    assert_int_equal(ms_policy_cfg_set(&c, "nope", "1", &d), MS_ENOENT);
    assert_non_null(strstr(d.msg, "nope"));
    assert_int_equal(ms_policy_cfg_set(&c, "max-moves", NULL, &d), MS_EINVAL);
    assert_non_null(ms_policy_cfg_option(0, NULL));
    assert_null(ms_policy_cfg_option(1000, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_by_name),
        cmocka_unit_test(test_errors_name_the_option),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
