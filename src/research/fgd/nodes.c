/* nodes.c - the node list reader (openb_node_list_*.csv). */
#include "migsched/research/fgd.h"

#include <stdlib.h>
#include <string.h>

#include "io/csv.h"

int ms_fgd_model_find(const ms_fgd_nodes_t *nodes, const char *name)
{
    for (int i = 0; i < nodes->nmodels; i++)
        if (strcmp(nodes->models[i], name) == 0)
            return i;
    return -1;
}

void ms_fgd_nodes_free(ms_fgd_nodes_t *nodes)
{
    if (nodes == NULL)
        return;
    free(nodes->v);
    memset(nodes, 0, sizeof(*nodes));
}

static ms_status_t model_index(ms_fgd_nodes_t *out, const ms_csv_t *c, const char *model,
                               int *idx, ms_diag_t *d)
{
    int k = ms_fgd_model_find(out, model);

    if (k < 0) {
        if (strlen(model) >= MS_FGD_MODEL_LEN) {
            ms_diag_set(d, c->name, c->line, "model", "model name '%s' is too long", model);
            return MS_EPARSE;
        }
        if (out->nmodels >= MS_FGD_MAX_MODELS) {
            ms_diag_set(d, c->name, c->line, "model", "more than %d GPU models",
                        MS_FGD_MAX_MODELS);
            return MS_ERANGE;
        }
        k = out->nmodels++;
        snprintf(out->models[k], sizeof(out->models[k]), "%s", model);
    }
    *idx = k;
    return MS_OK;
}

static ms_status_t read_row(ms_fgd_nodes_t *out, const ms_csv_t *c, const int col[5],
                            ms_fgd_node_spec_t *n, ms_diag_t *d)
{
    const char *name, *model;
    int64_t v;
    ms_status_t st;

    memset(n, 0, sizeof(*n));
    if ((st = ms_csv_str(c, col[0], "sn", &name, d)) != MS_OK)
        return st;
    snprintf(n->name, sizeof(n->name), "%s", name);
    if ((st = ms_csv_int(c, col[1], "cpu_milli", 0, INT64_C(1) << 40, &n->cpu_milli, d)) != MS_OK ||
        (st = ms_csv_int(c, col[2], "memory_mib", 0, INT64_C(1) << 40, &n->mem_mib, d)) != MS_OK ||
        (st = ms_csv_int(c, col[3], "gpu", 0, MS_FGD_MAX_GPU, &v, d)) != MS_OK ||
        (st = ms_csv_str(c, col[4], "model", &model, d)) != MS_OK)
        return st;
    n->ngpu = (int)v;
    n->model = -1;
    if (n->ngpu > 0) {
        if (*model == '\0') {
            ms_diag_set(d, c->name, c->line, "model", "a node with %d GPUs needs a model",
                        n->ngpu);
            return MS_EPARSE;
        }
        return model_index(out, c, model, &n->model, d);
    }
    return MS_OK;
}

ms_status_t ms_fgd_nodes_read_stream(FILE *f, const char *name, ms_fgd_nodes_t *out,
                                     ms_diag_t *d)
{
    static const char *const cols[5] = { "sn", "cpu_milli", "memory_mib", "gpu", "model" };
    ms_csv_t c;
    int col[5], r;
    size_t cap = 0;
    ms_status_t st = MS_OK;

    memset(out, 0, sizeof(*out));
    ms_csv_open(&c, f, name);
    if ((st = ms_csv_header(&c, "empty file, expected a header line", d)) != MS_OK) {
        ms_csv_close(&c);
        return st;
    }
    for (int i = 0; i < 5; i++) {
        col[i] = ms_csv_col(&c, cols[i]);
        if (col[i] < 0) {
            ms_diag_set(d, name, c.line, cols[i], "header lacks column '%s'", cols[i]);
            ms_csv_close(&c);
            return MS_EPARSE;
        }
    }
    while ((r = ms_csv_next(&c, d)) > 0) {
        ms_fgd_node_spec_t *nv = ms_csv_grow(out->v, &cap, out->n, sizeof(*nv), 256);

        if (nv == NULL) {
            st = MS_ENOMEM;
            break;
        }
        out->v = nv;
        if ((st = read_row(out, &c, col, &out->v[out->n], d)) != MS_OK)
            break;
        out->total_gpus += out->v[out->n].ngpu;
        out->n++;
    }
    if (st == MS_OK && r < 0)
        st = (ms_status_t)-r;
    if (st == MS_OK && out->n == 0) {
        ms_diag_set(d, name, c.line, "", "no nodes");
        st = MS_EPARSE;
    }
    ms_csv_close(&c);
    if (st != MS_OK)
        ms_fgd_nodes_free(out);
    return st;
}

static ms_status_t read_any(FILE *f, const char *name, void *out, ms_diag_t *d)
{
    return ms_fgd_nodes_read_stream(f, name, out, d);
}

ms_status_t ms_fgd_nodes_read(const char *path, ms_fgd_nodes_t *out, ms_diag_t *d)
{
    return ms_csv_read_path(path, out, sizeof(*out), read_any, false, d);
}
