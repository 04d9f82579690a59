/* schedule.h - the schedule CSV: one row per execution segment.
 *
 *   job_id,gpu,start,profile,begin_s,end_s[,node,model]
 *
 * gpu is the GPU number, start the first memory slice of the instance (-1
 * for a time-slice slot), profile the instance's product name, begin_s and
 * end_s the segment's virtual times. A job that migrated has one row per
 * segment; a gang job one row per GPU. Rows come in the order segments end.
 *
 * The writer buffers rows and reports write errors at close. Its
 * ms_schedule_on_segment() matches ms_sim_cfg_t.on_segment (sim.h), with
 * the writer as ctx; the schedule knows segments (segment.h), not the
 * simulator that makes them.
 */
#ifndef MIGSCHED_SCHEDULE_H
#define MIGSCHED_SCHEDULE_H

#include <stdio.h>

#include "migsched/nodes.h"
#include "migsched/segment.h"
#include "migsched/trace.h"

typedef struct ms_schedule_writer ms_schedule_writer_t;

/* Write the header to f (borrowed; the caller closes it after
 * ms_schedule_writer_close). OUT out: free with ms_schedule_writer_close(). */
ms_status_t ms_schedule_writer_open(FILE *f, const ms_trace_t *t,
                                    ms_schedule_writer_t **out);
/* A heterogeneous cluster (before the first row): two columns more,
 * node,model, and each row's profile named in its GPU's model. nodes is
 * borrowed (as given to the simulator; gpu numbers are global in node
 * order). The six columns of a one-model schedule stay where they are. */
ms_status_t ms_schedule_writer_set_nodes(ms_schedule_writer_t *w, const ms_node_spec_t *nodes,
                                         int nnodes);
/* Append one row. */
ms_status_t ms_schedule_write(ms_schedule_writer_t *w, const ms_segment_t *seg);
/* Observer adapter for ms_sim_cfg_t.on_segment (ctx = the writer). */
void ms_schedule_on_segment(void *ctx, const ms_segment_t *seg);
/* Flush and free; returns MS_EIO if any write failed. NULL-safe. */
ms_status_t ms_schedule_writer_close(ms_schedule_writer_t *w);

#endif
