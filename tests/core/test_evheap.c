/* test_evheap.c - timed events of numbered things (src/core/evheap.h):
 * under a long random mix of sets (new and moved), deletions and pops it
 * agrees with a plain list of (time, seq) per id: every pop is the
 * earliest, equal times go to the id set first, an id is in at most once,
 * a deleted id never comes out; the heap keeps its invariant throughout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/evheap.h"

#define IDS 3000

typedef struct {
    int in;
    double t;
    uint64_t seq;
} ref_t;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void check_invariant(const ms__evheap_t *h, const ref_t *ref)
{
    size_t i, in = 0;
    int32_t id;

    for (i = 1; i < h->n; i++) {
        const ms__ev_t *p = &h->v[(i - 1) / 2], *c = &h->v[i];

        assert_true(p->t < c->t || (p->t == c->t && p->seq < c->seq));
    }
    for (i = 0; i < h->n; i++)
        assert_int_equal(h->pos[h->v[i].id], (int32_t)i);
    for (id = 0; id < IDS; id++) {
        in += ref[id].in != 0;
        if (id < h->npos)
            assert_int_equal(h->pos[id] >= 0, ref[id].in);
    }
    assert_int_equal(in, h->n);
}

/* the earliest of the reference: -1 when empty */
static int32_t ref_min(const ref_t *ref)
{
    int32_t id, best = -1;

    for (id = 0; id < IDS; id++)
        if (ref[id].in && (best < 0 || ref[id].t < ref[best].t ||
                           (ref[id].t == ref[best].t && ref[id].seq < ref[best].seq)))
            best = id;
    return best;
}

static void test_agrees_with_a_list(void **state)
{
    static ref_t ref[IDS];
    ms__evheap_t h;
    uint64_t seed = 7, seq = 0;
    long step, pops = 0, moves = 0, dels = 0;

    (void)state;
    ms__evheap_init(&h);
    assert_null(ms__evheap_top(&h));
    for (step = 0; step < 60000; step++) {
        uint64_t r = rnd(&seed) % 10;
        int32_t id = (int32_t)(rnd(&seed) % IDS);

        if (r < 5) {   /* set: coarse times, so that ties are common */
            double t = (double)(rnd(&seed) % 50);

            moves += ref[id].in;
            assert_int_equal(ms__evheap_set(&h, id, t), 0);
            ref[id] = (ref_t){ 1, t, seq++ };
        } else if (r < 7) {
            dels += ref[id].in;
            ms__evheap_del(&h, id);
            ref[id].in = 0;
        } else {
            int32_t want = ref_min(ref);
            const ms__ev_t *top = ms__evheap_top(&h);

            if (want < 0) {
                assert_null(top);
                continue;
            }
            assert_non_null(top);
            assert_int_equal(top->id, want);
            assert_true(top->t == ref[want].t);
            ms__evheap_pop(&h);
            ref[want].in = 0;
            pops++;
        }
        if (step % 997 == 0)
            check_invariant(&h, ref);
    }
    check_invariant(&h, ref);
    assert_true(pops > 1000 && moves > 1000 && dels > 1000);
    while (ms__evheap_top(&h) != NULL) {   /* drains in order */
        int32_t want = ref_min(ref);

        assert_int_equal(ms__evheap_top(&h)->id, want);
        ms__evheap_pop(&h);
        ref[want].in = 0;
    }
    assert_int_equal(ref_min(ref), -1);
    ms__evheap_del(&h, 5);          /* not in: nothing */
    ms__evheap_del(&h, IDS * 100);  /* beyond the ids: nothing */
    assert_int_equal(ms__evheap_set(&h, -1, 1.0), -1);
    ms__evheap_fini(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agrees_with_a_list),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
