/* pods.c - the pod list reader (openb_pod_list_*.csv) and gpu_spec masks. */
#include "migsched/research/fgd.h"

#include <stdlib.h>
#include <string.h>

#include "io/csv.h"

void ms_fgd_pods_free(ms_fgd_pods_t *pods)
{
    if (pods == NULL)
        return;
    for (int i = 0; i < pods->nspecs; i++)
        free(pods->specs[i]);
    free(pods->specs);
    free(pods->v);
    memset(pods, 0, sizeof(*pods));
}

static ms_status_t intern_spec(ms_fgd_pods_t *out, const char *s, int *idx)
{
    char **ns, *copy;
    size_t len;

    for (int i = 0; i < out->nspecs; i++)
        if (strcmp(out->specs[i], s) == 0) {
            *idx = i;
            return MS_OK;
        }
    ns = realloc(out->specs, (size_t)(out->nspecs + 1) * sizeof(*ns));
    if (ns == NULL)
        return MS_ENOMEM;
    out->specs = ns;
    len = strlen(s) + 1;
    copy = malloc(len);
    if (copy == NULL)
        return MS_ENOMEM;
    memcpy(copy, s, len);
    out->specs[out->nspecs] = copy;
    *idx = out->nspecs++;
    return MS_OK;
}

static ms_status_t read_row(ms_fgd_pods_t *out, const ms_csv_t *c, const int col[6],
                            ms_fgd_pod_t *p, ms_diag_t *d)
{
    const char *name, *spec = "";
    int64_t v;
    ms_status_t st;

    memset(p, 0, sizeof(*p));
    if ((st = ms_csv_str(c, col[0], "name", &name, d)) != MS_OK)
        return st;
    snprintf(p->name, sizeof(p->name), "%s", name);
    if ((st = ms_csv_int(c, col[1], "cpu_milli", 0, INT64_C(1) << 40, &p->cpu_milli, d)) != MS_OK ||
        (st = ms_csv_int(c, col[2], "memory_mib", 0, INT64_C(1) << 40, &p->mem_mib, d)) != MS_OK)
        return st;
    if ((st = ms_csv_int(c, col[3], "num_gpu", 0, MS_FGD_MAX_GPU, &v, d)) != MS_OK)
        return st;
    p->num_gpu = (int)v;
    if ((st = ms_csv_int(c, col[4], "gpu_milli", 0, MS_FGD_MILLI, &v, d)) != MS_OK)
        return st;
    p->gpu_milli = (int)v;
    if (col[5] >= 0 && (st = ms_csv_str(c, col[5], "gpu_spec", &spec, d)) != MS_OK)
        return st;
    if ((p->num_gpu == 0) != (p->gpu_milli == 0)) {
        ms_diag_set(d, c->name, c->line, "gpu_milli",
                    "gpu_milli %d with num_gpu %d (both or neither must be 0)", p->gpu_milli,
                    p->num_gpu);
        return MS_EPARSE;
    }
    if (p->num_gpu > 1 && p->gpu_milli != MS_FGD_MILLI) {
        ms_diag_set(d, c->name, c->line, "gpu_milli",
                    "a %d-GPU pod must request whole GPUs (gpu_milli 1000), got %d",
                    p->num_gpu, p->gpu_milli);
        return MS_EPARSE;
    }
    p->access = UINT32_MAX;
    return intern_spec(out, spec, &p->spec);
}

ms_status_t ms_fgd_pods_read_stream(FILE *f, const char *name, ms_fgd_pods_t *out,
                                    ms_diag_t *d)
{
    static const char *const cols[6] = { "name", "cpu_milli", "memory_mib", "num_gpu",
                                         "gpu_milli", "gpu_spec" };
    ms_csv_t c;
    int col[6], r, dummy;
    size_t cap = 0;
    ms_status_t st;

    memset(out, 0, sizeof(*out));
    if ((st = intern_spec(out, "", &dummy)) != MS_OK)
        return st;
    ms_csv_open(&c, f, name);
    if ((st = ms_csv_header(&c, "empty file, expected a header line", d)) != MS_OK) {
        ms_csv_close(&c);
        ms_fgd_pods_free(out);
        return st;
    }
    for (int i = 0; i < 6; i++) {
        col[i] = ms_csv_col(&c, cols[i]);
        if (col[i] < 0 && i < 5) {
            ms_diag_set(d, name, c.line, cols[i], "header lacks column '%s'", cols[i]);
            ms_csv_close(&c);
            ms_fgd_pods_free(out);
            return MS_EPARSE;
        }
    }
    while ((r = ms_csv_next(&c, d)) > 0) {
        ms_fgd_pod_t *nv = ms_csv_grow(out->v, &cap, out->n, sizeof(*nv), 1024);

        if (nv == NULL) {
            st = MS_ENOMEM;
            break;
        }
        out->v = nv;
        if ((st = read_row(out, &c, col, &out->v[out->n], d)) != MS_OK)
            break;
        out->n++;
    }
    if (st == MS_OK && r < 0)
        st = (ms_status_t)-r;
    if (st == MS_OK && out->n == 0) {
        ms_diag_set(d, name, c.line, "", "no pods");
        st = MS_EPARSE;
    }
    ms_csv_close(&c);
    if (st != MS_OK)
        ms_fgd_pods_free(out);
    return st;
}

static ms_status_t read_any(FILE *f, const char *name, void *out, ms_diag_t *d)
{
    return ms_fgd_pods_read_stream(f, name, out, d);
}

ms_status_t ms_fgd_pods_read(const char *path, ms_fgd_pods_t *out, ms_diag_t *d)
{
    return ms_csv_read_path(path, out, sizeof(*out), read_any, false, d);
}

uint32_t ms_fgd_spec_mask(const char *spec, const ms_fgd_nodes_t *nodes)
{
    uint32_t mask = 0;
    const char *p = spec;

    if (spec == NULL || *spec == '\0')
        return UINT32_MAX;
    while (*p != '\0') {
        const char *bar = strchr(p, '|');
        size_t len = bar != NULL ? (size_t)(bar - p) : strlen(p);

        for (int i = 0; i < nodes->nmodels; i++)
            if (strlen(nodes->models[i]) == len && memcmp(nodes->models[i], p, len) == 0)
                mask |= UINT32_C(1) << i;
        if (bar == NULL)
            break;
        p = bar + 1;
    }
    return mask;
}

void ms_fgd_pods_bind(ms_fgd_pods_t *pods, const ms_fgd_nodes_t *nodes)
{
    for (size_t i = 0; i < pods->n; i++)
        pods->v[i].access = ms_fgd_spec_mask(pods->specs[pods->v[i].spec], nodes);
}
