/* cluster.c - GPUs, instances, and keeping state/busy/index consistent. */
#include "migsched/cluster.h"

#include <stdlib.h>
#include <string.h>

#include "core/index.h"

ms_status_t ms_cluster_create(const ms_cluster_cfg_t *cfg, ms_cluster_t **out)
{
    ms_cluster_t *c;
    int g;

    *out = NULL;
    if (cfg == NULL || cfg->geom == NULL || cfg->ngpus <= 0 || cfg->gpus_per_node < 0)
        return MS_EINVAL;
    if (cfg->share == MS_SHARE_TIMESLICE && (cfg->replicas < 1 || cfg->replicas > MS_MAX_INST))
        return MS_EINVAL;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return MS_ENOMEM;
    c->geom = cfg->geom;
    c->ngpus = cfg->ngpus;
    c->gpus_per_node = cfg->gpus_per_node > 0 ? cfg->gpus_per_node : cfg->ngpus;
    c->share = cfg->share;
    c->replicas = cfg->share == MS_SHARE_TIMESLICE ? cfg->replicas : 0;
    c->index_mode = cfg->index_mode;
    c->gpus = calloc((size_t)cfg->ngpus, sizeof(*c->gpus));
    if (c->gpus == NULL) {
        free(c);
        return MS_ENOMEM;
    }
    if (c->index_mode == MS_INDEX_BUCKET) {
        ms_status_t st = ms__index_create(c->geom, c->ngpus, &c->index);
        if (st != MS_OK) {
            ms_cluster_destroy(c);
            return st;
        }
        for (g = 0; g < c->ngpus; g++)
            ms__index_add(c->index, ms_geom_empty_state(), g);
    }
    *out = c;
    return MS_OK;
}

void ms_cluster_destroy(ms_cluster_t *c)
{
    if (c == NULL)
        return;
    ms__index_destroy(c->index);
    free(c->gpus);
    free(c);
}

int ms_cluster_next_in_state(const ms_cluster_t *c, ms_state_t s, int after)
{
    int g;

    if (c->index != NULL)
        return s < c->index->nstates ? ms__index_next(c->index, s, after) : -1;
    for (g = after + 1; g < c->ngpus; g++)
        if (c->gpus[g].state == s)
            return g;
    return -1;
}

int ms_cluster_count_in_state(const ms_cluster_t *c, ms_state_t s)
{
    int g, n = 0;

    if (c->index != NULL)
        return s < c->index->nstates ? c->index->count[s] : 0;
    for (g = 0; g < c->ngpus; g++)
        n += c->gpus[g].state == s;
    return n;
}

int ms_cluster_count_fit(const ms_cluster_t *c, int k)
{
    int g, n = 0;

    if (k < 0 || k >= ms_geom_nprofiles(c->geom))
        return 0;
    if (c->index != NULL && k < MS_MAX_PROFILES)
        return c->index->nfit[k];
    for (g = 0; g < c->ngpus; g++)
        n += ms_state_fit(c->geom, c->gpus[g].state, k) != 0;
    return n;
}

int ms_cluster_states_in_use(const ms_cluster_t *c, ms_state_t *out)
{
    uint64_t seen[(MS_MAX_STATES + 63) / 64];
    int s, g, n = 0, ns = ms_geom_nstates(c->geom);

    if (c->index != NULL) {
        /* the index's bitmap of states in use: a word per 64 states (the
         * walk of every state's count was 3% of a loaded fa+ run, once per
         * make_room) */
        for (s = 0; s < (c->index->nstates + 63) / 64; s++)
            for (uint64_t w = c->index->used[s]; w != 0; w &= w - 1)
                out[n++] = (ms_state_t)(s * 64 + __builtin_ctzll(w));
        return n;
    }
    /* no index: mark the GPUs' states, then
     * list them in order (a sort of the GPUs' states wrote one per GPU
     * into out, past its room when GPUs outnumber states) */
    memset(seen, 0, sizeof(seen));
    for (g = 0; g < c->ngpus; g++)
        seen[c->gpus[g].state >> 6] |= UINT64_C(1) << (c->gpus[g].state & 63);
    for (s = 0; s < ns; s++)
        if (seen[s >> 6] >> (s & 63) & 1u)
            out[n++] = (ms_state_t)s;
    return n;
}

int ms_gpu_find_inst(const ms_gpu_t *gpu, int start)
{
    int i;

    for (i = 0; i < gpu->ninst; i++)
        if (gpu->inst[i].start == start)
            return i;
    return -1;
}

int ms_gpu_find_job(const ms_gpu_t *gpu, int32_t job)
{
    int i;

    for (i = 0; i < gpu->ninst; i++)
        if (gpu->inst[i].job == job)
            return i;
    return -1;
}

int ms_gpu_running(const ms_gpu_t *gpu)
{
    int i, n = 0;

    for (i = 0; i < gpu->ninst; i++)
        n += gpu->inst[i].job >= 0;
    return n;
}

ms_status_t ms_cluster_check(const ms_cluster_t *c)
{
    const ms_geom_t *g = c->geom;
    int i, k, gi;

    for (gi = 0; gi < c->ngpus; gi++) {
        const ms_gpu_t *gpu = &c->gpus[gi];
        uint16_t mask = 0;
        int comp = 0, busy = 0;
        uint8_t counts[MS_MAX_PROFILES] = {0};

        if (gpu->ninst > MS_MAX_INST)
            return MS_ESTATE;
        for (i = 0; i < gpu->ninst; i++) {
            const ms_inst_t *in = &gpu->inst[i];
            if (in->prof < 0 || in->prof >= ms_geom_nprofiles(g))
                return MS_ESTATE;
            if (in->job >= 0)
                busy += ms_geom_profile(g, in->prof)->cslices;
            if (c->share == MS_SHARE_TIMESLICE) {
                if (in->start != -1 || in->job < 0)
                    return MS_ESTATE;
                continue;
            }
            if (in->start < 0 || !((ms_geom_profile(g, in->prof)->start_mask >> in->start) & 1u))
                return MS_ESTATE;
            if (mask & ms_geom_profile_mask(g, in->prof, in->start))
                return MS_ESTATE;   /* two instances share a memory slice */
            if (i > 0 && gpu->inst[i - 1].start >= in->start)
                return MS_ESTATE;   /* kept sorted by start */
            mask |= ms_geom_profile_mask(g, in->prof, in->start);
            comp += ms_geom_profile(g, in->prof)->cslices;
            counts[in->prof]++;
        }
        if (busy != gpu->busy)
            return MS_ESTATE;
        if (c->share == MS_SHARE_TIMESLICE) {
            if (gpu->ninst > c->replicas || gpu->state != ms_geom_empty_state())
                return MS_ESTATE;
        } else {
            for (k = 0; k < ms_geom_nprofiles(g); k++)
                if (ms_state_count(g, 0, k) < 0)
                    counts[k] = 0;   /* untracked: the key ignores it */
            if (ms_state_find(g, mask, comp, counts) != gpu->state)
                return MS_ESTATE;
        }
        if (c->index != NULL && !ms__index_has(c->index, gpu->state, gi))
            return MS_ESTATE;
    }
    if (c->index != NULL) {
        int s, total = 0;
        for (s = 0; s < ms_geom_nstates(g); s++)
            total += c->index->count[s];
        if (total != c->ngpus)
            return MS_ESTATE;
        for (k = 0; k < ms_geom_nprofiles(g) && k < MS_MAX_PROFILES; k++) {
            int n = 0;

            for (gi = 0; gi < c->ngpus; gi++)
                n += ms_state_fit(g, c->gpus[gi].state, k) != 0;
            if (n != c->index->nfit[k])
                return MS_ESTATE;   /* the O(1) "no room anywhere" would lie */
        }
    }
    return MS_OK;
}
