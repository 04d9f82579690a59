/* sim_int.h - private: pieces of the simulator shared between its files. */
#ifndef MIGSCHED_SIM_INT_H
#define MIGSCHED_SIM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/sim.h"

/* Lower bound of algorithms.md §7 over the jobs with skip[i] == 0 (skip may
 * be NULL); memory == false leaves out the memory-slice term (time-slicing
 * does not partition memory). O(n): the trace is sorted by arrival. */
double ms__lower_bound(const ms_trace_t *t, int ngpus, const uint8_t *skip, bool memory);

/* Nearest-rank percentile (p in 0..100) of a sorted array of n > 0 values. */
double ms__percentile(const double *sorted, size_t n, double p);

#endif
