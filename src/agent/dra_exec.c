/* dra_exec.c - the agent's backend as the DRA driver sees it (dra.h): the
 * one file of the driver that knows the backend's types. Everything that
 * changes an instance goes through the agent's own paths (ops.c: ag_create
 * with its checks, idempotency and CDI spec; ag_delete; ag_op for the
 * whole-GPU and time-slice slots), so an instance made for a claim is made
 * exactly as one made over HTTP, and each of those takes a->mu.
 *
 * The checkpoint is the inventory: an instance or slot prepared for a
 * claim is tagged "dra:<claim uid>" as a job, which the backend persists
 * (for nvml, nvml-inventory.json beside the hardware's GIs). A restarted
 * agent finds its claims there; nothing else is remembered.
 *
 * Whole GPUs and time-slice shares have no instance of their own, so no
 * per-instance CDI spec: a claim's slots get one spec file,
 * CDI_DIR/migsched.claim-<uid>.json (kind migsched.io/claim, one device
 * "<uid>-gpu-<g>" per GPU). The per-instance reconciliation (cdi.c) owns
 * only migsched-*.json, so it never removes these.
 *
 * Thread: the DRA service's (one call at a time), and main at start-up.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/dra.h"
#include "migsched/plan.h"

#define CLAIM_SPEC_PREFIX "migsched.claim-"
#define CLAIM_SPEC_SUFFIX ".json"

int ag_dra_x_gpus(ag_t *a, ag_dra_gpu_t **out)
{
    ag_dra_gpu_t *v = calloc((size_t)(a->ngpus > 0 ? a->ngpus : 1), sizeof(*v));
    int g;

    if ((*out = v) == NULL)
        return -1;
    for (g = 0; g < a->ngpus; g++) {
        v[g].geom = a->geom[g];
        v[g].mig = a->mig[g];
        v[g].replicas = a->mig[g] ? 0 : a->replicas;
        v[g].uuid = ms_backend_gpu_uuid(a->be, g);
    }
    return 0;
}

int ag_dra_x_inventory(ag_t *a, ag_dra_inst_t **out, int *n)
{
    ms_binst_t *inv;
    ag_dra_inst_t *v;
    ms_diag_t why;
    int i, m;

    pthread_mutex_lock(&a->mu);
    if (ms_backend_inventory(a->be, &inv, &m, &why) != MS_OK) {
        pthread_mutex_unlock(&a->mu);
        return -1;
    }
    pthread_mutex_unlock(&a->mu);
    if ((v = calloc((size_t)(m > 0 ? m : 1), sizeof(*v))) == NULL) {
        free(inv);
        return -1;
    }
    for (i = 0; i < m; i++) {
        v[i].gpu = inv[i].gpu;
        v[i].start = inv[i].start;
        snprintf(v[i].profile, sizeof(v[i].profile), "%s", ms_geom_profile(a->geom[inv[i].gpu], inv[i].prof)->name);
        snprintf(v[i].uuid, sizeof(v[i].uuid), "%s", inv[i].uuid);
        snprintf(v[i].tag, sizeof(v[i].tag), "%s", inv[i].job);
    }
    free(inv);
    *out = v;
    *n = m;
    return 0;
}

/* The agent's error message in an error body, or the status. */
static void body_why(const char *body, int status, char *why, size_t whylen)
{
    json_t *o = body != NULL ? json_loads(body, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(json_object_get(o, "error"), "message"));

    if (m != NULL)
        snprintf(why, whylen, "%s", m);
    else
        snprintf(why, whylen, "the agent answered %d", status);
    json_decref(o);
}

int ag_dra_x_create(ag_t *a, int gpu, const char *profile, int start, const char *tag, ag_dra_inst_t *made,
                    char *why, size_t whylen)
{
    ag_create_t rq;
    ag_dra_inst_t *inv;
    json_t *o;
    char *body;
    int status = 0, n, i;
    bool idle = false;

    /* an idle instance there is adopted by the create path: remember it,
     * so that a rollback gives it back instead of destroying it */
    if (ag_dra_x_inventory(a, &inv, &n) != 0) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (i = 0; i < n; i++)
        idle = idle || (inv[i].gpu == gpu && inv[i].start == start && inv[i].tag[0] == '\0');
    free(inv);
    memset(&rq, 0, sizeof(rq));
    rq.gpu = gpu;
    rq.start = start;
    snprintf(rq.profile, sizeof(rq.profile), "%s", profile);
    snprintf(rq.job, sizeof(rq.job), "%s", tag);
    body = ag_create(a, &rq, &status);
    if (status != 200 && status != 201) {
        body_why(body, status, why, whylen);
        free(body);
        return -1;
    }
    o = body != NULL ? json_loads(body, 0, NULL) : NULL;
    free(body);
    memset(made, 0, sizeof(*made));
    made->gpu = gpu;
    made->start = start;
    snprintf(made->profile, sizeof(made->profile), "%s", profile);
    snprintf(made->tag, sizeof(made->tag), "%s", tag);
    snprintf(made->uuid, sizeof(made->uuid), "%s",
             json_string_value(json_object_get(o, "uuid")) != NULL ? json_string_value(json_object_get(o, "uuid")) : "");
    json_decref(o);
    if (made->uuid[0] == '\0') {
        snprintf(why, whylen, "GPU %d start %d: the instance has no uuid", gpu, start);
        return -1;
    }
    return status == 201 ? (idle ? 2 : 1) : 0;
}

static char *op(ag_t *a, int kind, int gpu, int start, const char *profile, const char *tag, int *status)
{
    ag_op_t rq;

    memset(&rq, 0, sizeof(rq));
    rq.kind = kind;
    rq.gpu = gpu;
    rq.start = start;
    rq.from_gpu = -1;
    rq.from_start = -1;
    snprintf(rq.profile, sizeof(rq.profile), "%s", profile);
    snprintf(rq.job, sizeof(rq.job), "%s", tag);
    return ag_op(a, &rq, status);
}

int ag_dra_x_slot(ag_t *a, int gpu, const char *tag, char *why, size_t whylen)
{
    ag_dra_inst_t *inv;
    int n, i, k, status = 0;
    char *body;

    if (ag_dra_x_inventory(a, &inv, &n) != 0) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (i = 0; i < n && !(inv[i].gpu == gpu && inv[i].start < 0 && strcmp(inv[i].tag, tag) == 0); i++)
        ;
    free(inv);
    if (i < n)
        return 0;   /* a retry: the slot is tagged already */
    k = ag_dra_full_profile(a->geom[gpu]);
    if (k < 0)
        k = ms_geom_nprofiles(a->geom[gpu]) - 1;
    body = op(a, MS_OP_START, gpu, -1, ms_geom_profile(a->geom[gpu], k)->name, tag, &status);
    if (status != 200) {
        body_why(body, status, why, whylen);
        free(body);
        return -1;
    }
    free(body);
    return 1;
}

int ag_dra_x_release(ag_t *a, const ag_dra_inst_t *in, char *why, size_t whylen)
{
    char *body;
    int status = 0;

    if (in->start < 0) {
        body = op(a, MS_OP_STOP, in->gpu, -1, "", in->tag, &status);
    } else if (in->uuid[0] != '\0') {
        body = ag_delete(a, in->uuid, &status);
    } else {
        ag_op_t rq;

        /* a GI the driver lists without a compute instance: by its place */
        memset(&rq, 0, sizeof(rq));
        rq.kind = AG_OP_REAP;
        rq.gpu = in->gpu;
        rq.start = in->start;
        rq.from_gpu = rq.from_start = -1;
        snprintf(rq.job, sizeof(rq.job), "%s", in->tag);
        body = ag_op(a, &rq, &status);
    }
    if (status != 200) {
        body_why(body, status, why, whylen);
        free(body);
        return -1;
    }
    free(body);
    return 0;
}

int ag_dra_x_untag(ag_t *a, const ag_dra_inst_t *in, char *why, size_t whylen)
{
    int status = 0;
    char *body = op(a, MS_OP_STOP, in->gpu, in->start, "", in->tag, &status);

    if (status != 200) {
        body_why(body, status, why, whylen);
        free(body);
        return -1;
    }
    free(body);
    return 0;
}

static int spec_path(const ag_t *a, const char *uid, char *buf, size_t len, bool name_only)
{
    int k = name_only ? snprintf(buf, len, CLAIM_SPEC_PREFIX "%s" CLAIM_SPEC_SUFFIX, uid)
                      : snprintf(buf, len, "%s/" CLAIM_SPEC_PREFIX "%s" CLAIM_SPEC_SUFFIX, a->cfg->cdi_dir, uid);

    return k > 0 && (size_t)k < len ? 0 : -1;
}

int ag_dra_x_claim_spec(ag_t *a, const char *uid, const int *gpus, int n, char *why, size_t whylen)
{
    json_t *devs = json_array(), *spec = NULL;
    char path[4200], dev[128], env[128], *text = NULL;
    int i, rc = -1;

    if (strcmp(ms_backend_name(a->be), "dry-run") == 0) {
        json_decref(devs);
        return 0;   /* dry-run touches nothing, the CDI directory included (cdi.c) */
    }
    if (n == 0) {
        json_decref(devs);
        if (spec_path(a, uid, path, sizeof(path), false) != 0 || (unlink(path) != 0 && errno != ENOENT)) {
            snprintf(why, whylen, "cannot remove the claim's CDI spec: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    snprintf(why, whylen, "out of memory");
    for (i = 0; devs != NULL && i < n; i++) {
        ms_binst_t in;
        json_t *nodes = json_array();

        memset(&in, 0, sizeof(in));
        in.gpu = gpus[i];
        in.start = -1;
        snprintf(dev, sizeof(dev), "%s-gpu-%d", uid, gpus[i]);
        snprintf(env, sizeof(env), "NVIDIA_VISIBLE_DEVICES=%s", ms_backend_gpu_uuid(a->be, gpus[i]));
        if (nodes == NULL || ag_cdi_nodes(a, &in, nodes) != 0 ||
            json_array_append_new(devs, json_pack("{s:s,s:{s:[s],s:o}}", "name", dev, "containerEdits", "env", env,
                                                  "deviceNodes", nodes)) != 0) {
            json_decref(nodes);
            goto out;
        }
    }
    spec = json_pack("{s:s,s:s,s:{s:s},s:o}", "cdiVersion", "0.6.0", "kind", AG_DRA_CDI_CLAIM_KIND, "annotations",
                     "migsched.io/claim-uid", uid, "devices", devs);
    devs = NULL;
    if (spec == NULL || (text = json_dumps(spec, JSON_INDENT(2) | JSON_SORT_KEYS)) == NULL)
        goto out;
    if (spec_path(a, uid, path, sizeof(path), true) != 0 || ag_cdi_write_file(a, path, text) != 0) {
        snprintf(why, whylen, "cannot write the claim's CDI spec in %s: %s", a->cfg->cdi_dir, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    json_decref(devs);
    json_decref(spec);
    free(text);
    return rc;
}

/* The uid of a claim spec's file name (or its temporary's), into uid. */
static bool spec_uid(const char *nm, char *uid, size_t len, bool *tmp)
{
    size_t pl = strlen(CLAIM_SPEC_PREFIX), sl = strlen(CLAIM_SPEC_SUFFIX), n = strlen(nm);

    *tmp = nm[0] == '.';
    if (*tmp) {
        nm++;
        if (n < 5 || strcmp(nm + n - 5, ".tmp") != 0)
            return false;
        n -= 5;
    }
    if (n <= pl + sl || strncmp(nm, CLAIM_SPEC_PREFIX, pl) != 0 || strncmp(nm + n - sl, CLAIM_SPEC_SUFFIX, sl) != 0 ||
        n - pl - sl >= len)
        return false;
    memcpy(uid, nm + pl, n - pl - sl);
    uid[n - pl - sl] = '\0';
    return true;
}

int ag_dra_x_claim_specs_sync(ag_t *a)
{
    ag_dra_inst_t *inv;
    int n, i, j, rc = 0, *gpus;
    DIR *d;
    struct dirent *de;
    char uid[64], why[256], path[4200];
    bool tmp;

    if (strcmp(ms_backend_name(a->be), "dry-run") == 0)
        return 0;
    if (ag_dra_x_inventory(a, &inv, &n) != 0)
        return -1;
    if ((gpus = calloc((size_t)(n > 0 ? n : 1), sizeof(*gpus))) == NULL) {
        free(inv);
        return -1;
    }
    /* every claim holding slots: its spec, rewritten (a kill may have cut it) */
    for (i = 0; i < n; i++) {
        int m = 0;
        bool first = true;

        if (inv[i].start >= 0 || strncmp(inv[i].tag, AG_DRA_TAG, strlen(AG_DRA_TAG)) != 0)
            continue;
        for (j = 0; j < i && first; j++)
            first = !(inv[j].start < 0 && strcmp(inv[j].tag, inv[i].tag) == 0);
        if (!first)
            continue;
        for (j = i; j < n; j++)
            if (inv[j].start < 0 && strcmp(inv[j].tag, inv[i].tag) == 0)
                gpus[m++] = inv[j].gpu;
        if (ag_dra_x_claim_spec(a, inv[i].tag + strlen(AG_DRA_TAG), gpus, m, why, sizeof(why)) != 0)
            rc = -1;
    }
    /* and no spec of a claim that holds none */
    if ((d = opendir(a->cfg->cdi_dir)) == NULL) {
        free(gpus);
        free(inv);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        bool held = false;

        if (!spec_uid(de->d_name, uid, sizeof(uid), &tmp))
            continue;
        for (i = 0; i < n && !held && !tmp; i++)
            held = inv[i].start < 0 && strncmp(inv[i].tag, AG_DRA_TAG, strlen(AG_DRA_TAG)) == 0 &&
                   strcmp(inv[i].tag + strlen(AG_DRA_TAG), uid) == 0;
        if (held || (size_t)snprintf(path, sizeof(path), "%s/%s", a->cfg->cdi_dir, de->d_name) >= sizeof(path))
            continue;
        if (unlink(path) != 0 && errno != ENOENT)
            rc = -1;
    }
    closedir(d);
    free(gpus);
    free(inv);
    return rc;
}
