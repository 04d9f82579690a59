/* dra_review.c - the webhook's question (the DRA loop thread): does a
 * pod being created need our scheduling gate? Yes when one of its claims
 * (by template, or by name and not allocated yet) asks for a device of a
 * class migschedd manages; what the loop has not seen yet is named back,
 * for the webhook worker to read from the API server (dra_hook.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/dra_int.h"

static int unknown_add(dra_msg_t *m, char kind, const char *name)
{
    char **v = realloc(m->unknown, (size_t)(m->nunknown + 1) * sizeof(*v));

    if (v == NULL)
        return -1;
    m->unknown = v;
    if ((v[m->nunknown] = dra_strf("%c/%s", kind, name)) == NULL)
        return -1;
    m->nunknown++;
    return 0;
}

static bool spec_managed(svc_dra_t *x, const dra_cspec_t *s)
{
    int k;

    for (k = 0; k < s->nreq; k++)
        if (s->req[k].cls != NULL && dra_class_managed(x, s->req[k].cls))
            return true;
    return false;
}

void dra_decide_review(svc_dra_t *x, dra_msg_t *m)
{
    const dra_pod_t *p = &m->review->pod;
    char key[2 * DRA_NAME_MAX + 4];
    int i;

    m->gate = false;
    if (!m->review->is_pod_create || p->ns == NULL)
        return;
    if (x->stall_prefix[0] != '\0' && p->name != NULL &&
        strncmp(p->name, x->stall_prefix, strlen(x->stall_prefix)) == 0) {
        /* a test's failpoint: a loop stuck past the webhook's deadline */
        ms_log("warning", "dra: failpoint hook-stall: the loop sleeps 8 s", json_pack("{s:s}", "pod", p->name));
        ms_clock_sleep(8.0);
    }
    for (i = 0; i < p->npc; i++) {
        const dra_podclaim_t *pc = &p->pc[i];

        if (pc->tmpl != NULL) {
            const dra_tmpl_t *t;

            snprintf(key, sizeof(key), "%s/%s", p->ns, pc->tmpl);
            if ((t = dra_tab_get(&x->tab[DRA_K_TMPL], key)) == NULL) {
                if (unknown_add(m, 't', pc->tmpl) != 0)
                    m->gate = true;   /* out of memory: the safe answer */
            } else if (spec_managed(x, &t->spec)) {
                m->gate = true;
            }
        } else if (pc->claim != NULL) {
            const dra_claim_t *c = dra_claim_by_name(x, p->ns, pc->claim);

            if (c == NULL) {
                if (unknown_add(m, 'c', pc->claim) != 0)
                    m->gate = true;
            } else if (!c->allocated && spec_managed(x, &c->spec)) {
                m->gate = true;
            }
        }
    }
}
