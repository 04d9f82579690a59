/* node_profile_int.h - private to node-profile (node_profile.c): its
 * whole-node layout kinds (node_kinds.c), the recent arrivals and what a
 * set of GIs does with a profile mix (node_mix.c).
 *
 * A set of GIs is counted by profile (gis[q]: GIs of profile q); a mix or a
 * demand is a count per profile (mix[k]: jobs of profile k). A GI runs one
 * job at a time, of any profile it covers (ms_geom_covers). Arrays are
 * MS_MAX_PROFILES long. */
#ifndef MIGSCHED_NODE_PROFILE_INT_H
#define MIGSCHED_NODE_PROFILE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "migsched/geometry.h"
#include "policy/policy_int.h"

/* The seed's layout kinds of a whole node (every GPU alike):
 * inference-peak, as many of the smallest classic profile as fit (7x1g on
 * an A100); balanced, as many 2g (or the smallest classic profile of >= 2
 * slices) as fit, the rest filled greedily with the largest that fits
 * (3x2g+1g); training, one full-size instance (1x7g). Kind 0 is
 * node-profile's static. */
enum { MS__NP_INF = 1, MS__NP_BAL = 2, MS__NP_TRN = 3 };
/* One GPU's layout of kind k (MS__NP_*); MS_ENOTSUP if the geometry has
 * no such profile, MS_EINVAL for another k. */
ms_status_t ms__np_kind_layout(const ms_geom_t *g, int kind, ms__layout_t *out);

#define MS__MIX_WINDOW 256

/* The last MS__MIX_WINDOW arrivals: profiles, times and durations. */
typedef struct ms__arrivals {
    int8_t prof[MS__MIX_WINDOW];
    double at[MS__MIX_WINDOW];
    double dur[MS__MIX_WINDOW];    /* 0: none given */
    double sum_dur;                /* of dur */
    int ndur;                      /* entries of dur > 0 */
    int head, filled;              /* next slot; entries in use */
    int mix[MS_MAX_PROFILES];      /* of prof */
} ms__arrivals_t;

/* Add an arrival of profile prof (0 <= prof < MS_MAX_PROFILES), dropping
 * the oldest once the window is full. */
void ms__arrivals_add(ms__arrivals_t *w, int prof, double arrival, double duration);
/* The window as an offered load, in jobs at once per profile (a[0..np)):
 * share of the window x arrival rate x mean duration given. false when it
 * is unknown: no duration given, or no time between the arrivals. */
bool ms__arrivals_offered(const ms__arrivals_t *w, int np, double *a);

/* Take off rem (waiting jobs per profile) what the GIs can host: largest
 * jobs first, each on the smallest GI that covers it. Returns the compute
 * slices hosted; rem is updated when take. */
int ms__mix_absorb(const ms_geom_t *g, int *rem, const int *gis, bool take);

/* The largest rate r such that r x share_k jobs of every profile k of the
 * mix fit the GIs at once, one job a GI (a fractional matching): by Hall's
 * condition the least, over sets S of the mix's profiles, of (GIs that
 * cover some profile of S) x total / (S's count). 0 for an empty mix or
 * one of more than 16 profiles. */
double ms__mix_rate(const ms_geom_t *g, const int *mix, const int *gis);

/* How many jobs at once the GIs serve of an offered load: a maximum flow
 * from the mix's profiles (at most offered[k] jobs of profile k; offered
 * NULL: unbounded, every profile always waiting) to the GIs that cover
 * them, one job a GI. Profiles with mix[k] <= 0 offer nothing. */
double ms__mix_served(const ms_geom_t *g, const int *mix, const int *gis,
                      const double *offered);

#endif
