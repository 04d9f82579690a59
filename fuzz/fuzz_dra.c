/* fuzz_dra.c - what migschedd --dra reads from the API server and from the
 * webhook's caller (src/service/dra_obj.c, dra_review.c, dra_cel.c,
 * dra_qty.c): any bytes are refused with a reason or accepted, never
 * crash, overflow or leak. The input is tried as an AdmissionReview, as
 * each kind of object (ResourceSlice, DeviceClass, ResourceClaim,
 * ResourceClaimTemplate, Pod), as a CEL selector (compiled, then
 * evaluated on a MIG device of NVIDIA's scheme) and as a quantity. An
 * accepted review's answer is JSON. */
#include "fuzz.h"

#include <jansson.h>

#include "service/dra_int.h"

static void objects(const uint8_t *data, size_t size)
{
    json_t *o = json_loadb((const char *)data, size, 0, NULL);
    char why[320];

    if (o == NULL)
        return;
    {
        dra_slice_t s;

        memset(&s, 0, sizeof(s));
        (void)dra_parse_slice(o, &s, why, sizeof(why));
        dra_slice_free(&s);
    }
    {
        dra_class_t c;

        memset(&c, 0, sizeof(c));
        (void)dra_parse_class(o, &c, why, sizeof(why));
        dra_class_free(&c);
    }
    {
        dra_claim_t c;

        memset(&c, 0, sizeof(c));
        (void)dra_parse_claim(o, &c, why, sizeof(why));
        dra_claim_free(&c);
    }
    {
        dra_tmpl_t t;

        memset(&t, 0, sizeof(t));
        (void)dra_parse_tmpl(o, &t, why, sizeof(why));
        dra_tmpl_free(&t);
    }
    {
        dra_pod_t p;

        memset(&p, 0, sizeof(p));
        (void)dra_parse_pod(o, &p, why, sizeof(why));
        dra_pod_free(&p);
    }
    json_decref(o);
}

static void review(const uint8_t *data, size_t size)
{
    dra_review_t rv;
    char why[320];

    memset(&rv, 0, sizeof(rv));
    if (dra_parse_review((const char *)data, size, &rv, why, sizeof(why)) == 0) {
        char *out = dra_out_review(&rv, true);
        json_t *j;

        if (out != NULL) {
            if ((j = json_loads(out, 0, NULL)) == NULL)
                abort();
            json_decref(j);
            free(out);
        }
    }
    dra_review_free(&rv);
}

static void cel(const uint8_t *data, size_t size)
{
    dra_kv_t attrs[] = {
        { (char *)"gpu.nvidia.com/type", { DRA_V_STR, (char *)"mig", 0, false, 0 } },
        { (char *)"gpu.nvidia.com/profile", { DRA_V_STR, (char *)"1g.5gb", 0, false, 0 } },
        { (char *)"gpu.nvidia.com/index", { DRA_V_INT, NULL, 3, false, 0 } },
        { (char *)"gpu.nvidia.com/shared", { DRA_V_BOOL, NULL, 0, true, 0 } },
    };
    dra_kv_t caps[] = { { (char *)"gpu.nvidia.com/memory", { DRA_V_QTY, NULL, 0, false, 5100273664.0 } } };
    dra_devview_t dv = { "gpu.nvidia.com", attrs, 4, caps, 1 };
    dra_cel_t *c = NULL;
    char *s = malloc(size + 1), why[320];
    double q;

    if (s == NULL)
        return;
    memcpy(s, data, size);
    s[size] = '\0';
    if (dra_cel_compile(s, &c, why, sizeof(why)) == 0) {
        int r = dra_cel_eval(c, &dv, why, sizeof(why));

        if (r != DRA_CEL_TRUE && r != DRA_CEL_FALSE && r != DRA_CEL_ERR)
            abort();
        (void)dra_cel_names_driver(c, "gpu.nvidia.com");
        dra_cel_free(c);
    }
    (void)dra_qty_parse(s, &q);
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    review(data, size);
    objects(data, size);
    cel(data, size);
    return 0;
}
