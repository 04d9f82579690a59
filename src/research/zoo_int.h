/* zoo_int.h - private: the zoo's state, shared by zoo.c and zoo_report.c. */
#ifndef MIGSCHED_ZOO_INT_H
#define MIGSCHED_ZOO_INT_H

#include "migsched/research/zoo.h"

#define MS__ZOO_LABEL 64

typedef struct ms__zoo_var {
    char label[MS__ZOO_LABEL];
    ms_sim_cfg_t sc;           /* the zoo's options with the variant's on top */
    int gpus_per_node;         /* node=N; 0: the workload's own */
} ms__zoo_var_t;

struct ms_zoo {
    ms_zoo_cfg_t cfg;
    int nw, nv, seeds;
    ms_zoo_workload_t *wl;     /* [nw], jobs scaled */
    ms__zoo_var_t *var;        /* [nv] */
    double *val;               /* [nw][nv][seeds][MS_ZOO_NMETRIC] */
};

static inline double *ms__zoo_val(const ms_zoo_t *z, int w, int v, int s, int m)
{
    return &z->val[(((size_t)w * (size_t)z->nv + (size_t)v) * (size_t)z->seeds + (size_t)s) *
                       MS_ZOO_NMETRIC + (size_t)m];
}

#endif
