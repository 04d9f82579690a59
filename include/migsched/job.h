/* job.h - a job as policies and traces see it.
 *
 * The placement request reduced to what a policy needs on ONE model: the
 * active profile index of that model's geometry, the gang size, and the
 * times a simulator or an estimate gives. The scheduler (sched.h) turns a
 * user's request (a product or generic profile name, or memory in GB, plus
 * constraints) into one ms_job_t per node group it may run on.
 */
#ifndef MIGSCHED_JOB_H
#define MIGSCHED_JOB_H

#include <stdint.h>

typedef struct ms_job {
    int32_t idx;         /* the id used in plans (a trace index, or a scheduler slot) */
    int8_t prof;         /* requested active profile */
    int16_t gang;        /* GPUs wanted, >= 1; > 1 means whole GPUs on one node */
    double arrival;      /* seconds */
    double duration;     /* seconds on an exact-size instance, no interference
                          * (an estimate, or 0 when unknown, outside the simulator) */
} ms_job_t;

#endif
