/* fuzz_ali_nodes.c - the Alibaba node list, read by the MIG importer
 * (alibaba.c) and by FGD's own reader (src/research/fgd/nodes.c). */
#include "fuzz.h"

#include "migsched/research/alibaba.h"
#include "migsched/research/fgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    ms_ali_nodes_t n;
    ms_fgd_nodes_t m;
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    memset(&n, 0, sizeof(n));
    st = ms_ali_nodes_read(f, "nodes.csv", &n, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    ms_ali_nodes_free(&n);
    if ((f = fuzz_stream(data, size)) == NULL)
        return 0;
    ms_diag_clear(&d);
    memset(&m, 0, sizeof(m));
    st = ms_fgd_nodes_read_stream(f, "nodes.csv", &m, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    ms_fgd_nodes_free(&m);
    return 0;
}
