/* report_int.h - helpers shared by the report readers (report.c,
 * report_series.c). Internal: not installed. */
#ifndef MIGSCHED_IO_REPORT_INT_H
#define MIGSCHED_IO_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "migsched/status.h"
#include "migsched/sim.h"

/* Per-GPU state of a schedule is kept per GPU that occurs in it, never per
 * GPU number: a schedule naming GPU 2,000,000,000 costs one slot, not 8 GB.
 * OUT idx[i]: a dense number in [0, *nd) for segment i's GPU, or -1 when
 * it lies outside [0, ngpus); free(*idx). */
ms_status_t ms__report_dense_gpus(const ms_segment_t *segs, size_t n, int ngpus, int32_t **idx,
                                  size_t *nd);

#endif
