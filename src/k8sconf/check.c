/* check.c - an existing mig-parted config checked against one model: every
 * profile is the model's and every entry's counts fit one GPU. Entries with
 * a device-filter select GPUs by PCI id, which the model tables do not
 * hold; they are skipped (and counted as such by the caller's output). */
#include "k8sconf/k8s_int.h"

#include <stdlib.h>
#include <string.h>

static bool check_root(ms__ydoc_t *y, const ms_model_t *m, int *nconfigs)
{
    const yaml_node_t *root = ms__ydoc_root(y), *ver = NULL, *mc = NULL;
    char f[MS__K8S_FIELD * 2];
    int i, j;

    if (!ms__ymap(y, root, ""))
        return false;
    for (i = 0; i < ms__ymap_len(root); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, root, i, &v, "");
        if (k == NULL)
            return false;
        if (strcmp(k, "version") == 0)
            ver = v;
        else if (strcmp(k, "mig-configs") == 0)
            mc = v;
        else
            return ms__yerr(y, v, k, "unknown key '%s' (expected version, mig-configs)", k);
    }
    if (ver == NULL)
        return ms__yerr(y, root, "version", "missing version");
    {
        const char *s = ms__yscalar(y, ver, "version");
        if (s == NULL)
            return false;
        if (strcmp(s, "v1") != 0)
            return ms__yerr(y, ver, "version", "'%s': only v1 is known", s);
    }
    if (mc == NULL)
        return ms__yerr(y, root, "mig-configs", "missing mig-configs");
    if (!ms__ymap(y, mc, "mig-configs"))
        return false;
    for (i = 0; i < ms__ymap_len(mc); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, mc, i, &v, "mig-configs");
        ms__k8s_entry_t *e;
        int n;

        if (k == NULL)
            return false;
        ms__kfield(f, sizeof(f), "mig-configs.%s", k);
        if (!ms__k8s_parse_entries(y, v, f, true, &e, &n))
            return false;
        for (j = 0; j < n; j++) {
            int idx[MS_MAX_PROFILES];
            char ef[MS__K8S_FIELD * 2 + 16];
            ms__kfield(ef, sizeof(ef), "%s[%d]", f, j);
            if (!e[j].filtered && !ms__k8s_entry_check(y->path, y->diag, &e[j], m, ef, idx)) {
                free(e);
                return false;
            }
        }
        free(e);
        (*nconfigs)++;
    }
    return true;
}

ms_status_t ms_k8s_check_mig_parted(const char *path, const ms_model_t *m, int *nconfigs,
                                    ms_diag_t *diag)
{
    ms__ydoc_t y;
    ms_status_t st;
    bool ok;

    *nconfigs = 0;
    if ((st = ms__ydoc_load(&y, path, diag)) != MS_OK)
        return st;
    ok = check_root(&y, m, nconfigs);
    ms__ydoc_free(&y);
    return ok ? MS_OK : MS_EINVAL;
}
