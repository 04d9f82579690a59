/* test_rpc.c - src/rpc/ (the gRPC server and unary client over gRPC's C
 * core, against each other on a unix socket, and a raw C-core client for
 * the server's streams) and the device plugin's messages (src/agent/
 * dp_msg.c: resources, slot ids, Allocate, GetPreferredAllocation, the
 * pod-resources lookup). The real kubelet talks to both in
 * tests/k8s/test_e2e_node.sh; here are the properties.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "agent/dp.h"
#include "deviceplugin/v1beta1/api.pb-c.h"
#include "podresources/v1/api.pb-c.h"
#include "rpc/rpc.h"

/* --- a server with three methods ---------------------------------------- */

typedef struct tctx {
    pthread_mutex_t mu;
    int version;          /* what Watch sends */
    int snapshots;        /* how often it was asked */
} tctx_t;

static int echo(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    if (len > 0) {
        if ((out->data = malloc(len)) == NULL)
            return MS_RPC_INTERNAL;
        memcpy(out->data, req, len);
    }
    out->len = len;
    return MS_RPC_OK;
}

static int refuse(void *ctx, const uint8_t *req, size_t len, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    snprintf(msg, msglen, "no, because %zu bytes", len);
    return MS_RPC_FAILED_PRECONDITION;
}

static int watch(void *ctx, ms_rpc_buf_t *out, char *msg, size_t msglen)
{
    tctx_t *t = ctx;
    char buf[32];

    pthread_mutex_lock(&t->mu);
    snprintf(buf, sizeof(buf), "v%d", t->version);
    t->snapshots++;
    pthread_mutex_unlock(&t->mu);
    out->len = strlen(buf);
    out->data = malloc(out->len);
    if (out->data == NULL)
        return MS_RPC_INTERNAL;
    memcpy(out->data, buf, out->len);
    return MS_RPC_OK;
}

static const ms_rpc_method_t METHODS[] = {
    { "/t.S/Echo", echo, NULL },
    { "/t.S/Refuse", refuse, NULL },
    { "/t.S/Watch", NULL, watch },
};

static char sock_path[128], target[160];

static ms_rpc_server_t *start_server(tctx_t *t)
{
    ms_rpc_server_t *s = NULL;
    char err[256];

    snprintf(sock_path, sizeof(sock_path), "/tmp/ms-test-rpc-%d.sock", (int)getpid());
    snprintf(target, sizeof(target), "unix://%s", sock_path);
    assert_int_equal(ms_rpc_server_start(sock_path, METHODS, 3, t, &s, err, sizeof(err)), 0);
    return s;
}

static void unary_calls(void **state)
{
    tctx_t t = { PTHREAD_MUTEX_INITIALIZER, 1, 0 };
    ms_rpc_server_t *s = start_server(&t);
    ms_rpc_buf_t r;
    char err[512];
    uint8_t big[100000];
    size_t i;

    /* every payload comes back as sent, the empty one too */
    for (i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)(i * 7 + 3);
    assert_int_equal(ms_rpc_call(target, "/t.S/Echo", big, sizeof(big), 5, &r, err, sizeof(err)), MS_RPC_OK);
    assert_int_equal(r.len, sizeof(big));
    assert_memory_equal(r.data, big, sizeof(big));
    ms_rpc_buf_free(&r);
    assert_int_equal(ms_rpc_call(target, "/t.S/Echo", NULL, 0, 5, &r, err, sizeof(err)), MS_RPC_OK);
    assert_int_equal(r.len, 0);
    /* a handler's refusal arrives with its code and message */
    assert_int_equal(ms_rpc_call(target, "/t.S/Refuse", big, 5, 5, &r, err, sizeof(err)),
                     MS_RPC_FAILED_PRECONDITION);
    assert_non_null(strstr(err, "no, because 5 bytes"));
    assert_null(r.data);
    /* a method nobody serves */
    assert_int_equal(ms_rpc_call(target, "/t.S/Nope", NULL, 0, 5, &r, err, sizeof(err)), MS_RPC_UNIMPLEMENTED);
    ms_rpc_server_stop(s);
    /* the socket is gone with the server, and a call to it fails fast */
    assert_int_not_equal(access(sock_path, F_OK), 0);
    {
        time_t t0 = time(NULL);
        int code = ms_rpc_call(target, "/t.S/Echo", NULL, 0, 3, &r, err, sizeof(err));

        assert_true(code == MS_RPC_UNAVAILABLE || code == MS_RPC_DEADLINE_EXCEEDED);
        assert_true(time(NULL) - t0 <= 5);
    }
}

/* A raw C-core client for a server-streaming call: open, read messages. */
typedef struct rstream {
    grpc_channel *ch;
    grpc_completion_queue *cq;
    grpc_call *call;
    grpc_metadata_array md;
    int tag;
} rstream_t;

static void rs_open(rstream_t *r, const char *method)
{
    grpc_channel_credentials *cr = grpc_insecure_credentials_create();
    grpc_slice empty = grpc_empty_slice();
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&empty, 1);
    grpc_op ops[4];
    grpc_event ev;

    r->ch = grpc_channel_create(target, cr, NULL);
    grpc_channel_credentials_release(cr);
    r->cq = grpc_completion_queue_create_for_pluck(NULL);
    r->call = grpc_channel_create_call(r->ch, NULL, GRPC_PROPAGATE_DEFAULTS, r->cq,
                                       grpc_slice_from_static_string(method), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_metadata_array_init(&r->md);
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = bb;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &r->md;
    assert_int_equal(grpc_call_start_batch(r->call, ops, 4, &r->tag, NULL), GRPC_CALL_OK);
    ev = grpc_completion_queue_pluck(r->cq, &r->tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    assert_int_equal(ev.type, GRPC_OP_COMPLETE);
    grpc_byte_buffer_destroy(bb);
}

/* The next message as text ("" at the end of the stream). */
static void rs_next(rstream_t *r, char *buf, size_t len)
{
    grpc_byte_buffer *bb = NULL;
    grpc_op op;
    grpc_event ev;

    memset(&op, 0, sizeof(op));
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &bb;
    assert_int_equal(grpc_call_start_batch(r->call, &op, 1, &r->tag, NULL), GRPC_CALL_OK);
    ev = grpc_completion_queue_pluck(r->cq, &r->tag,
                                     gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(10, GPR_TIMESPAN)),
                                     NULL);
    assert_int_equal(ev.type, GRPC_OP_COMPLETE);
    buf[0] = '\0';
    if (bb != NULL) {
        grpc_byte_buffer_reader rd;
        grpc_slice sl;
        size_t n;

        grpc_byte_buffer_reader_init(&rd, bb);
        sl = grpc_byte_buffer_reader_readall(&rd);
        n = GRPC_SLICE_LENGTH(sl) < len - 1 ? GRPC_SLICE_LENGTH(sl) : len - 1;
        memcpy(buf, GRPC_SLICE_START_PTR(sl), n);
        buf[n] = '\0';
        grpc_slice_unref(sl);
        grpc_byte_buffer_reader_destroy(&rd);
        grpc_byte_buffer_destroy(bb);
    }
}

static void rs_close(rstream_t *r)
{
    grpc_call_cancel(r->call, NULL);
    grpc_call_unref(r->call);
    grpc_metadata_array_destroy(&r->md);
    grpc_completion_queue_shutdown(r->cq);
    while (grpc_completion_queue_pluck(r->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(r->cq);
    grpc_channel_destroy(r->ch);
}

static void wait_streams(ms_rpc_server_t *s, int n)
{
    int i;

    for (i = 0; i < 200 && ms_rpc_server_streams(s) != n; i++)
        usleep(20000);
    assert_int_equal(ms_rpc_server_streams(s), n);
}

static void streams(void **state)
{
    tctx_t t = { PTHREAD_MUTEX_INITIALIZER, 1, 0 };
    ms_rpc_server_t *s;
    rstream_t a, b;
    char buf[64];
    int i;

    grpc_init();
    s = start_server(&t);
    rs_open(&a, "/t.S/Watch");
    rs_next(&a, buf, sizeof(buf));
    assert_string_equal(buf, "v1");   /* the state at once */
    rs_open(&b, "/t.S/Watch");
    rs_next(&b, buf, sizeof(buf));
    assert_string_equal(buf, "v1");
    wait_streams(s, 2);
    /* a change reaches both */
    pthread_mutex_lock(&t.mu);
    t.version = 2;
    pthread_mutex_unlock(&t.mu);
    ms_rpc_server_notify(s);
    rs_next(&a, buf, sizeof(buf));
    assert_string_equal(buf, "v2");
    rs_next(&b, buf, sizeof(buf));
    assert_string_equal(buf, "v2");
    /* a burst of changes: every message is a state that was, in order, and
     * the last one arrives (sends in flight are coalesced, never lost) */
    for (i = 3; i <= 50; i++) {
        pthread_mutex_lock(&t.mu);
        t.version = i;
        pthread_mutex_unlock(&t.mu);
        ms_rpc_server_notify(s);
    }
    for (i = 0, buf[0] = '\0'; strcmp(buf, "v50") != 0; i++) {
        int v;

        assert_true(i < 60);
        rs_next(&a, buf, sizeof(buf));
        assert_int_equal(sscanf(buf, "v%d", &v), 1);
        assert_true(v >= 2 && v <= 50);
    }
    /* a client that goes away leaves the list */
    rs_close(&b);
    wait_streams(s, 1);
    /* the server stops with a stream open: the client sees the end */
    ms_rpc_server_stop(s);
    rs_next(&a, buf, sizeof(buf));
    assert_string_equal(buf, "");
    rs_close(&a);
    grpc_shutdown();
}

/* --- the device plugin's messages --------------------------------------- */

typedef struct node {
    ag_t a;
    ms_geom_t *g;
    const ms_geom_t *geom[4];
    ag_cfg_t cfg;
} node_t;

static void node_init(node_t *n, int ngpus, int replicas)
{
    int i;

    memset(n, 0, sizeof(*n));
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &n->g), MS_OK);
    for (i = 0; i < ngpus; i++)
        n->geom[i] = n->g;
    n->a.ngpus = ngpus;
    n->a.geom = n->geom;
    n->a.replicas = replicas;
    n->a.cfg = &n->cfg;
}

static const ag_dp_res_t *res_find(const ag_dp_res_t *v, int n, const char *name)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

static void dp_resources(void **state)
{
    node_t n;
    ag_dp_res_t *v;
    int nv, i;

    node_init(&n, 2, 0);
    assert_int_equal(ag_dp_resources(&n.a, &v, &nv), 0);
    /* a MIG node: as many slots as the node could run at once */
    assert_int_equal(res_find(v, nv, "migsched.io/mig-1g.5gb")->count, 14);
    assert_int_equal(res_find(v, nv, "migsched.io/mig-1g")->count, 14);
    assert_int_equal(res_find(v, nv, "migsched.io/mig-3g.20gb")->count, 4);
    assert_int_equal(res_find(v, nv, "migsched.io/mig-7g.40gb")->count, 2);
    assert_int_equal(res_find(v, nv, "migsched.io/mem-gb")->count, 80);
    assert_null(res_find(v, nv, "migsched.io/gpu-share"));
    for (i = 0; i < nv; i++) {   /* every name a Kubernetes extended resource, every id distinct */
        int j;

        assert_int_equal(strncmp(v[i].name, "migsched.io/", 12), 0);
        assert_null(strchr(v[i].id, '+'));
        for (j = 0; j < i; j++)
            assert_string_not_equal(v[i].id, v[j].id);
    }
    free(v);
    ms_geom_destroy(n.g);
    /* a time-sliced node: its shares, and any MIG request at most replicas a GPU */
    node_init(&n, 2, 4);
    assert_int_equal(ag_dp_resources(&n.a, &v, &nv), 0);
    assert_int_equal(res_find(v, nv, "migsched.io/gpu-share")->count, 8);
    assert_int_equal(res_find(v, nv, "migsched.io/mig-7g.40gb")->count, 8);
    assert_int_equal(res_find(v, nv, "migsched.io/mig-1g.5gb")->count, 14);
    free(v);
    ms_geom_destroy(n.g);
}

static void dp_slots(void **state)
{
    ag_dp_res_t r = { "migsched.io/mig-1g.5gb", "mig-1g.5gb", 14 };
    static const char *const BAD[] = { "mig-1g.5gb-14", "mig-1g.5gb-01", "mig-1g.5gb--1", "mig-1g.5gb-",
                                       "mig-1g.5gb", "mig-1g.5gb-1x", "mig-1g-1", "mig-1g.5gb-99999999999999",
                                       "", "mig-1g.5gb-+1", NULL };
    char id[64];
    int i;

    for (i = 0; i < r.count; i++) {   /* every slot's id names that slot */
        snprintf(id, sizeof(id), "mig-1g.5gb-%d", i);
        assert_int_equal(ag_dp_slot(&r, id), i);
    }
    for (i = 0; BAD[i] != NULL; i++)
        assert_int_equal(ag_dp_slot(&r, BAD[i]), -1);
    assert_int_equal(ag_dp_slot(&r, NULL), -1);
}

static void pack_alloc(char ***ids, const size_t *n, size_t nc, ms_rpc_buf_t *out)
{
    V1beta1__AllocateRequest rq;
    V1beta1__ContainerAllocateRequest c[4], *cp[4];
    size_t i;

    v1beta1__allocate_request__init(&rq);
    for (i = 0; i < nc; i++) {
        v1beta1__container_allocate_request__init(&c[i]);
        c[i].devices_ids = ids[i];
        c[i].n_devices_ids = n[i];
        cp[i] = &c[i];
    }
    rq.container_requests = cp;
    rq.n_container_requests = nc;
    out->len = v1beta1__allocate_request__get_packed_size(&rq);
    out->data = malloc(out->len + 1);
    assert_non_null(out->data);
    v1beta1__allocate_request__pack(&rq, out->data);
}

static void dp_allocate(void **state)
{
    ag_dp_res_t r = { "migsched.io/mig-1g.5gb", "mig-1g.5gb", 14 };
    char *c0[] = { "mig-1g.5gb-5", "mig-1g.5gb-3", "mig-1g.5gb-12" }, *c1[] = { "mig-1g.5gb-7" };
    char *bad[] = { "mig-2g.10gb-0" };
    char **ids[2] = { c0, c1 };
    size_t n[2] = { 3, 1 };
    ms_rpc_buf_t req, out;
    V1beta1__AllocateResponse *resp;
    char msg[256];

    pack_alloc(ids, n, 2, &req);
    assert_int_equal(ag_dp_allocate(&r, req.data, req.len, &out, msg, sizeof(msg)), MS_RPC_OK);
    resp = v1beta1__allocate_response__unpack(NULL, out.len, out.data);
    assert_non_null(resp);
    /* one CDI device per container: its lowest slot, nothing pod-specific */
    assert_int_equal(resp->n_container_responses, 2);
    assert_int_equal(resp->container_responses[0]->n_cdi_devices, 1);
    assert_string_equal(resp->container_responses[0]->cdi_devices[0]->name, "migsched.io/slot=mig-1g.5gb-3");
    assert_string_equal(resp->container_responses[1]->cdi_devices[0]->name, "migsched.io/slot=mig-1g.5gb-7");
    assert_int_equal(resp->container_responses[0]->n_envs, 0);
    v1beta1__allocate_response__free_unpacked(resp, NULL);
    ms_rpc_buf_free(&out);
    ms_rpc_buf_free(&req);
    /* another resource's id, no ids, garbage: refused, nothing answered */
    ids[0] = bad;
    n[0] = 1;
    pack_alloc(ids, n, 1, &req);
    assert_int_equal(ag_dp_allocate(&r, req.data, req.len, &out, msg, sizeof(msg)), MS_RPC_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "mig-2g.10gb-0"));
    ms_rpc_buf_free(&req);
    n[0] = 0;
    pack_alloc(ids, n, 1, &req);
    assert_int_equal(ag_dp_allocate(&r, req.data, req.len, &out, msg, sizeof(msg)), MS_RPC_INVALID_ARGUMENT);
    ms_rpc_buf_free(&req);
    assert_int_equal(ag_dp_allocate(&r, (const uint8_t *)"\xff\xff\xff", 3, &out, msg, sizeof(msg)),
                     MS_RPC_INVALID_ARGUMENT);
}

static void dp_preferred(void **state)
{
    ag_dp_res_t r = { "migsched.io/mem-gb", "mem-gb", 80 };
    char *avail[] = { "mem-gb-9", "mem-gb-2", "mem-gb-4", "mem-gb-40" }, *must[] = { "mem-gb-4" };
    V1beta1__PreferredAllocationRequest rq;
    V1beta1__ContainerPreferredAllocationRequest c, *cp = &c;
    V1beta1__PreferredAllocationResponse *resp;
    ms_rpc_buf_t req, out;
    char msg[256];

    v1beta1__preferred_allocation_request__init(&rq);
    v1beta1__container_preferred_allocation_request__init(&c);
    c.available_deviceids = avail;
    c.n_available_deviceids = 4;
    c.must_include_deviceids = must;
    c.n_must_include_deviceids = 1;
    c.allocation_size = 3;
    rq.container_requests = &cp;
    rq.n_container_requests = 1;
    req.len = v1beta1__preferred_allocation_request__get_packed_size(&rq);
    req.data = malloc(req.len);
    assert_non_null(req.data);
    v1beta1__preferred_allocation_request__pack(&rq, req.data);
    assert_int_equal(ag_dp_preferred(&r, req.data, req.len, &out, msg, sizeof(msg)), MS_RPC_OK);
    resp = v1beta1__preferred_allocation_response__unpack(NULL, out.len, out.data);
    assert_non_null(resp);
    /* the must-include first, then the lowest-numbered available */
    assert_int_equal(resp->container_responses[0]->n_deviceids, 3);
    assert_string_equal(resp->container_responses[0]->deviceids[0], "mem-gb-4");
    assert_string_equal(resp->container_responses[0]->deviceids[1], "mem-gb-2");
    assert_string_equal(resp->container_responses[0]->deviceids[2], "mem-gb-9");
    v1beta1__preferred_allocation_response__free_unpacked(resp, NULL);
    ms_rpc_buf_free(&out);
    ms_rpc_buf_free(&req);
}

static void dp_owner(void **state)
{
    ag_dp_res_t r = { "migsched.io/mig-1g.5gb", "mig-1g.5gb", 14 };
    char *d1[] = { "mig-1g.5gb-3" }, *d2[] = { "mig-1g.5gb-4", "mig-1g.5gb-6" }, *d3[] = { "mig-2g.10gb-3" };
    V1__ListPodResourcesResponse m;
    V1__PodResources p[2], *pp[2];
    V1__ContainerResources c[3], *cp[3];
    V1__ContainerDevices dv[3], *dp1[1], *dp2[2];
    ag_dp_owner_t o;
    uint8_t *buf;
    size_t len;
    int i;

    v1__list_pod_resources_response__init(&m);
    for (i = 0; i < 3; i++) {
        v1__container_resources__init(&c[i]);
        v1__container_devices__init(&dv[i]);
        cp[i] = &c[i];
    }
    for (i = 0; i < 2; i++) {
        v1__pod_resources__init(&p[i]);
        pp[i] = &p[i];
    }
    dv[0].resource_name = "migsched.io/mig-1g.5gb";
    dv[0].device_ids = d1;
    dv[0].n_device_ids = 1;
    dv[1].resource_name = "migsched.io/mig-2g.10gb";   /* the same number of another resource */
    dv[1].device_ids = d3;
    dv[1].n_device_ids = 1;
    dv[2].resource_name = "migsched.io/mig-1g.5gb";
    dv[2].device_ids = d2;
    dv[2].n_device_ids = 2;
    dp1[0] = &dv[1];
    dp2[0] = &dv[0];
    dp2[1] = &dv[2];
    c[0].name = "side";
    c[0].devices = dp1;
    c[0].n_devices = 1;
    c[1].name = "main";
    c[1].devices = dp2;
    c[1].n_devices = 1;
    c[2].name = "other";
    c[2].devices = &dp2[1];
    c[2].n_devices = 1;
    p[0].name = "a";
    p[0].namespace_ = "ns1";
    p[0].containers = cp;
    p[0].n_containers = 2;
    p[1].name = "b";
    p[1].namespace_ = "ns2";
    p[1].containers = &cp[2];
    p[1].n_containers = 1;
    m.pod_resources = pp;
    m.n_pod_resources = 2;
    len = v1__list_pod_resources_response__get_packed_size(&m);
    buf = malloc(len);
    assert_non_null(buf);
    v1__list_pod_resources_response__pack(&m, buf);
    assert_int_equal(ag_dp_owner(&r, 3, buf, len, &o), 0);
    assert_string_equal(o.ns, "ns1");
    assert_string_equal(o.pod, "a");
    assert_string_equal(o.container, "main");
    assert_int_equal(ag_dp_owner(&r, 6, buf, len, &o), 0);
    assert_string_equal(o.pod, "b");
    assert_string_equal(o.container, "other");
    assert_int_equal(ag_dp_owner(&r, 5, buf, len, &o), 1);   /* nobody holds it */
    assert_int_equal(ag_dp_owner(&r, 3, (const uint8_t *)"\x0a\xff", 2, &o), -1);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unary_calls), cmocka_unit_test(streams),     cmocka_unit_test(dp_resources),
        cmocka_unit_test(dp_slots),    cmocka_unit_test(dp_allocate), cmocka_unit_test(dp_preferred),
        cmocka_unit_test(dp_owner),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
