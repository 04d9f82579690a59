/* test_spec.c - cluster specs: reading a cluster costs O(1) per node
 * (issue 20, defect 18: a linear search for duplicate names made 100,000
 * nodes take 26 s). The work is counted (stored names read to find or add
 * a name), never timed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "migsched/sched.h"
#include "sched/sched_int.h"

#define NODES 100000

static void test_large_cluster_file(void **state)
{
    char path[] = "/tmp/ms_test_spec_XXXXXX";
    int fd = mkstemp(path), i;
    FILE *f;
    ms_cluster_spec_t *cs;
    ms_diag_t d;
    long reads;
    ms_sched_cfg_t cfg;
    ms_sched_t *s;

    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    /* sizes in blocks, largest first: a node with fewer GPUs than its
     * predecessors of the same kind closes their group (docs/sched.md), so
     * sizes in any order could make more than the 64 groups allowed */
    fprintf(f, "# %d nodes with cloud-style names\n", NODES);
    for (i = 0; i < NODES; i++)
        fprintf(f, "ip-10-%d-%d-%d.eu-west-1.compute.internal=%dx%s\n", i / 65536, i / 256 % 256,
                i % 256, 8 - i / (NODES / 8), i % 3 == 0 ? "H100-80GB" : "A100-40GB");
    assert_int_equal(fclose(f), 0);

    assert_int_equal(ms_cluster_spec_create(&cs), MS_OK);
    ms_diag_clear(&d);
    if (ms_cluster_spec_read_file(cs, path, 0, &d) != MS_OK)
        fail_msg("%s:%ld: %s", d.file, d.line, d.msg);
    assert_int_equal(ms_cluster_spec_nnodes(cs), NODES);
    reads = ms__cluster_spec_name_reads(cs);
    /* a hash per add and next to no collisions: a few reads per node; the
     * linear search read every earlier name (n^2 / 2 = 5e9) */
    if (reads > 4L * NODES)
        fail_msg("%ld stored names read to add %d nodes", reads, NODES);
    /* a duplicate is still refused, with its name */
    ms_diag_clear(&d);
    assert_int_equal(ms_cluster_spec_add(cs, "ip-10-1-134-159.eu-west-1.compute.internal=2xA30-24GB",
                                         0, &d),
                     MS_EEXIST);
    assert_non_null(strstr(d.msg, "used twice"));
    assert_true(ms__cluster_spec_name_reads(cs) - reads <= 4);
    assert_int_equal(ms_cluster_spec_add(cs, "fresh=2xA30-24GB", 0, &d), MS_OK);
    assert_int_equal(ms_cluster_spec_nnodes(cs), NODES + 1);

    /* the scheduler over it: every node by name */
    ms_sched_cfg_defaults(&cfg);
    cfg.policy = ms_policy_find("best-fit");
    cfg.nodes = ms_cluster_spec_nodes(cs);
    cfg.nnodes = ms_cluster_spec_nnodes(cs);
    if (ms_sched_create(&cfg, 0.0, &s, &d) != MS_OK)
        fail_msg("ms_sched_create: %s", d.msg);
    for (i = 0; i < NODES + 1; i += 997)
        assert_int_equal(ms_sched_node_find(s, ms_cluster_spec_nodes(cs)[i].name), i);
    assert_int_equal(ms_sched_node_find(s, "fresh"), NODES);
    ms_sched_destroy(s);
    ms_cluster_spec_destroy(cs);
    unlink(path);
}

/* A duplicate in a file names the file and the line. */
static void test_duplicate_line(void **state)
{
    char path[] = "/tmp/ms_test_spec_XXXXXX";
    int fd = mkstemp(path);
    FILE *f;
    ms_cluster_spec_t *cs;
    ms_diag_t d;

    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("a=1xA100-40GB\n\nb=2xA100-40GB  # two\na=4xH100-80GB\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(ms_cluster_spec_create(&cs), MS_OK);
    ms_diag_clear(&d);
    assert_int_not_equal(ms_cluster_spec_read_file(cs, path, 0, &d), MS_OK);
    assert_int_equal(d.line, 4);
    assert_string_equal(d.file, path);
    assert_non_null(strstr(d.msg, "'a' is used twice"));
    assert_int_equal(ms_cluster_spec_nnodes(cs), 2);
    ms_cluster_spec_destroy(cs);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_cluster_file),
        cmocka_unit_test(test_duplicate_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
