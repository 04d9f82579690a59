/* test_backend_faults.c - the backends' faults, as the executor sees them
 * (src/backend/): whose fault a failure is (refused, the GPU's, the
 * node's), the sim's faults that come and go (STATE_DIR/sim-faults), probes,
 * and the agent backend against agents that misbehave on a real socket
 * (tests/service/fake_agent.c): one that never answers costs one deadline
 * and one request; one that drops the connection is not sent the op again,
 * its inventory is read instead (issue 20, defect 7). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "migsched/sched.h"
#include "service/fake_agent.h"

typedef struct bf {
    char dir[64];
    ms_cluster_spec_t *spec;
    const ms_geom_t *geom[2];
    bool mig[2];
    const char *url[2];
    int local[2];
    ms_backend_cfg_t cfg;
    ms_backend_t *b;
    int k3;
} bf_t;

static ms_status_t bf_open(bf_t *f, const char *kind, const char *url)
{
    ms_diag_t diag;

    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/ms-bf-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(ms_cluster_spec_create(&f->spec), MS_OK);
    assert_int_equal(ms_cluster_spec_add(f->spec, "x=2xA100-40GB", 0, &diag), MS_OK);
    f->geom[0] = f->geom[1] = ms_cluster_spec_nodes(f->spec)[0].geom;
    f->mig[0] = f->mig[1] = true;
    f->k3 = ms_geom_profile_find(f->geom[0], "3g.20gb");
    f->cfg.kind = kind;
    f->cfg.state_dir = f->dir;
    f->cfg.ngpus = 2;
    f->cfg.gpu_geom = f->geom;
    f->cfg.gpu_mig = f->mig;
    if (url != NULL) {
        f->url[0] = f->url[1] = url;
        f->local[1] = 1;
        f->cfg.gpu_agent = f->url;
        f->cfg.gpu_local = f->local;
    }
    return ms_backend_open(&f->cfg, &f->b, &diag);
}

static void bf_close(bf_t *f)
{
    char cmd[96];

    ms_backend_close(f->b);
    ms_cluster_spec_destroy(f->spec);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

static ms_status_t op(bf_t *f, int kind, int gpu, int start, const char *job, double timeout, ms_backend_fault_t *fault)
{
    ms_backend_op_t o;
    ms_diag_t why;
    ms_status_t st;

    memset(&o, 0, sizeof(o));
    o.op.kind = (uint8_t)kind;
    o.op.gpu = gpu;
    o.op.start = (int8_t)start;
    o.op.prof = (int8_t)f->k3;
    o.op.job = -1;
    o.job = job;
    o.profile = "3g.20gb";
    o.timeout_s = timeout;
    st = ms_backend_run(f->b, &o, &why);
    *fault = ms_backend_fault(st, &why);
    if (st != MS_OK)
        assert_true(why.msg[0] != '\0');
    return st;
}

static void faults_file(bf_t *f, const char *text)
{
    char path[96], tmp[112];
    FILE *fp;

    snprintf(path, sizeof(path), "%s/sim-faults", f->dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_non_null(fp = fopen(tmp, "w"));
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(rename(tmp, path), 0);   /* a new inode: read again */
}

/* sim-faults: a lost GPU fails its ops and probes as the GPU's fault; a
 * failing one its ops as their own while it answers probes; a line the sim
 * cannot read is ignored; once the file says nothing, everything works. */
static void test_sim_faults(void **state)
{
    bf_t f;
    ms_backend_fault_t fault;
    ms_diag_t why;

    (void)state;
    assert_int_equal(bf_open(&f, "sim", NULL), MS_OK);
    faults_file(&f, "# a comment\nlost 1\nfail 0\nbogus 3\nlost 99\n");
    assert_int_not_equal(op(&f, MS_OP_CREATE, 1, 0, "", 5, &fault), MS_OK);
    assert_int_equal(fault, MS_BF_GPU);
    assert_int_not_equal(ms_backend_probe(f.b, 1, 5, &why), MS_OK);
    assert_int_equal(ms_backend_fault(MS_EIO, &why), MS_BF_GPU);
    assert_int_not_equal(op(&f, MS_OP_CREATE, 0, 0, "", 5, &fault), MS_OK);
    assert_int_equal(fault, MS_BF_OP);
    assert_int_equal(ms_backend_probe(f.b, 0, 5, &why), MS_OK);
    faults_file(&f, "");
    assert_int_equal(op(&f, MS_OP_CREATE, 0, 0, "", 5, &fault), MS_OK);
    assert_int_equal(op(&f, MS_OP_CREATE, 1, 0, "", 5, &fault), MS_OK);
    assert_int_equal(ms_backend_probe(f.b, 1, 5, &why), MS_OK);
    /* a create over taken slices is refused: the caller's view is behind */
    assert_int_equal(op(&f, MS_OP_CREATE, 1, 2, "", 5, &fault), MS_ENOFIT);
    assert_int_equal(fault, MS_BF_REFUSED);
    bf_close(&f);
}

/* An agent that reads the op and never answers: the op fails at its
 * deadline as the node's fault, having been sent once; a probe too. */
static void test_agent_hangs(void **state)
{
    fake_agent_t *a = fake_agent_start(FAKE_AGENT_HANG, 2);
    ms_backend_fault_t fault;
    bf_t f;

    (void)state;
    assert_int_equal(bf_open(&f, "agent", fake_agent_url(a)), MS_OK);
    assert_int_equal(op(&f, MS_OP_CREATE, 0, 0, "", 0.5, &fault), MS_EIO);
    assert_int_equal(fault, MS_BF_NODE);
    assert_true(fake_agent_posts(a) <= 1);   /* never twice */
    assert_int_equal(op(&f, MS_OP_START, 1, 0, "j", 0.5, &fault), MS_EIO);
    assert_int_equal(fault, MS_BF_NODE);
    assert_true(fake_agent_posts(a) <= 2);
    fake_agent_release(a);
    bf_close(&f);
    fake_agent_stop(a);
}

/* An agent that drops the connection after reading the op: the op is not
 * sent again; the agent's inventory decides (a destroy whose instance is
 * not there is done, a create whose instance is not there failed). */
static void test_agent_drops(void **state)
{
    fake_agent_t *a = fake_agent_start(FAKE_AGENT_DROP, 2);
    ms_backend_fault_t fault;
    bf_t f;
    int gets;

    (void)state;
    assert_int_equal(bf_open(&f, "agent", fake_agent_url(a)), MS_OK);
    gets = fake_agent_gets(a);   /* the open's read */
    assert_int_equal(op(&f, MS_OP_CREATE, 0, 0, "", 30, &fault), MS_EIO);
    assert_int_equal(fault, MS_BF_NODE);
    assert_int_equal(fake_agent_posts(a), 1);   /* main sent it twice */
    assert_int_equal(fake_agent_gets(a), gets + 1);   /* and looked instead */
    assert_int_equal(op(&f, MS_OP_DESTROY, 1, 4, "", 30, &fault), MS_OK);
    assert_int_equal(fake_agent_posts(a), 2);
    bf_close(&f);
    fake_agent_stop(a);
}

/* No agent listening: nothing was sent, the node's fault, at once. */
static void test_agent_gone(void **state)
{
    fake_agent_t *a = fake_agent_start(FAKE_AGENT_DROP, 2);
    char url[64];
    ms_backend_fault_t fault;
    ms_diag_t why;
    bf_t f;

    (void)state;
    snprintf(url, sizeof(url), "%s", fake_agent_url(a));
    assert_int_equal(bf_open(&f, "agent", url), MS_OK);
    fake_agent_stop(a);   /* the port closes */
    assert_int_equal(op(&f, MS_OP_START, 0, 0, "j", 30, &fault), MS_EIO);
    assert_int_equal(fault, MS_BF_NODE);
    assert_int_not_equal(ms_backend_probe(f.b, 0, 5, &why), MS_OK);
    assert_int_equal(ms_backend_fault(MS_EIO, &why), MS_BF_NODE);
    bf_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_faults),
        cmocka_unit_test(test_agent_hangs),
        cmocka_unit_test(test_agent_drops),
        cmocka_unit_test(test_agent_gone),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
