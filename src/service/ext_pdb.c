/* ext_pdb.c - any thread (pure): which victims of a preemption their
 * PodDisruptionBudgets cannot give up together (docs/kubernetes.md,
 * "Preemption"). The Eviction API checks one eviction at a time against
 * the budget as it stands, so a dry run of each passes for a set that
 * takes three pods from a budget that allows one; counted here per budget
 * before any eviction, such a set is refused whole.
 *
 * A budget covers a pod of its namespace whose labels its selector
 * matches (policy/v1: an empty selector matches every pod, a missing one
 * none; matchLabels and matchExpressions with In, NotIn, Exists,
 * DoesNotExist, all ANDed). It allows status.disruptionsAllowed evictions
 * now; a budget whose status the disruption controller has not computed
 * for its current generation allows none (the API server refuses then).
 */
#include <string.h>

#include "service/extender_int.h"

static bool in_values(json_t *values, const char *v)
{
    json_t *x;
    size_t i;

    json_array_foreach(values, i, x)
        if (json_is_string(x) && v != NULL && strcmp(json_string_value(x), v) == 0)
            return true;
    return false;
}

static bool expr_matches(json_t *e, json_t *labels)
{
    const char *key = json_string_value(json_object_get(e, "key"));
    const char *op = json_string_value(json_object_get(e, "operator"));
    json_t *values = json_object_get(e, "values");
    const char *v;

    if (key == NULL || op == NULL)
        return false;   /* the API server validates selectors: not seen */
    v = json_string_value(json_object_get(labels, key));
    if (strcmp(op, "In") == 0)
        return v != NULL && in_values(values, v);
    if (strcmp(op, "NotIn") == 0)
        return v == NULL || !in_values(values, v);
    if (strcmp(op, "Exists") == 0)
        return v != NULL;
    if (strcmp(op, "DoesNotExist") == 0)
        return v == NULL;
    return false;
}

bool svc_ext_selector_matches(json_t *sel, json_t *labels)
{
    json_t *ml, *me, *x;
    const char *k;
    size_t i;

    if (!json_is_object(sel))
        return false;   /* a budget without a selector covers no pod */
    ml = json_object_get(sel, "matchLabels");
    json_object_foreach(ml, k, x) {
        const char *v = json_string_value(json_object_get(labels, k));

        if (v == NULL || !json_is_string(x) || strcmp(v, json_string_value(x)) != 0)
            return false;
    }
    me = json_object_get(sel, "matchExpressions");
    json_array_foreach(me, i, x)
        if (!expr_matches(x, labels))
            return false;
    return true;
}

/* What a budget allows now (0 when its status is not computed for its
 * current generation). */
static long allowed(json_t *pdb)
{
    json_t *st = json_object_get(pdb, "status");
    json_int_t gen = json_integer_value(json_object_get(json_object_get(pdb, "metadata"), "generation"));
    json_int_t seen = json_integer_value(json_object_get(st, "observedGeneration"));
    json_int_t a = json_integer_value(json_object_get(st, "disruptionsAllowed"));

    return seen < gen || a < 0 ? 0 : (long)a;
}

int svc_ext_pdb_refuse(json_t *items, json_t *const *labels, int n, bool *refuse, const char **by)
{
    json_t *pdb;
    size_t k;
    int i, nref = 0;

    json_array_foreach(items, k, pdb) {
        json_t *sel = json_object_get(json_object_get(pdb, "spec"), "selector");
        const char *name = json_string_value(json_object_get(json_object_get(pdb, "metadata"), "name"));
        long left = allowed(pdb);

        for (i = 0; i < n; i++) {
            if (labels[i] == NULL || !svc_ext_selector_matches(sel, labels[i]))
                continue;
            if (left > 0) {
                left--;   /* this one the budget can give */
                continue;
            }
            if (!refuse[i]) {
                refuse[i] = true;
                nref++;
                if (by != NULL)
                    by[i] = name != NULL ? name : "";
            }
        }
    }
    return nref;
}
