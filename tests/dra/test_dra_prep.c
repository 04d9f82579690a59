/* test_dra_prep.c - NodePrepareResources / NodeUnprepareResources of the
 * DRA driver (src/agent/dra_prep.c, dra_exec.c) in-process, on the agent's
 * sim backend in a temporary directory, with the claims the API server
 * would answer given as JSON:
 *   - a prepare makes the instance at exactly its device's placement,
 *     tagged with the claim, and answers its CDI device; a repeated
 *     prepare answers the same and makes nothing; unprepare destroys it,
 *     twice is fine;
 *   - a device whose slices are taken is refused with the device and the
 *     holder named, and the holder is untouched; a claim that fails half
 *     way leaves nothing it made;
 *   - a restarted agent (the backend reopened from its state directory)
 *     answers a retried prepare with the same instance and unprepares what
 *     its previous life prepared;
 *   - the whole GPU of a MIG GPU is its full-size instance; on whole-GPU and
 *     time-sliced nodes a claim tags the GPU's slot and gets a claim CDI
 *     spec; the start-up sync removes specs of claims that hold nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/dra.h"
#include "backend/backend.h"

typedef struct fx {
    char root[64], state[96], cdi[96];
    ag_cfg_t cfg;
    ag_t a;
    const char *claims[8];   /* the API server's answers, by claim name c0..c7 */
} fx_t;

static int open_backend(fx_t *f)
{
    ms_backend_cfg_t bc;
    ms_diag_t why;

    memset(&bc, 0, sizeof(bc));
    bc.kind = "sim";
    bc.state_dir = f->state;
    bc.ngpus = f->a.ngpus;
    bc.gpu_geom = f->a.geom;
    bc.gpu_mig = f->a.mig;
    bc.uuid_salt = 0x10000u;
    return ms_backend_open(&bc, &f->a.be, &why) == MS_OK ? 0 : -1;
}

static fx_t *fixture(const char *spec)
{
    fx_t *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    snprintf(f->root, sizeof(f->root), "/tmp/test_dra_prep.XXXXXX");
    assert_non_null(mkdtemp(f->root));
    snprintf(f->state, sizeof(f->state), "%s/state", f->root);
    snprintf(f->cdi, sizeof(f->cdi), "%s/cdi", f->root);
    assert_int_equal(mkdir(f->state, 0700), 0);
    assert_int_equal(mkdir(f->cdi, 0755), 0);
    f->cfg.node_spec = strdup(spec);
    f->cfg.backend = strdup("sim");
    f->cfg.cdi_dir = strdup(f->cdi);
    f->cfg.node_name = strdup("n1");
    f->a.cfg = &f->cfg;
    pthread_mutex_init(&f->a.mu, NULL);
    assert_int_equal(ag_node_init(&f->a), 0);
    assert_int_equal(open_backend(f), 0);
    return f;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    char cmd[160];

    ms_backend_close(f->a.be);
    ag_node_free(&f->a);
    pthread_mutex_destroy(&f->a.mu);
    free(f->cfg.node_spec);
    free(f->cfg.backend);
    free(f->cfg.cdi_dir);
    free(f->cfg.node_name);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static int setup_mig(void **state)
{
    *state = fixture("1xA100-40GB");
    return 0;
}

static int setup_ts(void **state)
{
    *state = fixture("2xA100-40GB:timeslice=2");
    return 0;
}

static int setup_whole(void **state)
{
    *state = fixture("1xA100-40GB:whole");
    return 0;
}

/* The API server, as far as prepare asks it: claim cK by name. */
static int get_claim(void *kctx, const char *ns, const char *name, char **json, char *why, size_t whylen)
{
    fx_t *f = kctx;

    if (strcmp(ns, "default") != 0 || name[0] != 'c' || name[1] < '0' || name[1] > '7' || name[2] != '\0' ||
        f->claims[name[1] - '0'] == NULL)
        return 1;
    *json = strdup(f->claims[name[1] - '0']);
    return *json != NULL ? 0 : -1;
}

/* A claim allocated on pool n1: devices "d1,d2,..." (each of request g). */
static char *claim(const char *name, const char *uid, const char *devices)
{
    char *j = malloc(4096), list[256], *tok, *save = NULL;
    size_t at;

    assert_non_null(j);
    at = (size_t)snprintf(j, 4096, "{\"metadata\":{\"namespace\":\"default\",\"name\":\"%s\",\"uid\":\"%s\"},"
                                   "\"status\":{\"allocation\":{\"devices\":{\"results\":[", name, uid);
    snprintf(list, sizeof(list), "%s", devices);
    for (tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
        at += (size_t)snprintf(j + at, 4096 - at, "%s{\"request\":\"g\",\"driver\":\"mig.migsched.io\",\"pool\":\"n1\","
                                                  "\"device\":\"%s\"}", j[at - 1] == '[' ? "" : ",", tok);
    snprintf(j + at, 4096 - at, "]}}}}");
    return j;
}

static ag_dra_ctx_t ctx_of(fx_t *f)
{
    ag_dra_ctx_t c = { &f->a, "mig.migsched.io", "n1", get_claim, f };

    return c;
}

static void prep(fx_t *f, int k, const char *uid, ag_dra_answer_t *ans)
{
    ag_dra_ctx_t c = ctx_of(f);
    ag_dra_ref_t r;

    memset(&r, 0, sizeof(r));
    snprintf(r.ns, sizeof(r.ns), "default");
    snprintf(r.name, sizeof(r.name), "c%d", k);
    snprintf(r.uid, sizeof(r.uid), "%s", uid);
    ag_dra_prepare(&c, &r, ans);
}

static void unprep(fx_t *f, const char *uid, ag_dra_answer_t *ans)
{
    ag_dra_ctx_t c = ctx_of(f);
    ag_dra_ref_t r;

    memset(&r, 0, sizeof(r));
    snprintf(r.ns, sizeof(r.ns), "default");
    snprintf(r.name, sizeof(r.name), "c0");
    snprintf(r.uid, sizeof(r.uid), "%s", uid);
    ag_dra_unprepare(&c, &r, ans);
}

/* The inventory as "gpu:start:profile:tag;..." in its order. */
static void inv_text(fx_t *f, char *buf, size_t len)
{
    ag_dra_inst_t *v;
    int n, i;
    size_t at = 0;

    buf[0] = '\0';
    assert_int_equal(ag_dra_x_inventory(&f->a, &v, &n), 0);
    for (i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%d:%d:%s:%s;", v[i].gpu, v[i].start, v[i].profile,
                               v[i].tag);
    free(v);
}

static bool exists(const char *dir, const char *name)
{
    char p[600];

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void mig_prepare_idempotent(void **state)
{
    fx_t *f = *state;
    ag_dra_answer_t a1, a2, u;
    char inv[512], spec[256];
    char *c0 = claim("c0", "u-1", "gpu-0-mig-3g20gb-9-4");

    f->claims[0] = c0;
    prep(f, 0, "u-1", &a1);
    assert_string_equal(a1.error, "");
    assert_int_equal(a1.n, 1);
    assert_string_equal(a1.uid, "u-1");
    assert_string_equal(a1.dev[0].device, "gpu-0-mig-3g20gb-9-4");
    assert_string_equal(a1.dev[0].pool, "n1");
    assert_string_equal(a1.dev[0].request, "g");
    assert_int_equal(strncmp(a1.dev[0].cdi, "migsched.io/mig=MIG-", 20), 0);
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:4:3g.20gb:dra:u-1;");
    snprintf(spec, sizeof(spec), "migsched-%.100s.json", a1.dev[0].cdi + strlen("migsched.io/mig="));
    assert_true(exists(f->cdi, spec));
    /* the kubelet asks again: the same answer, nothing new */
    prep(f, 0, "u-1", &a2);
    assert_string_equal(a2.error, "");
    assert_memory_equal(&a1, &a2, sizeof(a1));
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:4:3g.20gb:dra:u-1;");
    unprep(f, "u-1", &u);
    assert_string_equal(u.error, "");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "");
    assert_false(exists(f->cdi, spec));
    unprep(f, "u-1", &u);   /* gone already: fine */
    assert_string_equal(u.error, "");
    free(c0);
}

static void mig_refusals_touch_nothing(void **state)
{
    fx_t *f = *state;
    ag_dra_answer_t a, u;
    ag_create_t rq;
    char inv[512], *body;
    int status = 0;
    char *c0 = claim("c0", "u-2", "gpu-0-mig-3g20gb-9-4");
    char *c1 = claim("c1", "u-3", "gpu-0-mig-1g5gb-19-0,gpu-0-mig-1g5gb-19-5");
    char *c2 = claim("c2", "u-other", "gpu-0-mig-1g5gb-19-0");
    char *c3 = claim("c3", "u-4", "gpu-3");

    /* an instance that is not the driver's, at start 5 */
    memset(&rq, 0, sizeof(rq));
    rq.gpu = 0;
    rq.start = 5;
    snprintf(rq.profile, sizeof(rq.profile), "1g.5gb");
    snprintf(rq.job, sizeof(rq.job), "other");
    body = ag_create(&f->a, &rq, &status);
    assert_int_equal(status, 201);
    free(body);
    /* and an idle one (nobody's) at start 0 */
    rq.start = 0;
    rq.job[0] = '\0';
    body = ag_create(&f->a, &rq, &status);
    assert_int_equal(status, 201);
    free(body);
    f->claims[0] = c0;
    f->claims[1] = c1;
    f->claims[2] = c2;
    f->claims[3] = c3;
    prep(f, 0, "u-2", &a);
    assert_int_equal(a.n, 0);
    assert_non_null(strstr(a.error, "device gpu-0-mig-3g20gb-9-4"));
    assert_non_null(strstr(a.error, "held by 1g.5gb at 5, job 'other'"));
    /* half way: the idle 1g@0 is adopted, 1g@5 refused; 1g@0 is given
     * back idle, not destroyed */
    prep(f, 1, "u-3", &a);
    assert_non_null(strstr(a.error, "gpu-0-mig-1g5gb-19-5"));
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:5:1g.5gb:other;0:0:1g.5gb:;");
    /* and one it made is taken back: 1g@1 made, 1g@5 refused */
    f->claims[1] = NULL;
    free(c1);
    c1 = claim("c1", "u-3", "gpu-0-mig-1g5gb-19-1,gpu-0-mig-1g5gb-19-5");
    f->claims[1] = c1;
    prep(f, 1, "u-3", &a);
    assert_non_null(strstr(a.error, "gpu-0-mig-1g5gb-19-5"));
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:5:1g.5gb:other;0:0:1g.5gb:;");
    /* unprepare of a claim that holds nothing leaves the other instance */
    unprep(f, "u-2", &u);
    assert_string_equal(u.error, "");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:5:1g.5gb:other;0:0:1g.5gb:;");
    /* the claim the kubelet names must be the one the API server has */
    prep(f, 2, "u-2", &a);
    assert_non_null(strstr(a.error, "has uid u-other, not u-2"));
    prep(f, 5, "u-5", &a);
    assert_non_null(strstr(a.error, "ResourceClaim default/c5 not found"));
    prep(f, 3, "u-4", &a);
    assert_non_null(strstr(a.error, "GPUs 0..0"));
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:5:1g.5gb:other;0:0:1g.5gb:;");
    free(c0);
    free(c1);
    free(c2);
    free(c3);
}

static void mig_restart_adopts(void **state)
{
    fx_t *f = *state;
    ag_dra_answer_t a1, a2, u;
    char inv[512];
    char *c0 = claim("c0", "u-6", "gpu-0-mig-2g10gb-14-2,gpu-0");
    char *c1 = claim("c1", "u-7", "gpu-0-mig-1g5gb-19-6");

    f->claims[0] = c0;
    f->claims[1] = c1;
    /* the whole GPU of a MIG GPU is its full-size instance: it cannot share */
    prep(f, 0, "u-6", &a1);
    assert_non_null(strstr(a1.error, "device gpu-0:"));
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "");
    f->claims[0] = NULL;
    free(c0);
    c0 = claim("c0", "u-6", "gpu-0");
    f->claims[0] = c0;
    prep(f, 0, "u-6", &a1);
    assert_string_equal(a1.error, "");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:0:7g.40gb:dra:u-6;");
    /* restart: the backend is reopened from its state directory */
    ms_backend_close(f->a.be);
    f->a.be = NULL;
    assert_int_equal(open_backend(f), 0);
    prep(f, 0, "u-6", &a2);
    assert_string_equal(a2.error, "");
    assert_string_equal(a2.dev[0].cdi, a1.dev[0].cdi);
    prep(f, 1, "u-7", &a2);   /* the slices are the 7g's */
    assert_non_null(strstr(a2.error, "held by 7g.40gb at 0, job 'dra:u-6'"));
    unprep(f, "u-6", &u);
    assert_string_equal(u.error, "");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "");
    prep(f, 1, "u-7", &a2);
    assert_string_equal(a2.error, "");
    free(c0);
    free(c1);
}

static void ts_slots_and_specs(void **state)
{
    fx_t *f = *state;
    ag_dra_answer_t a, u;
    char inv[512], path[300], text[4096];
    FILE *fp;
    size_t n;
    char *c0 = claim("c0", "t-1", "gpu-1");
    char *c1 = claim("c1", "t-2", "gpu-1,gpu-0");
    char *c2 = claim("c2", "t-3", "gpu-0-mig-1g5gb-19-0");

    f->claims[0] = c0;
    f->claims[1] = c1;
    f->claims[2] = c2;
    prep(f, 0, "t-1", &a);
    assert_string_equal(a.error, "");
    assert_string_equal(a.dev[0].cdi, "migsched.io/claim=t-1-gpu-1");
    prep(f, 0, "t-1", &a);   /* again: still one slot */
    prep(f, 1, "t-2", &a);
    assert_string_equal(a.error, "");
    assert_string_equal(a.dev[1].cdi, "migsched.io/claim=t-2-gpu-0");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "1:-1:7g.40gb:dra:t-1;1:-1:7g.40gb:dra:t-2;0:-1:7g.40gb:dra:t-2;");
    snprintf(path, sizeof(path), "%s/migsched.claim-t-2.json", f->cdi);
    fp = fopen(path, "r");
    assert_non_null(fp);
    n = fread(text, 1, sizeof(text) - 1, fp);
    text[n] = '\0';
    fclose(fp);
    assert_non_null(strstr(text, "\"name\": \"t-2-gpu-1\""));
    assert_non_null(strstr(text, "\"name\": \"t-2-gpu-0\""));
    assert_non_null(strstr(text, "NVIDIA_VISIBLE_DEVICES=GPU-"));
    assert_non_null(strstr(text, "\"kind\": \"migsched.io/claim\""));
    /* MIG devices do not exist on a time-sliced node */
    prep(f, 2, "t-3", &a);
    assert_non_null(strstr(a.error, "MIG mode is off"));
    unprep(f, "t-1", &u);
    assert_string_equal(u.error, "");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:-1:7g.40gb:dra:t-2;1:-1:7g.40gb:dra:t-2;");
    assert_false(exists(f->cdi, "migsched.claim-t-1.json"));
    /* start-up sync: a spec of a claim holding nothing goes, so does a
     * temporary; t-2's is kept */
    snprintf(path, sizeof(path), "%s/migsched.claim-gone.json", f->cdi);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(path, sizeof(path), "%s/.migsched.claim-t-2.json.tmp", f->cdi);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(path, sizeof(path), "%s/vendor.json", f->cdi);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(ag_dra_x_claim_specs_sync(&f->a), 0);
    assert_false(exists(f->cdi, "migsched.claim-gone.json"));
    assert_false(exists(f->cdi, ".migsched.claim-t-2.json.tmp"));
    assert_true(exists(f->cdi, "migsched.claim-t-2.json"));
    assert_true(exists(f->cdi, "vendor.json"));
    unprep(f, "t-2", &u);
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "");
    assert_false(exists(f->cdi, "migsched.claim-t-2.json"));
    free(c0);
    free(c1);
    free(c2);
}

static void whole_gpu_slot(void **state)
{
    fx_t *f = *state;
    ag_dra_answer_t a, u;
    char inv[256];
    char *c0 = claim("c0", "w-1", "gpu-0");

    f->claims[0] = c0;
    prep(f, 0, "w-1", &a);
    assert_string_equal(a.error, "");
    assert_string_equal(a.dev[0].cdi, "migsched.io/claim=w-1-gpu-0");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "0:-1:7g.40gb:dra:w-1;");
    assert_true(exists(f->cdi, "migsched.claim-w-1.json"));
    unprep(f, "w-1", &u);
    assert_string_equal(u.error, "");
    inv_text(f, inv, sizeof(inv));
    assert_string_equal(inv, "");
    free(c0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(mig_prepare_idempotent, setup_mig, teardown),
        cmocka_unit_test_setup_teardown(mig_refusals_touch_nothing, setup_mig, teardown),
        cmocka_unit_test_setup_teardown(mig_restart_adopts, setup_mig, teardown),
        cmocka_unit_test_setup_teardown(ts_slots_and_specs, setup_ts, teardown),
        cmocka_unit_test_setup_teardown(whole_gpu_slot, setup_whole, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
