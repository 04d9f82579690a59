/* alibaba.h - the Alibaba "openb" trace (cluster-trace-gpu-v2023, Weng et al.,
 * USENIX ATC '23) on MIG: pod lists to migsched jobs, node lists to a MIG
 * cluster, and FGD's one-pass fill experiment run with migsched's MIG
 * policies. Rules and results: docs/alibaba-mig.md.
 *
 * Pods -> jobs (ms_ali_to_trace):
 *   - CPU-only pods (num_gpu == 0) are dropped and counted;
 *   - pods that never ran (empty scheduled_time: phase Pending) are dropped
 *     and counted: their creation..deletion span is a wait, not a run;
 *   - a pod with no deletion_time is still running: its end is capped at the
 *     trace end (the largest time in the file) and counted;
 *   - deletion <= creation (after capping): dropped and counted;
 *   - arrival = creation_time, duration = deletion_time - creation_time,
 *     both multiplied by time_scale;
 *   - num_gpu == 1: gpu_milli is mapped to one MIG profile (below);
 *     num_gpu > 1 (always gpu_milli == 1000): a gang of num_gpu full-size
 *     instances on one node (ms_job_t.gang = num_gpu).
 *   Pod lists without time columns (the multigpu* files) are refused with
 *   MS_ENOTSUP: they serve only the fill experiment.
 *
 * Mappings of a per-GPU share gpu_milli (1..1000) to a profile:
 *   compute  need = ceil(milli * compute_slices / 1000) compute slices; the
 *            active profile with the fewest compute slices >= need (then
 *            the fewest memory slices; classic profiles before variants).
 *            A100-40GB: 810 -> 6 -> 7g, 470 -> 4 -> 4g, 320 -> 3 -> 3g,
 *            230 -> 2 -> 2g, 110 -> 1 -> 1g.
 *   memory   the trace has no GPU-memory column; we define the memory need
 *            as the same fraction of the GPU's memory:
 *            need = ceil(milli * memory_slices / 1000) memory slices; the
 *            active profile with the fewest memory slices >= need (then the
 *            fewest compute slices). A100-40GB: 810 -> 7 -> 7g,
 *            470 -> 4 -> 3g.20gb, 320 -> 3 -> 3g, 230 -> 2 -> 2g, 110 -> 1g.
 *
 * Nodes -> cluster (ms_ali_cluster_from_nodes): every GPU of a GPU node
 * becomes one MIG GPU of the chosen model (the trace's G2/T4/P100/... and
 * gpu_spec allow-lists are ignored). migsched's cluster has a uniform
 * gpus_per_node, so
 *   MS_ALI_NODES_REGROUP  all GPUs, cut into nodes of gpus_per_node (the
 *                         last may be short): capacity as in the paper
 *                         (6212 GPUs); 8-GPU nodes stay whole, smaller
 *                         nodes are in effect merged (only gangs notice);
 *   MS_ALI_NODES_WHOLE    only nodes with exactly gpus_per_node GPUs (real
 *                         node boundaries; 617 x 8 = 4936 GPUs in openb).
 *
 * The library never prints and keeps no globals.
 */
#ifndef MIGSCHED_ALIBABA_H
#define MIGSCHED_ALIBABA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "migsched/policy.h"
#include "migsched/trace.h"

#define MS_ALI_MAX_NUM_GPU 64    /* num_gpu above this is a parse error */
#define MS_ALI_NBINS 131         /* arrived % bins 0..130, as FGD */

/* ---- pod lists ---------------------------------------------------------- */

typedef struct ms_ali_pod {
    size_t name_off;         /* offset of the name in ms_ali_pods_t.names */
    long line;               /* 1-based line in the input */
    int num_gpu;             /* 0 = CPU-only */
    int gpu_milli;           /* per GPU, 0..1000 */
    bool scheduled;          /* scheduled_time present (the pod ran) */
    bool ended;              /* deletion_time present */
    double creation_s, deletion_s;   /* seconds; deletion_s valid if ended */
} ms_ali_pod_t;

typedef struct ms_ali_pods {
    ms_ali_pod_t *v;
    size_t n;
    char *names;             /* NUL-separated */
    size_t names_len, names_cap;
    bool has_times;          /* creation/deletion/scheduled columns exist */
    double trace_end_s;      /* largest creation/deletion time seen */
} ms_ali_pods_t;

static inline const char *ms_ali_pod_name(const ms_ali_pods_t *p, size_t i)
{
    return p->names + p->v[i].name_off;
}

/* Read an openb pod list (header required; columns found by name, any order;
 * name, num_gpu and gpu_milli required; creation_time, deletion_time and
 * scheduled_time optional as a group; other columns ignored). A bad row is
 * MS_EPARSE naming file, line and field, and *out is left empty.
 * Checks: num_gpu integer in 0..MS_ALI_MAX_NUM_GPU; gpu_milli integer in
 * 0..1000, > 0 iff num_gpu > 0, == 1000 when num_gpu > 1; times finite and
 * >= 0; creation_time required when the time columns exist.
 * OUT out: free with ms_ali_pods_free(). */
ms_status_t ms_ali_pods_read(FILE *f, const char *name, ms_ali_pods_t *out, ms_diag_t *d);
ms_status_t ms_ali_pods_read_file(const char *path, ms_ali_pods_t *out, ms_diag_t *d);
void ms_ali_pods_free(ms_ali_pods_t *p);   /* NULL-safe; leaves *p empty */

/* ---- node lists --------------------------------------------------------- */

typedef struct ms_ali_nodes {
    int *gpus;               /* [n] GPUs per node, GPU nodes only, file order */
    size_t n;
    long cpu_nodes;          /* rows with gpu == 0 (skipped) */
    long total_gpus;
} ms_ali_nodes_t;

/* Read a node list (columns sn and gpu required, others ignored). */
ms_status_t ms_ali_nodes_read(FILE *f, const char *name, ms_ali_nodes_t *out, ms_diag_t *d);
ms_status_t ms_ali_nodes_read_file(const char *path, ms_ali_nodes_t *out, ms_diag_t *d);
void ms_ali_nodes_free(ms_ali_nodes_t *n);  /* NULL-safe */

typedef enum ms_ali_node_mode {
    MS_ALI_NODES_REGROUP = 0,
    MS_ALI_NODES_WHOLE = 1
} ms_ali_node_mode_t;

/* "regroup" | "whole". */
ms_status_t ms_ali_node_mode_parse(const char *s, ms_ali_node_mode_t *out);
const char *ms_ali_node_mode_name(ms_ali_node_mode_t m);

typedef struct ms_ali_cluster {
    int ngpus;
    int gpus_per_node;
    ms_ali_node_mode_t mode;
    long nodes_in;           /* GPU nodes in the list */
    long nodes_used;         /* of them, whose GPUs are in the cluster */
    long gpus_dropped;       /* GPUs of unused nodes */
    long nodes_by_size[MS_ALI_MAX_NUM_GPU + 1]; /* GPU nodes by GPU count (last bin: more) */
} ms_ali_cluster_t;

/* The cluster shape. MS_EINVAL if gpus_per_node < 1; MS_ENOENT if no GPU
 * is left. */
ms_status_t ms_ali_cluster_from_nodes(const ms_ali_nodes_t *nodes, ms_ali_node_mode_t mode,
                                      int gpus_per_node, ms_ali_cluster_t *out);

/* ---- mapping ------------------------------------------------------------ */

typedef enum ms_ali_mapping { MS_ALI_MAP_COMPUTE = 0, MS_ALI_MAP_MEMORY = 1 } ms_ali_mapping_t;

ms_status_t ms_ali_mapping_parse(const char *s, ms_ali_mapping_t *out);
const char *ms_ali_mapping_name(ms_ali_mapping_t m);

/* Active profile index for a per-GPU share of gpu_milli (1..1000) under
 * mapping m; -1 if out of range or no active profile is large enough. */
int ms_ali_map_profile(const ms_geom_t *g, ms_ali_mapping_t m, int gpu_milli);
/* The active full-size profile (all compute and memory slices), preferring a
 * classic one; -1 if none is active. Gangs use it. */
int ms_ali_full_profile(const ms_geom_t *g);

/* ---- pods -> trace ------------------------------------------------------ */

typedef struct ms_ali_counts {
    long rows;               /* pods read */
    long cpu_only;           /* dropped: num_gpu == 0 */
    long pending;            /* dropped: never scheduled */
    long bad_time;           /* dropped: deletion <= creation */
    long no_profile;         /* dropped: no active profile large enough */
    long capped;             /* kept, end capped at the trace end */
    long kept;               /* jobs in the trace */
    long gangs;              /* of them, num_gpu > 1 */
    long by_prof[MS_MAX_PROFILES];  /* kept single-GPU jobs by profile */
    long gang_by_size[MS_ALI_MAX_NUM_GPU + 1]; /* kept gangs by num_gpu */
    double requested_gpus;   /* kept: sum of num_gpu * gpu_milli / 1000 */
    double mapped_compute;   /* kept: sum of gang * cslices / compute_slices (GPUs) */
} ms_ali_counts_t;

typedef struct ms_ali_import_cfg {
    ms_ali_mapping_t mapping;
    double time_scale;       /* > 0; multiplies arrival and duration (default 1) */
} ms_ali_import_cfg_t;

void ms_ali_import_cfg_defaults(ms_ali_import_cfg_t *cfg);

/* Turn pods into a trace of g's profiles (job ids = pod names). counts may
 * be NULL. MS_ENOTSUP if the pod list has no time columns.
 * OUT out: free with ms_trace_free(). */
ms_status_t ms_ali_to_trace(const ms_ali_pods_t *pods, const ms_geom_t *g,
                            const ms_ali_import_cfg_t *cfg, ms_trace_t **out,
                            ms_ali_counts_t *counts, ms_diag_t *d);

/* ---- the MIG fill experiment (fgd.md §4, on MIG) ------------------------ *
 *
 * Every pod of the list (CPU-only and Pending ones too: FGD's fill ignores
 * phase and times) is sorted by name and shuffled with the seed; pods drawn
 * uniformly with replacement are appended until the requested GPU
 * (sum of num_gpu * gpu_milli) reaches tune x capacity (ngpus x 1000 milli),
 * with FGD's stop test. With the same PRNG (ms_rng_*) and seed this is
 * the pod sequence of `migsched fgd-experiment`. Each GPU pod is then
 * mapped and placed once by the policy (setup, on_arrival, can_host, place;
 * on MS_ENOFIT make_room and on_idle, each followed by one more place) and
 * the plan applied with ms_cluster_apply; nothing departs; a failure is
 * final. After every GPU pod we log, against arrived % = requested GPU so
 * far / capacity x 100 (failed pods included):
 *   unallocated compute %   100 - busy compute slices / all compute slices
 *   unallocated memory %    100 - memory slices of running instances / all
 *   unallocated GPUs %      GPUs running no job / all GPUs
 *   mean FragCost           over all GPUs (frag.h)
 *   failed pods %           GPU pods that did not fit so far / GPU pods so far
 * and bin as FGD: x = round(arrived %) in 0..130, each bin the mean of its
 * points, an empty bin borrowing from x-1, then x+1. */

typedef struct ms_ali_fill_cfg {
    const ms_policy_ops_t *policy;   /* share must be MS_SHARE_MIG */
    ms_policy_cfg_t pcfg;            /* pcfg.seed is set to seed */
    ms_ali_mapping_t mapping;
    int ngpus, gpus_per_node;
    uint64_t seed;
    double tune;                     /* 1.3 in the paper; <= 0: no tuning */
    bool make_room;                  /* call make_room/on_idle on a miss (default on) */
} ms_ali_fill_cfg_t;

void ms_ali_fill_cfg_defaults(ms_ali_fill_cfg_t *cfg);

typedef struct ms_ali_curve {
    bool have[MS_ALI_NBINS];
    double unalloc_compute_pct[MS_ALI_NBINS];
    double unalloc_mem_pct[MS_ALI_NBINS];
    double unalloc_gpu_pct[MS_ALI_NBINS];
    double fragcost[MS_ALI_NBINS];
    double failed_pct[MS_ALI_NBINS];  /* failed GPU pods so far / GPU pods so far */
    size_t npods;            /* pods in the list (after tuning), CPU-only included */
    size_t ngpu_pods;        /* of them, GPU pods attempted */
    size_t nfailed;          /* GPU pods that did not fit (rejected included) */
    size_t nrejected;        /* of them, can_host said never */
    long moves;              /* MOVE ops applied (make_room) */
    double arrived_pct;      /* at the end */
    double mapped_pct;       /* mapped compute demand of all GPU pods / capacity x 100 */
    double final_unalloc_compute_pct, final_unalloc_mem_pct, final_unalloc_gpu_pct;
    double final_fragcost;
} ms_ali_curve_t;

/* One seed of one policy. MS_EINVAL for a bad configuration (diag says
 * which); MS_ESTATE if a policy's plan does not apply (a policy bug, named
 * in diag). */
ms_status_t ms_ali_fill_run(const ms_ali_pods_t *pods, const ms_geom_t *g,
                            const ms_ali_fill_cfg_t *cfg, ms_ali_curve_t *out,
                            ms_diag_t *d);

#endif
