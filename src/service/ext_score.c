/* ext_score.c - the loop thread: the filter's per-node scores, kept for
 * the prioritize of the same pod (issue 25, item 3).
 *
 * kube-scheduler sends one pod's filter and then its prioritize, over the
 * nodes that passed, in one scheduling cycle; between the two nothing need
 * have changed in the cluster, so the prioritize takes the scores the
 * filter computed instead of scoring every GPU of every node again. The
 * scores stay good while the scheduler's counters of what changes
 * placements (ms_sched_stats: placements, releases, holds, ops, moves,
 * layouts) are those read just after the filter's hold, for the same pod
 * and the same request, and for at most MAX_AGE_S of the daemon's clock;
 * anything else (another pod's filter, bind or release in between, a node
 * the filter did not score) and the prioritize scores from scratch. A
 * cordon between the two is not in the counters: the stale scores only
 * rank nodes, and the bind checks the room again.
 *
 * The table is indexed by the scheduler's node index: score[i] is the
 * filter's for node i when stamp[i] == gen, so a filter over N nodes costs
 * O(N) and never clears the table.
 */
#include <stdlib.h>
#include <string.h>

#include "service/extender_int.h"

#define MAX_AGE_S 5.0
#define NFP 10

struct svc_ext_scores {
    char *uid, *req;               /* the pod, its request (svc_ext_job_body) */
    long fp[NFP];                  /* the counters after the filter's hold */
    double t;                      /* the filter's now */
    bool valid;
    int *score;                    /* by node index: 0..10, -1 no room */
    uint32_t *stamp, gen;
    int cap;
};

static void fingerprint(const svc_t *d, long *fp)
{
    ms_sched_stats_t st;

    ms_sched_stats(d->sched, &st);
    fp[0] = st.waiting;
    fp[1] = st.running;
    fp[2] = st.reserved;
    fp[3] = st.changes;
    fp[4] = st.reconfigurations;
    fp[5] = st.migrations;
    fp[6] = st.migrations_bbm;
    fp[7] = st.layout_switches;
    fp[8] = st.ops_done;
    fp[9] = st.ops_failed;
}

void svc_ext_scores_free(svc_ext_t *x)
{
    struct svc_ext_scores *c = x->scores;

    if (c == NULL)
        return;
    free(c->uid);
    free(c->req);
    free(c->score);
    free(c->stamp);
    free(c);
    x->scores = NULL;
}

void svc_ext_scores_drop(svc_ext_t *x)
{
    if (x->scores != NULL)
        x->scores->valid = false;
}

/* Room for node indices below n (nodes may join at run time). */
static int grow(struct svc_ext_scores *c, int n)
{
    int cap = c->cap > 0 ? c->cap : 64, *sc;
    uint32_t *stp;

    if (n <= c->cap)
        return 0;
    while (cap < n)
        cap *= 2;
    if ((sc = realloc(c->score, (size_t)cap * sizeof(*sc))) == NULL)
        return -1;
    c->score = sc;
    if ((stp = realloc(c->stamp, (size_t)cap * sizeof(*stp))) == NULL)
        return -1;
    memset(stp + c->cap, 0, (size_t)(cap - c->cap) * sizeof(*stp));
    c->stamp = stp;
    c->cap = cap;
    return 0;
}

int svc_ext_scores_put(svc_t *d, const char *uid, const char *req, const int *node, const int *score,
                       int n, double now)
{
    struct svc_ext_scores *c = d->ext->scores;
    int i, top = 0;

    if (c == NULL && (c = d->ext->scores = calloc(1, sizeof(*c))) == NULL)
        return -1;
    c->valid = false;
    for (i = 0; i < n; i++)
        if (node[i] + 1 > top)
            top = node[i] + 1;
    free(c->uid);
    free(c->req);
    c->uid = strdup(uid);
    c->req = strdup(req);
    if (c->uid == NULL || c->req == NULL || grow(c, top) != 0)
        return -1;
    if (++c->gen == 0) {   /* wrapped: no stamp may look current */
        memset(c->stamp, 0, (size_t)c->cap * sizeof(*c->stamp));
        c->gen = 1;
    }
    for (i = 0; i < n; i++) {
        c->score[node[i]] = score[i];
        c->stamp[node[i]] = c->gen;
    }
    fingerprint(d, c->fp);
    c->t = now;
    c->valid = true;
    return 0;
}

bool svc_ext_scores_get(svc_t *d, const char *uid, const char *req, const int *node, int n, int *out,
                        double now)
{
    struct svc_ext_scores *c = d->ext->scores;
    long fp[NFP];
    int i;

    if (c == NULL || !c->valid || strcmp(c->uid, uid) != 0 || strcmp(c->req, req) != 0 ||
        now < c->t || now - c->t > MAX_AGE_S)
        return false;
    fingerprint(d, fp);
    if (memcmp(fp, c->fp, sizeof(fp)) != 0)
        return false;
    for (i = 0; i < n; i++) {
        if (node[i] < 0 || node[i] >= c->cap || c->stamp[node[i]] != c->gen)
            return false;
        out[i] = c->score[node[i]];
    }
    return true;
}
