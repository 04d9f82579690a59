/* test_backend.c - the backend interface's conformance (src/backend/): one
 * scenario run on every implementation that can run here, each opened
 * through the registry as the daemons open it:
 *   sim, dry-run   their own inventory files in a temporary directory;
 *   nvml           the fake driver (tests/nvml/fake_nvml.c, MS_FAKE_NVML_LIB);
 *   agent          two real migsched-agent HTTP fronts (src/agent/, their
 *                  sim backend) in this process on loopback, one GPU each,
 *                  so a MOVE between the GPUs crosses nodes.
 * The scenario: an empty inventory; GPU uuids; probes; a create, creates
 * that overlap it refused (as "refused": the slices are taken); a start; a destroy of a running instance refused and
 * a forced one done; a make-before-break move within a GPU and across
 * GPUs; a stop; an op on a GPU that does not exist refused; a taken-over
 * uuid; the inventory the same after a close and a reopen. And the sim on
 * a full disk: an op whose journal line cannot be written did not happen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "backend/backend.h"

#define UUID_ADOPTED "MIG-11111111-2222-4333-8444-555555555555"

typedef struct agent_node {
    char root[64], state[96], cdi[96], listen[32], url[64];
    ag_cfg_t cfg;
    ag_t a;
    ag_http_t *http;
} agent_node_t;

typedef struct be_fx {
    char dir[64];
    ms_cluster_spec_t *spec;
    const ms_geom_t *geom[2];
    bool mig[2];
    const char *agent_url[2];
    int local[2];
    ms_backend_cfg_t cfg;
    ms_backend_t *b;
    agent_node_t node[2];
    int k3, k1;                    /* 3g.20gb's and 1g.5gb's profile indices */
} be_fx_t;

static void agent_up(agent_node_t *n, const char *name)
{
    ms_backend_cfg_t bc;
    ms_diag_t why;
    int try;

    snprintf(n->root, sizeof(n->root), "/tmp/ms-agent-XXXXXX");
    assert_non_null(mkdtemp(n->root));
    snprintf(n->state, sizeof(n->state), "%s/s", n->root);
    snprintf(n->cdi, sizeof(n->cdi), "%s/cdi", n->root);
    assert_int_equal(mkdir(n->state, 0700), 0);
    assert_int_equal(mkdir(n->cdi, 0755), 0);
    memset(&n->cfg, 0, sizeof(n->cfg));
    n->cfg.node_spec = strdup("1xA100-40GB");
    n->cfg.backend = strdup("sim");
    n->cfg.cdi_dir = strdup(n->cdi);
    n->cfg.caps_root = strdup(n->root);
    n->cfg.node_name = strdup(name);
    /* what ag_cfg_parse (the agent's main.c, not linked here) defaults:
     * ag_http_start's deadline thread refuses a zero timeout */
    n->cfg.max_body = 65536;
    n->cfg.max_conns = 64;
    n->cfg.max_conns_per_ip = 32;
    n->cfg.header_timeout_s = 10;
    n->cfg.body_timeout_s = 30;
    n->a.cfg = &n->cfg;
    pthread_mutex_init(&n->a.mu, NULL);
    assert_int_equal(ag_node_init(&n->a), 0);
    memset(&bc, 0, sizeof(bc));
    bc.kind = "sim";
    bc.state_dir = n->state;
    bc.ngpus = n->a.ngpus;
    bc.gpu_geom = n->a.geom;
    bc.gpu_mig = n->a.mig;
    bc.uuid_salt = name[0] == 'x' ? 0x10000u : 0x20000u;
    assert_int_equal(ms_backend_open(&bc, &n->a.be, &why), MS_OK);
    for (try = 0; try < 20 && n->http == NULL; try++) {
        int port = 20000 + (int)((unsigned)getpid() * 7919u + (unsigned)try * 104729u + (unsigned)name[0]) % 40000;

        snprintf(n->listen, sizeof(n->listen), "127.0.0.1:%d", port);
        free(n->cfg.listen);
        n->cfg.listen = strdup(n->listen);
        if (ag_http_start(&n->a, &n->http) != 0)
            n->http = NULL;
    }
    assert_non_null(n->http);
    snprintf(n->url, sizeof(n->url), "http://%s", n->listen);
}

static void agent_down(agent_node_t *n)
{
    char cmd[128];

    ag_http_stop(n->http);
    ms_backend_close(n->a.be);
    ag_node_free(&n->a);
    pthread_mutex_destroy(&n->a.mu);
    free(n->cfg.node_spec);   /* ag_cfg_free is the agent's main.c's */
    free(n->cfg.backend);
    free(n->cfg.cdi_dir);
    free(n->cfg.caps_root);
    free(n->cfg.node_name);
    free(n->cfg.listen);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", n->root);
    assert_int_equal(system(cmd), 0);
}

static void fx_open(be_fx_t *f, const char *kind)
{
    ms_diag_t diag;
    int g;

    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/ms-be-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(ms_cluster_spec_create(&f->spec), MS_OK);
    assert_int_equal(ms_cluster_spec_add(f->spec, strcmp(kind, "agent") == 0 ? "x=1xA100-40GB" : "x=2xA100-40GB",
                                         0, &diag), MS_OK);
    if (strcmp(kind, "agent") == 0)
        assert_int_equal(ms_cluster_spec_add(f->spec, "y=1xA100-40GB", 0, &diag), MS_OK);
    for (g = 0; g < 2; g++) {
        f->geom[g] = ms_cluster_spec_nodes(f->spec)[strcmp(kind, "agent") == 0 ? g : 0].geom;
        f->mig[g] = true;
    }
    f->k3 = ms_geom_profile_find(f->geom[0], "3g.20gb");
    f->k1 = ms_geom_profile_find(f->geom[0], "1g.5gb");
    f->cfg.kind = kind;
    f->cfg.state_dir = f->dir;
    f->cfg.ngpus = 2;
    f->cfg.gpu_geom = f->geom;
    f->cfg.gpu_mig = f->mig;
    if (strcmp(kind, "agent") == 0) {
        agent_up(&f->node[0], "x");
        agent_up(&f->node[1], "y");
        f->agent_url[0] = f->node[0].url;
        f->agent_url[1] = f->node[1].url;
        f->cfg.gpu_agent = f->agent_url;
        f->cfg.gpu_local = f->local;   /* 0, 0: a GPU each */
    }
    if (ms_backend_open(&f->cfg, &f->b, &diag) != MS_OK)
        fail_msg("%s: %s", kind, diag.msg);
    assert_string_equal(ms_backend_name(f->b), kind);
}

static void fx_close(be_fx_t *f)
{
    char cmd[96];

    ms_backend_close(f->b);
    if (strcmp(f->cfg.kind, "agent") == 0) {
        agent_down(&f->node[0]);
        agent_down(&f->node[1]);
    }
    ms_cluster_spec_destroy(f->spec);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

static ms_status_t run(be_fx_t *f, int kind, int gpu, int start, int prof, const char *job, bool force)
{
    ms_backend_op_t op;
    ms_diag_t why;
    ms_status_t st;

    memset(&op, 0, sizeof(op));
    op.op.kind = (uint8_t)kind;
    op.op.gpu = gpu;
    op.op.start = (int8_t)start;
    op.op.prof = (int8_t)prof;
    op.op.job = -1;
    op.job = job;
    op.profile = prof >= 0 ? ms_geom_profile(f->geom[gpu >= 0 && gpu < 2 ? gpu : 0], prof)->name : "";
    op.force = force;
    op.timeout_s = 30;
    st = ms_backend_run(f->b, &op, &why);
    assert_true(st == MS_OK || why.msg[0] != '\0');   /* a failure says why */
    return st;
}

/* An op that must fail: whose fault it was. */
static ms_backend_fault_t run_fault(be_fx_t *f, int kind, int gpu, int start, int prof)
{
    ms_backend_op_t op;
    ms_diag_t why;
    ms_status_t st;

    memset(&op, 0, sizeof(op));
    op.op.kind = (uint8_t)kind;
    op.op.gpu = gpu;
    op.op.start = (int8_t)start;
    op.op.prof = (int8_t)prof;
    op.op.job = -1;
    op.job = "";
    op.profile = prof >= 0 ? ms_geom_profile(f->geom[0], prof)->name : "";
    op.timeout_s = 30;
    st = ms_backend_run(f->b, &op, &why);
    assert_int_not_equal(st, MS_OK);
    return ms_backend_fault(st, &why);
}

static ms_status_t move(be_fx_t *f, int from_gpu, int from_start, int gpu, int start, const char *job)
{
    ms_backend_op_t op;
    ms_diag_t why;

    memset(&op, 0, sizeof(op));
    op.op.kind = MS_OP_MOVE;
    op.op.gpu = gpu;
    op.op.start = (int8_t)start;
    op.op.prof = (int8_t)f->k3;
    op.op.from_gpu = from_gpu;
    op.op.from_start = (int8_t)from_start;
    op.op.job = -1;
    op.job = job;
    op.profile = "3g.20gb";
    op.timeout_s = 30;
    return ms_backend_run(f->b, &op, &why);
}

/* The inventory as sorted "gpu@start:job" words. */
static void inventory(be_fx_t *f, char *buf, size_t len)
{
    ms_binst_t *inv;
    int n, i, j;

    buf[0] = '\0';
    assert_int_equal(ms_backend_inventory(f->b, &inv, &n, NULL), MS_OK);
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (inv[j].gpu < inv[i].gpu || (inv[j].gpu == inv[i].gpu && inv[j].start < inv[i].start)) {
                ms_binst_t t = inv[i];

                inv[i] = inv[j];
                inv[j] = t;
            }
    for (i = 0; i < n; i++) {
        size_t k = strlen(buf);

        assert_true(inv[i].start < 0 || strncmp(inv[i].uuid, "MIG-", 4) == 0);
        snprintf(buf + k, len - k, "%s%d@%d:%s", i > 0 ? " " : "", (int)inv[i].gpu, (int)inv[i].start, inv[i].job);
    }
    free(inv);
}

/* dry-run: one log line for each op it was given but the forced ones. */
static void dry_run_log(be_fx_t *f)
{
    char path[128], line[512];
    FILE *fp;
    int destroys = 0, lines = 0;

    snprintf(path, sizeof(path), "%s/dry-run.jsonl", f->dir);
    assert_non_null(fp = fopen(path, "r"));
    while (fgets(line, sizeof(line), fp) != NULL) {
        lines++;
        destroys += strstr(line, "\"op\":\"destroy\"") != NULL;
    }
    fclose(fp);
    assert_int_equal(destroys, 2);   /* the refused one and the idle one; not the forced */
    assert_int_equal(lines, 14);
}

static void scenario(const char *kind)
{
    be_fx_t f;
    char inv[256], u0[48], u1[48];
    ms_diag_t why;

    fx_open(&f, kind);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, "");
    snprintf(u0, sizeof(u0), "%s", ms_backend_gpu_uuid(f.b, 0));
    snprintf(u1, sizeof(u1), "%s", ms_backend_gpu_uuid(f.b, 1));
    assert_true(strncmp(u0, "GPU-", 4) == 0 && strncmp(u1, "GPU-", 4) == 0);
    assert_string_not_equal(u0, u1);
    assert_string_equal(ms_backend_gpu_uuid(f.b, 7), "");
    /* every GPU answers a probe; one that does not exist is an error */
    assert_int_equal(ms_backend_probe(f.b, 0, 5, &why), MS_OK);
    assert_int_equal(ms_backend_probe(f.b, 1, 5, &why), MS_OK);
    assert_int_not_equal(ms_backend_probe(f.b, 9, 5, &why), MS_OK);
    /* create; one at its start and one overlapping its slices are refused:
     * the slices are taken */
    assert_int_equal(run(&f, MS_OP_CREATE, 0, 0, f.k3, "", false), MS_OK);
    assert_int_not_equal(run(&f, MS_OP_CREATE, 0, 0, f.k1, "", false), MS_OK);
    assert_int_equal(run_fault(&f, MS_OP_CREATE, 0, 2, f.k1), MS_BF_REFUSED);
    /* start; the instance is the job's, its uuid found by job */
    assert_int_equal(run(&f, MS_OP_START, 0, 0, f.k3, "j1", false), MS_OK);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, "0@0:j1");
    ms_backend_inst_uuid(f.b, 0, 0, "j1", u0, sizeof(u0));
    assert_true(strncmp(u0, "MIG-", 4) == 0);
    /* a running instance is not destroyed by an op, only by a forced one */
    assert_int_not_equal(run(&f, MS_OP_DESTROY, 0, 0, f.k3, "", false), MS_OK);
    /* make-before-break within GPU 0, then to GPU 1 (another node for the agents) */
    assert_int_equal(run(&f, MS_OP_CREATE, 0, 4, f.k3, "", false), MS_OK);
    assert_int_equal(move(&f, 0, 0, 0, 4, "j1"), MS_OK);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, "0@0: 0@4:j1");
    assert_int_equal(run(&f, MS_OP_CREATE, 1, 0, f.k3, "", false), MS_OK);
    assert_int_equal(move(&f, 0, 4, 1, 0, "j1"), MS_OK);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, "0@0: 0@4: 1@0:j1");
    assert_int_equal(run(&f, MS_OP_STOP, 1, 0, f.k3, "j1", false), MS_OK);
    assert_int_equal(run(&f, MS_OP_DESTROY, 0, 4, f.k3, "", false), MS_OK);
    /* forced: whatever runs on it */
    assert_int_equal(run(&f, MS_OP_START, 0, 0, f.k3, "j2", false), MS_OK);
    assert_int_equal(run(&f, MS_OP_DESTROY, 0, 0, f.k3, "j2", true), MS_OK);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, "1@0:");
    /* a GPU that does not exist */
    assert_int_not_equal(run(&f, MS_OP_CREATE, 9, 0, f.k3, "", false), MS_OK);
    /* a uuid another replica gave the instance: a simulated backend takes
     * it, hardware (and an agent) keeps its own */
    ms_backend_inst_uuid(f.b, 1, 0, NULL, u1, sizeof(u1));
    assert_int_equal(ms_backend_adopt_uuid(f.b, 1, 0, UUID_ADOPTED, &why), MS_OK);
    ms_backend_inst_uuid(f.b, 1, 0, NULL, u0, sizeof(u0));
    if (strcmp(kind, "sim") == 0 || strcmp(kind, "dry-run") == 0)
        assert_string_equal(u0, UUID_ADOPTED);
    else
        assert_string_equal(u0, u1);
    assert_int_equal(run(&f, MS_OP_START, 1, 0, f.k3, "j3", false), MS_OK);
    /* the same after a close and a reopen: tags, uuids */
    ms_backend_close(f.b);
    f.b = NULL;
    if (ms_backend_open(&f.cfg, &f.b, &why) != MS_OK)
        fail_msg("%s reopen: %s", kind, why.msg);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, "1@0:j3");
    ms_backend_inst_uuid(f.b, 1, 0, "j3", u1, sizeof(u1));
    assert_string_equal(u1, u0);
    if (strcmp(kind, "dry-run") == 0)
        dry_run_log(&f);
    fx_close(&f);
}

static void test_sim(void **state)
{
    (void)state;
    scenario("sim");
}

/* The sim's files cannot grow (RLIMIT_FSIZE: a full disk for this
 * process): an op fails and did not happen, in memory as on disk; with room
 * again the next op goes through and a reopen finds what the memory had. */
static void test_sim_full_disk(void **state)
{
    be_fx_t f;
    char inv[256], before[256];
    struct rlimit old, none = { 0, 0 };
    ms_status_t st1, st2;
    ms_diag_t why;

    (void)state;
    fx_open(&f, "sim");
    assert_int_equal(run(&f, MS_OP_CREATE, 0, 0, f.k3, "", false), MS_OK);
    assert_int_equal(run(&f, MS_OP_START, 0, 0, f.k3, "j1", false), MS_OK);
    inventory(&f, before, sizeof(before));
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    none.rlim_max = old.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
    /* nothing printed while no file may grow */
    st1 = run(&f, MS_OP_CREATE, 1, 0, f.k3, "", false);
    st2 = run(&f, MS_OP_STOP, 0, 0, f.k3, "j1", false);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_int_not_equal(st1, MS_OK);
    assert_int_not_equal(st2, MS_OK);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, before);          /* neither happened */
    assert_int_equal(run(&f, MS_OP_CREATE, 1, 0, f.k3, "", false), MS_OK);
    inventory(&f, before, sizeof(before));
    assert_string_equal(before, "0@0:j1 1@0:");
    ms_backend_close(f.b);
    f.b = NULL;
    if (ms_backend_open(&f.cfg, &f.b, &why) != MS_OK)
        fail_msg("reopen: %s", why.msg);
    inventory(&f, inv, sizeof(inv));
    assert_string_equal(inv, before);
    fx_close(&f);
}

static void test_dry_run(void **state)
{
    (void)state;
    scenario("dry-run");
}

static void test_nvml_fake_driver(void **state)
{
    char dir[64] = "/tmp/ms-nvml-XXXXXX", hw[96], cmd[128];
    FILE *fp;

    (void)state;
#ifndef MS_FAKE_NVML_LIB
    skip();
#else
    if (access(MS_FAKE_NVML_LIB, R_OK) != 0)
        skip();
    assert_non_null(mkdtemp(dir));
    snprintf(hw, sizeof(hw), "%s/hw", dir);
    assert_non_null(fp = fopen(hw, "w"));
    fputs("gpu a100-40\ngpu a100-40\n", fp);
    fclose(fp);
    setenv("MIGSCHEDD_NVML_LIB", MS_FAKE_NVML_LIB, 1);
    setenv("MS_FAKE_NVML_STATE", hw, 1);
    unsetenv("MS_FAKE_NVML_FAULTS");
    scenario("nvml");
    unsetenv("MIGSCHEDD_NVML_LIB");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
#endif
}

static void test_agent(void **state)
{
    (void)state;
    scenario("agent");
}

/* The registry: every backend by name, every entry set; an unknown name is
 * an error that says so. */
static void test_registry(void **state)
{
    const ms_backend_ops_t *const *all = ms_backend_list();
    ms_backend_cfg_t cfg;
    ms_backend_t *b = (ms_backend_t *)1;
    ms_diag_t why;
    int i;

    (void)state;
    for (i = 0; all[i] != NULL; i++) {
        const ms_backend_ops_t *o = all[i];

        assert_ptr_equal(ms_backend_find(o->name), o);
        assert_non_null(o->open);
        assert_non_null(o->close);
        assert_non_null(o->inventory);
        assert_non_null(o->create);
        assert_non_null(o->destroy);
        assert_non_null(o->start);
        assert_non_null(o->stop);
        assert_non_null(o->move);
        assert_non_null(o->adopt_uuid);
        assert_non_null(o->gpu_uuid);
        assert_non_null(o->inst_uuid);
        assert_non_null(o->probe);
    }
    assert_int_equal(i, 4);
    assert_null(ms_backend_find("tpu"));
    memset(&cfg, 0, sizeof(cfg));
    cfg.kind = "tpu";
    assert_int_equal(ms_backend_open(&cfg, &b, &why), MS_EINVAL);
    assert_null(b);
    assert_non_null(strstr(why.msg, "unknown backend"));
    assert_string_equal(ms_backend_op_name(MS_OP_MOVE), "move");
    assert_string_equal(ms_backend_op_name(99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_sim),
        cmocka_unit_test(test_sim_full_disk),
        cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_nvml_fake_driver),
        cmocka_unit_test(test_agent),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
