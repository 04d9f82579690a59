/* fgd.h - the FGD fill experiment (Weng et al., USENIX ATC '23) on the
 * Alibaba "openb" trace: resource model, typical pods, the fragmentation
 * measure, the six placement policies and the one-pass fill.
 *
 * The algorithm follows docs in shared/reference/fgd.md (taken from the
 * authors' Go simulator). Randomness comes from our own xoshiro256** PRNG (rng.h),
 * so individual seeds are not bit-identical to the Go runs; the means are
 * what is comparable.
 *
 * Units: CPU in milli-cores, memory in MiB, GPU in milli-GPU (1000 = one
 * whole GPU). The library never prints and keeps no globals.
 */
#ifndef MIGSCHED_FGD_H
#define MIGSCHED_FGD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "migsched/rng.h"

#include "migsched/status.h"

#define MS_FGD_MILLI       1000     /* milli-GPU in one GPU */
#define MS_FGD_MAX_GPU     8        /* GPUs per node */
#define MS_FGD_MAX_MODELS  32       /* distinct GPU models in one node list */
#define MS_FGD_MODEL_LEN   24
#define MS_FGD_NAME_LEN    40
#define MS_FGD_MAX_CPU     128000   /* MaxSpecCpu of the Go plugins */
#define MS_FGD_MAX_GPU_MILLI 8000   /* MaxSpecGpu of the Go plugins */
#define MS_FGD_NBINS       131      /* arrived % bins 0..130 */
#define MS_FGD_NTAGS       (MS_FGD_MAX_GPU + 1)  /* clustering tags: 0 share, k k-gpu */

/* ---- input ------------------------------------------------------------ */

typedef struct ms_fgd_node_spec {
    char name[MS_FGD_NAME_LEN];
    int64_t cpu_milli;
    int64_t mem_mib;
    int ngpu;
    int model;                        /* index into ms_fgd_nodes_t.models, -1 none */
} ms_fgd_node_spec_t;

typedef struct ms_fgd_nodes {
    ms_fgd_node_spec_t *v;
    size_t n;
    int nmodels;
    char models[MS_FGD_MAX_MODELS][MS_FGD_MODEL_LEN];
    long total_gpus;
} ms_fgd_nodes_t;

typedef struct ms_fgd_pod {
    char name[MS_FGD_NAME_LEN];
    int64_t cpu_milli;
    int64_t mem_mib;
    int num_gpu;                      /* 0, 1, 2, 4, 8 */
    int gpu_milli;                    /* per GPU; <1000 only when num_gpu == 1 */
    int spec;                         /* index into ms_fgd_pods_t.specs; 0 = any */
    uint32_t access;                  /* allowed node models (ms_fgd_pods_bind) */
} ms_fgd_pod_t;

typedef struct ms_fgd_pods {
    ms_fgd_pod_t *v;
    size_t n;
    char **specs;                     /* interned gpu_spec strings; specs[0] = "" */
    int nspecs;
} ms_fgd_pods_t;

/* Node list CSV (columns sn, cpu_milli, memory_mib, gpu, model; any order,
 * found by header). On error *out is left empty and d names file/line/field. */
ms_status_t ms_fgd_nodes_read(const char *path, ms_fgd_nodes_t *out, ms_diag_t *d);
ms_status_t ms_fgd_nodes_read_stream(FILE *f, const char *name, ms_fgd_nodes_t *out,
                                     ms_diag_t *d);
void ms_fgd_nodes_free(ms_fgd_nodes_t *nodes);
/* Model index by name, -1 if absent. */
int ms_fgd_model_find(const ms_fgd_nodes_t *nodes, const char *name);

/* Pod list CSV (name, cpu_milli, memory_mib, num_gpu, gpu_milli required;
 * gpu_spec optional; other columns ignored). */
ms_status_t ms_fgd_pods_read(const char *path, ms_fgd_pods_t *out, ms_diag_t *d);
ms_status_t ms_fgd_pods_read_stream(FILE *f, const char *name, ms_fgd_pods_t *out,
                                    ms_diag_t *d);
void ms_fgd_pods_free(ms_fgd_pods_t *pods);
/* Fill every pod's access mask from its gpu_spec and the node list's models
 * (empty spec = every model; names absent from the cluster allow nothing). */
void ms_fgd_pods_bind(ms_fgd_pods_t *pods, const ms_fgd_nodes_t *nodes);
/* Allow-list string -> model mask. */
uint32_t ms_fgd_spec_mask(const char *spec, const ms_fgd_nodes_t *nodes);

/* ---- typical pods (fgd.md §1.2) ---------------------------------------- */

typedef struct ms_fgd_class {
    int64_t cpu_milli;
    int gpu_milli;
    int num_gpu;
    int spec;
    uint32_t access;
    long count;                       /* pods with this exact tuple */
    double p;                         /* count / covered */
} ms_fgd_class_t;

typedef struct ms_fgd_classes {
    ms_fgd_class_t *v;
    size_t n;                         /* classes kept */
    size_t ndistinct;                 /* distinct tuples in the trace */
    long total;                       /* pods counted */
    long covered;                     /* pods in the kept classes */
} ms_fgd_classes_t;

/* Group by (cpu, gpu_milli, num_gpu, gpu_spec), CPU-only pods included, sort
 * by count descending (ties: larger tuple first), keep classes until their
 * cumulative count reaches threshold_pct % of the pods, renormalise. */
ms_status_t ms_fgd_typical(const ms_fgd_pods_t *pods, double threshold_pct,
                           ms_fgd_classes_t *out);
void ms_fgd_classes_free(ms_fgd_classes_t *c);

/* ---- node state and the fragmentation measure (fgd.md §1.3-1.4) ------- */

typedef struct ms_fgd_res {
    int64_t cpu_left;
    int64_t mem_left;
    int ngpu;
    int model;
    int gpu_left[MS_FGD_MAX_GPU];     /* milli free per GPU, by device index */
    uint16_t tags[MS_FGD_NTAGS];      /* GPU pods on the node by clustering tag */
} ms_fgd_res_t;

/* An empty node from its spec. */
void ms_fgd_res_init(ms_fgd_res_t *r, const ms_fgd_node_spec_t *spec);
/* Sum of free milli-GPU. */
int ms_fgd_res_idle(const ms_fgd_res_t *r);
/* Fragment of r for one class, milli-GPU (§1.3). */
int ms_fgd_frag_class(const ms_fgd_res_t *r, const ms_fgd_class_t *m);
/* F_n scaled by covered: Σ_m count_m · frag_m(n) (exact integer). */
int64_t ms_fgd_frag_num(const ms_fgd_res_t *r, const ms_fgd_classes_t *c);
/* F_n = Σ_m p_m · frag_m(n), milli-GPU. */
double ms_fgd_frag(const ms_fgd_res_t *r, const ms_fgd_classes_t *c);

/* ---- filters, placement, policies (fgd.md §1.5-1.6) -------------------- */

typedef enum ms_fgd_policy {
    MS_FGD_RANDOM = 0,
    MS_FGD_DOTPROD,
    MS_FGD_CLUSTERING,
    MS_FGD_PACKING,
    MS_FGD_BESTFIT,
    MS_FGD_FGD,
    MS_FGD_NPOLICIES
} ms_fgd_policy_t;

/* "random", "dot-product", "clustering", "packing", "best-fit", "fgd". */
const char *ms_fgd_policy_name(ms_fgd_policy_t p);
ms_status_t ms_fgd_policy_parse(const char *s, ms_fgd_policy_t *out);

/* All filters: CPU, memory, model allow-list, per-GPU fit. */
bool ms_fgd_fits(const ms_fgd_res_t *r, const ms_fgd_pod_t *p);
/* Put p on r. For a sharing pod gpu is the device; whole-GPU pods take the
 * first fully free GPUs by index (gpu ignored). */
void ms_fgd_place(ms_fgd_res_t *r, const ms_fgd_pod_t *p, int gpu);
/* gpuSel=best: tightest GPU that fits a sharing pod (lowest index on ties);
 * -1 if none, or if p is not a sharing pod. */
int ms_fgd_gpu_best(const ms_fgd_res_t *r, const ms_fgd_pod_t *p);

int ms_fgd_score_dotprod(const ms_fgd_res_t *r, const ms_fgd_pod_t *p);
int ms_fgd_score_packing(const ms_fgd_res_t *r, const ms_fgd_pod_t *p);
int ms_fgd_score_clustering(const ms_fgd_res_t *r, const ms_fgd_pod_t *p);
int ms_fgd_score_bestfit_raw(const ms_fgd_res_t *r, const ms_fgd_pod_t *p);
/* Min-max normalise to 0..100 with integer arithmetic (all 0 if equal). */
void ms_fgd_normalize(int *scores, size_t n);
/* floor(100 · σ(x)). */
int ms_fgd_sigmoid_score(double x);
/* FGD score of p on r; before_num is ms_fgd_frag_num(r). *gpu gets the
 * chosen device for a sharing pod (-1 otherwise). */
int ms_fgd_score_fgd(const ms_fgd_res_t *r, const ms_fgd_pod_t *p, const ms_fgd_classes_t *c,
                     int64_t before_num, int *gpu);

/* ---- the experiment (fgd.md §4) ----------------------------------------- */

/* Pod i's GPU request (num_gpu, gpu_milli) in a caller's pod array. */
typedef void (*ms_fgd_req_fn)(const void *pods, size_t i, int *num_gpu, int *gpu_milli);
/* The fill's pod sequence after the sort by name (§4 items 3-4), shared
 * with the MIG fill (alibaba_fill.c): Fisher-Yates shuffle of list[0..*n)
 * with rng; then, if tune and npods > 0, tuneUpPods (random pods appended
 * while total + the candidate's gpu_milli stays <= target) or tuneDownPods
 * (random entries removed while total > target). total is the milli-GPU of
 * list[0..*n); *list holds *cap entries and may be reallocated.
 * Tuning up needs a pod with GPU demand (MS_EINVAL without one: it could
 * never reach the target) and stops with MS_ERANGE past
 * MS_FGD_TUNE_MAX(npods) entries (a pod list far too small for the
 * cluster), so its work and memory are bounded. */
#define MS_FGD_TUNE_MAX(npods) ((size_t)(npods) * 16 + 1000000)
ms_status_t ms_fgd_shuffle_tune(ms_rng_t *rng, size_t **list, size_t *n, size_t *cap,
                                const void *pods, size_t npods, ms_fgd_req_fn req,
                                int64_t total, double target, bool tune);

typedef struct ms_fgd_curve {
    /* per arrived-% bin (0..130); have[x] false when no point even at ±1 */
    bool have[MS_FGD_NBINS];
    double unalloc_pct[MS_FGD_NBINS];     /* 100 − allocated GPU % */
    double frag_rate_pct[MS_FGD_NBINS];   /* F / idle × 100 */
    double frag_amount_pct[MS_FGD_NBINS]; /* F / capacity × 100 */
    size_t npods;                         /* pods attempted (after tuning) */
    size_t nfailed;
    double final_unalloc_pct;
} ms_fgd_curve_t;

typedef struct ms_fgd_opts {
    ms_fgd_policy_t policy;
    uint64_t seed;
    double tune;                           /* 1.3 in the paper */
} ms_fgd_opts_t;

/* One seed of one policy. pods must be bound (ms_fgd_pods_bind) and c the
 * typical classes of the same pods. */
ms_status_t ms_fgd_run(const ms_fgd_nodes_t *nodes, const ms_fgd_pods_t *pods,
                       const ms_fgd_classes_t *c, const ms_fgd_opts_t *o,
                       ms_fgd_curve_t *out);

#endif
