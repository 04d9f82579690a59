/* geom_int.h - private: per-state tables of ms_geom_t used by other core
 * files. Not installed. */
#ifndef MIGSCHED_GEOM_INT_H
#define MIGSCHED_GEOM_INT_H

#include "migsched/geometry.h"

/* Ideal_p of active profile k in state s (frag.h's definition:
 * min(freeCompute / c_p, freeMem / m_p, max_p - count_p), count_p = 0 for
 * untracked profiles), precomputed by ms_geom_create. */
int ms__geom_ideal(const ms_geom_t *g, ms_state_t s, int k);
/* Memory of profile p of model m in GB, from its product name (fit.c). */
double ms__profile_mem_gb(const ms_model_t *m, const ms_profile_t *p);

#endif
