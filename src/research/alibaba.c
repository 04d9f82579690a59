/* alibaba.c - openb pod and node lists, the MIG mappings, pods -> trace.
 * The rules are in include/migsched/research/alibaba.h and docs/alibaba-mig.md. */
#include "migsched/research/alibaba.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/csv.h"
#include "migsched/number.h"
#include "migsched/geometry.h"

/* ---- field parsers of the importer's dialect (lines: io/csv.h, lax) --- */

/* Field text, "" if the column is absent (col < 0); a short row is an error. */
static ms_status_t csv_str(const ms_csv_t *c, int col, const char *field, const char **out,
                           ms_diag_t *d)
{
    if (col < 0) {
        *out = "";
        return MS_OK;
    }
    if (col >= c->nf) {
        ms_diag_set(d, c->name, c->line, field, "row has %d fields, %s is column %d", c->nf,
                    field, col + 1);
        return MS_EPARSE;
    }
    *out = c->field[col];
    return MS_OK;
}

static ms_status_t csv_int(const ms_csv_t *c, int col, const char *field, long lo, long hi,
                           long *out, ms_diag_t *d)
{
    const char *s;
    int64_t v;
    ms_status_t st = csv_str(c, col, field, &s, d);

    if (st != MS_OK)
        return st;
    st = ms_number_int(s, lo, hi, &v);
    if (st == MS_EPARSE) {
        ms_diag_set(d, c->name, c->line, field, "'%s' is not an integer", s);
        return MS_EPARSE;
    }
    if (st != MS_OK) {
        ms_diag_set(d, c->name, c->line, field, "'%s' is outside %ld..%ld", s, lo, hi);
        return MS_EPARSE;
    }
    *out = (long)v;
    return MS_OK;
}

/* A time field: empty gives *present = false; else finite and >= 0. */
static ms_status_t csv_time(const ms_csv_t *c, int col, const char *field, double *out,
                            bool *present, ms_diag_t *d)
{
    const char *s;
    double v;
    ms_status_t st = csv_str(c, col, field, &s, d);

    if (st != MS_OK)
        return st;
    *present = false;
    if (*s == '\0')
        return MS_OK;
    if (ms_number_double(s, &v) != MS_OK || v < 0 || v > 1e12) {
        ms_diag_set(d, c->name, c->line, field, "'%s' is not a time in [0, 1e12] seconds", s);
        return MS_EPARSE;
    }
    *out = v;
    *present = true;
    return MS_OK;
}

/* Open f in the lax dialect and read its header line. */
static ms_status_t lax_open(ms_csv_t *c, FILE *f, const char *name, ms_diag_t *d)
{
    ms_status_t st;

    ms_csv_open(c, f, name);
    c->lax = true;
    if ((st = ms_csv_header(c, "empty file: no header", d)) != MS_OK)
        ms_csv_close(c);
    return st;
}

/* ---- pods --------------------------------------------------------------- */

void ms_ali_pods_free(ms_ali_pods_t *p)
{
    if (p == NULL)
        return;
    free(p->v);
    free(p->names);
    memset(p, 0, sizeof(*p));
}

static ms_status_t pods_push(ms_ali_pods_t *p, size_t *cap, const ms_ali_pod_t *pod,
                             const char *name)
{
    size_t len = strlen(name);
    ms_ali_pod_t *nv = ms_csv_grow(p->v, cap, p->n, sizeof(*nv), 1024);

    if (nv == NULL)
        return MS_ENOMEM;
    p->v = nv;
    if (p->names_len + len + 1 > p->names_cap) {
        size_t ncap = p->names_cap ? p->names_cap : 16384;
        char *nn;

        while (ncap < p->names_len + len + 1)
            ncap *= 2;
        nn = realloc(p->names, ncap);
        if (nn == NULL)
            return MS_ENOMEM;
        p->names = nn;
        p->names_cap = ncap;
    }
    p->v[p->n] = *pod;
    p->v[p->n].name_off = p->names_len;
    memcpy(p->names + p->names_len, name, len + 1);
    p->names_len += len + 1;
    p->n++;
    return MS_OK;
}

enum { PC_NAME, PC_NGPU, PC_MILLI, PC_CRE, PC_DEL, PC_SCHED, PC_N };
static const char *const POD_COL[PC_N] = {
    "name", "num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"
};

static ms_status_t pod_row(const ms_csv_t *c, const int *col, bool times, ms_ali_pod_t *pod,
                           const char **name, ms_diag_t *d)
{
    long ngpu, milli;
    ms_status_t st;
    bool present;

    memset(pod, 0, sizeof(*pod));
    pod->line = c->line;
    if ((st = csv_str(c, col[PC_NAME], "name", name, d)) != MS_OK)
        return st;
    if (**name == '\0') {
        ms_diag_set(d, c->name, c->line, "name", "empty pod name");
        return MS_EPARSE;
    }
    if ((st = csv_int(c, col[PC_NGPU], "num_gpu", 0, MS_ALI_MAX_NUM_GPU, &ngpu, d)) != MS_OK ||
        (st = csv_int(c, col[PC_MILLI], "gpu_milli", 0, 1000, &milli, d)) != MS_OK)
        return st;
    if (ngpu == 0 && milli != 0) {
        ms_diag_set(d, c->name, c->line, "gpu_milli", "%ld milli-GPU on a pod with num_gpu 0",
                    milli);
        return MS_EPARSE;
    }
    if (ngpu > 0 && milli == 0) {
        ms_diag_set(d, c->name, c->line, "gpu_milli", "0 milli-GPU on a pod with num_gpu %ld",
                    ngpu);
        return MS_EPARSE;
    }
    if (ngpu > 1 && milli != 1000) {
        ms_diag_set(d, c->name, c->line, "gpu_milli",
                    "%ld milli-GPU with num_gpu %ld: openb shares only single GPUs", milli, ngpu);
        return MS_EPARSE;
    }
    pod->num_gpu = (int)ngpu;
    pod->gpu_milli = (int)milli;
    if (!times)
        return MS_OK;
    if ((st = csv_time(c, col[PC_CRE], "creation_time", &pod->creation_s, &present, d)) != MS_OK)
        return st;
    if (!present) {
        ms_diag_set(d, c->name, c->line, "creation_time", "missing");
        return MS_EPARSE;
    }
    if ((st = csv_time(c, col[PC_DEL], "deletion_time", &pod->deletion_s, &pod->ended, d)) !=
        MS_OK)
        return st;
    {
        double sched = 0;
        if ((st = csv_time(c, col[PC_SCHED], "scheduled_time", &sched, &pod->scheduled, d)) !=
            MS_OK)
            return st;
    }
    return MS_OK;
}

ms_status_t ms_ali_pods_read(FILE *f, const char *name, ms_ali_pods_t *out, ms_diag_t *d)
{
    ms_csv_t c;
    int col[PC_N], r, ntime = 0;
    size_t cap = 0;
    ms_status_t st = MS_OK;

    if (f == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    if ((st = lax_open(&c, f, name, d)) != MS_OK)
        return st;
    for (int i = 0; i < PC_N; i++) {
        col[i] = ms_csv_col(&c, POD_COL[i]);
        if (i >= PC_CRE)
            ntime += col[i] >= 0;
        else if (col[i] < 0) {
            ms_diag_set(d, c.name, c.line, POD_COL[i], "header lacks column '%s'", POD_COL[i]);
            ms_csv_close(&c);
            return MS_EPARSE;
        }
    }
    if (ntime != 0 && ntime != 3) {
        for (int i = PC_CRE; i < PC_N; i++)
            if (col[i] < 0)
                ms_diag_set(d, c.name, c.line, POD_COL[i],
                            "header has some time columns but not '%s'", POD_COL[i]);
        ms_csv_close(&c);
        return MS_EPARSE;
    }
    out->has_times = ntime == 3;
    while ((r = ms_csv_next(&c, d)) == 1) {
        ms_ali_pod_t pod;
        const char *pname;

        if ((st = pod_row(&c, col, out->has_times, &pod, &pname, d)) != MS_OK ||
            (st = pods_push(out, &cap, &pod, pname)) != MS_OK)
            break;
        if (out->has_times) {
            if (pod.creation_s > out->trace_end_s)
                out->trace_end_s = pod.creation_s;
            if (pod.ended && pod.deletion_s > out->trace_end_s)
                out->trace_end_s = pod.deletion_s;
        }
    }
    if (st == MS_OK && r < 0)
        st = (ms_status_t)-r;
    ms_csv_close(&c);
    if (st != MS_OK)
        ms_ali_pods_free(out);
    return st;
}

static ms_status_t pods_read_any(FILE *f, const char *name, void *out, ms_diag_t *d)
{
    return ms_ali_pods_read(f, name, out, d);
}

ms_status_t ms_ali_pods_read_file(const char *path, ms_ali_pods_t *out, ms_diag_t *d)
{
    return ms_csv_read_path(path, out, sizeof(*out), pods_read_any, true, d);
}

/* ---- nodes -------------------------------------------------------------- */

void ms_ali_nodes_free(ms_ali_nodes_t *n)
{
    if (n == NULL)
        return;
    free(n->gpus);
    memset(n, 0, sizeof(*n));
}

ms_status_t ms_ali_nodes_read(FILE *f, const char *name, ms_ali_nodes_t *out, ms_diag_t *d)
{
    ms_csv_t c;
    int csn, cgpu, r;
    size_t cap = 0;
    ms_status_t st = MS_OK;

    if (f == NULL || out == NULL)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    if ((st = lax_open(&c, f, name, d)) != MS_OK)
        return st;
    csn = ms_csv_col(&c, "sn");
    cgpu = ms_csv_col(&c, "gpu");
    if (csn < 0 || cgpu < 0) {
        ms_diag_set(d, c.name, c.line, csn < 0 ? "sn" : "gpu", "header lacks column '%s'",
                    csn < 0 ? "sn" : "gpu");
        ms_csv_close(&c);
        return MS_EPARSE;
    }
    while ((r = ms_csv_next(&c, d)) == 1) {
        const char *sn;
        long g;
        int *ng;

        if ((st = csv_str(&c, csn, "sn", &sn, d)) != MS_OK)
            break;
        if (*sn == '\0') {
            ms_diag_set(d, c.name, c.line, "sn", "empty node name");
            st = MS_EPARSE;
            break;
        }
        if ((st = csv_int(&c, cgpu, "gpu", 0, 1024, &g, d)) != MS_OK)
            break;
        if (g == 0) {
            out->cpu_nodes++;
            continue;
        }
        if ((ng = ms_csv_grow(out->gpus, &cap, out->n, sizeof(*ng), 256)) == NULL) {
            st = MS_ENOMEM;
            break;
        }
        out->gpus = ng;
        out->gpus[out->n++] = (int)g;
        out->total_gpus += g;
    }
    if (st == MS_OK && r < 0)
        st = (ms_status_t)-r;
    ms_csv_close(&c);
    if (st != MS_OK)
        ms_ali_nodes_free(out);
    return st;
}

static ms_status_t nodes_read_any(FILE *f, const char *name, void *out, ms_diag_t *d)
{
    return ms_ali_nodes_read(f, name, out, d);
}

ms_status_t ms_ali_nodes_read_file(const char *path, ms_ali_nodes_t *out, ms_diag_t *d)
{
    return ms_csv_read_path(path, out, sizeof(*out), nodes_read_any, true, d);
}

ms_status_t ms_ali_node_mode_parse(const char *s, ms_ali_node_mode_t *out)
{
    if (s == NULL || out == NULL)
        return MS_EINVAL;
    if (strcasecmp(s, "regroup") == 0)
        *out = MS_ALI_NODES_REGROUP;
    else if (strcasecmp(s, "whole") == 0)
        *out = MS_ALI_NODES_WHOLE;
    else
        return MS_EINVAL;
    return MS_OK;
}

const char *ms_ali_node_mode_name(ms_ali_node_mode_t m)
{
    return m == MS_ALI_NODES_WHOLE ? "whole" : "regroup";
}

ms_status_t ms_ali_cluster_from_nodes(const ms_ali_nodes_t *nodes, ms_ali_node_mode_t mode,
                                      int gpus_per_node, ms_ali_cluster_t *out)
{
    long total = 0;

    if (nodes == NULL || out == NULL || gpus_per_node < 1)
        return MS_EINVAL;
    memset(out, 0, sizeof(*out));
    out->mode = mode;
    out->gpus_per_node = gpus_per_node;
    out->nodes_in = (long)nodes->n;
    for (size_t i = 0; i < nodes->n; i++) {
        int g = nodes->gpus[i];
        bool use = mode == MS_ALI_NODES_REGROUP || g == gpus_per_node;

        out->nodes_by_size[g < MS_ALI_MAX_NUM_GPU ? g : MS_ALI_MAX_NUM_GPU]++;
        if (use) {
            out->nodes_used++;
            total += g;
        } else {
            out->gpus_dropped += g;
        }
    }
    if (total <= 0)
        return MS_ENOENT;
    if (total > INT32_MAX)
        return MS_ERANGE;
    out->ngpus = (int)total;
    return MS_OK;
}

/* ---- mapping ------------------------------------------------------------ */

ms_status_t ms_ali_mapping_parse(const char *s, ms_ali_mapping_t *out)
{
    if (s == NULL || out == NULL)
        return MS_EINVAL;
    if (strcasecmp(s, "compute") == 0)
        *out = MS_ALI_MAP_COMPUTE;
    else if (strcasecmp(s, "memory") == 0)
        *out = MS_ALI_MAP_MEMORY;
    else
        return MS_EINVAL;
    return MS_OK;
}

const char *ms_ali_mapping_name(ms_ali_mapping_t m)
{
    return m == MS_ALI_MAP_MEMORY ? "memory" : "compute";
}

/* Lexicographic (primary, secondary, not-classic, index) minimum over the
 * active profiles with primary >= need. */
static int pick(const ms_geom_t *g, bool by_memory, int need)
{
    int best = -1, bp = 0, bs = 0, bv = 0;

    for (int k = 0; k < ms_geom_nprofiles(g); k++) {
        const ms_profile_t *p = ms_geom_profile(g, k);
        int prim = by_memory ? p->msize : p->cslices;
        int sec = by_memory ? p->cslices : p->msize;
        int var = (p->flags & MS_PF_BASE) ? 0 : 1;

        if (prim < need)
            continue;
        if (best < 0 || prim < bp || (prim == bp && (sec < bs || (sec == bs && var < bv)))) {
            best = k;
            bp = prim;
            bs = sec;
            bv = var;
        }
    }
    return best;
}

int ms_ali_map_profile(const ms_geom_t *g, ms_ali_mapping_t m, int gpu_milli)
{
    int units, need;

    if (g == NULL || gpu_milli < 1 || gpu_milli > 1000)
        return -1;
    units = m == MS_ALI_MAP_MEMORY ? ms_geom_width(g) : ms_geom_compute(g);
    need = (gpu_milli * units + 999) / 1000;       /* ceil, exact in integers */
    if (need < 1)
        need = 1;
    return pick(g, m == MS_ALI_MAP_MEMORY, need);
}

int ms_ali_full_profile(const ms_geom_t *g)
{
    return g != NULL ? ms_geom_full_profile(g) : -1;   /* the policies' rule */
}

/* ---- pods -> trace ------------------------------------------------------ */

void ms_ali_import_cfg_defaults(ms_ali_import_cfg_t *cfg)
{
    cfg->mapping = MS_ALI_MAP_COMPUTE;
    cfg->time_scale = 1.0;
}

ms_status_t ms_ali_to_trace(const ms_ali_pods_t *pods, const ms_geom_t *g,
                            const ms_ali_import_cfg_t *cfg, ms_trace_t **out,
                            ms_ali_counts_t *counts, ms_diag_t *d)
{
    ms_ali_counts_t cnt;
    ms_job_t *jobs = NULL;
    const char **names = NULL;
    size_t n = 0;
    int full;
    ms_status_t st;

    if (pods == NULL || g == NULL || cfg == NULL || out == NULL)
        return MS_EINVAL;
    *out = NULL;
    if (!(cfg->time_scale > 0) || !isfinite(cfg->time_scale)) {
        ms_diag_set(d, NULL, 0, "time-scale", "must be a positive number");
        return MS_EINVAL;
    }
    if (!pods->has_times) {
        ms_diag_set(d, NULL, 0, "creation_time",
                    "this pod list has no time columns (multigpu* files): "
                    "it can only be used by the fill experiment");
        return MS_ENOTSUP;
    }
    full = ms_ali_full_profile(g);
    if (full < 0) {
        ms_diag_set(d, NULL, 0, "profiles", "no full-size profile is active");
        return MS_EINVAL;
    }
    memset(&cnt, 0, sizeof(cnt));
    if (pods->n > 0) {
        jobs = malloc(pods->n * sizeof(*jobs));
        names = malloc(pods->n * sizeof(*names));
        if (jobs == NULL || names == NULL) {
            free(jobs);
            free(names);
            return MS_ENOMEM;
        }
    }
    cnt.rows = (long)pods->n;
    for (size_t i = 0; i < pods->n; i++) {
        const ms_ali_pod_t *p = &pods->v[i];
        double end;
        int k;
        ms_job_t j;

        if (p->num_gpu == 0) {
            cnt.cpu_only++;
            continue;
        }
        if (!p->scheduled) {
            cnt.pending++;
            continue;
        }
        end = p->ended ? p->deletion_s : pods->trace_end_s;
        if (!(end > p->creation_s)) {
            cnt.bad_time++;
            continue;
        }
        k = p->num_gpu > 1 ? full : ms_ali_map_profile(g, cfg->mapping, p->gpu_milli);
        if (k < 0) {
            cnt.no_profile++;
            continue;
        }
        if (!p->ended)
            cnt.capped++;
        memset(&j, 0, sizeof(j));
        j.idx = (int32_t)n;
        j.prof = (int8_t)k;
        j.gang = (int16_t)p->num_gpu;
        j.arrival = p->creation_s * cfg->time_scale;
        j.duration = (end - p->creation_s) * cfg->time_scale;
        if (!(j.arrival <= MS_TRACE_MAX_S && j.duration <= MS_TRACE_MAX_S)) {
            ms_diag_set(d, NULL, 0, "time-scale", "pod %s would arrive at %g s and run %g s: "
                        "a trace holds times up to 1e9 s (lower --time-scale)",
                        ms_ali_pod_name(pods, i), j.arrival, j.duration);
            free(jobs);
            free(names);
            return MS_ERANGE;
        }
        if (p->num_gpu > 1) {
            cnt.gangs++;
            cnt.gang_by_size[p->num_gpu]++;
        } else {
            cnt.by_prof[k]++;
        }
        cnt.requested_gpus += (double)p->num_gpu * p->gpu_milli / 1000.0;
        cnt.mapped_compute += (double)p->num_gpu * ms_geom_profile(g, k)->cslices /
                              (double)ms_geom_compute(g);
        names[n] = ms_ali_pod_name(pods, i);
        jobs[n++] = j;
    }
    cnt.kept = (long)n;
    st = ms_trace_from_jobs(g, jobs, n, names, out);
    if (st == MS_EINVAL)
        ms_diag_set(d, NULL, 0, "name", "cannot build the trace: two pods share a name "
                                        "(a trace's job ids are unique)");
    else if (st != MS_OK)
        ms_diag_set(d, NULL, 0, "", "cannot build the trace: %s", ms_strerror(st));
    free(jobs);
    free(names);
    if (st == MS_OK && counts != NULL)
        *counts = cnt;
    return st;
}
