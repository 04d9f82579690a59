/* fuzz_advise.c - the advisor's utilisation readers: the first byte picks
 * the CSV (even) or the DCGM exporter text (odd) reader; what reads is
 * recommended on and written as text, JSON, CSV and a policy. */
#include "fuzz.h"

#include "migsched/advise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ms_node_spec_t nodes[2];
    static ms_geom_t *a30;
    ms_advise_t *a = NULL;
    ms_advise_cfg_t cfg;
    ms_advise_result_t r;
    ms_diag_t d;
    ms_status_t st;
    FILE *f, *w;
    bool dcgm;

    if (size == 0)
        return 0;
    if (a30 == NULL && ms_geom_create(ms_model_find("A30"), 0, &a30) != MS_OK)
        abort();
    nodes[0] = (ms_node_spec_t){ "low", fuzz_a100(), 4, MS_NODE_MIG, 0 };
    nodes[1] = (ms_node_spec_t){ "b", a30, 2, MS_NODE_TIMESLICE, 4 };
    dcgm = data[0] & 1;
    if ((f = fuzz_stream(data + 1, size - 1)) == NULL)
        return 0;
    if (ms_advise_create(nodes, 2, &a) != MS_OK)
        abort();
    ms_diag_clear(&d);
    st = dcgm ? ms_advise_read_dcgm(a, f, "fuzz", &d) : ms_advise_read_util_csv(a, f, "fuzz", &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st == MS_OK) {
        ms_advise_cfg_defaults(&cfg);
        if (ms_advise_run(a, &cfg, &r, &d) != MS_OK)
            abort();
        for (int i = 0; i < r.nnodes; i++)
            if (r.nodes[i].samples > 0 && !(r.nodes[i].mean_util >= 0 && r.nodes[i].mean_util <= 100))
                abort();
        if ((w = fopen("/dev/null", "w")) != NULL) {
            if (ms_advise_write_text(w, &r) != MS_OK || ms_advise_write_json(w, &r) != MS_OK ||
                ms_advise_write_csv(w, &r) != MS_OK || ms_advise_write_policy(w, &r) != MS_OK)
                abort();
            fclose(w);
        }
        ms_advise_result_free(&r);
    }
    ms_advise_destroy(a);
    return 0;
}
