/* node_mix.c - node-profile's view of the demand (node_profile_int.h):
 * the recent arrivals, and what a set of GIs hosts, runs or serves of
 * them. */
#include <string.h>

#include "policy/node_profile_int.h"

void ms__arrivals_add(ms__arrivals_t *w, int prof, double arrival, double duration)
{
    /* none given (or NaN): 0; so long that 256 of them could overflow the
     * sum: capped */
    double d = duration > 0.0 ? (duration < 1e15 ? duration : 1e15) : 0.0;

    if (w->filled == MS__MIX_WINDOW) {
        w->mix[w->prof[w->head]]--;
        w->sum_dur -= w->dur[w->head];
        w->ndur -= w->dur[w->head] > 0.0;
    } else {
        w->filled++;
    }
    w->prof[w->head] = (int8_t)prof;
    w->at[w->head] = arrival;
    w->dur[w->head] = d;
    w->sum_dur += d;
    w->ndur += d > 0.0;
    w->mix[prof]++;
    w->head = (w->head + 1) % MS__MIX_WINDOW;
}

bool ms__arrivals_offered(const ms__arrivals_t *w, int np, double *a)
{
    double first, last, rate, dur;
    int k;

    if (w->filled < 2 || w->ndur == 0 || !(w->sum_dur > 0.0))
        return false;
    dur = w->sum_dur / w->ndur;
    last = w->at[(w->head + MS__MIX_WINDOW - 1) % MS__MIX_WINDOW];
    first = w->at[w->filled == MS__MIX_WINDOW ? w->head : 0];
    if (!(last > first))
        return false;
    rate = (double)(w->filled - 1) / (last - first);
    for (k = 0; k < np; k++)
        a[k] = (double)w->mix[k] / (double)w->filled * rate * dur;
    return true;
}

int ms__mix_absorb(const ms_geom_t *g, int *rem, const int *gis, bool take)
{
    int left[MS_MAX_PROFILES], r[MS_MAX_PROFILES], k, q, hosted = 0, np = ms_geom_nprofiles(g);

    memcpy(left, gis, sizeof(left));
    memcpy(r, rem, sizeof(r));
    for (k = np - 1; k >= 0; k--)
        for (q = 0; q < np && r[k] > 0; q++) {
            int n;
            if (left[q] <= 0 || !ms_geom_covers(g, q, k))
                continue;
            n = r[k] < left[q] ? r[k] : left[q];
            r[k] -= n;
            left[q] -= n;
            hosted += n * ms_geom_profile(g, k)->cslices;
        }
    if (take)
        memcpy(rem, r, sizeof(r));
    return hosted;
}

double ms__mix_rate(const ms_geom_t *g, const int *mix, const int *gis)
{
    int prof[MS_MAX_PROFILES], k, q, m = 0, total = 0, np = ms_geom_nprofiles(g);
    unsigned sub;
    double best = -1.0;

    for (k = 0; k < np; k++)
        if (mix[k] > 0) {
            prof[m++] = k;
            total += mix[k];
        }
    if (m == 0 || m > 16)
        return 0.0;
    for (sub = 1; sub < (1u << m); sub++) {
        int share = 0, cover = 0, i;
        double r;
        for (i = 0; i < m; i++)
            if ((sub >> i) & 1u)
                share += mix[prof[i]];
        for (q = 0; q < np; q++) {
            bool any_k = false;
            for (i = 0; i < m && !any_k; i++)
                any_k = ((sub >> i) & 1u) && ms_geom_covers(g, q, prof[i]);
            if (any_k)
                cover += gis[q];
        }
        r = (double)cover * (double)total / (double)share;
        if (best < 0.0 || r < best)
            best = r;
    }
    return best;
}

/* The flow network: source, a node per job profile, a node per GI profile,
 * sink. */
#define NV (2 * MS_MAX_PROFILES + 2)
#define EPS 1e-9

/* A shortest augmenting path from s to t in the residual capacities cap;
 * its bottleneck, 0 if t is not reachable (Edmonds-Karp). */
static double augment(double cap[NV][NV], int nv, int s, int t)
{
    int queue[NV], prev[NV], head = 0, tail = 0, v, u;
    double push;

    for (v = 0; v < nv; v++)
        prev[v] = -1;
    prev[s] = s;
    queue[tail++] = s;
    while (head < tail && prev[t] < 0) {
        u = queue[head++];
        for (v = 0; v < nv; v++)
            if (prev[v] < 0 && cap[u][v] > EPS) {
                prev[v] = u;
                queue[tail++] = v;
            }
    }
    if (prev[t] < 0)
        return 0.0;
    push = -1.0;
    for (v = t; v != s; v = prev[v])
        if (push < 0.0 || cap[prev[v]][v] < push)
            push = cap[prev[v]][v];
    for (v = t; v != s; v = prev[v]) {
        cap[prev[v]][v] -= push;
        cap[v][prev[v]] += push;
    }
    return push;
}

double ms__mix_served(const ms_geom_t *g, const int *mix, const int *gis,
                      const double *offered)
{
    double c[NV][NV], flow = 0.0, push, room = 0.0;
    int np = ms_geom_nprofiles(g), k, q, src = 0, sink = 2 * np + 1;

    memset(c, 0, sizeof(c));
    for (q = 0; q < np; q++)
        if (gis[q] > 0) {
            c[1 + np + q][sink] = gis[q];
            room += gis[q];
        }
    for (k = 0; k < np; k++) {
        if (mix[k] <= 0)
            continue;
        c[src][1 + k] = offered != NULL ? (offered[k] > 0.0 ? offered[k] : 0.0) : room;
        for (q = 0; q < np; q++)
            if (gis[q] > 0 && ms_geom_covers(g, q, k))
                c[1 + k][1 + np + q] = room;
    }
    while ((push = augment(c, sink + 1, src, sink)) > 0.0)
        flow += push;
    return flow;
}
