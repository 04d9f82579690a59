/* test_ext_pdb.c - ext_pdb.c: which victims of a pod preemption their
 * PodDisruptionBudgets cannot give up together (docs/kubernetes.md,
 * "Preemption"), from API objects as the API server writes them:
 *   - selectors as policy/v1 reads them: matchLabels, the four operators of
 *     matchExpressions, both ANDed; an empty selector matches every pod, a
 *     missing one none;
 *   - a budget gives at most status.disruptionsAllowed of the set's pods
 *     (the first ones), none while its status lags its generation; the
 *     rest are refused, each named by its budget; victims no budget covers,
 *     or whose labels are unknown, are never refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "service/extender_int.h"

static json_t *js(const char *text)
{
    json_error_t err;
    json_t *o = json_loads(text, JSON_DECODE_ANY, &err);

    if (o == NULL)
        fail_msg("bad JSON in the test: %s: %s", text, err.text);
    return o;
}

static bool matches(const char *sel, const char *labels)
{
    json_t *s = js(sel), *l = js(labels);
    bool m = svc_ext_selector_matches(s, l);

    json_decref(s);
    json_decref(l);
    return m;
}

static void test_selectors(void **state)
{
    (void)state;
    assert_true(matches("{}", "{\"app\":\"x\"}"));
    assert_true(matches("{}", "{}"));
    assert_false(matches("null", "{\"app\":\"x\"}"));
    assert_true(matches("{\"matchLabels\":{\"app\":\"g\"}}", "{\"app\":\"g\",\"t\":\"1\"}"));
    assert_false(matches("{\"matchLabels\":{\"app\":\"g\"}}", "{\"app\":\"f\"}"));
    assert_false(matches("{\"matchLabels\":{\"app\":\"g\",\"t\":\"2\"}}", "{\"app\":\"g\",\"t\":\"1\"}"));
    assert_true(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"a\",\"g\"]}]}",
                        "{\"app\":\"g\"}"));
    assert_false(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"a\"]}]}",
                         "{\"app\":\"g\"}"));
    assert_false(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\",\"values\":[\"a\"]}]}", "{}"));
    assert_true(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}", "{}"));
    assert_false(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"NotIn\",\"values\":[\"a\"]}]}",
                         "{\"app\":\"a\"}"));
    assert_true(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}", "{\"app\":\"\"}"));
    assert_false(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]}", "{}"));
    assert_true(matches("{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"DoesNotExist\"}]}", "{}"));
    /* both ANDed */
    assert_false(matches("{\"matchLabels\":{\"app\":\"g\"},\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\"}]}",
                         "{\"app\":\"g\"}"));
    assert_true(matches("{\"matchLabels\":{\"app\":\"g\"},\"matchExpressions\":[{\"key\":\"t\",\"operator\":\"Exists\"}]}",
                        "{\"app\":\"g\",\"t\":\"x\"}"));
}

/* A budget over app=VALUE allowing `allowed` now, its status for
 * generation `seen` of generation `gen`. */
static char *pdb(char *buf, size_t n, const char *name, const char *value, int allowed, int gen, int seen)
{
    snprintf(buf, n,
             "{\"metadata\":{\"name\":\"%s\",\"generation\":%d},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"%s\"}}},"
             "\"status\":{\"observedGeneration\":%d,\"disruptionsAllowed\":%d}}",
             name, gen, value, seen, allowed);
    return buf;
}

static int refuse(const char *items, const char *const *labels, int n, bool *out, const char **by)
{
    json_t *it = js(items), *l[8];
    int i, r;

    for (i = 0; i < n; i++) {
        l[i] = labels[i] != NULL ? js(labels[i]) : NULL;
        out[i] = false;
        by[i] = NULL;
    }
    r = svc_ext_pdb_refuse(it, l, n, out, by);
    for (i = 0; i < n; i++) {
        static char names[8][64];

        json_decref(l[i]);
        if (by[i] != NULL) {   /* the name lives in the items: a copy */
            snprintf(names[i], sizeof(names[i]), "%s", by[i]);
            by[i] = names[i];
        }
    }
    json_decref(it);
    return r;
}

static void test_counts(void **state)
{
    static const char *const V[] = { "{\"app\":\"f\"}", "{\"app\":\"g\"}", "{\"app\":\"g\"}", "{\"app\":\"g\"}", NULL };
    char a[512], b[512], items[1200];
    bool out[8];
    const char *by[8];

    (void)state;
    /* g allows 1 of the 3 g victims: the 2nd and 3rd refused, f and the
     * unknown one never */
    snprintf(items, sizeof(items), "[%s]", pdb(a, sizeof(a), "guard", "g", 1, 2, 2));
    assert_int_equal(refuse(items, V, 5, out, by), 2);
    assert_false(out[0]);
    assert_false(out[1]);
    assert_true(out[2] && out[3]);
    assert_false(out[4]);
    assert_string_equal(by[2], "guard");
    /* it allows 3: none refused */
    snprintf(items, sizeof(items), "[%s]", pdb(a, sizeof(a), "guard", "g", 3, 2, 2));
    assert_int_equal(refuse(items, V, 5, out, by), 0);
    /* allows 3 but its status is for an older generation: all 3 refused */
    snprintf(items, sizeof(items), "[%s]", pdb(a, sizeof(a), "guard", "g", 3, 3, 2));
    assert_int_equal(refuse(items, V, 5, out, by), 3);
    /* two budgets: f's allows none */
    snprintf(items, sizeof(items), "[%s,%s]", pdb(a, sizeof(a), "guard", "g", 5, 1, 1),
             pdb(b, sizeof(b), "fb", "f", 0, 1, 1));
    assert_int_equal(refuse(items, V, 5, out, by), 1);
    assert_true(out[0]);
    assert_string_equal(by[0], "fb");
    /* no budgets */
    assert_int_equal(refuse("[]", V, 5, out, by), 0);
}

int main(void)
{
    const struct CMUnitTest t[] = {
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_counts),
    };

    return cmocka_run_group_tests(t, NULL, NULL);
}
