/* slicemap.h - draw GPUs as slice maps (text) for humans.
 *
 *   GPU 0  |1g |   |2g     |3g             |   FragCost 0.250
 *           0   1   2   3   4   5   6   7
 *
 * Pure formatting: writes to a caller-provided stream, owns nothing.
 */
#ifndef MIGSCHED_SLICEMAP_H
#define MIGSCHED_SLICEMAP_H

#include <stdio.h>

#include "migsched/geometry.h"

/* One row: label, the instances gis[0..n) (any order), an optional tag per
 * instance (NULL = the generic profile name), and a trailing note. */
void ms_slicemap_row(FILE *f, const ms_geom_t *g, const char *label,
                     const ms_gi_t *gis, int n, const char *const *tags,
                     const char *note);
/* The axis ruler that goes under rows, indented by the label width. */
void ms_slicemap_ruler(FILE *f, const ms_geom_t *g, int label_width);

#endif
