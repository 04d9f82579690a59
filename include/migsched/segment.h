/* segment.h - one execution segment of a job: where and when it ran.
 *
 * The simulator emits segments (sim.h, ms_sim_cfg_t.on_segment); the
 * schedule CSV holds one row per segment (schedule.h); the reports read
 * them back (research/report.h). A header of its own so that none of
 * those depends on another for it.
 */
#ifndef MIGSCHED_SEGMENT_H
#define MIGSCHED_SEGMENT_H

#include <stdint.h>

/* One execution segment of a job (a migrated job has several). */
typedef struct ms_segment {
    int32_t job;
    int32_t gpu;
    int8_t start;        /* -1 for time-slicing */
    int8_t prof;         /* the instance's profile */
    double begin_s, end_s;
} ms_segment_t;

#endif
