/* nvml_model.c - which migsched model an NVML device name is.
 *
 * nvmlDeviceGetName() answers marketing names ("NVIDIA A100-SXM4-40GB",
 * "NVIDIA H100 80GB HBM3", "NVIDIA H100 NVL", "NVIDIA A100 80GB PCIe"),
 * older drivers without the "NVIDIA " prefix. We normalise (drop the
 * prefix, upper case, spaces to '-'), try the geometry tables' own names and
 * aliases (ms_model_find), then an ordered list of name fragments. The
 * order matters where one name contains another (H200 before H20, GB200
 * before B200, the NVL and GH200 forms before plain H100).
 *
 * The GH200 names are inferred, not seen on hardware: "GH200 480GB" is the
 * Grace Hopper with 96 GB HBM3 (H100-96GB), "GH200 144G HBM3e" the 144 GB
 * one. The probe prints the raw name beside the model so a wrong guess
 * shows.
 */
#include "nvml/nvml.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

typedef struct frag_rule {
    const char *a, *b;   /* both must occur (b may be NULL) */
    const char *model;
} frag_rule_t;

static const frag_rule_t RULES[] = {
    { "A100", "80GB", "A100-80GB" },
    { "A800", "80GB", "A100-80GB" },
    { "A100", NULL, "A100-40GB" },
    { "A800", NULL, "A100-40GB" },
    { "A30", NULL, "A30" },
    { "H100-NVL", NULL, "H100-94GB" },
    { "H800-NVL", NULL, "H100-94GB" },
    { "H100", "94GB", "H100-94GB" },
    { "H100", "96GB", "H100-96GB" },
    { "GH200", "144G", "GH200-144GB" },
    { "GH200", NULL, "H100-96GB" },
    { "H200", NULL, "H200-141GB" },
    { "H100", NULL, "H100-80GB" },
    { "H800", NULL, "H100-80GB" },
    { "H20", NULL, "H100-96GB" },
    { "GB200", NULL, "GB200-186GB" },
    { "B200", NULL, "B200-180GB" },
    { "RTX-PRO-6000", NULL, "RTX-PRO-6000" },
};

const ms_model_t *ms_nvml_model_for_name(const char *nvml_name)
{
    char norm[MS_NVML_NAME_LEN];
    const char *s = nvml_name;
    size_t i, n = 0;

    if (nvml_name == NULL)
        return NULL;
    if (strncasecmp(s, "NVIDIA ", 7) == 0)
        s += 7;
    while (*s == ' ')
        s++;
    for (; *s != '\0' && n + 1 < sizeof(norm); s++)
        norm[n++] = *s == ' ' ? '-' : (char)toupper((unsigned char)*s);
    while (n > 0 && norm[n - 1] == '-')
        n--;
    norm[n] = '\0';
    if (n == 0)
        return NULL;
    if (ms_model_find(norm) != NULL)
        return ms_model_find(norm);
    for (i = 0; i < sizeof(RULES) / sizeof(RULES[0]); i++)
        if (strstr(norm, RULES[i].a) != NULL &&
            (RULES[i].b == NULL || strstr(norm, RULES[i].b) != NULL))
            return ms_model_find(RULES[i].model);
    return NULL;
}
