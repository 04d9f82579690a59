/* test_kube.c - the API-server client's credentials (src/kube/kube.c):
 * kubeconfig (current context, relative paths, inline CA, token), the
 * in-cluster service account, --kube-api, and the errors that name what is
 * wrong. Requests and list+watch run against the real API server in
 * tests/k8s/test_e2e_extender.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig),
        cmocka_unit_test(test_in_cluster_and_url),
        cmocka_unit_test(test_escape),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
