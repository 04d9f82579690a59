/* test_fgd_parse.c - the FGD node and pod readers, including malformed input
 * (errors name the line and the field). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "migsched/research/fgd.h"

static ms_status_t nodes_from(char *text, ms_fgd_nodes_t *n, ms_diag_t *d)
{
    FILE *f = fmemopen(text, strlen(text), "r");
    ms_status_t st;

    assert_non_null(f);
    ms_diag_clear(d);
    st = ms_fgd_nodes_read_stream(f, "nodes.csv", n, d);
    fclose(f);
    return st;
}

static ms_status_t pods_from(char *text, ms_fgd_pods_t *p, ms_diag_t *d)
{
    FILE *f = fmemopen(text, strlen(text), "r");
    ms_status_t st;

    assert_non_null(f);
    ms_diag_clear(d);
    st = ms_fgd_pods_read_stream(f, "pods.csv", p, d);
    fclose(f);
    return st;
}

static void test_nodes_good(void **state)
{
    char text[] = "sn,cpu_milli,memory_mib,gpu,model\r\n"
                  "node-a,64000,262144,2,P100\r\n"
                  "\n"
                  "node-b,96000,393216,8,G2\n"
                  "node-c,32000,1024,0,\n";
    ms_fgd_nodes_t n;
    ms_diag_t d;

    (void)state;
    assert_int_equal(nodes_from(text, &n, &d), MS_OK);
    assert_int_equal(n.n, 3);
    assert_int_equal(n.total_gpus, 10);
    assert_int_equal(n.nmodels, 2);
    assert_string_equal(n.v[1].name, "node-b");
    assert_int_equal(n.v[1].cpu_milli, 96000);
    assert_int_equal(n.v[1].mem_mib, 393216);
    assert_int_equal(n.v[1].ngpu, 8);
    assert_int_equal(n.v[1].model, ms_fgd_model_find(&n, "G2"));
    assert_int_equal(n.v[2].model, -1);
    assert_int_equal(ms_fgd_model_find(&n, "T4"), -1);
    ms_fgd_nodes_free(&n);
}

static void test_nodes_columns_any_order(void **state)
{
    char text[] = "model,gpu,sn,memory_mib,cpu_milli\nT4,2,x,512,104000\n";
    ms_fgd_nodes_t n;
    ms_diag_t d;

    (void)state;
    assert_int_equal(nodes_from(text, &n, &d), MS_OK);
    assert_int_equal(n.v[0].cpu_milli, 104000);
    assert_int_equal(n.v[0].ngpu, 2);
    assert_string_equal(n.models[n.v[0].model], "T4");
    ms_fgd_nodes_free(&n);
}

static void test_nodes_bad_number(void **state)
{
    char text[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                  "a,64000,262144,2,P100\n"
                  "b,64k,262144,2,P100\n";
    ms_fgd_nodes_t n;
    ms_diag_t d;

    (void)state;
    assert_int_equal(nodes_from(text, &n, &d), MS_EPARSE);
    assert_string_equal(d.file, "nodes.csv");
    assert_int_equal(d.line, 3);
    assert_string_equal(d.field, "cpu_milli");
    assert_non_null(strstr(d.msg, "64k"));
    assert_null(n.v);
}

static void test_nodes_missing_column(void **state)
{
    char row_short[] = "sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,2\n";
    char hdr_short[] = "sn,cpu_milli,memory_mib,gpu\na,64000,262144,2\n";
    char too_many[] = "sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,9,G2\n";
    char no_model[] = "sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,2,\n";
    char empty[] = "";
    ms_fgd_nodes_t n;
    ms_diag_t d;

    (void)state;
    assert_int_equal(nodes_from(row_short, &n, &d), MS_EPARSE);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "model");
    assert_int_equal(nodes_from(hdr_short, &n, &d), MS_EPARSE);
    assert_int_equal(d.line, 1);
    assert_string_equal(d.field, "model");
    assert_int_equal(nodes_from(too_many, &n, &d), MS_ERANGE);
    assert_string_equal(d.field, "gpu");
    assert_int_equal(nodes_from(no_model, &n, &d), MS_EPARSE);
    assert_string_equal(d.field, "model");
    assert_int_equal(nodes_from(empty, &n, &d), MS_EPARSE);
}

static void test_pods_good(void **state)
{
    char text[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
                  "p0,12000,16384,1,1000,,LS\n"
                  "p1,6000,12288,1,460,G2|T4,LS\n"
                  "p2,4000,8192,0,0,,BE\n"
                  "p3,8000,8192,8,1000,G2|T4,BE\n";
    char nodes_text[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                        "a,1,1,1,P100\nb,1,1,1,T4\nc,1,1,1,G2\n";
    ms_fgd_pods_t p;
    ms_fgd_nodes_t n;
    ms_diag_t d;

    (void)state;
    assert_int_equal(pods_from(text, &p, &d), MS_OK);
    assert_int_equal(p.n, 4);
    assert_int_equal(p.nspecs, 2);
    assert_int_equal(p.v[1].gpu_milli, 460);
    assert_int_equal(p.v[1].spec, p.v[3].spec);
    assert_string_equal(p.specs[p.v[1].spec], "G2|T4");
    assert_int_equal(p.v[0].spec, 0);
    assert_int_equal(nodes_from(nodes_text, &n, &d), MS_OK);
    ms_fgd_pods_bind(&p, &n);
    assert_int_equal(p.v[1].access, (1u << ms_fgd_model_find(&n, "G2")) |
                                        (1u << ms_fgd_model_find(&n, "T4")));
    assert_int_equal(p.v[0].access, UINT32_MAX);
    assert_int_equal(ms_fgd_spec_mask("A10", &n), 0);
    ms_fgd_nodes_free(&n);
    ms_fgd_pods_free(&p);
}

static void test_pods_five_columns(void **state)
{
    char text[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,12000,16384,2,1000\n";
    ms_fgd_pods_t p;
    ms_diag_t d;

    (void)state;
    assert_int_equal(pods_from(text, &p, &d), MS_OK);
    assert_int_equal(p.v[0].num_gpu, 2);
    assert_int_equal(p.v[0].spec, 0);
    ms_fgd_pods_free(&p);
}

static void test_pods_malformed(void **state)
{
    char bad_num[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,1000\np1,1,1,one,1000\n";
    char short_row[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1\n";
    char no_col[] = "name,cpu_milli,num_gpu,gpu_milli\np0,1,1,1000\n";
    char range[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,1500\n";
    char partial_multi[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,2,500\n";
    char cpu_milli_gpu[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,0,500\n";
    char neg[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,-5,1,0,0\n";
    ms_fgd_pods_t p;
    ms_diag_t d;

    (void)state;
    assert_int_equal(pods_from(bad_num, &p, &d), MS_EPARSE);
    assert_int_equal(d.line, 3);
    assert_string_equal(d.field, "num_gpu");
    assert_int_equal(pods_from(short_row, &p, &d), MS_EPARSE);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "gpu_milli");
    assert_int_equal(pods_from(no_col, &p, &d), MS_EPARSE);
    assert_int_equal(d.line, 1);
    assert_string_equal(d.field, "memory_mib");
    assert_int_equal(pods_from(range, &p, &d), MS_ERANGE);
    assert_string_equal(d.field, "gpu_milli");
    assert_int_equal(pods_from(partial_multi, &p, &d), MS_EPARSE);
    assert_string_equal(d.field, "gpu_milli");
    assert_int_equal(pods_from(cpu_milli_gpu, &p, &d), MS_EPARSE);
    assert_int_equal(pods_from(neg, &p, &d), MS_ERANGE);
    assert_string_equal(d.field, "cpu_milli");
    assert_null(p.v);
}

static void test_missing_file(void **state)
{
    ms_fgd_pods_t p;
    ms_fgd_nodes_t n;
    ms_diag_t d;

    (void)state;
    ms_diag_clear(&d);
    assert_int_equal(ms_fgd_pods_read("/nonexistent/x.csv", &p, &d), MS_EIO);
    assert_string_equal(d.file, "/nonexistent/x.csv");
    assert_int_equal(ms_fgd_nodes_read("/nonexistent/y.csv", &n, &d), MS_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_good),
        cmocka_unit_test(test_nodes_columns_any_order),
        cmocka_unit_test(test_nodes_bad_number),
        cmocka_unit_test(test_nodes_missing_column),
        cmocka_unit_test(test_pods_good),
        cmocka_unit_test(test_pods_five_columns),
        cmocka_unit_test(test_pods_malformed),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
