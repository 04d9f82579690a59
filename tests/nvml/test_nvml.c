/* test_nvml.c - the NVML executor against the fake driver.
 *
 * Every test loads tests/nvml/fake_nvml.c, built as libnvidia-ml.so.1,
 * through ms_nvml_open() by path (MS_FAKE_NVML_LIB, set by mk/nvml.mk): the
 * same dlopen/dlsym path the real driver takes. The fake's state lives in a
 * file in a fresh temporary directory per test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "migsched/geometry.h"
#include "migsched/rng.h"
#include "nvml/nvml.h"

#if !defined(MS_FAKE_NVML_LIB) || !defined(MS_FAKE_NVML_R470_LIB) || \
    !defined(MS_FAKE_NVML_BROKEN_LIB)
#error "MS_FAKE_NVML_LIB, _R470_LIB and _BROKEN_LIB must name the fakes (mk/nvml.mk)"
#endif

typedef struct fixture {
    char dir[64];
    char state[128];
} fixture_t;

/* Handles a test opened and has not closed yet: a failing assertion
 * longjmps out of the test, and teardown closes them so the fake starts
 * the next test uninitialised. */
static ms_nvml_t *g_open[4];

static void track(ms_nvml_t *nv)
{
    size_t i;

    for (i = 0; i < sizeof(g_open) / sizeof(g_open[0]); i++)
        if (g_open[i] == NULL) {
            g_open[i] = nv;
            return;
        }
    fail_msg("more than 4 handles open in one test");
}

static void close_fake(ms_nvml_t *nv)
{
    size_t i;

    for (i = 0; i < sizeof(g_open) / sizeof(g_open[0]); i++)
        if (g_open[i] == nv)
            g_open[i] = NULL;
    ms_nvml_close(nv);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/ms-nvml-XXXXXX");
    if (mkdtemp(f->dir) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
    setenv("MS_FAKE_NVML_STATE", f->state, 1);
    unsetenv("MS_FAKE_NVML_FAULTS");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    char tmp[160];
    size_t i;

    for (i = 0; i < sizeof(g_open) / sizeof(g_open[0]); i++) {
        ms_nvml_close(g_open[i]);
        g_open[i] = NULL;
    }
    unlink(f->state);
    snprintf(tmp, sizeof(tmp), "%s.tmp", f->state);
    unlink(tmp);
    rmdir(f->dir);
    free(f);
    unsetenv("MS_FAKE_NVML_FAULTS");
    return 0;
}

static void write_state(void **state, const char *text)
{
    fixture_t *f = *state;
    FILE *fp = fopen(f->state, "w");

    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static int state_has(void **state, const char *needle)
{
    fixture_t *f = *state;
    char buf[4096];
    size_t n;
    FILE *fp = fopen(f->state, "r");

    assert_non_null(fp);
    n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

static ms_nvml_t *open_fake(void)
{
    char err[256];
    ms_nvml_t *nv = NULL;
    ms_status_t st = ms_nvml_open(MS_FAKE_NVML_LIB, &nv, err, sizeof(err));

    if (st != MS_OK)
        fail_msg("ms_nvml_open: %s", err);
    track(nv);
    return nv;
}

static const ms_profile_t *prof(const char *model, const char *name)
{
    const ms_model_t *m = ms_model_find(model);
    int k;

    assert_non_null(m);
    k = ms_model_profile_find(m, name);
    assert_true(k >= 0);
    return &m->profiles[k];
}

static int ngi(ms_nvml_t *nv, int gpu)
{
    ms_nvml_inventory_t inv;
    ms_nvml_err_t e;

    assert_int_equal(ms_nvml_inventory(nv, gpu, &inv, &e), MS_OK);
    return inv.ngi;
}

/* --- loading ------------------------------------------------------------- */

static void test_open_missing_library(void **state)
{
    char err[256], dummy = 0;
    ms_nvml_t *nv = (ms_nvml_t *)(void *)&dummy;   /* must be reset to NULL */

    (void)state;

    assert_int_equal(ms_nvml_open("/nonexistent/libnvidia-ml.so.1", &nv, err, sizeof(err)),
                     MS_ENOENT);
    assert_null(nv);
    assert_non_null(strstr(err, "/nonexistent/libnvidia-ml.so.1"));
}

static void test_open_library_without_symbols(void **state)
{
    char err[256];
    ms_nvml_t *nv = NULL;

    (void)state;
    /* any shared object that is not NVML: the C math library */
    assert_int_equal(ms_nvml_open("libm.so.6", &nv, err, sizeof(err)), MS_ENOTSUP);
    assert_null(nv);
    assert_non_null(strstr(err, "nvmlInit_v2"));
}

static void test_open_missing_symbol(void **state)
{
    char err[256];
    ms_nvml_t *nv = NULL;

    write_state(state, "gpu a100-40\n");
    /* every symbol is checked at open, not just the first one */
    assert_int_equal(ms_nvml_open(MS_FAKE_NVML_BROKEN_LIB, &nv, err, sizeof(err)), MS_ENOTSUP);
    assert_null(nv);
    assert_non_null(strstr(err, "lacks nvmlDeviceGetMigDeviceHandleByIndex"));
}

/* A driver without the V profile call: the v1 call is used, with no names. */
static void test_r470_fallback(void **state)
{
    char err[256];
    ms_nvml_t *nv = NULL;
    ms_nvml_profile_t pi;
    ms_nvml_gi_t gi;
    ms_nvml_err_t e;

    write_state(state, "gpu a100-40\n");
    assert_int_equal(ms_nvml_open(MS_FAKE_NVML_R470_LIB, &nv, err, sizeof(err)), MS_OK);
    track(nv);
    assert_int_equal(ms_nvml_profile_info(nv, 0, 0x2, &pi, &e), MS_OK);
    assert_int_equal(pi.id, 9);
    assert_int_equal(pi.slices, 3);
    assert_int_equal(pi.instances, 2);
    assert_string_equal(pi.name, "");
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "3g"), 4, &gi, &e), MS_OK);
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "4g"), 0, NULL, &e), MS_OK);
    assert_int_equal(ngi(nv, 0), 2);
    assert_int_equal(ms_nvml_profile_info(nv, 0, 0x5, &pi, &e), MS_ENOTSUP);
    assert_string_equal(e.call, "nvmlDeviceGetGpuInstanceProfileInfo");
    close_fake(nv);
}

static void test_open_driver_not_loaded(void **state)
{
    char err[256];
    ms_nvml_t *nv = NULL;

    (void)state;   /* the state file does not exist: the fake's "no driver" */
    assert_int_equal(ms_nvml_open(MS_FAKE_NVML_LIB, &nv, err, sizeof(err)), MS_EIO);
    assert_null(nv);
    assert_non_null(strstr(err, "driver is not loaded"));
    assert_non_null(strstr(err, "NVML_ERROR_DRIVER_NOT_LOADED"));
}

/* --- reading ------------------------------------------------------------- */

static void test_gpu_info(void **state)
{
    static const char *want[] = { "A100-40GB", "H100-80GB", "A30", "H200-141GB" };
    ms_nvml_t *nv;
    ms_nvml_gpu_t g;
    ms_nvml_err_t e;
    int i;

    write_state(state, "gpu a100-40\ngpu h100-80\ngpu a30 mig=0 pending=1\ngpu h200\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_gpu_count(nv), 4);
    for (i = 0; i < 4; i++) {
        assert_int_equal(ms_nvml_gpu_info(nv, i, &g, &e), MS_OK);
        assert_non_null(g.model);
        assert_string_equal(g.model->name, want[i]);
        assert_int_equal(strncmp(g.uuid, "GPU-", 4), 0);
        assert_int_equal(strncmp(g.name, "NVIDIA ", 7), 0);
    }
    assert_int_equal(ms_nvml_gpu_info(nv, 2, &g, &e), MS_OK);
    assert_int_equal(g.mig_current, 0);
    assert_int_equal(g.mig_pending, 1);
    assert_int_equal(ms_nvml_gpu_info(nv, 4, &g, &e), MS_ENOENT);
    assert_int_equal(e.kind, MS_NVML_K_NOT_FOUND);
    close_fake(nv);
}

static void test_model_for_name(void **state)
{
    static const struct { const char *name, *model; } cases[] = {
        { "NVIDIA A100-SXM4-40GB", "A100-40GB" },
        { "A100-SXM4-40GB", "A100-40GB" },
        { "NVIDIA A100-PCIE-40GB", "A100-40GB" },
        { "NVIDIA A100-SXM4-80GB", "A100-80GB" },
        { "NVIDIA A100 80GB PCIe", "A100-80GB" },
        { "NVIDIA A30", "A30" },
        { "NVIDIA H100 80GB HBM3", "H100-80GB" },
        { "NVIDIA H100 PCIe", "H100-80GB" },
        { "NVIDIA H100 NVL", "H100-94GB" },
        { "NVIDIA H200", "H200-141GB" },
        { "NVIDIA H200 NVL", "H200-141GB" },
        { "NVIDIA H20", "H100-96GB" },
        { "NVIDIA GH200 480GB", "H100-96GB" },
        { "NVIDIA GH200 144G HBM3e", "GH200-144GB" },
        { "NVIDIA B200", "B200-180GB" },
        { "NVIDIA GB200", "GB200-186GB" },
        { "NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000" },
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const ms_model_t *m = ms_nvml_model_for_name(cases[i].name);
        if (m == NULL || strcmp(m->name, cases[i].model) != 0)
            fail_msg("'%s' -> %s, want %s", cases[i].name, m != NULL ? m->name : "NULL",
                     cases[i].model);
    }
    assert_null(ms_nvml_model_for_name("NVIDIA GeForce RTX 4090"));
    assert_null(ms_nvml_model_for_name("Tesla V100-SXM2-16GB"));
    assert_null(ms_nvml_model_for_name(""));
    assert_null(ms_nvml_model_for_name(NULL));
}

static void test_inventory_existing(void **state)
{
    const ms_model_t *m = ms_model_find("A100-40GB");
    ms_nvml_inventory_t inv;
    ms_nvml_err_t e;
    ms_nvml_t *nv;

    write_state(state,
                "gpu a100-40\n"
                "gi 3 9 4\nci 0 2 0 MIG-test-aaaa\n"       /* 3g.20gb at 4 */
                "gi 1 15 0\nci 0 0 0 MIG-test-bbbb\n"      /* 1g.10gb at 0, not a base profile */
                "gi 2 19 2\n"                              /* 1g.5gb at 2, no CI yet */
                "serial 7\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_inventory(nv, 0, &inv, &e), MS_OK);
    assert_int_equal(inv.ngi, 3);
    /* sorted by start */
    assert_int_equal(inv.gi[0].start, 0);
    assert_int_equal(inv.gi[0].profile_id, 15);
    assert_int_equal(inv.gi[0].size, 2);
    assert_string_equal(m->profiles[inv.gi[0].prof].name, "1g.10gb");
    assert_int_equal(inv.gi[0].nci, 1);
    assert_string_equal(inv.gi[0].ci[0].uuid, "MIG-test-bbbb");
    assert_int_equal(inv.gi[1].start, 2);
    assert_string_equal(m->profiles[inv.gi[1].prof].name, "1g.5gb");
    assert_int_equal(inv.gi[1].nci, 0);
    assert_int_equal(inv.gi[2].id, 3);
    assert_int_equal(inv.gi[2].start, 4);
    assert_int_equal(inv.gi[2].size, 4);
    assert_string_equal(m->profiles[inv.gi[2].prof].name, "3g.20gb");
    assert_int_equal(inv.gi[2].nci, 1);
    assert_int_equal(inv.gi[2].ci[0].size, 3);
    assert_string_equal(inv.gi[2].ci[0].uuid, "MIG-test-aaaa");
    close_fake(nv);
}

static void test_placements_match_tables(void **state)
{
    static const char *models[] = { "A100-40GB", "H100-80GB", "A30" };
    ms_nvml_placement_t pl[MS_NVML_MAX_PLACEMENTS];
    ms_nvml_err_t e;
    ms_nvml_t *nv;
    int gpu, k, n, i;

    write_state(state, "gpu a100-40\ngpu h100-80\ngpu a30 mig=0\n");
    nv = open_fake();
    for (gpu = 0; gpu < 3; gpu++) {
        const ms_model_t *m = ms_model_find(models[gpu]);
        for (k = 0; k < m->nprofiles; k++) {
            uint16_t mask = 0;
            /* works with MIG disabled too (GPU 2) */
            assert_int_equal(ms_nvml_placements(nv, gpu, m->profiles[k].gi_id, pl,
                                                MS_NVML_MAX_PLACEMENTS, &n, &e), MS_OK);
            for (i = 0; i < n; i++) {
                assert_int_equal(pl[i].size, m->profiles[k].msize);
                mask |= (uint16_t)(1u << pl[i].start);
            }
            assert_int_equal(mask, m->profiles[k].start_mask);
        }
    }
    /* too small a buffer is an error, not an overflow */
    assert_int_equal(ms_nvml_placements(nv, 0, 19, pl, 3, &n, &e), MS_ERANGE);
    close_fake(nv);
}

static void test_placement_override(void **state)
{
    ms_nvml_placement_t pl[MS_NVML_MAX_PLACEMENTS];
    ms_nvml_err_t e;
    ms_nvml_t *nv;
    int n;

    write_state(state, "gpu h200 placements=9:10\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_placements(nv, 0, 9, pl, MS_NVML_MAX_PLACEMENTS, &n, &e), MS_OK);
    assert_int_equal(n, 1);
    assert_int_equal(pl[0].start, 4);
    /* the driver now refuses 3g at 0 as an illegal placement */
    assert_int_equal(ms_nvml_create(nv, 0, prof("H200-141GB", "3g"), 0, NULL, &e), MS_EINVAL);
    assert_int_equal(e.kind, MS_NVML_K_INVALID);
    assert_int_equal(ms_nvml_create(nv, 0, prof("H200-141GB", "3g"), 4, NULL, &e), MS_OK);
    close_fake(nv);
}

/* --- create and destroy -------------------------------------------------- */

/* Every base profile at every legal start of three models: create gives one
 * GI there with one full-size CI and a MIG UUID; destroy empties the GPU. */
static void test_create_destroy_every_placement(void **state)
{
    static const char *models[] = { "A100-40GB", "H100-80GB", "A30" };
    ms_nvml_t *nv;
    int gpu;

    write_state(state, "gpu a100-40\ngpu h100-80\ngpu a30\n");
    nv = open_fake();
    for (gpu = 0; gpu < 3; gpu++) {
        const ms_model_t *m = ms_model_find(models[gpu]);
        int k, s;
        for (k = 0; k < m->nprofiles; k++) {
            const ms_profile_t *p = &m->profiles[k];
            if (!(p->flags & MS_PF_BASE))
                continue;
            for (s = 0; s < MS_MAX_WIDTH; s++) {
                ms_nvml_inventory_t inv;
                ms_nvml_gi_t gi;
                ms_nvml_err_t e;
                if (!((p->start_mask >> s) & 1u))
                    continue;
                if (ms_nvml_create(nv, gpu, p, (unsigned)s, &gi, &e) != MS_OK)
                    fail_msg("%s %s@%d: %s", m->name, p->name, s, e.msg);
                assert_int_equal(gi.start, s);
                assert_int_equal(gi.size, p->msize);
                assert_int_equal(gi.profile_id, p->gi_id);
                assert_int_equal(gi.prof, k);
                assert_int_equal(gi.nci, 1);
                assert_int_equal(gi.ci[0].size, p->cslices);
                assert_int_equal(strncmp(gi.ci[0].uuid, "MIG-", 4), 0);
                assert_int_equal(ms_nvml_inventory(nv, gpu, &inv, &e), MS_OK);
                assert_int_equal(inv.ngi, 1);
                assert_int_equal(inv.gi[0].id, gi.id);
                assert_string_equal(inv.gi[0].ci[0].uuid, gi.ci[0].uuid);
                assert_int_equal(ms_nvml_destroy(nv, gpu, p, (unsigned)s, &e), MS_OK);
                assert_int_equal(ngi(nv, gpu), 0);
            }
        }
    }
    close_fake(nv);
}

static void test_overlap_refused(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;

    write_state(state, "gpu a100-40\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "3g"), 0, NULL, &e), MS_OK);
    /* 4g@0 shares slices 0-3 with 3g@0: the hardware refuses, distinctly */
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "4g"), 0, NULL, &e), MS_ENOFIT);
    assert_int_equal(e.kind, MS_NVML_K_REFUSED);
    assert_int_equal(e.nvml_rc, 23);
    assert_string_equal(e.call, "nvmlDeviceCreateGpuInstanceWithPlacement");
    assert_non_null(strstr(e.msg, "GPU 0"));
    assert_non_null(strstr(e.msg, "NVML_ERROR_INSUFFICIENT_RESOURCES"));
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "2g"), 2, NULL, &e), MS_ENOFIT);
    /* an illegal start is a different error */
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "2g"), 5, NULL, &e), MS_EINVAL);
    assert_int_equal(e.kind, MS_NVML_K_INVALID);
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "3g"), 4, NULL, &e), MS_OK);
    assert_int_equal(ngi(nv, 0), 2);
    assert_int_equal(ms_nvml_destroy(nv, 0, prof("A100-40GB", "4g"), 0, &e), MS_ENOENT);
    assert_int_equal(e.kind, MS_NVML_K_NOT_FOUND);
    close_fake(nv);
}

/* Random creates and destroys: the driver's answer always agrees with the
 * project's geometry tables (legal and free -> created; legal and
 * occupied -> refused; illegal start -> invalid), and the inventory's
 * occupancy equals the state the tables track. */
static void test_random_against_geometry(void **state)
{
    static const char *models[] = { "A100-40GB", "H100-80GB", "A30" };
    ms_nvml_t *nv;
    ms_rng_t rng;
    int gpu;

    write_state(state, "gpu a100-40\ngpu h100-80\ngpu a30\n");
    nv = open_fake();
    ms_rng_seed(&rng, 2026);
    for (gpu = 0; gpu < 3; gpu++) {
        ms_geom_t *g = NULL;
        ms_state_t s = ms_geom_empty_state();
        int step, width;

        assert_int_equal(ms_geom_create(ms_model_find(models[gpu]), 0, &g), MS_OK);
        width = ms_geom_width(g);
        for (step = 0; step < 300; step++) {
            int k = (int)ms_rng_below(&rng, (uint64_t)ms_geom_nprofiles(g));
            int st = (int)ms_rng_below(&rng, (uint64_t)width);
            const ms_profile_t *p = ms_geom_profile(g, k);
            ms_nvml_err_t e;
            ms_nvml_inventory_t inv;
            ms_state_t rebuilt = MS_STATE_NONE;
            uint16_t mask = 0;
            int i;

            if (ms_rng_below(&rng, 3) == 0) {
                ms_state_t ns = ms_state_remove(g, s, k, st);
                ms_status_t r = ms_nvml_destroy(nv, gpu, p, (unsigned)st, &e);
                /* removal is legal in the tables iff an instance exists there */
                if (r == MS_OK) {
                    assert_true(ns != MS_STATE_NONE);
                    s = ns;
                } else {
                    assert_int_equal(r, MS_ENOENT);
                }
            } else {
                ms_state_t ns = ms_state_place(g, s, k, st);
                ms_status_t r = ms_nvml_create(nv, gpu, p, (unsigned)st, NULL, &e);
                if (!((p->start_mask >> st) & 1u))
                    assert_int_equal(r, MS_EINVAL);
                else if (ns == MS_STATE_NONE)
                    assert_int_equal(r, MS_ENOFIT);
                else {
                    if (r != MS_OK)
                        fail_msg("%s %s@%d refused: %s", models[gpu], p->name, st, e.msg);
                    s = ns;
                }
            }
            assert_int_equal(ms_nvml_inventory(nv, gpu, &inv, &e), MS_OK);
            for (i = 0; i < inv.ngi; i++)
                mask |= (uint16_t)(((1u << inv.gi[i].size) - 1u) << inv.gi[i].start);
            assert_int_equal(mask, ms_state_mask(g, s));
            /* and the state rebuilt from the hardware is the tracked one */
            assert_int_equal(ms_nvml_inventory_state(g, &inv, &rebuilt, &e), MS_OK);
            assert_int_equal(rebuilt, s);
        }
        ms_geom_destroy(g);
    }
    close_fake(nv);
}

static void test_inventory_state_refuses_foreign_gi(void **state)
{
    ms_geom_t *g = NULL;
    ms_nvml_inventory_t inv;
    ms_nvml_err_t e;
    ms_state_t s = 0;
    ms_nvml_t *nv;

    /* 1g.10gb (ID 15) is not in the default (classic) profile set */
    write_state(state, "gpu a100-40\ngi 1 15 6\ngi 2 9 0\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_inventory(nv, 0, &inv, &e), MS_OK);
    assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), 0, &g), MS_OK);
    assert_int_equal(ms_nvml_inventory_state(g, &inv, &s, &e), MS_ESTATE);
    assert_non_null(strstr(e.msg, "not an active profile"));
    ms_geom_destroy(g);
    /* with the double-memory 1g active it is a valid state */
    {
        uint32_t set = 0;
        assert_int_equal(ms_geom_parse_profile_set(ms_model_find("A100-40GB"), "1g,1g.10gb,2g,3g,4g,7g",
                                                   &set, NULL), MS_OK);
        assert_int_equal(ms_geom_create(ms_model_find("A100-40GB"), set, &g), MS_OK);
    }
    assert_int_equal(ms_nvml_inventory_state(g, &inv, &s, &e), MS_OK);
    assert_int_equal(ms_state_mask(g, s), 0xCF);
    assert_int_equal(ms_state_compute(g, s), 4);
    ms_geom_destroy(g);
    close_fake(nv);
}

static void test_profile_id_mismatch(void **state)
{
    ms_profile_t wrong = *prof("A100-40GB", "3g");
    ms_nvml_t *nv;
    ms_nvml_err_t e;

    write_state(state, "gpu a100-40\n");
    nv = open_fake();
    wrong.gi_id = 7;   /* our table disagrees with the driver */
    assert_int_equal(ms_nvml_create(nv, 0, &wrong, 0, NULL, &e), MS_ESTATE);
    assert_non_null(strstr(e.msg, "table says 7"));
    assert_int_equal(ngi(nv, 0), 0);
    close_fake(nv);
}

/* --- faults -------------------------------------------------------------- */

static void test_insufficient_resources_injected(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;

    write_state(state, "gpu h100-80\n");
    setenv("MS_FAKE_NVML_FAULTS", "nvmlDeviceCreateGpuInstanceWithPlacement:1:23", 1);
    nv = open_fake();
    assert_int_equal(ms_nvml_create(nv, 0, prof("H100-80GB", "7g"), 0, NULL, &e), MS_ENOFIT);
    assert_int_equal(e.kind, MS_NVML_K_REFUSED);
    assert_non_null(strstr(e.msg, "refused"));
    assert_int_equal(ngi(nv, 0), 0);
    /* one-shot: the second try goes through */
    assert_int_equal(ms_nvml_create(nv, 0, prof("H100-80GB", "7g"), 0, NULL, &e), MS_OK);
    close_fake(nv);
}

static void test_no_ghost_after_failed_ci(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;

    write_state(state, "gpu a100-40\n");
    setenv("MS_FAKE_NVML_FAULTS", "nvmlGpuInstanceCreateComputeInstance:1:23", 1);
    nv = open_fake();
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "2g"), 2, NULL, &e), MS_ENOFIT);
    assert_string_equal(e.call, "nvmlGpuInstanceCreateComputeInstance");
    assert_int_equal(e.ghost, 0);
    assert_int_equal(ngi(nv, 0), 0);
    close_fake(nv);
    assert_false(state_has(state, "\ngi "));   /* not in the driver's state either */
}

static void test_ghost_reported_when_rollback_fails(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;
    ms_nvml_inventory_t inv;

    write_state(state, "gpu a100-40\n");
    setenv("MS_FAKE_NVML_FAULTS",
           "nvmlGpuInstanceCreateComputeInstance:1:999,nvmlGpuInstanceDestroy:1:19", 1);
    nv = open_fake();
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "4g"), 0, NULL, &e), MS_EIO);
    assert_int_equal(e.kind, MS_NVML_K_DRIVER);
    assert_int_equal(e.ghost, 1);
    assert_non_null(strstr(e.msg, "left over"));
    assert_int_equal(ms_nvml_inventory(nv, 0, &inv, &e), MS_OK);
    assert_int_equal(inv.ngi, 1);   /* honest: the GI is there */
    assert_int_equal(inv.gi[0].nci, 0);
    assert_int_equal(ms_nvml_destroy(nv, 0, prof("A100-40GB", "4g"), 0, &e), MS_OK);
    close_fake(nv);
}

/* A driver error at the N-th call, for every N through a create: the
 * create either succeeds whole or fails and leaves no GI behind. */
static void test_driver_error_at_every_call(void **state)
{
    int n, fails = 0, oks = 0;

    for (n = 1; n <= 40; n++) {
        char spec[64];
        char err[256];
        ms_nvml_t *nv = NULL;
        ms_nvml_err_t e;
        ms_status_t st;
        int left;

        write_state(state, "gpu a100-40\n");
        snprintf(spec, sizeof(spec), "*:%d:999", n);
        setenv("MS_FAKE_NVML_FAULTS", spec, 1);
        st = ms_nvml_open(MS_FAKE_NVML_LIB, &nv, err, sizeof(err));
        if (st == MS_OK)
            track(nv);
        if (st != MS_OK) {
            assert_int_equal(st, MS_EIO);   /* nvmlDeviceGetCount_v2 failed */
            assert_non_null(strstr(err, "unknown driver error"));
            continue;
        }
        st = ms_nvml_create(nv, 0, prof("A100-40GB", "3g"), 4, NULL, &e);
        close_fake(nv);
        unsetenv("MS_FAKE_NVML_FAULTS");
        nv = open_fake();
        left = ngi(nv, 0);
        close_fake(nv);
        if (st == MS_OK) {
            oks++;
            assert_int_equal(left, 1);
        } else {
            fails++;
            assert_int_equal(st, MS_EIO);
            assert_int_equal(e.kind, MS_NVML_K_DRIVER);
            assert_int_equal(e.ghost, 0);
            assert_true(e.call[0] != '\0');
            assert_int_equal(left, 0);
        }
    }
    assert_true(fails >= 8);   /* a create makes at least this many calls */
    assert_true(oks >= 1);
}

static void test_gpu_lost(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;
    ms_nvml_gpu_t g;
    ms_status_t st = MS_OK;
    int i;

    write_state(state, "gpu a100-40\ngpu h100-80 lost=1\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_gpu_count(nv), 2);
    assert_int_equal(ms_nvml_gpu_info(nv, 0, &g, &e), MS_OK);
    assert_int_equal(ms_nvml_gpu_info(nv, 1, &g, &e), MS_EIO);
    assert_int_equal(e.kind, MS_NVML_K_GPU_LOST);
    assert_int_equal(e.nvml_rc, 15);
    assert_non_null(strstr(e.msg, "fallen off the bus"));
    close_fake(nv);

    /* GPU 0 disappears in the middle of a session, and stays gone */
    setenv("MS_FAKE_NVML_FAULTS", "lose:0:12", 1);
    nv = open_fake();
    for (i = 0; i < 10 && st == MS_OK; i++) {
        st = ms_nvml_create(nv, 0, prof("A100-40GB", "1g"), (unsigned)i, NULL, &e);
        if (st == MS_OK)
            assert_int_equal(ms_nvml_destroy(nv, 0, prof("A100-40GB", "1g"), (unsigned)i, &e), MS_OK);
    }
    assert_int_equal(st, MS_EIO);
    assert_int_equal(e.kind, MS_NVML_K_GPU_LOST);
    close_fake(nv);
    unsetenv("MS_FAKE_NVML_FAULTS");
    nv = open_fake();
    assert_int_equal(ms_nvml_inventory(nv, 0, &(ms_nvml_inventory_t){ 0 }, &e), MS_EIO);
    assert_int_equal(e.kind, MS_NVML_K_GPU_LOST);
    close_fake(nv);
}

static void test_mig_disabled(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;
    ms_nvml_inventory_t inv;
    ms_nvml_profile_t pi;

    write_state(state, "gpu a100-40 mig=0\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_inventory(nv, 0, &inv, &e), MS_ENOTSUP);
    assert_int_equal(e.kind, MS_NVML_K_UNSUPPORTED);
    assert_non_null(strstr(e.msg, "MIG mode is disabled"));
    assert_int_equal(ms_nvml_create(nv, 0, prof("A100-40GB", "7g"), 0, NULL, &e), MS_ENOTSUP);
    assert_int_equal(ms_nvml_profile_info(nv, 0, 0, &pi, &e), MS_ENOTSUP);
    close_fake(nv);
    assert_true(state_has(state, "mig=0"));   /* nothing changed the mode */
}

static void test_set_mig_mode_needs_flag(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;
    ms_nvml_gpu_t g;
    int act = -1;

    write_state(state, "gpu a100-40 mig=0\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_set_mig_mode(nv, 0, 1, 0, &act, &e), MS_EINVAL);
    assert_int_equal(ms_nvml_gpu_info(nv, 0, &g, &e), MS_OK);
    assert_int_equal(g.mig_current, 0);
    assert_int_equal(ms_nvml_set_mig_mode(nv, 0, 1, MS_NVML_MODE_CHANGE_OK, &act, &e), MS_OK);
    assert_int_equal(act, 0);
    assert_int_equal(ms_nvml_gpu_info(nv, 0, &g, &e), MS_OK);
    assert_int_equal(g.mig_current, 1);
    close_fake(nv);
}

static void test_state_persists(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;
    ms_nvml_gi_t gi;
    ms_nvml_inventory_t inv;

    write_state(state, "gpu a30\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_create(nv, 0, prof("A30", "2g"), 2, &gi, &e), MS_OK);
    close_fake(nv);
    nv = open_fake();
    assert_int_equal(ms_nvml_inventory(nv, 0, &inv, &e), MS_OK);
    assert_int_equal(inv.ngi, 1);
    assert_int_equal(inv.gi[0].start, 2);
    assert_int_equal(inv.gi[0].id, gi.id);
    assert_string_equal(inv.gi[0].ci[0].uuid, gi.ci[0].uuid);
    assert_int_equal(ms_nvml_destroy(nv, 0, prof("A30", "2g"), 2, &e), MS_OK);
    close_fake(nv);
    nv = open_fake();
    assert_int_equal(ngi(nv, 0), 0);
    close_fake(nv);
}

static void test_profile_info(void **state)
{
    ms_nvml_t *nv;
    ms_nvml_err_t e;
    ms_nvml_profile_t pi;

    write_state(state, "gpu a100-40\n");
    nv = open_fake();
    assert_int_equal(ms_nvml_profile_info(nv, 0, 0x2, &pi, &e), MS_OK);
    assert_int_equal(pi.id, 9);
    assert_int_equal(pi.slices, 3);
    assert_int_equal(pi.instances, 2);
    assert_string_equal(pi.name, "3g.20gb");
    assert_int_equal(ms_nvml_profile_info(nv, 0, 0x5, &pi, &e), MS_ENOTSUP);   /* no 8-slice */
    assert_int_equal(ms_nvml_profile_info(nv, 0, 0x40, &pi, &e), MS_EINVAL);
    close_fake(nv);
}

/* --- the error table ----------------------------------------------------- */

static void test_error_table(void **state)
{
    int rc;

    (void)state;
    for (rc = 0; rc <= 30; rc++) {
        assert_int_equal(strncmp(ms_nvml_rc_name(rc), "NVML_", 5), 0);
        assert_true(strlen(ms_nvml_rc_text(rc)) > 5);
        /* only INSUFFICIENT_RESOURCES means "the hardware refused" */
        assert_int_equal(ms_nvml_rc_status(rc) == MS_ENOFIT, rc == 23);
        assert_int_equal(ms_nvml_rc_kind(rc) == MS_NVML_K_REFUSED, rc == 23);
        assert_int_equal(ms_nvml_rc_status(rc) == MS_OK, rc == 0);
    }
    assert_string_equal(ms_nvml_rc_name(999), "NVML_ERROR_UNKNOWN");
    assert_int_equal(ms_nvml_rc_kind(15), MS_NVML_K_GPU_LOST);
    assert_int_equal(ms_nvml_rc_kind(28), MS_NVML_K_GPU_LOST);
    assert_int_equal(ms_nvml_rc_kind(4), MS_NVML_K_PERMISSION);
    assert_int_equal(ms_nvml_rc_kind(19), MS_NVML_K_BUSY);
    assert_int_equal(ms_nvml_rc_status(12345), MS_EIO);
    assert_int_equal(ms_nvml_rc_kind(12345), MS_NVML_K_DRIVER);
    assert_string_equal(ms_nvml_kind_name(MS_NVML_K_GPU_LOST), "gpu-lost");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_open_missing_library),
        T(test_open_library_without_symbols),
        T(test_open_missing_symbol),
        T(test_r470_fallback),
        T(test_open_driver_not_loaded),
        T(test_gpu_info),
        T(test_model_for_name),
        T(test_inventory_existing),
        T(test_placements_match_tables),
        T(test_placement_override),
        T(test_create_destroy_every_placement),
        T(test_overlap_refused),
        T(test_random_against_geometry),
        T(test_inventory_state_refuses_foreign_gi),
        T(test_profile_id_mismatch),
        T(test_insufficient_resources_injected),
        T(test_no_ghost_after_failed_ci),
        T(test_ghost_reported_when_rollback_fails),
        T(test_driver_error_at_every_call),
        T(test_gpu_lost),
        T(test_mig_disabled),
        T(test_set_mig_mode_needs_flag),
        T(test_state_persists),
        T(test_profile_info),
        T(test_error_table),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
