/* advise_int.h - the advisor's private state (advise*.c). */
#ifndef MIGSCHED_ADVISE_INT_H
#define MIGSCHED_ADVISE_INT_H

#include <stdint.h>

#include "migsched/advise.h"

typedef struct ms__adv_node {
    double sum;          /* of util, percent */
    long n;
    double max_mem;
} ms__adv_node_t;

struct ms_advise {
    const ms_node_spec_t *nodes;
    int nnodes;
    ms__adv_node_t *acc;
    /* node names sorted, for lookups */
    struct ms__adv_name { const char *name; int idx; } *by_name;
    const ms_trace_t *trace;
    uint8_t *latency;    /* [trace->n] 1 = latency-sensitive */
    int32_t *svc;        /* [trace->n] service index, -1 when not latency-sensitive */
    char **svc_name;     /* [nsvc] */
    int nsvc, svc_cap;
};

/* The node named s (length len), or -1. */
int ms__adv_node_find(const ms_advise_t *a, const char *s, size_t len);
/* Add one sample (validated by the caller). */
void ms__adv_add(ms_advise_t *a, int node, double util, double mem_gb);

#endif
