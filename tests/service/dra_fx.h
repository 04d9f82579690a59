/* dra_fx.h - the fixture of the DRA allocator's unit tests
 * (tests/service/test_dra_alloc.c, test_dra_flow.c): migschedd's DRA loop
 * without its threads, on a fake clock; the test plays the watches
 * (objects as the API server serves them, NVIDIA's DynamicMIG slices), the
 * writers (it reads each write job and answers it) and the API server (it
 * posts the claims back allocated). */
#ifndef MS_TESTS_SERVICE_DRA_FX_H
#define MS_TESTS_SERVICE_DRA_FX_H

#include <stdbool.h>

#include <jansson.h>

#include "service/dra_int.h"

#define DRV "gpu.nvidia.com"

typedef struct fx {
    svc_cfg_t cfg;
    svc_t d;
    svc_clock_t clock;
    double mono, wall;
    svc_dra_t *x;
    int epoch[DRA_K_N];
    int nclaim;                    /* claims made */
} fx_t;

typedef struct alloc {
    char pod[64], claim[64], node[64];
    char dev[8][64];
    int ndev;
    json_t *al;                    /* the allocation written (owned) */
} alloc_t;

void fx_post(fx_t *f, int kind, const char *type, json_t *o);
void fx_batch(fx_t *f);
void fx_advance(fx_t *f, double s);
void fx_init(fx_t *f, bool elect);
void fx_fini(fx_t *f);
int fx_setup(void **state);
int fx_teardown(void **state);
json_t *fx_counters(int start, int size, double mem);
json_t *fx_slice(const char *node, const char *name, long gen, long count);
void fx_publish(fx_t *f, const char *node, const char *model, const char *product, int ngpus, long gen);
void fx_a100_cluster(fx_t *f, int nodes, int gpus);
json_t *fx_request(const char *name, const char *cls, const char *cel, int count);
json_t *fx_profile_req(const char *name, const char *profile);
json_t *fx_claim(fx_t *f, const char *pod, json_t *requests, json_t *constraints);
json_t *fx_pod(const char *name, bool gated);
void fx_ask(fx_t *f, const char *name, const char *profile);
dra_work_t *fx_take(fx_t *f, int kind);
char *fx_events_text(fx_t *f);
void fx_answer(fx_t *f, dra_work_t *w, bool ok, alloc_t *out);
void fx_allocated(fx_t *f, const char *podname, json_t *al, bool reserved);
void fx_place(fx_t *f, const char *name, const char *profile, alloc_t *a);
int fx_slices_of(fx_t *f, const char *node, const char *dev, int *gpu);

#endif
