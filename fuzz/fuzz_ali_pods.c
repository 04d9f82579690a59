/* fuzz_ali_pods.c - the Alibaba pod list, read by the MIG importer
 * (alibaba.c) and by FGD's own reader (src/research/fgd/pods.c). */
#include "fuzz.h"

#include "migsched/research/alibaba.h"
#include "migsched/research/fgd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    ms_ali_pods_t p;
    ms_fgd_pods_t q;
    ms_diag_t d;
    ms_status_t st;

    if (f == NULL)
        return 0;
    ms_diag_clear(&d);
    memset(&p, 0, sizeof(p));
    st = ms_ali_pods_read(f, "pods.csv", &p, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    ms_ali_pods_free(&p);
    if ((f = fuzz_stream(data, size)) == NULL)
        return 0;
    ms_diag_clear(&d);
    memset(&q, 0, sizeof(q));
    st = ms_fgd_pods_read_stream(f, "pods.csv", &q, &d);
    fclose(f);
    fuzz_check_status(st, &d);
    if (st == MS_OK) {
        ms_fgd_classes_t c;
        memset(&c, 0, sizeof(c));
        if (ms_fgd_typical(&q, 95.0, &c) == MS_OK)
            ms_fgd_classes_free(&c);
    }
    ms_fgd_pods_free(&q);
    return 0;
}
