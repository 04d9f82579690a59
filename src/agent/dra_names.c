/* dra_names.c - the DRA driver's device names (dra.h), pure.
 *
 * NVIDIA's DynamicMIG scheme, which the placement brain and users' CEL
 * selectors read (shared/reference/dra.md §4): the whole GPU is
 * "gpu-<g>", a MIG placement "gpu-<g>-mig-<token>-<GI profile id>-<start>"
 * with token the profile's name lower-cased, dots dropped and anything
 * else outside [a-z0-9-] made '-' ("3g.20gb" -> "3g20gb", "1g.5gb+me" ->
 * "1g5gb-me"). The GPU number is the agent's (the NVML index, which
 * cdi.c also takes for the device minor). A name carries its placement, so
 * a prepare needs nothing but the name to know what to create; a token is
 * not unique on its own ("1g.24gb+me" and "1g.24gb-me" share one) but
 * with the GI profile id it is. Pure: no I/O, no globals; any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dra.h"

int ag_dra_profile_token(const char *profile, char *buf, size_t len)
{
    size_t i, o = 0;

    for (i = 0; profile[i] != '\0'; i++) {
        char c = profile[i];

        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == '.')
            continue;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = '-';
        if (c == '-' && o == 0)
            continue;
        if (o + 1 >= len)
            return -1;
        buf[o++] = c;
    }
    while (o > 0 && buf[o - 1] == '-')
        o--;
    if (o == 0 || len == 0)
        return -1;
    buf[o] = '\0';
    return 0;
}

int ag_dra_name_gpu(int gpu, char *buf, size_t len)
{
    int k = snprintf(buf, len, "gpu-%d", gpu);

    return k > 0 && (size_t)k < len ? 0 : -1;
}

int ag_dra_name_mig(const ms_geom_t *g, int gpu, int prof, int start, char *buf, size_t len)
{
    const ms_profile_t *p = ms_geom_profile(g, prof);
    char tok[48];
    int k;

    if (ag_dra_profile_token(p->name, tok, sizeof(tok)) != 0)
        return -1;
    k = snprintf(buf, len, "gpu-%d-mig-%s-%u-%d", gpu, tok, (unsigned)p->gi_id, start);
    return k > 0 && (size_t)k < len && k <= 63 ? 0 : -1;
}

int ag_dra_full_profile(const ms_geom_t *g)
{
    int k, w = ms_geom_width(g);

    for (k = ms_geom_nprofiles(g) - 1; k >= 0; k--) {
        const ms_profile_t *p = ms_geom_profile(g, k);

        if (p->msize == w && (p->start_mask & 1u) != 0 && (p->flags & MS_PF_BASE) != 0)
            return k;
    }
    return -1;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const ag_dra_dev_t *)x)->name, ((const ag_dra_dev_t *)y)->name);
}

int ag_dra_devices(const ag_dra_gpu_t *gpu, int g, ag_dra_dev_t **out, int *n)
{
    const ms_geom_t *geo = gpu->geom;
    ag_dra_dev_t *v;
    int cap = 1, k, s, m = 0;

    *out = NULL;
    *n = 0;
    if (gpu->mig)
        for (k = 0; k < ms_geom_nprofiles(geo); k++)
            for (s = 0; s < 16; s++)
                cap += (ms_geom_profile(geo, k)->start_mask >> s) & 1u;
    if ((v = calloc((size_t)cap, sizeof(*v))) == NULL)
        return -1;
    /* a MIG GPU's whole-GPU device is its full-size instance: none without one */
    if (!gpu->mig || ag_dra_full_profile(geo) >= 0) {
        v[m].kind = AG_DRA_GPU;
        v[m].gpu = g;
        v[m].prof = -1;
        v[m].start = -1;
        if (ag_dra_name_gpu(g, v[m].name, sizeof(v[m].name)) != 0)
            goto fail;
        m++;
    }
    if (gpu->mig)
        for (k = 0; k < ms_geom_nprofiles(geo); k++)
            for (s = 0; s < 16; s++) {
                if (((ms_geom_profile(geo, k)->start_mask >> s) & 1u) == 0)
                    continue;
                v[m].kind = AG_DRA_MIG;
                v[m].gpu = g;
                v[m].prof = k;
                v[m].start = s;
                if (ag_dra_name_mig(geo, g, k, s, v[m].name, sizeof(v[m].name)) != 0)
                    goto fail;
                m++;
            }
    qsort(v, (size_t)m, sizeof(*v), by_name);
    *out = v;
    *n = m;
    return 0;
fail:
    free(v);
    return -1;
}

/* A decimal number without sign or leading zeros, at most 4 digits, at
 * s[0..len): its value, or -1. */
static int number(const char *s, size_t len)
{
    int v = 0;
    size_t i;

    if (len == 0 || len > 4 || (s[0] == '0' && len > 1))
        return -1;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int why_set(char *why, size_t whylen, const char *name, const char *what)
{
    snprintf(why, whylen, "device '%.63s': %s", name, what);
    return -1;
}

int ag_dra_parse(const ag_dra_gpu_t *gpus, int n, const char *name, ag_dra_dev_t *out, char *why,
                 size_t whylen)
{
    const char *p, *mig, *dash2, *dash1;
    char tok[64], mine[48];
    int gpu, id, start, k;
    size_t len = strlen(name);

    memset(out, 0, sizeof(*out));
    if (len == 0 || len > 63 || strncmp(name, "gpu-", 4) != 0)
        return why_set(why, whylen, name, "not a device of this driver (gpu-<n>[-mig-...])");
    p = name + 4;
    mig = strstr(p, "-mig-");
    if ((gpu = number(p, mig != NULL ? (size_t)(mig - p) : strlen(p))) < 0)
        return why_set(why, whylen, name, "the GPU number is not a number");
    if (gpu >= n) {
        snprintf(why, whylen, "device '%.63s': this node has GPUs 0..%d", name, n - 1);
        return -1;
    }
    memcpy(out->name, name, len + 1);
    out->gpu = gpu;
    out->prof = -1;
    out->start = -1;
    if (mig == NULL) {
        out->kind = AG_DRA_GPU;
        if (gpus[gpu].mig && ag_dra_full_profile(gpus[gpu].geom) < 0)
            return why_set(why, whylen, name, "this MIG GPU has no full-size profile to stand for the whole GPU");
        return 0;
    }
    out->kind = AG_DRA_MIG;
    if (!gpus[gpu].mig)
        return why_set(why, whylen, name, "a MIG device on a GPU whose MIG mode is off");
    p = mig + 5;
    dash2 = strrchr(p, '-');
    if (dash2 == NULL || (start = number(dash2 + 1, strlen(dash2 + 1))) < 0)
        return why_set(why, whylen, name, "no placement start at the end");
    for (dash1 = dash2 - 1; dash1 > p && *dash1 != '-'; dash1--)
        ;
    if (dash1 <= p || (id = number(dash1 + 1, (size_t)(dash2 - dash1 - 1))) < 0)
        return why_set(why, whylen, name, "no GI profile id before the start");
    if ((size_t)(dash1 - p) >= sizeof(tok))
        return why_set(why, whylen, name, "the profile part is too long");
    memcpy(tok, p, (size_t)(dash1 - p));
    tok[dash1 - p] = '\0';
    for (k = 0; k < ms_geom_nprofiles(gpus[gpu].geom); k++) {
        const ms_profile_t *pr = ms_geom_profile(gpus[gpu].geom, k);

        if (pr->gi_id == id && ag_dra_profile_token(pr->name, mine, sizeof(mine)) == 0 && strcmp(mine, tok) == 0)
            break;
    }
    if (k == ms_geom_nprofiles(gpus[gpu].geom)) {
        snprintf(why, whylen, "device '%.63s': GPU %d (%s) has no profile '%s' with GI profile id %d", name, gpu,
                 ms_geom_model(gpus[gpu].geom)->name, tok, id);
        return -1;
    }
    if (start > 15 || ((ms_geom_profile(gpus[gpu].geom, k)->start_mask >> start) & 1u) == 0) {
        snprintf(why, whylen, "device '%.63s': %s cannot start at memory slice %d", name,
                 ms_geom_profile(gpus[gpu].geom, k)->name, start);
        return -1;
    }
    out->prof = k;
    out->start = start;
    return 0;
}
