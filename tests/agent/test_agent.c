/* test_agent.c - migsched-agent's parts in-process (src/agent/): the
 * request parsers (every field refused with its name), the CDI spec (its
 * shape, capability nodes from a capabilities tree) and the directory sync
 * (writes what is missing, removes only our stale files), and the create
 * path under concurrency (many threads retrying one create make exactly one
 * instance) on the sim backend in a temporary directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "migsched/plan.h"

/* --- request parsers ------------------------------------------------------ */

static void parse_create_refusals(void **state)
{
    static const struct {
        const char *body, *field;
    } BAD[] = {
        { "", "" },
        { "[]", "" },
        { "{\"gpu\":0,\"profile\":\"1g\"}", "start" },
        { "{\"profile\":\"1g\",\"start\":0}", "gpu" },
        { "{\"gpu\":0,\"start\":0}", "profile" },
        { "{\"gpu\":-1,\"profile\":\"1g\",\"start\":0}", "gpu" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":16}", "start" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":0.5}", "start" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":0,\"job\":\"a b\"}", "job" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":0,\"job\":7}", "job" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":0,\"job\":\".\"}", "job" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":0,\"job\":\"..\"}", "job" },
        { "{\"gpu\":0,\"profile\":\"\",\"start\":0}", "profile" },
        { "{\"gpu\":0,\"profile\":\"1g/x\",\"start\":0}", "profile" },
        { "{\"gpu\":0,\"profile\":\"1g\",\"start\":0,\"extra\":1}", "" },
        { "{\"gpu\":0,\"gpu\":1,\"profile\":\"1g\",\"start\":0}", "" },
        { "{\"gpu\":0,\"profile\":\"1g\\u0000x\",\"start\":0}", "" },   /* jansson refuses NUL */
    };
    ag_create_t rq;
    ag_err_t e;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        memset(&e, 0, sizeof(e));
        assert_int_equal(ag_parse_create(BAD[i].body, strlen(BAD[i].body), &rq, &e), -1);
        assert_int_equal(e.code, 400);
        assert_string_equal(e.field, BAD[i].field);
        assert_true(e.msg[0] != '\0');
    }
    {
        const char *ok = "{\"gpu\":3,\"profile\":\"3g.20gb\",\"start\":4,\"job\":\"j-1.a:b_c\"}";

        assert_int_equal(ag_parse_create(ok, strlen(ok), &rq, &e), 0);
    }
    assert_int_equal(rq.gpu, 3);
    assert_int_equal(rq.start, 4);
    assert_string_equal(rq.profile, "3g.20gb");
    assert_string_equal(rq.job, "j-1.a:b_c");
    {
        const char *idle = "{\"gpu\":0,\"profile\":\"1g\",\"start\":0}";

        assert_int_equal(ag_parse_create(idle, strlen(idle), &rq, &e), 0);
    }
    assert_string_equal(rq.job, "");
}

static void parse_op_rules(void **state)
{
    static const struct {
        const char *body;
        int ok;
        const char *field;
    } T[] = {
        { "{\"op\":\"create\",\"gpu\":0,\"start\":0,\"profile\":\"1g\"}", 1, "" },
        { "{\"op\":\"create\",\"gpu\":0,\"start\":-1,\"profile\":\"1g\"}", 0, "start" },
        { "{\"op\":\"create\",\"gpu\":0,\"start\":0}", 0, "profile" },
        { "{\"op\":\"destroy\",\"gpu\":0,\"start\":2}", 1, "" },
        { "{\"op\":\"start\",\"gpu\":0,\"start\":2}", 0, "job" },
        { "{\"op\":\"start\",\"gpu\":0,\"start\":-1,\"job\":\"j\"}", 0, "profile" },
        { "{\"op\":\"start\",\"gpu\":0,\"start\":-1,\"job\":\"j\",\"profile\":\"7g.40gb\"}", 1, "" },
        { "{\"op\":\"move\",\"gpu\":0,\"start\":4,\"job\":\"j\",\"profile\":\"3g\"}", 0, "from_gpu" },
        { "{\"op\":\"move\",\"gpu\":0,\"start\":4,\"job\":\"j\",\"profile\":\"3g\",\"from_gpu\":1,\"from_start\":0,\"bbm\":1}", 0, "bbm" },
        { "{\"op\":\"move\",\"gpu\":0,\"start\":4,\"job\":\"j\",\"profile\":\"3g\",\"from_gpu\":1,\"from_start\":0,\"bbm\":true}", 1, "" },
        { "{\"op\":\"stop\",\"gpu\":0,\"start\":4,\"job\":\"j\"}", 1, "" },
        { "{\"op\":\"reap\",\"gpu\":0,\"start\":4}", 1, "" },
        { "{\"op\":\"explode\",\"gpu\":0,\"start\":4}", 0, "op" },
        { "{\"gpu\":0,\"start\":4}", 0, "op" },
    };
    ag_op_t rq;
    ag_err_t e;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
        int rc;

        memset(&e, 0, sizeof(e));
        rc = ag_parse_op(T[i].body, strlen(T[i].body), &rq, &e);
        if (T[i].ok) {
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(rc, -1);
            assert_int_equal(e.code, 400);
            assert_string_equal(e.field, T[i].field);
        }
    }
    assert_int_equal(ag_parse_op(T[9].body, strlen(T[9].body), &rq, &e), 0);
    assert_int_equal(rq.kind, MS_OP_MOVE);
    assert_int_equal(rq.from_gpu, 1);
    assert_true(rq.bbm);
    assert_true(ag_uuid_valid("MIG-0000-aa"));
    assert_false(ag_uuid_valid(""));
    assert_false(ag_uuid_valid("MIG/../x"));
    assert_true(ag_job_valid(""));
    /* "." and "..": path segments no HTTP client sends as they are (issue
     * 20, defect 20); a name that merely holds dots stays valid */
    assert_false(ag_uuid_valid("."));
    assert_false(ag_uuid_valid(".."));
    assert_false(ag_job_valid("."));
    assert_false(ag_job_valid(".."));
    assert_true(ag_uuid_valid("..."));
    assert_true(ag_job_valid("a.b"));
}

/* --- an agent on the sim backend in a temporary directory ---------------- */

typedef struct fx {
    char root[64], state[128], cdi[128], caps[128];
    ag_cfg_t cfg;
    ag_t a;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    ms_backend_cfg_t bc;
    ms_diag_t why;

    if (f == NULL)
        return -1;
    snprintf(f->root, sizeof(f->root), "/tmp/ms-agent-XXXXXX");
    if (mkdtemp(f->root) == NULL)
        return -1;
    snprintf(f->state, sizeof(f->state), "%s/s", f->root);
    snprintf(f->cdi, sizeof(f->cdi), "%s/cdi", f->root);
    snprintf(f->caps, sizeof(f->caps), "%s/caps", f->root);
    if (mkdir(f->state, 0700) != 0 || mkdir(f->cdi, 0755) != 0)
        return -1;
    f->cfg.node_spec = strdup("2xA100-40GB");
    f->cfg.backend = strdup("sim");
    f->cfg.cdi_dir = strdup(f->cdi);
    f->cfg.caps_root = strdup(f->caps);
    f->cfg.node_name = strdup("t");
    f->a.cfg = &f->cfg;
    pthread_mutex_init(&f->a.mu, NULL);
    if (ag_node_init(&f->a) != 0)
        return -1;
    memset(&bc, 0, sizeof(bc));
    bc.kind = "sim";
    bc.state_dir = f->state;
    bc.ngpus = f->a.ngpus;
    bc.gpu_geom = f->a.geom;
    bc.gpu_mig = f->a.mig;
    if (ms_backend_open(&bc, &f->a.be, &why) != MS_OK)
        return -1;
    *state = f;
    return 0;
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
    free(f->cfg.caps_root);
    free(f->cfg.node_name);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void cdi_spec_shape_and_caps(void **state)
{
    fx_t *f = *state;
    ms_binst_t in;
    json_t *spec, *dev, *nodes;
    char dir[256], path[300];
    size_t i;
    int caps = 0;

    memset(&in, 0, sizeof(in));
    in.gpu = 1;
    in.start = 4;
    in.prof = (int8_t)ms_geom_profile_find(f->a.geom[1], "3g.20gb");
    snprintf(in.uuid, sizeof(in.uuid), "MIG-test-0001");
    in.gi_id = 2;
    in.ci_id = 0;
    snprintf(dir, sizeof(dir), "%s/gpu1/mig/gi2/ci0", f->caps);
    snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
    assert_int_equal(system(path), 0);
    snprintf(path, sizeof(path), "%s/gpu1/mig/gi2/access", f->caps);
    write_file(path, "DeviceFileMinor: 21\nDeviceFileMode: 292\n");
    snprintf(path, sizeof(path), "%s/gpu1/mig/gi2/ci0/access", f->caps);
    write_file(path, "DeviceFileMode: 292\nDeviceFileMinor: 22\n");

    spec = ag_cdi_spec(&f->a, &in);
    assert_non_null(spec);
    assert_string_equal(json_string_value(json_object_get(spec, "cdiVersion")), "0.6.0");
    assert_string_equal(json_string_value(json_object_get(spec, "kind")), "migsched.io/mig");
    assert_int_equal(json_array_size(json_object_get(spec, "devices")), 1);
    dev = json_array_get(json_object_get(spec, "devices"), 0);
    assert_string_equal(json_string_value(json_object_get(dev, "name")), "MIG-test-0001");
    assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(dev, "containerEdits"), "env"), 0)),
                        "NVIDIA_VISIBLE_DEVICES=MIG-test-0001");
    nodes = json_object_get(json_object_get(dev, "containerEdits"), "deviceNodes");
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 0), "path")), "/dev/nvidia1");
    for (i = 0; i < json_array_size(nodes); i++) {
        const char *p = json_string_value(json_object_get(json_array_get(nodes, i), "path"));

        if (strcmp(p, "/dev/nvidia-caps/nvidia-cap21") == 0 || strcmp(p, "/dev/nvidia-caps/nvidia-cap22") == 0)
            caps++;
    }
    assert_int_equal(caps, 2);
    assert_string_equal(json_string_value(json_object_get(json_object_get(spec, "annotations"), "migsched.io/placement")),
                        "1:4");
    json_decref(spec);

    /* no capability files: no capability nodes, still a valid spec */
    in.gi_id = 5;
    spec = ag_cdi_spec(&f->a, &in);
    assert_non_null(spec);
    nodes = json_object_get(json_object_get(json_array_get(json_object_get(spec, "devices"), 0), "containerEdits"),
                            "deviceNodes");
    assert_int_equal(json_array_size(nodes), 4);
    json_decref(spec);
}

static void cdi_sync_only_ours(void **state)
{
    fx_t *f = *state;
    ms_binst_t inv[3];
    char path[300];
    json_error_t je;
    json_t *o;
    int k;

    memset(inv, 0, sizeof(inv));
    for (k = 0; k < 3; k++) {
        inv[k].gpu = 0;
        inv[k].start = (int8_t)(k * 2);
        inv[k].prof = 0;
        snprintf(inv[k].uuid, sizeof(inv[k].uuid), "MIG-s-%d", k);
    }
    inv[2].start = -1;   /* a time-slice slot: no spec */
    snprintf(path, sizeof(path), "%s/other.json", f->cdi);
    write_file(path, "{}");
    snprintf(path, sizeof(path), "%s/migsched-MIG-gone.json", f->cdi);
    write_file(path, "{}");
    snprintf(path, sizeof(path), "%s/.migsched-MIG-half.json.tmp", f->cdi);
    write_file(path, "{");
    assert_int_equal(ag_cdi_sync(&f->a, inv, 3, false), 0);
    assert_int_equal(count_files(f->cdi, "migsched-"), 2);
    assert_int_equal(count_files(f->cdi, ".migsched-"), 0);
    assert_int_equal(count_files(f->cdi, "other.json"), 1);
    assert_int_equal((int)f->a.st.cdi_written, 2);
    assert_int_equal((int)f->a.st.cdi_removed, 1);
    for (k = 0; k < 2; k++) {
        snprintf(path, sizeof(path), "%s/migsched-MIG-s-%d.json", f->cdi, k);
        o = json_load_file(path, 0, &je);
        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "devices"), 0), "name")),
                            inv[k].uuid);
        json_decref(o);
    }
    /* in line already: nothing written; rewrite: every spec again */
    assert_int_equal(ag_cdi_sync(&f->a, inv, 3, false), 0);
    assert_int_equal((int)f->a.st.cdi_written, 2);
    assert_int_equal(ag_cdi_sync(&f->a, inv, 3, true), 0);
    assert_int_equal((int)f->a.st.cdi_written, 4);
    /* everything gone: only the other vendor's file stays */
    assert_int_equal(ag_cdi_sync(&f->a, inv, 0, false), 0);
    assert_int_equal(count_files(f->cdi, "migsched-"), 0);
    assert_int_equal(count_files(f->cdi, "other.json"), 1);
}

typedef struct racer {
    fx_t *f;
    int status;
    char uuid[48];
} racer_t;

static void *race(void *p)
{
    racer_t *r = p;
    ag_create_t rq;
    char *body;
    json_error_t je;
    json_t *o;

    memset(&rq, 0, sizeof(rq));
    rq.gpu = 1;
    rq.start = 4;
    snprintf(rq.profile, sizeof(rq.profile), "3g.20gb");
    snprintf(rq.job, sizeof(rq.job), "racer");
    body = ag_create(&r->f->a, &rq, &r->status);
    if (body != NULL && (o = json_loads(body, 0, &je)) != NULL) {
        const char *u = json_string_value(json_object_get(o, "uuid"));

        snprintf(r->uuid, sizeof(r->uuid), "%s", u != NULL ? u : "");
        json_decref(o);
    }
    free(body);
    return NULL;
}

static void concurrent_retries_create_once(void **state)
{
    fx_t *f = *state;
    racer_t r[8];
    pthread_t th[8];
    ms_binst_t *inv;
    int i, n, created = 0, existing = 0, status;
    char *body;

    for (i = 0; i < 8; i++) {
        r[i].f = f;
        r[i].status = 0;
        r[i].uuid[0] = '\0';
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    for (i = 0; i < 8; i++) {
        created += r[i].status == 201;
        existing += r[i].status == 200;
        assert_string_equal(r[i].uuid, r[0].uuid);
    }
    assert_int_equal(created, 1);
    assert_int_equal(existing, 7);
    assert_int_equal(ms_backend_inventory(f->a.be, &inv, &n, NULL), MS_OK);
    assert_int_equal(n, 1);
    assert_string_equal(inv[0].job, "racer");
    free(inv);
    assert_int_equal(count_files(f->cdi, "migsched-"), 1);
    /* delete twice: the second finds nothing and says so */
    body = ag_delete(&f->a, r[0].uuid, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "\"deleted\":true"));
    free(body);
    body = ag_delete(&f->a, r[0].uuid, &status);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "\"deleted\":false"));
    free(body);
    assert_int_equal(count_files(f->cdi, "migsched-"), 0);
}

/* An op that the instance's state does not allow is the caller's conflict
 * (409, reason conflict), not the agent's failure (500): destroying an
 * instance a job runs on, starting a job on an instance another runs on.
 * Nothing changes. (Issue 20, defect 20: it was a 500.) */
static void op_refused_by_state_is_409(void **state)
{
    fx_t *f = *state;
    ag_create_t rq;
    ag_op_t op;
    ms_binst_t *inv;
    int status, n;
    char *body;

    memset(&rq, 0, sizeof(rq));
    rq.gpu = 0;
    rq.start = 0;
    snprintf(rq.profile, sizeof(rq.profile), "3g.20gb");
    snprintf(rq.job, sizeof(rq.job), "j1");
    body = ag_create(&f->a, &rq, &status);
    assert_int_equal(status, 201);
    free(body);
    memset(&op, 0, sizeof(op));
    op.kind = MS_OP_DESTROY;
    op.gpu = 0;
    op.start = 0;
    op.from_gpu = op.from_start = -1;
    snprintf(op.profile, sizeof(op.profile), "3g.20gb");
    body = ag_op(&f->a, &op, &status);
    assert_int_equal(status, 409);
    assert_non_null(strstr(body, "\"reason\":\"conflict\""));
    free(body);
    op.kind = MS_OP_START;
    snprintf(op.job, sizeof(op.job), "j2");
    body = ag_op(&f->a, &op, &status);
    assert_int_equal(status, 409);
    assert_non_null(strstr(body, "\"reason\":\"conflict\""));
    free(body);
    assert_int_equal(ms_backend_inventory(f->a.be, &inv, &n, NULL), MS_OK);
    assert_int_equal(n, 1);
    assert_string_equal(inv[0].job, "j1");
    free(inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_create_refusals),
        cmocka_unit_test(parse_op_rules),
        cmocka_unit_test_setup_teardown(cdi_spec_shape_and_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(cdi_sync_only_ours, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_retries_create_once, setup, teardown),
        cmocka_unit_test_setup_teardown(op_refused_by_state_is_409, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
