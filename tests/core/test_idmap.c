/* test_idmap.c - the id map that grows without a pause (src/core/idmap.h):
 * it agrees with a plain list of the ids under a long random mix of puts,
 * deletions and lookups across many growths; no put or del moves more than
 * a few old cells, and every move is done before the next growth; a table
 * that ids come and go through keeps its size; a put that cannot
 * allocate leaves the map as it was; and after a reserve the next put
 * allocates nothing, so it cannot fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/idmap.h"

#define MAXV 60000

typedef struct {
    char id[MAXV][16];
    int live[MAXV];               /* 1 when value i is in the map */
    long allocs, fail_at;         /* the fail_at-th allocation fails (0 never) */
} table_t;

static const char *key_of(const void *ctx, int32_t v)
{
    return ((const table_t *)ctx)->id[v];
}

static void *alloc_hook(void *ctx, void *p, size_t n)
{
    table_t *t = ctx;

    if (n == 0) {
        free(p);
        return NULL;
    }
    if (++t->allocs == t->fail_at)
        return NULL;
    return realloc(p, n);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Every value agrees with the map (absent ones too). */
static void check_all(const ms__idmap_t *m, const table_t *t, int n)
{
    int i;

    for (i = 0; i < n; i++)
        assert_int_equal(ms__idmap_find(m, t->id[i]), t->live[i] ? i : -1);
}

static void test_agrees_with_a_list(void **state)
{
    table_t *t = calloc(1, sizeof(*t));
    ms__idmap_t m;
    uint64_t seed = 88172645463325252ull;
    int i, op, nlive = 0, grows = 0;
    uint32_t cap = 0;

    (void)state;
    assert_non_null(t);
    for (i = 0; i < MAXV; i++)
        snprintf(t->id[i], sizeof(t->id[i]), "job-%d", i);
    ms__idmap_init(&m, key_of, t, NULL, NULL);
    for (op = 0; op < 400000; op++) {
        int v = (int)(rnd(&seed) % MAXV);
        uint32_t moved0 = m.moved, old0 = m.oldcap;

        /* mostly puts while small, then an even mix: the map grows, shrinks
         * back to tombstones and is regrown in place */
        if (!t->live[v] && (rnd(&seed) % 4 != 0 || nlive < 1000)) {
            if (cap != 0 && (m.used + 1) * 2 > m.cap)
                assert_true(m.old == NULL || m.oldcap - m.moved <= 16);   /* moves done in time */
            assert_int_equal(ms__idmap_put(&m, v), 0);
            t->live[v] = 1;
            nlive++;
        } else if (t->live[v]) {
            ms__idmap_del(&m, v);
            t->live[v] = 0;
            nlive--;
        }
        if (m.cap != cap) {
            if (cap != 0)
                assert_non_null(m.old);   /* moving: lookups must see both tables */
            grows++;
            cap = m.cap;
            check_all(&m, t, MAXV);
        } else if (m.old != NULL && old0 == m.oldcap)
            assert_true(m.moved - moved0 <= 16);   /* a few cells a call */
        assert_int_equal(m.live, (uint32_t)nlive);
        assert_int_equal(ms__idmap_find(&m, t->id[v]), t->live[v] ? v : -1);
        if (op % 50000 == 0)
            check_all(&m, t, MAXV);
    }
    check_all(&m, t, MAXV);
    assert_true(grows >= 6);   /* 1,024 cells to 65,536 and more */
    assert_int_equal(ms__idmap_find(&m, "no-such-job"), -1);
    ms__idmap_fini(&m);
    free(t);
}

/* Ids that come and go through a map of 100 do not make it grow. */
static void test_churn_keeps_its_size(void **state)
{
    table_t *t = calloc(1, sizeof(*t));
    ms__idmap_t m;
    int i;

    (void)state;
    assert_non_null(t);
    for (i = 0; i < MAXV; i++)
        snprintf(t->id[i], sizeof(t->id[i]), "pod-%d", i);
    ms__idmap_init(&m, key_of, t, NULL, NULL);
    for (i = 0; i < MAXV; i++) {
        assert_int_equal(ms__idmap_put(&m, i), 0);
        if (i >= 100)
            ms__idmap_del(&m, i - 100);
    }
    assert_int_equal(m.live, 100);
    assert_true(m.cap <= 1024);
    for (i = 0; i < MAXV; i++)
        assert_int_equal(ms__idmap_find(&m, t->id[i]), i >= MAXV - 100 ? i : -1);
    ms__idmap_fini(&m);
    free(t);
}

/* A put whose growth cannot allocate fails and changes nothing. */
static void test_out_of_memory(void **state)
{
    table_t *t = calloc(1, sizeof(*t));
    ms__idmap_t m;
    int i, failed = 0;

    (void)state;
    assert_non_null(t);
    for (i = 0; i < MAXV; i++)
        snprintf(t->id[i], sizeof(t->id[i]), "x%d", i);
    ms__idmap_init(&m, key_of, t, alloc_hook, t);
    t->fail_at = 3;   /* the third table: the growth to 4,096 cells */
    for (i = 0; i < 3000; i++) {
        if (ms__idmap_put(&m, i) != 0) {
            failed++;
            continue;
        }
        t->live[i] = 1;
    }
    assert_int_equal(failed, 1);
    check_all(&m, t, 3000);
    ms__idmap_fini(&m);
    free(t);
}

/* Through puts and deletions across growths (moves in progress,
 * tombstones): after ms__idmap_reserve the put allocates nothing; a
 * reserve that cannot allocate changes nothing. */
static void test_reserve(void **state)
{
    table_t *t = calloc(1, sizeof(*t));
    ms__idmap_t m;
    uint64_t seed = 99;
    int i, n = 0, reserves_failed = 0;

    (void)state;
    assert_non_null(t);
    for (i = 0; i < MAXV; i++)
        snprintf(t->id[i], sizeof(t->id[i]), "r%d", i);
    ms__idmap_init(&m, key_of, t, alloc_hook, t);
    while (n < MAXV) {
        long before;

        if (n > 0 && rnd(&seed) % 4 == 0) {   /* delete a random live value */
            int v = (int)(rnd(&seed) % (uint64_t)n);

            ms__idmap_del(&m, v);
            t->live[v] = 0;
            continue;
        }
        t->fail_at = t->allocs + 1;   /* first a reserve whose growth fails */
        if (ms__idmap_reserve(&m) != 0) {
            reserves_failed++;
            check_all(&m, t, n);
        }
        t->fail_at = 0;
        assert_int_equal(ms__idmap_reserve(&m), 0);
        before = t->allocs;
        t->fail_at = t->allocs + 1;   /* any allocation now fails */
        assert_int_equal(ms__idmap_put(&m, n), 0);
        assert_int_equal(t->allocs, before);
        t->live[n++] = 1;
    }
    assert_true(reserves_failed > 0);
    t->fail_at = 0;
    check_all(&m, t, n);
    ms__idmap_fini(&m);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agrees_with_a_list),
        cmocka_unit_test(test_churn_keeps_its_size),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_reserve),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
