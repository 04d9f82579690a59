/* test_kube.c - the API-server client (src/kube/kube.c): its credentials
 * (kubeconfig: current context, relative paths, inline CA, token; the
 * in-cluster service account; --kube-api; the errors that name what is
 * wrong), and list+watch against a fake API server in this process: the
 * relist after 410 Gone, as an ERROR event in the stream and as the HTTP
 * status, which a real API server does only once its history is
 * compacted; a request with a deadline (ms_kube_request_by): none sent
 * once it passed, an answer slower than it cut. Requests and list+watch
 * also run against the real API server in tests/k8s/test_e2e_extender.sh. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <microhttpd.h>

#include "kube/kube.h"

static char dir[64];

static void put(const char *name, const char *text)
{
    char p[128];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_kube.XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int open_kc(const char *text, ms_kube_t **k, char *err, size_t len)
{
    char p[128];
    ms_kube_cfg_t c;

    put("kc", text);
    snprintf(p, sizeof(p), "%s/kc", dir);
    memset(&c, 0, sizeof(c));
    c.kubeconfig = p;
    err[0] = '\0';
    return ms_kube_open(&c, k, err, len);
}

static void test_kubeconfig(void **state)
{
    ms_kube_t *k = NULL;
    char err[512];

    (void)state;
    put("ca.crt", "not checked until a request\n");
    /* the current context wins; a relative CA path is the file's dir's */
    assert_int_equal(open_kc("apiVersion: v1\nkind: Config\nclusters:\n"
                             "- name: other\n  cluster:\n    server: https://10.0.0.1:6443\n"
                             "- name: test\n  cluster:\n    server: https://127.0.0.1:6443/\n"
                             "    certificate-authority: ca.crt\n"
                             "users:\n- name: u\n  user:\n    token: abc\n"
                             "contexts:\n- name: c\n  context: {cluster: test, user: u}\n"
                             "current-context: c\n", &k, err, sizeof(err)), 0);
    assert_string_equal(ms_kube_server(k), "https://127.0.0.1:6443");
    ms_kube_close(k);
    /* inline CA data must be base64 */
    assert_int_equal(open_kc("clusters:\n- name: t\n  cluster:\n    server: https://h:1\n"
                             "    certificate-authority-data: '%%%'\n"
                             "contexts:\n- name: c\n  context: {cluster: t}\ncurrent-context: c\n",
                             &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "base64"));
    assert_int_equal(open_kc("clusters:\n- name: t\n  cluster:\n    server: https://h:1\n"
                             "    certificate-authority-data: aGVsbG8=\n"
                             "contexts:\n- name: c\n  context: {cluster: t}\ncurrent-context: c\n",
                             &k, err, sizeof(err)), 0);
    ms_kube_close(k);
    /* what is wrong is named */
    assert_int_equal(open_kc("current-context: nope\ncontexts: []\n", &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "current-context"));
    assert_int_equal(open_kc("clusters:\n- name: t\n  cluster: {}\ncontexts:\n- name: c\n  context: {cluster: t}\n"
                             "current-context: c\n", &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "server"));
    assert_int_equal(open_kc("clusters:\n- name: t\n  cluster: {server: 'https://h:1'}\nusers:\n- name: u\n"
                             "  user: {client-certificate: a.crt}\ncontexts:\n- name: c\n  context: {cluster: t, user: u}\n"
                             "current-context: c\n", &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "client certificates"));
    assert_int_equal(open_kc("a: [unclosed\n", &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "YAML"));
    assert_int_equal(open_kc("- a list\n", &k, err, sizeof(err)), -1);
}

static void test_in_cluster_and_url(void **state)
{
    ms_kube_cfg_t c;
    ms_kube_t *k = NULL;
    char err[512], p[128];

    (void)state;
    memset(&c, 0, sizeof(c));
    c.sa_dir = dir;
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--kubeconfig"));
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);   /* no token file yet */
    assert_non_null(strstr(err, "token"));
    put("token", "tok\n");
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), 0);
    assert_string_equal(ms_kube_server(k), "https://10.96.0.1:443");
    ms_kube_close(k);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), 0);
    assert_string_equal(ms_kube_server(k), "https://[fd00::1]:443");
    ms_kube_close(k);
    memset(&c, 0, sizeof(c));
    c.api = "ftp://x";
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--kube-api"));
    c.api = "https://127.0.0.1:1";
    snprintf(p, sizeof(p), "%s/missing", dir);
    c.token_file = p;
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "missing"));
    c.token_file = NULL;
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), 0);
    ms_kube_close(k);
}

/* put_bytes: a file with exactly these bytes (NULs included). */
static void put_bytes(const char *name, const char *bytes, size_t n)
{
    char p[128];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* Issue 20, defects 14 and 15: hostile credentials files get an error that
 * says what is wrong, within bounded memory; never a cut token, a token
 * that spans lines, gigabytes for an alias chain, or a stale errno. */
static void test_hostile_files(void **state)
{
    ms_kube_cfg_t c;
    ms_kube_t *k = NULL;
    char err[512], p[128], *big;
    const size_t bign = (1u << 20) + 10;
    int i;
    /* ten levels of ten aliases each: 10^10 nodes if expanded naively */
    char laughs[2048] = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";

    (void)state;
    for (i = 1; i < 10; i++) {
        char line[128];

        snprintf(line, sizeof(line), "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i,
                 i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        strncat(laughs, line, sizeof(laughs) - strlen(laughs) - 1);
    }
    assert_true(strlen(laughs) < 1000);
    assert_int_equal(open_kc(laughs, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "aliases"));
    /* over 1 MiB: said so, not "No such file or directory" */
    big = malloc(bign);
    assert_non_null(big);
    memset(big, '#', bign);
    put_bytes("kc", big, bign);
    free(big);
    memset(&c, 0, sizeof(c));
    snprintf(p, sizeof(p), "%s/kc", dir);
    c.kubeconfig = p;
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "larger than 1 MiB"));
    /* token files: a NUL is refused, not a shortened token; so is a second
     * line; trailing white space is not part of the token */
    memset(&c, 0, sizeof(c));
    c.api = "https://127.0.0.1:1";
    snprintf(p, sizeof(p), "%s/tok", dir);
    c.token_file = p;
    put_bytes("tok", "abc\0def\n", 8);
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "0x00"));
    put("tok", "abc\nX-Injected: 1\n");
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "0x0a"));
    put("tok", "\n");
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty"));
    put("tok", "abc.def-ghi_jkl \r\n");
    assert_int_equal(ms_kube_open(&c, &k, err, sizeof(err)), 0);
    ms_kube_close(k);
    /* a kubeconfig's inline token follows the same rule */
    assert_int_equal(open_kc("clusters:\n- name: t\n  cluster: {server: 'https://h:1'}\nusers:\n- name: u\n"
                             "  user: {token: \"a b\"}\ncontexts:\n- name: c\n  context: {cluster: t, user: u}\n"
                             "current-context: c\n", &k, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "token"));
}

static void test_escape(void **state)
{
    char b[16];

    (void)state;
    assert_true(ms_kube_escape("a-b.c_d~", b, sizeof(b)));
    assert_string_equal(b, "a-b.c_d~");
    assert_true(ms_kube_escape("a/b c", b, sizeof(b)));
    assert_string_equal(b, "a%2Fb%20c");
    assert_false(ms_kube_escape("0123456789abcdef", b, sizeof(b)));
}

/* --- list+watch against a fake API server ------------------------------- */

/* The fake's script for /api/v1/pods: list 1 (rv 5, pod a); the watch from
 * 5 answers an ERROR event with code 410; list 2 (rv 9, pods a b); the
 * watch from 9 answers HTTP 410; list 3 (rv 12, pods a b c); the watch from
 * 12 streams ADDED d. Anything else is a 400, which the client would treat
 * as a failure and relist after: the checks below would see it. */
typedef struct fake {
    pthread_mutex_t mu;
    int lists, watches, bad;
    char watched[4][16];           /* resourceVersion of each watch */
} fake_t;

static enum MHD_Result fake_handler(void *cls, struct MHD_Connection *c, const char *url,
                                    const char *method, const char *version,
                                    const char *upload, size_t *upload_len, void **con_cls)
{
    fake_t *f = cls;
    const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
    const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
    const char *body = "{}";
    unsigned status = 200;
    struct MHD_Response *r;
    enum MHD_Result ret;

    (void)version;
    (void)upload;
    (void)upload_len;
    (void)con_cls;
    pthread_mutex_lock(&f->mu);
    if (strcmp(method, "GET") != 0 || strcmp(url, "/api/v1/pods") != 0) {
        status = 400;
        f->bad++;
    } else if (watch == NULL) {
        static const char *const lists[] = {
            "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},"
            "\"items\":[{\"metadata\":{\"name\":\"a\"}}]}",
            "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"9\"},"
            "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]}",
            "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"12\"},"
            "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}},"
            "{\"metadata\":{\"name\":\"c\"}}]}",
        };
        if (f->lists < 3)
            body = lists[f->lists];
        else
            f->bad++, status = 400;
        f->lists++;
    } else {
        if (f->watches < 4)
            snprintf(f->watched[f->watches], sizeof(f->watched[0]), "%s", rv != NULL ? rv : "");
        f->watches++;
        if (rv != NULL && strcmp(rv, "5") == 0) {
            body = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                   "\"reason\":\"Expired\"}}\n";
        } else if (rv != NULL && strcmp(rv, "9") == 0) {
            status = 410;
            body = "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Gone\"}";
        } else if (rv != NULL && strcmp(rv, "12") == 0) {
            body = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"d\","
                   "\"resourceVersion\":\"13\"}}}\n";
        } else {
            body = "";   /* a later watch: an empty stream, the client watches on */
        }
    }
    pthread_mutex_unlock(&f->mu);
    r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* A fake API server on loopback (any free port) answering with h, and a
 * client of it. */
static struct MHD_Daemon *serve(MHD_AccessHandlerCallback h, void *cls, ms_kube_t **k)
{
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;
    struct MHD_Daemon *d;
    ms_kube_cfg_t c;
    char err[512], url[64];

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, h, cls,
                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
    assert_non_null(d);
    info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    assert_non_null(info);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)info->port);
    memset(&c, 0, sizeof(c));
    c.api = url;
    assert_int_equal(ms_kube_open(&c, k, err, sizeof(err)), 0);
    return d;
}

typedef struct seen {
    char log[256];                 /* "L:a S L:a L:b S ... A:d" */
    volatile int stop;
} seen_t;

static void on_event(void *ctx, const char *type, json_t *obj)
{
    seen_t *s = ctx;
    const char *name = obj != NULL ? json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")) : NULL;
    size_t n = strlen(s->log);

    snprintf(s->log + n, sizeof(s->log) - n, "%s%c%s%s", n > 0 ? " " : "", type[0],
             name != NULL ? ":" : "", name != NULL ? name : "");
    if (strcmp(type, "ADDED") == 0)
        s->stop = 1;
}

static void test_watch_relists_after_410(void **state)
{
    fake_t f;
    seen_t s;
    struct MHD_Daemon *d;
    ms_kube_t *k = NULL;

    (void)state;
    memset(&f, 0, sizeof(f));
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&f.mu, NULL);
    d = serve(fake_handler, &f, &k);
    alarm(30);   /* a client that loops for ever fails the test, not CI's clock */
    assert_int_equal(ms_kube_watch(k, "/api/v1/pods", NULL, on_event, &s, &s.stop), 0);
    alarm(0);
    /* three full lists, each ended by SYNCED, then the new pod */
    assert_string_equal(s.log, "L:a S L:a L:b S L:a L:b L:c S A:d");
    assert_int_equal(f.lists, 3);
    assert_int_equal(f.bad, 0);
    assert_true(f.watches >= 3);
    assert_string_equal(f.watched[0], "5");
    assert_string_equal(f.watched[1], "9");
    assert_string_equal(f.watched[2], "12");
    ms_kube_close(k);
    MHD_stop_daemon(d);
    pthread_mutex_destroy(&f.mu);
}

/* A fake API server for requests: counts what reaches it, answers after
 * delay_ms. */
typedef struct slow {
    pthread_mutex_t mu;
    int requests;
    int delay_ms;
} slow_t;

static enum MHD_Result slow_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                    const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
    slow_t *f = cls;
    static const char body[] = "{\"kind\":\"Binding\"}";
    struct MHD_Response *r;
    enum MHD_Result ret;
    int delay;

    (void)url;
    (void)method;
    (void)version;
    (void)upload;
    if (*con_cls == NULL) {   /* the headers: the body comes next */
        *con_cls = f;
        return MHD_YES;
    }
    if (*upload_len > 0) {
        *upload_len = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&f->mu);
    f->requests++;
    delay = f->delay_ms;
    pthread_mutex_unlock(&f->mu);
    if (delay > 0)
        usleep((useconds_t)delay * 1000);
    r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    ret = MHD_queue_response(c, 201, r);
    MHD_destroy_response(r);
    return ret;
}

static double mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A write by a leader whose leadership ended before it was sent never
 * reaches the server (src/service/dra_write.c, ext_bind.c, ext_evict.c
 * rely on it); within its deadline it is answered; an answer later than
 * the deadline is not waited for. */
static void test_request_by_deadline(void **state)
{
    slow_t f;
    struct MHD_Daemon *d;
    ms_kube_t *k = NULL;
    char err[512], *resp = NULL;
    long status = -1;

    (void)state;
    memset(&f, 0, sizeof(f));
    pthread_mutex_init(&f.mu, NULL);
    d = serve(slow_handler, &f, &k);
    alarm(30);

    /* passed already (by a millisecond, and by an hour): nothing sent */
    err[0] = '\0';
    assert_int_equal(ms_kube_request_by(k, "POST", "/x", "{}", mono_now() - 0.001, &status, &resp, err, sizeof(err)),
                     MS_KUBE_LATE);
    assert_int_equal(status, 0);
    assert_null(resp);
    assert_non_null(strstr(err, "deadline passed before it was sent"));
    assert_int_equal(ms_kube_request_by(k, "POST", "/x", "{}", mono_now() - 3600, &status, &resp, err, sizeof(err)),
                     MS_KUBE_LATE);
    assert_int_equal(f.requests, 0);

    /* in time: answered */
    assert_int_equal(ms_kube_request_by(k, "POST", "/x", "{}", mono_now() + 20, &status, &resp, err, sizeof(err)), 0);
    assert_int_equal(status, 201);
    assert_non_null(resp);
    assert_non_null(strstr(resp, "Binding"));
    free(resp);
    resp = NULL;
    assert_int_equal(f.requests, 1);

    /* the server answers in 1.5 s, the deadline is 0.2 s away: no answer */
    f.delay_ms = 1500;
    assert_int_equal(ms_kube_request_by(k, "POST", "/x", "{}", mono_now() + 0.2, &status, &resp, err, sizeof(err)), -1);
    assert_int_equal(status, 0);
    assert_null(resp);
    alarm(0);
    ms_kube_close(k);
    MHD_stop_daemon(d);   /* waits for the slow answer's thread */
    assert_int_equal(f.requests, 2);
    pthread_mutex_destroy(&f.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig),
        cmocka_unit_test(test_in_cluster_and_url),
        cmocka_unit_test(test_hostile_files),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_watch_relists_after_410),
        cmocka_unit_test(test_request_by_deadline),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
