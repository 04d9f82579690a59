/* svg.h - small self-contained SVG plots for reports.
 *
 * Four kinds of chart, each written as one standalone <svg> document to a
 * caller-given stream (the module owns nothing and keeps no state):
 *
 *   ms_svg_lines   line chart: several series, a legend, linear axes;
 *                  one <polyline class="series"> per non-empty series;
 *   ms_svg_cdf     empirical CDFs of samples, drawn as step lines (one
 *                  polyline per non-empty sample set);
 *   ms_svg_bars    grouped bar chart with optional error bars: one
 *                  <rect class="bar"> per finite value, one
 *                  <path class="err"> per bar with a positive error;
 *   ms_svg_gantt   a slice map of a schedule over time: x = time,
 *                  y = GPU x memory slice, one <rect class="seg"> per
 *                  segment, coloured by profile, with a hover <title>.
 *
 * Output is plain SVG 1.1, numbers printed with "%.2f" (C locale), all
 * caller text escaped (& < > " '). Values that are NaN or infinite are
 * skipped. Write errors are reported as MS_EIO (checked with ferror()).
 */
#ifndef MIGSCHED_SVG_H
#define MIGSCHED_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "migsched/geometry.h"
#include "migsched/segment.h"

/* Common chart options. Zero-initialise and fill what you need. */
typedef struct ms_svg_chart {
    const char *title;     /* NULL = none */
    const char *xlabel;    /* NULL = none */
    const char *ylabel;    /* NULL = none */
    int width, height;     /* pixels; 0 = 760 x 440 */
    bool y_from_zero;      /* include 0 in the y range */
    bool step;             /* lines: draw as a right-continuous step function */
    double ymax;           /* > 0: clamp the y range's top here (cdf: ignored) */
} ms_svg_chart_t;

/* One line series. x may be NULL (then x = 0, 1, 2, ...). */
typedef struct ms_svg_series {
    const char *name;
    const double *x;
    const double *y;
    size_t n;
    bool dashed;           /* drawn dashed (a target beside its measure) */
    int color;             /* 0: the colour of its index; c > 0: of index c - 1
                            * (a target in its measure's colour) */
} ms_svg_series_t;

ms_status_t ms_svg_lines(FILE *f, const ms_svg_chart_t *ch,
                         const ms_svg_series_t *series, int nseries);

/* CDFs: samples[i][0..n[i]) of series i (any order; copied and sorted). */
ms_status_t ms_svg_cdf(FILE *f, const ms_svg_chart_t *ch, const char *const *names,
                       const double *const *samples, const size_t *n, int nseries);

/* Grouped bars: value[g * nseries + s] is series s in group g; err (may be
 * NULL) has the same shape and gives the half-length of the error bar. */
typedef struct ms_svg_bars {
    int ngroups, nseries;
    const char *const *groups;  /* [ngroups] labels under the groups */
    const char *const *series;  /* [nseries] legend */
    const double *value;
    const double *err;
} ms_svg_bars_t;

ms_status_t ms_svg_bars(FILE *f, const ms_svg_chart_t *ch, const ms_svg_bars_t *b);

/* Gantt slice map: segs[0..n) on ngpus GPUs of geometry g (time-slice
 * segments, start -1, span the whole GPU band translucently). The x range
 * is [0, max end]. The colour of a segment is its profile's. At most
 * MS_SVG_GANTT_MAX_GPUS bands are drawn (GPUs 0..63; the chart says how
 * many it left out), so the file's size follows the segments, never the
 * largest GPU number. */
#define MS_SVG_GANTT_MAX_GPUS 64
ms_status_t ms_svg_gantt(FILE *f, const ms_svg_chart_t *ch, const ms_geom_t *g,
                         int ngpus, const ms_segment_t *segs, size_t n);

/* Write s with XML escaping (& < > " ' and control characters dropped). */
void ms_svg_escape(FILE *f, const char *s);

/* The palette colour of series i ("#rrggbb"; cycles). */
const char *ms_svg_color(int i);

#endif
