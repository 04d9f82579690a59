/* report_int.h - helpers shared by the report readers (report.c,
 * report_series.c) and the report directory's writers (report_dir.c,
 * report_runs.c, report_fill.c). Internal: not installed. */
#ifndef MIGSCHED_RESEARCH_REPORT_INT_H
#define MIGSCHED_RESEARCH_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "migsched/research/report.h"
#include "migsched/research/svg.h"
#include "migsched/sim.h"
#include "migsched/status.h"

/* Per-GPU state of a schedule is kept per GPU that occurs in it, never per
 * GPU number: a schedule naming GPU 2,000,000,000 costs one slot, not 8 GB.
 * OUT idx[i]: a dense number in [0, *nd) for segment i's GPU, or -1 when
 * it lies outside [0, ngpus); free(*idx). */
ms_status_t ms__report_dense_gpus(const ms_segment_t *segs, size_t n, int ngpus, int32_t **idx,
                                  size_t *nd);

/* --- the JSON tree of the fill experiments' readers (report_json.c) ----
 *
 * A small general JSON parser (RFC 8259 values; \u escapes outside ASCII
 * become '?'; nesting up to 64 levels) into a tree of nodes, and typed
 * access that records the first missing or mistyped key in a context. */

typedef enum { MS__J_NULL, MS__J_BOOL, MS__J_NUM, MS__J_STR, MS__J_ARR, MS__J_OBJ } ms__jtype_t;

typedef struct ms__jnode {
    ms__jtype_t type;
    long line;
    double num;                /* MS__J_NUM, MS__J_BOOL (0/1) */
    char *str;                 /* MS__J_STR */
    char *key;                 /* member name when inside an object */
    struct ms__jnode *kid;     /* MS__J_ARR, MS__J_OBJ: [nkid] */
    size_t nkid;
} ms__jnode_t;

/* The first error of a reader: diag names file (name), line and the key's
 * path ("policies[2].arrived_pct"). */
typedef struct ms__jctx {
    const char *name;
    ms_diag_t *diag;
    ms_status_t st;
} ms__jctx_t;

/* Parse all of f into root (free its children with ms__jfree). */
ms_status_t ms__jparse_file(FILE *f, const char *name, ms__jnode_t *root, ms_diag_t *diag);
void ms__jfree(ms__jnode_t *n);
/* Member key of object o, or NULL. */
const ms__jnode_t *ms__jget(const ms__jnode_t *o, const char *key);
/* Record a missing or mistyped key at path prefix + key (the first only). */
void ms__jmiss(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key,
               const char *what);
/* A required member of type t (MS__J_NUM accepts null as NaN). */
const ms__jnode_t *ms__jreq(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix,
                            const char *key, ms__jtype_t t);
double ms__jnum(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key);
double ms__jnum_opt(const ms__jnode_t *o, const char *key);   /* NaN when absent */
/* An optional count: 0 when absent or null, else a whole number in [0, 1e15]. */
long ms__jcount_opt(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key);
char *ms__jdup(ms__jctx_t *c, const char *s);
/* An array of numbers (null -> NaN), malloc'd; *n its length, which must
 * equal want if want != 0. */
double *ms__jnums(ms__jctx_t *c, const ms__jnode_t *o, const char *prefix, const char *key,
                  size_t want, size_t *n);
/* What fgd-experiment and import-alibaba --fill JSON share: a root object
 * with "pods", "seeds" and at least one policy. Returns the policies, *n
 * of them; c->st says whether all was there. */
const ms__jnode_t *ms__jhead(ms__jctx_t *c, const ms__jnode_t *root, bool allow_root,
                             char **pods, char **trace, size_t *nseeds, size_t *n);

/* --- a report directory ------------------------------------------------ */

/* One run read back: its metrics and, from a run directory, its schedule
 * (and the series computed from it) and its trace's wait times. */
typedef struct ms__report_run {
    char *src;             /* the directory or JSON file given */
    char *name;            /* file-safe name, unique (prefixed by its number) */
    char policy[64];
    ms_metrics_t m;
    bool has_sched;
    ms_segment_t *segs;
    size_t nseg;
    int ngpus;
    double *ut, *uv;       /* utilisation over time */
    size_t nu;
    double *ft, *fv;       /* FragCost over time (replayed schedule) */
    size_t nf, fskip;
    double frag_mean;      /* time-weighted mean of (ft, fv) */
    bool has_trace;
    double *waits;         /* wait per started job (trace.csv) */
    size_t nw;
} ms__report_run_t;

/* Read run number idx from src: a run directory (is_dir) or a metrics
 * JSON file. Free with ms__report_run_free, also after an error. */
ms_status_t ms__report_load_run(ms__report_run_t *r, size_t idx, const char *src, bool is_dir,
                                const ms_geom_t *g, ms_diag_t *d);
void ms__report_run_free(ms__report_run_t *r);

/* Each kind's files in out and its section of the README md. */
ms_status_t ms__report_write_runs(const char *out, const ms_geom_t *g,
                                  const ms__report_run_t *runs, size_t n, FILE *md);
ms_status_t ms__report_write_fgd(const char *out, ms_report_fgd_t *const *fr, size_t nf, FILE *md);
ms_status_t ms__report_write_fill(const char *out, ms_report_fill_t *const *fl, size_t nl,
                                  FILE *md);

/* "3-fa_medium" from input number 3 and path "runs/fa medium/" (malloc'd). */
char *ms__report_safe_name(size_t idx, const char *src);
/* Close f; MS_EIO if it had a write error or the close fails, else st. */
ms_status_t ms__report_closef(FILE *f, ms_status_t st);
/* The line chart of s[0..k) into out/file. */
ms_status_t ms__report_lines(const char *out, const char *file, const ms_svg_chart_t *ch,
                             const ms_svg_series_t *s, int k);

#endif
