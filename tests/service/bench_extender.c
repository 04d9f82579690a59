/* bench_extender.c - what one pod costs the extender: filter over every
 * node, prioritize over the nodes that passed, bind on the best one, timed
 * through the daemon's own code (svc_ext_parse_args, the loop's handlers
 * in extender.c, the JSON replies) on an ms_sched of N nodes, without the
 * HTTP transport, the loop's queue and the store's fsync (docs/
 * performance.md gives those separately). The cluster is first filled to
 * about 60% with the same calls; then each timed pod is followed by the end
 * of the oldest one, so occupancy stays level.
 *
 *   bench_extender [--nodes 1000,5000] [--pods 2000] [--gpus-per-node 8] [--seed S]
 *
 * Prints, per size, p50/p99/max of filter, prioritize, bind and their sum
 * per pod ("per pod": what the extender spends on one pod), and "+ client":
 * the pod's whole path with this program's own work as kube-scheduler
 * (writing the requests, parsing the replies), in microseconds. Then, untimed
 * in those, the filter's body (every node named) parsed again by
 * svc_ext_parse_args ("parse") and by svc_ext_parse_args_tree, every byte
 * through jansson ("parse, jansson"): what ext_names.c saves (issue 25).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "migsched/rng.h"
#include "service/extender.h"
#include "service/extender_int.h"

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* CPU: the machine is shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    int i = (int)ceil(p * n) - 1;

    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

typedef struct bench {
    svc_t d;
    svc_cfg_t cfg;
    const char **names;
    int nnodes;
    char *buf;
    size_t cap;
} bench_t;

/* ExtenderArgs for pod uid asking for res, over nodes[n]. */
static const char *args_body(bench_t *b, const char *uid, const char *res, const char *const *nodes, int n)
{
    size_t need = 512 + (size_t)n * 24, len;
    int i;

    if (need > b->cap) {
        free(b->buf);
        b->cap = need * 2;
        if ((b->buf = malloc(b->cap)) == NULL)
            exit(1);
    }
    len = (size_t)snprintf(b->buf, b->cap,
                           "{\"Pod\":{\"metadata\":{\"name\":\"p-%s\",\"namespace\":\"default\",\"uid\":\"%s\"},"
                           "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"migsched.io/%s\":"
                           "\"1\"},\"requests\":{\"migsched.io/%s\":\"1\"}}}],\"schedulerName\":\"migsched\"},"
                           "\"status\":{\"phase\":\"Pending\"}},\"Nodes\":null,\"NodeNames\":[",
                           uid, uid, res, res);
    for (i = 0; i < n; i++)
        len += (size_t)snprintf(b->buf + len, b->cap - len, "%s\"%s\"", i ? "," : "", nodes[i]);
    snprintf(b->buf + len, b->cap - len, "]}");
    return b->buf;
}

/* body parsed by svc_ext_parse_args (tree: svc_ext_parse_args_tree): its
 * CPU seconds. */
static double parse_time(const char *body, bool tree)
{
    svc_ext_args_t a;
    svc_err_t err;
    double t0 = mono();
    int rc = tree ? svc_ext_parse_args_tree(body, strlen(body), NULL, &a, &err)
                  : svc_ext_parse_args(body, strlen(body), NULL, &a, &err);

    t0 = mono() - t0;
    if (rc != 0)
        exit(1);
    svc_ext_args_free(&a);
    return t0;
}

/* One call through the handler: parse, handle, reply. Returns the reply. */
static char *call(bench_t *b, int verb, const char *body, double now)
{
    svc_msg_t m;
    ext_msg_t *e = calloc(1, sizeof(*e));
    svc_err_t err;
    int rc;

    if (e == NULL)
        exit(1);
    memset(&m, 0, sizeof(m));
    e->verb = verb;
    rc = verb == EXT_BIND ? svc_ext_parse_bind(body, strlen(body), &e->bind, &err)
                          : svc_ext_parse_args(body, strlen(body), NULL, &e->args, &err);
    if (rc != 0) {
        fprintf(stderr, "bench_extender: parse: %s %s\n", err.field, err.msg);
        exit(1);
    }
    m.kind = SVC_M_EXT;
    m.ext = e;
    svc_ext_handle(&b->d, &m, now);
    svc_ext_msg_free(e);
    return m.body;
}

/* The pod's whole path; returns 1 if bound. t[0..2]: seconds per verb;
 * t[3], t[4]: the filter's body parsed again, as the daemon does and all
 * through jansson. */
static int one_pod(bench_t *b, const char *uid, const char *res, double now, double t[3])
{
    json_t *o, *names;
    char *r, bind[512];
    const char **pass = NULL;
    int np = 0, i, best = -1, bs = -1;
    double t0;

    t0 = mono();
    r = call(b, EXT_FILTER, args_body(b, uid, res, (const char *const *)b->names, b->nnodes), now);
    t[0] = mono() - t0;
    t[3] = parse_time(b->buf, false);
    t[4] = parse_time(b->buf, true);
    o = json_loads(r, 0, NULL);
    free(r);
    names = json_object_get(o, "NodeNames");
    np = (int)json_array_size(names);
    t[1] = t[2] = 0;
    if (np == 0) {
        json_decref(o);
        return 0;
    }
    if ((pass = calloc((size_t)np, sizeof(*pass))) == NULL)
        exit(1);
    for (i = 0; i < np; i++)
        pass[i] = json_string_value(json_array_get(names, i));
    t0 = mono();
    r = call(b, EXT_PRIORITIZE, args_body(b, uid, res, (const char *const *)pass, np), now);
    t[1] = mono() - t0;
    {
        json_t *pr = json_loads(r, 0, NULL), *x;
        size_t k;

        json_array_foreach(pr, k, x) {
            int s = (int)json_integer_value(json_object_get(x, "Score"));

            if (s > bs) {
                bs = s;
                best = (int)k;
            }
        }
        json_decref(pr);
    }
    free(r);
    snprintf(bind, sizeof(bind), "{\"PodName\":\"p-%s\",\"PodNamespace\":\"default\",\"PodUID\":\"%s\",\"Node\":\"%s\"}",
             uid, uid, pass[best < 0 ? 0 : best]);
    t0 = mono();
    r = call(b, EXT_BIND, bind, now);
    t[2] = mono() - t0;
    i = strstr(r, "\"Error\":\"\"") != NULL;
    free(r);
    free((void *)pass);
    json_decref(o);
    return i;
}

static bool job_running(bench_t *b, int32_t slot)
{
    ms_sched_job_info_t info;

    return ms_sched_job(b->d.sched, slot, &info) == MS_OK && info.state == MS_JOB_RUNNING;
}

static const char *const RES[] = { "mig-1g.5gb", "mig-1g.5gb", "mig-2g.10gb", "mig-3g.20gb", "mig-7g.40gb" };

static int run(int nnodes, int gpn, int pods, uint64_t seed)
{
    bench_t b;
    ms_sched_cfg_t sc;
    ms_diag_t diag;
    ms_rng_t rng;
    ms_geom_t *geom = NULL;
    double *tv[7], now = 1000.0, tt[5];
    int32_t *ring;
    int i, k, n = 0, head = 0, nring = 0, cap = nnodes * gpn * 8 + pods + 16, bound = 0, warm = 0;

    long slices = 0;

    memset(&b, 0, sizeof(b));
    ms_rng_seed(&rng, seed);
    if (ms_cluster_spec_create(&b.d.spec) != MS_OK || ms_geom_create(ms_model_find("A100-40GB"), 0, &geom) != MS_OK ||
        ms_cluster_spec_add_group(b.d.spec, "n", nnodes, geom, gpn, MS_NODE_MIG, 0) != MS_OK)
        return 1;
    ms_sched_cfg_defaults(&sc);
    sc.policy = ms_policy_find("fa+");
    ms_policy_cfg_defaults(&sc.pcfg);
    sc.nodes = ms_cluster_spec_nodes(b.d.spec);
    sc.nnodes = ms_cluster_spec_nnodes(b.d.spec);
    ms_diag_clear(&diag);
    if (ms_sched_create(&sc, now, &b.d.sched, &diag) != MS_OK) {
        fprintf(stderr, "bench_extender: %s\n", diag.msg);
        return 1;
    }
    b.cfg.ext_ttl_s = 30;
    b.d.cfg = &b.cfg;
    if (svc_init(&b.d) != 0)   /* the job table and the loop's state, without threads */
        return 1;
    if (svc_ext_init(&b.d) != 0)
        return 1;
    b.nnodes = nnodes;
    b.names = calloc((size_t)nnodes, sizeof(*b.names));
    ring = calloc((size_t)cap, sizeof(*ring));
    for (k = 0; k < 7; k++)
        if ((tv[k] = calloc((size_t)pods, sizeof(double))) == NULL)
            return 1;
    if (b.names == NULL || ring == NULL)
        return 1;
    for (i = 0; i < nnodes; i++)
        b.names[i] = ms_sched_node(b.d.sched, i)->name;
    /* fill to ~60% of the memory slices (warm-up, untimed): jobs the
     * policy places itself, so that the fill costs O(pods) */
    for (i = 0; slices < (long)nnodes * gpn * 8 * 6 / 10 && nring < cap; i++) {
        static const char *const PROF[] = { "1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb" };
        ms_sched_req_t rq;
        ms_sched_job_info_t info;
        int32_t slot = -1;
        int r = (int)ms_rng_below(&rng, 5);

        memset(&rq, 0, sizeof(rq));
        rq.profile = PROF[r];
        rq.isolation = MS_ISO_MIG;
        if (ms_sched_submit(b.d.sched, &rq, now, &slot, &diag) != MS_OK || slot < 0 ||
            ms_sched_job(b.d.sched, slot, &info) != MS_OK || info.state != MS_JOB_RUNNING) {
            if (slot >= 0)
                (void)ms_sched_cancel(b.d.sched, slot, now);
            break;
        }
        slices += r < 2 ? 1 : r == 2 ? 2 : r == 3 ? 4 : 8;
        ring[nring++ % cap] = slot;
        warm++;
    }
    for (i = 0; i < pods; i++) {
        char uid[32], id[48];
        int r = (int)ms_rng_below(&rng, 5);
        double t0 = mono();
        svc_job_t *j;

        snprintf(uid, sizeof(uid), "p%d", i);
        bound += one_pod(&b, uid, RES[r], now, tt);
        tv[0][n] = tt[0];
        tv[1][n] = tt[1];
        tv[2][n] = tt[2];
        tv[3][n] = tt[0] + tt[1] + tt[2];
        tv[4][n] = mono() - t0 - tt[3] - tt[4];
        tv[5][n] = tt[3];
        tv[6][n] = tt[4];
        n++;
        snprintf(id, sizeof(id), "k8s-%s", uid);
        if ((j = svc_jobs_find(&b.d.jobs, id)) != NULL && j->slot >= 0 &&
            job_running(&b, j->slot))
            ring[nring++ % cap] = j->slot;
        /* the oldest pod ends (untimed) */
        if (head < nring - 1) {
            (void)ms_sched_finished(b.d.sched, ring[head % cap], now);
            head++;
        }
        now += 0.001;
    }
    for (k = 0; k < 7; k++)
        qsort(tv[k], (size_t)n, sizeof(double), cmp_d);
    printf("%6d nodes x %d GPUs, %d pods (%d bound; %d warm-up pods):\n", nnodes, gpn, n, bound, warm);
    {
        static const char *const V[] = { "filter", "prioritize", "bind", "per pod", "+ client", "parse",
                                         "parse, jansson" };

        for (k = 0; k < 7; k++)
            printf("  %-14s p50 %9.1f us  p99 %9.1f us  max %9.1f us\n", V[k], pct(tv[k], n, 0.5) * 1e6,
                   pct(tv[k], n, 0.99) * 1e6, tv[k][n - 1] * 1e6);
    }
    free(ring);
    for (k = 0; k < 7; k++)
        free(tv[k]);
    free((void *)b.names);
    free(b.buf);
    svc_ext_free(&b.d);
    svc_fini(&b.d);   /* the scheduler, the job table, the loop's lists */
    ms_cluster_spec_destroy(b.d.spec);
    ms_geom_destroy(geom);
    return 0;
}

int main(int argc, char **argv)
{
    const char *sizes = "1000,5000";
    int pods = 2000, gpn = 8, i;
    uint64_t seed = 1;
    char *s, *p, *save = NULL;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--pods") == 0 && i + 1 < argc)
            pods = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--gpus-per-node") == 0 && i + 1 < argc)
            gpn = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_extender [--nodes 1000,5000] [--pods 2000] [--gpus-per-node 8] [--seed S]\n");
            return 2;
        }
    }
    if (pods < 1 || pods > 1000000 || gpn < 1 || gpn > 64) {
        fprintf(stderr, "bench_extender: --pods 1..1000000, --gpus-per-node 1..64\n");
        return 2;
    }
    if ((s = strdup(sizes)) == NULL)
        return 1;
    for (p = strtok_r(s, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save)) {
        long n = strtol(p, NULL, 10);

        if (n < 1 || n > 100000 || run((int)n, gpn, pods, seed) != 0) {
            fprintf(stderr, "bench_extender: bad size '%s' (1..100000)\n", p);
            free(s);
            return 1;
        }
    }
    free(s);
    return 0;
}
