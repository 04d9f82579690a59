/* nodes.h - a cluster described node by node: each node's name, GPU model
 * (a geometry), GPU count and sharing mode, and the text form
 * "NAME=COUNTxMODEL[:mig|:timeslice=R|:whole]" of the CLI, the daemon and
 * cluster files.
 *
 * A type of its own so that what reads a cluster description (the
 * scheduler, sched.h) and what checks or writes schedules against one (the
 * checker, check.h; the schedule writer, schedule.h) share it without
 * depending on each other. The parser is src/sched/spec.c.
 */
#ifndef MIGSCHED_NODES_H
#define MIGSCHED_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/geometry.h"
#include "migsched/status.h"

/* How a node shares its GPUs. */
typedef enum ms_node_mode {
    MS_NODE_MIG = 0,        /* MIG instances (the policy decides) */
    MS_NODE_TIMESLICE = 1,  /* up to `replicas` jobs share each GPU in time */
    MS_NODE_WHOLE = 2       /* MIG off: one job per GPU, the whole GPU */
} ms_node_mode_t;

typedef struct ms_node_spec {
    const char *name;       /* unique, non-empty */
    const ms_geom_t *geom;  /* borrowed; its model and active profiles */
    int ngpus;              /* >= 1 */
    ms_node_mode_t mode;
    int replicas;           /* timeslice: 1..MS_MAX_INST (0 = the policy cfg's) */
} ms_node_spec_t;

/* A parsed cluster description: "NAME=COUNTxMODEL[:mig|:timeslice=R|:whole]"
 * per node. Owns the geometries it created (one per distinct model). */
typedef struct ms_cluster_spec ms_cluster_spec_t;

ms_status_t ms_cluster_spec_create(ms_cluster_spec_t **out);
void ms_cluster_spec_destroy(ms_cluster_spec_t *cs);           /* NULL-safe */
/* Add one node from its text form; profile_set as for ms_geom_create (0 =
 * the classic set). diag names the part that is wrong. */
ms_status_t ms_cluster_spec_add(ms_cluster_spec_t *cs, const char *text, uint32_t profile_set,
                                ms_diag_t *diag);
/* Read a cluster file: one node a line in the same syntax, '#' comments and
 * blank lines ignored; diag names file and line. */
ms_status_t ms_cluster_spec_read_file(ms_cluster_spec_t *cs, const char *path,
                                      uint32_t profile_set, ms_diag_t *diag);
/* Add `count` nodes of one kind named PREFIX0, PREFIX1, ... (the
 * `--gpus N --gpus-per-node K --model M` shorthand). geom is borrowed. */
ms_status_t ms_cluster_spec_add_group(ms_cluster_spec_t *cs, const char *prefix, int nodes,
                                      const ms_geom_t *geom, int gpus_per_node,
                                      ms_node_mode_t mode, int replicas);
/* ngpus GPUs in nodes of gpus_per_node, the last node short if need be
 * (`--gpus 10 --gpus-per-node 4` is nodes of 4, 4 and 2). */
ms_status_t ms_cluster_spec_add_gpus(ms_cluster_spec_t *cs, const char *prefix, int ngpus,
                                     int gpus_per_node, const ms_geom_t *geom, ms_node_mode_t mode,
                                     int replicas);
int ms_cluster_spec_nnodes(const ms_cluster_spec_t *cs);
const ms_node_spec_t *ms_cluster_spec_nodes(const ms_cluster_spec_t *cs);
int ms_cluster_spec_ngpus(const ms_cluster_spec_t *cs);
/* True when every node has one model and mode and the same GPU count. */
bool ms_cluster_spec_homogeneous(const ms_cluster_spec_t *cs);

#endif
