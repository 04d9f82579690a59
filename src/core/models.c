/* models.c - every MIG-capable GPU model, as data.
 *
 * Facts from shared/reference/mig-hardware.md §1.2-1.6: profile IDs, NVML
 * enum indices, compute slices, placement sizes, legal starts and max counts.
 * The 8-slice family (A100, H100, H200, GH200, B200, GB200) shares one
 * placement table and differs only in the product names; placements for
 * H200/GH200/B200/GB200 are inferred from NVIDIA's documented fractions
 * (marked [I] in the reference) and should be checked on hardware with
 * nvmlDeviceGetGpuInstancePossiblePlacements_v2 (the NVML executor does).
 */
#include "migsched/geometry.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

/* Row order of the 8-slice family: 1g, 1g+me, 1g double memory, 2g, 3g, 4g, 7g. */
#define MIG8(n1, nme, n1d, n2, n3, n4, n7)                                   \
    {                                                                        \
        { n1,  "1g",       19, 0x0, 1, 1, 0x7F, 7, MS_PF_BASE },             \
        { nme, "1g+me",    20, 0x7, 1, 1, 0x7F, 1, MS_PF_ME },               \
        { n1d, "1g.2xmem", 15, 0x9, 1, 2, 0x55, 4, MS_PF_DMEM },             \
        { n2,  "2g",       14, 0x1, 2, 2, 0x15, 3, MS_PF_BASE },             \
        { n3,  "3g",        9, 0x2, 3, 4, 0x11, 2, MS_PF_BASE },             \
        { n4,  "4g",        5, 0x3, 4, 4, 0x01, 1, MS_PF_BASE },             \
        { n7,  "7g",        0, 0x4, 7, 8, 0x01, 1, MS_PF_BASE },             \
    }

static const ms_profile_t P_A100_40[] = MIG8("1g.5gb", "1g.5gb+me", "1g.10gb",
    "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb");
static const ms_profile_t P_A100_80[] = MIG8("1g.10gb", "1g.10gb+me", "1g.20gb",
    "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb");
static const ms_profile_t P_H100_94[] = MIG8("1g.12gb", "1g.12gb+me", "1g.24gb",
    "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb");
static const ms_profile_t P_H100_96[] = MIG8("1g.12gb", "1g.12gb+me", "1g.24gb",
    "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb");
static const ms_profile_t P_H200[] = MIG8("1g.18gb", "1g.18gb+me", "1g.35gb",
    "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb");
static const ms_profile_t P_GH200[] = MIG8("1g.18gb", "1g.18gb+me", "1g.36gb",
    "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb");
static const ms_profile_t P_B200[] = MIG8("1g.23gb", "1g.23gb+me", "1g.45gb",
    "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb");
static const ms_profile_t P_GB200[] = MIG8("1g.23gb", "1g.23gb+me", "1g.47gb",
    "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb");

/* A30: a 4-slice axis; compute slices equal memory slices. */
static const ms_profile_t P_A30[] = {
    { "1g.6gb",     "1g",    14, 0x0, 1, 1, 0x0F, 4, MS_PF_BASE },
    { "1g.6gb+me",  "1g+me", 21, 0x7, 1, 1, 0x0F, 1, MS_PF_ME },
    { "2g.12gb",    "2g",     5, 0x1, 2, 2, 0x05, 2, MS_PF_BASE },
    { "2g.12gb+me", "2g+me",  6, 0x8, 2, 2, 0x05, 1, MS_PF_ME },
    { "4g.24gb",    "4g",     0, 0x3, 4, 4, 0x01, 1, MS_PF_BASE },
};

/* RTX PRO 6000 Blackwell: a 12-unit placement axis, 4 compute slices
 * (IDs and placements from a third-party -lgipp transcript; enum indices
 * inferred, see mig-hardware.md §1.5). */
static const ms_profile_t P_RTX6000[] = {
    { "1g.24gb",        "1g",        14, 0x0,  1, 3,  0x249, 4, MS_PF_BASE },
    { "1g.24gb+me",     "1g+me",     21, 0x7,  1, 3,  0x249, 1, MS_PF_ME },
    { "1g.24gb+gfx",    "1g+gfx",    47, 0xA,  1, 3,  0x249, 4, MS_PF_GFX },
    { "1g.24gb+me.all", "1g+me.all", 65, 0xF,  1, 3,  0x249, 1, MS_PF_ALL_ME },
    { "1g.24gb-me",     "1g-me",     67, 0xD,  1, 3,  0x249, 4, MS_PF_NO_ME },
    { "2g.48gb",        "2g",         5, 0x1,  2, 6,  0x041, 2, MS_PF_BASE },
    { "2g.48gb+gfx",    "2g+gfx",    35, 0xB,  2, 6,  0x041, 2, MS_PF_GFX },
    { "2g.48gb+me.all", "2g+me.all", 64, 0x10, 2, 6,  0x041, 1, MS_PF_ALL_ME },
    { "2g.48gb-me",     "2g-me",     66, 0xE,  2, 6,  0x041, 2, MS_PF_NO_ME },
    { "4g.96gb",        "4g",         0, 0x3,  4, 12, 0x001, 1, MS_PF_BASE },
    { "4g.96gb+gfx",    "4g+gfx",    32, 0xC,  4, 12, 0x001, 1, MS_PF_GFX },
};

#define NP(a) ((uint8_t)(sizeof(a) / sizeof((a)[0])))

static const ms_model_t MODELS[] = {
    { "A30",         "A30-24GB",                    24,  6, 4, 4, NP(P_A30), P_A30 },
    { "A100-40GB",   "A100,A100-SXM4-40GB,A100-PCIE-40GB,A800-40GB",
                                                    40,  5, 7, 7, NP(P_A100_40), P_A100_40 },
    { "A100-80GB",   "A100-SXM4-80GB,A100-PCIE-80GB,A800-80GB",
                                                    80, 10, 7, 7, NP(P_A100_80), P_A100_80 },
    { "H100-80GB",   "H100,H100-SXM5-80GB,H100-PCIE-80GB,H800-80GB",
                                                    80, 10, 7, 7, NP(P_A100_80), P_A100_80 },
    { "H100-94GB",   "H100-NVL,H800-NVL",           94, 12, 7, 7, NP(P_H100_94), P_H100_94 },
    { "H100-96GB",   "GH200-96GB,H20",              96, 12, 7, 7, NP(P_H100_96), P_H100_96 },
    { "H200-141GB",  "H200,H200-SXM5-141GB,H200-NVL",
                                                   141, 18, 7, 7, NP(P_H200), P_H200 },
    { "GH200-144GB", "GH200",                      144, 18, 7, 7, NP(P_GH200), P_GH200 },
    { "B200-180GB",  "B200",                       180, 23, 7, 7, NP(P_B200), P_B200 },
    { "GB200-186GB", "GB200",                      186, 23, 7, 7, NP(P_GB200), P_GB200 },
    { "RTX-PRO-6000", "RTX-PRO-6000-Blackwell,RTX6000-Blackwell",
                                                    96,  8, 4, 4, NP(P_RTX6000), P_RTX6000 },
};

const ms_model_t *ms_models(int *n)
{
    if (n != NULL)
        *n = (int)(sizeof(MODELS) / sizeof(MODELS[0]));
    return MODELS;
}

/* True if name equals one entry of the comma-separated list (case-insensitive). */
static int in_list(const char *list, const char *name)
{
    size_t len = strlen(name);
    const char *p = list;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == len && strncasecmp(p, name, n) == 0)
            return 1;
        p = end != NULL ? end + 1 : NULL;
    }
    return 0;
}

const ms_model_t *ms_model_find(const char *name)
{
    int n, i;
    const ms_model_t *m = ms_models(&n);

    if (name == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        if (strcasecmp(m[i].name, name) == 0 || in_list(m[i].aliases, name))
            return &m[i];
    return NULL;
}

int ms_model_width(const ms_model_t *m)
{
    int w = 0, i, s;

    for (i = 0; i < m->nprofiles; i++)
        for (s = 0; s < MS_MAX_WIDTH; s++)
            if ((m->profiles[i].start_mask >> s) & 1u)
                if (s + m->profiles[i].msize > w)
                    w = s + m->profiles[i].msize;
    return w;
}

int ms_model_profile_find(const ms_model_t *m, const char *name)
{
    int i;

    if (name == NULL)
        return -1;
    for (i = 0; i < m->nprofiles; i++)
        if (strcasecmp(m->profiles[i].name, name) == 0)
            return i;
    for (i = 0; i < m->nprofiles; i++)
        if (strcasecmp(m->profiles[i].generic, name) == 0)
            return i;
    return -1;
}
