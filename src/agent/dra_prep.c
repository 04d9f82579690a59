/* dra_prep.c - NodePrepareResources and NodeUnprepareResources for one
 * claim (dra.h), on the DRA service's thread.
 *
 * Prepare reads the claim from the API server (the kubelet sends only its
 * namespace, name and uid), takes the allocation's results for this driver
 * and this node's pool, and makes each device exist, tagged with the
 * claim ("dra:<uid>"):
 *   gpu-<g>-mig-<p>-<id>-<s>  the instance of p at exactly start s, through
 *                             the agent's create path: a retry finds it
 *                             (same uuid, same answer); slices taken by
 *                             anything else are refused with the agent's
 *                             reason, and nothing of the other instance is
 *                             touched;
 *   gpu-<g> on a MIG GPU      the full-size instance at start 0 (the agent
 *                             never changes MIG mode);
 *   gpu-<g> otherwise         the GPU's slot tagged with the claim (a whole
 *                             GPU, or one share of a time-sliced one).
 * The answer names one CDI device per result: migsched.io/mig=<uuid> (the
 * instance's spec, cdi.c) or migsched.io/claim=<uid>-gpu-<g> (the claim's
 * spec, dra_exec.c). When one device fails, what this call made is taken
 * away again and the claim's answer is the error; the kubelet retries.
 *
 * Unprepare releases everything tagged with the claim, whatever prepare
 * made in this or an earlier life of the agent, and nothing else.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dra.h"

static void set_error(ag_dra_answer_t *ans, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_error(ag_dra_answer_t *ans, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ans->error, sizeof(ans->error), fmt, ap);
    va_end(ap);
    ans->n = 0;
}

typedef struct made {
    ag_dra_inst_t v[AG_DRA_MAX_RESULTS];
    bool adopted[AG_DRA_MAX_RESULTS];  /* an idle instance it tagged: given back, not destroyed */
    int n;
    int slots[AG_DRA_MAX_RESULTS];    /* GPUs whose slot the claim holds */
    int nslots;
} made_t;

/* Take away what this call made (the error is already in ans). */
static void rollback(ag_t *a, const made_t *m)
{
    char why[256];
    int i;

    for (i = m->n - 1; i >= 0; i--)
        if ((m->adopted[i] ? ag_dra_x_untag(a, &m->v[i], why, sizeof(why))
                           : ag_dra_x_release(a, &m->v[i], why, sizeof(why))) != 0)
            ms_log("error", "dra: could not take back what a failed prepare made",
                    json_pack("{s:s,s:i,s:i,s:s}", "tag", m->v[i].tag, "gpu", m->v[i].gpu, "start", m->v[i].start,
                              "error", why));
}

/* What holds the slices of profile k at start on gpu (for a refusal's
 * message): " (held by 1g.5gb at 5, job x; ...)", or "". */
static void holders(ag_t *a, const ag_dra_gpu_t *gpus, int gpu, int k, int start, char *buf, size_t len)
{
    const ms_geom_t *g = gpus[gpu].geom;
    uint16_t mine = ms_geom_profile_mask(g, k, start);
    ag_dra_inst_t *inv;
    size_t at = 0;
    int n, i;

    buf[0] = '\0';
    if (ag_dra_x_inventory(a, &inv, &n) != 0)
        return;
    for (i = 0; i < n; i++) {
        int p = ms_geom_profile_find(g, inv[i].profile);

        if (inv[i].gpu != gpu || inv[i].start < 0 || p < 0 || (ms_geom_profile_mask(g, p, inv[i].start) & mine) == 0 ||
            at >= len)
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%s at %d, job '%s'", at == 0 ? " (held by " : "; ",
                               inv[i].profile, inv[i].start, inv[i].tag[0] != '\0' ? inv[i].tag : "(idle)");
    }
    if (at > 0 && at + 1 < len)
        snprintf(buf + at, len - at, ")");
    free(inv);
}

/* One result: make its device; fills d. 0, or -1 with ans->error. */
static int one(ag_dra_ctx_t *c, const ag_dra_gpu_t *gpus, const ag_dra_claim_t *cl, const ag_dra_result_t *r,
               const char *tag, made_t *m, ag_dra_pdev_t *d, ag_dra_answer_t *ans)
{
    ag_t *a = c->a;
    ag_dra_dev_t dev;
    ag_dra_inst_t inst;
    char why[400];
    int k, rc, i;

    if (ag_dra_parse(gpus, a->ngpus, r->device, &dev, why, sizeof(why)) != 0) {
        set_error(ans, "ResourceClaim %s/%s: %s", cl->ns, cl->name, why);
        return -1;
    }
    snprintf(d->request, sizeof(d->request), "%s", r->request);
    snprintf(d->pool, sizeof(d->pool), "%s", c->pool);
    snprintf(d->device, sizeof(d->device), "%s", r->device);
    snprintf(d->share_id, sizeof(d->share_id), "%s", r->share_id);
    if (dev.kind == AG_DRA_GPU && !gpus[dev.gpu].mig) {
        if ((rc = ag_dra_x_slot(a, dev.gpu, tag, why, sizeof(why))) < 0) {
            set_error(ans, "device %s: %s", r->device, why);
            return -1;
        }
        if (rc == 1) {
            memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
            m->adopted[m->n] = false;
            m->v[m->n].gpu = dev.gpu;
            m->v[m->n].start = -1;
            snprintf(m->v[m->n].tag, sizeof(m->v[m->n].tag), "%s", tag);
            m->n++;
        }
        for (i = 0; i < m->nslots && m->slots[i] != dev.gpu; i++)
            ;
        if (i == m->nslots)
            m->slots[m->nslots++] = dev.gpu;
        snprintf(d->cdi, sizeof(d->cdi), "%s=%s-gpu-%d", AG_DRA_CDI_CLAIM_KIND, cl->uid, dev.gpu);
        return 0;
    }
    k = dev.kind == AG_DRA_MIG ? dev.prof : ag_dra_full_profile(gpus[dev.gpu].geom);
    rc = ag_dra_x_create(a, dev.gpu, ms_geom_profile(gpus[dev.gpu].geom, k)->name, dev.kind == AG_DRA_MIG ? dev.start : 0,
                         tag, &inst, why, sizeof(why));
    if (rc < 0) {
        char held[200];

        held[0] = '\0';
        if (strstr(why, " holds ") == NULL)   /* the agent named no holder: name them */
            holders(a, gpus, dev.gpu, k, dev.kind == AG_DRA_MIG ? dev.start : 0, held, sizeof(held));
        set_error(ans, "device %s: %s%s", r->device, why, held);
        return -1;
    }
    if (rc >= 1) {
        m->adopted[m->n] = rc == 2;
        m->v[m->n++] = inst;
    }
    snprintf(d->cdi, sizeof(d->cdi), "migsched.io/mig=%s", inst.uuid);
    return 0;
}

void ag_dra_prepare(ag_dra_ctx_t *c, const ag_dra_ref_t *ref, ag_dra_answer_t *ans)
{
    ag_dra_claim_t *cl = NULL;
    ag_dra_gpu_t *gpus = NULL;
    made_t *m = NULL;
    char tag[128], why[512], *json = NULL;
    int i, rc;

    memset(ans, 0, sizeof(*ans));
    snprintf(ans->uid, sizeof(ans->uid), "%s", ref->uid);
    if ((cl = malloc(sizeof(*cl))) == NULL || (m = calloc(1, sizeof(*m))) == NULL ||
        ag_dra_x_gpus(c->a, &gpus) != 0) {
        set_error(ans, "out of memory");
        goto out;
    }
    rc = c->get_claim(c->kctx, ref->ns, ref->name, &json, why, sizeof(why));
    if (rc != 0) {
        if (rc > 0)
            set_error(ans, "ResourceClaim %s/%s not found", ref->ns, ref->name);
        else
            set_error(ans, "ResourceClaim %s/%s: %s", ref->ns, ref->name, why);
        goto out;
    }
    if (ag_dra_claim_decode(json, strlen(json), c->driver, c->pool, cl, why, sizeof(why)) != 0) {
        set_error(ans, "%s/%s: %s", ref->ns, ref->name, why);
        goto out;
    }
    if (strcmp(cl->uid, ref->uid) != 0) {
        set_error(ans, "ResourceClaim %s/%s has uid %s, not %s (deleted and made again?)", ref->ns, ref->name, cl->uid,
                  ref->uid);
        goto out;
    }
    snprintf(tag, sizeof(tag), AG_DRA_TAG "%s", cl->uid);
    for (i = 0; i < cl->n; i++)
        if (one(c, gpus, cl, &cl->res[i], tag, m, &ans->dev[i], ans) != 0) {
            rollback(c->a, m);
            goto out;
        }
    if (m->nslots > 0 && ag_dra_x_claim_spec(c->a, cl->uid, m->slots, m->nslots, why, sizeof(why)) != 0) {
        set_error(ans, "ResourceClaim %s/%s: %s", ref->ns, ref->name, why);
        rollback(c->a, m);
        goto out;
    }
    ans->n = cl->n;
    ms_log("info", "dra: claim prepared",
            json_pack("{s:s,s:s,s:s,s:i,s:i}", "claim", ref->name, "namespace", ref->ns, "uid", ref->uid, "devices",
                      ans->n, "made", m->n));
out:
    if (ans->error[0] != '\0')
        ms_log("warn", "dra: prepare refused",
                json_pack("{s:s,s:s,s:s,s:s}", "claim", ref->name, "namespace", ref->ns, "uid", ref->uid, "error",
                          ans->error));
    free(json);
    free(gpus);
    free(m);
    free(cl);
}

void ag_dra_unprepare(ag_dra_ctx_t *c, const ag_dra_ref_t *ref, ag_dra_answer_t *ans)
{
    ag_dra_inst_t *inv = NULL;
    char tag[128], why[400];
    int n = 0, i, released = 0;

    memset(ans, 0, sizeof(*ans));
    snprintf(ans->uid, sizeof(ans->uid), "%s", ref->uid);
    snprintf(tag, sizeof(tag), AG_DRA_TAG "%s", ref->uid);
    if (ag_dra_x_inventory(c->a, &inv, &n) != 0) {
        set_error(ans, "out of memory");
        return;
    }
    for (i = 0; i < n; i++) {
        if (strcmp(inv[i].tag, tag) != 0)
            continue;
        if (ag_dra_x_release(c->a, &inv[i], why, sizeof(why)) != 0) {
            set_error(ans, "ResourceClaim %s/%s: GPU %d start %d: %s", ref->ns, ref->name, inv[i].gpu, inv[i].start,
                      why);
            continue;
        }
        released++;
    }
    free(inv);
    if (ans->error[0] == '\0' && ag_dra_x_claim_spec(c->a, ref->uid, NULL, 0, why, sizeof(why)) != 0)
        set_error(ans, "ResourceClaim %s/%s: %s", ref->ns, ref->name, why);
    ms_log(ans->error[0] ? "warn" : "info", ans->error[0] ? "dra: unprepare failed" : "dra: claim unprepared",
            json_pack("{s:s,s:s,s:s,s:i,s:s}", "claim", ref->name, "namespace", ref->ns, "uid", ref->uid, "released",
                      released, "error", ans->error));
}
