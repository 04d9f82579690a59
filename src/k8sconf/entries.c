/* entries.c - mig-parted's layout entries: {devices, mig-enabled,
 * mig-devices}, parsed from YAML and checked on a model's geometry. */
#include "k8sconf/k8s_int.h"

#include <stdlib.h>
#include <string.h>

#include "migsched/policy.h"

static bool parse_devices(ms__ydoc_t *y, const yaml_node_t *n, const char *field,
                          ms__k8s_entry_t *e)
{
    int i;

    if (n->type == YAML_SCALAR_NODE) {
        const char *s = ms__yscalar(y, n, field);
        if (s == NULL)
            return false;
        if (strcmp(s, "all") != 0)
            return ms__yerr(y, n, field, "'%s': expected all or a list of GPU indices", s);
        e->all = true;
        e->maxdev = -1;
        return true;
    }
    if (!ms__yseq(y, n, field))
        return false;
    if (ms__yseq_len(n) == 0)
        return ms__yerr(y, n, field, "empty device list");
    e->maxdev = -1;
    for (i = 0; i < ms__yseq_len(n); i++) {
        long d;
        if (!ms__yint(y, ms__yseq_item(y, n, i), field, 0, MS__K8S_MAX_GPUS - 1, &d))
            return false;
        if (e->devices & (UINT64_C(1) << d))
            return ms__yerr(y, ms__yseq_item(y, n, i), field, "GPU %ld listed twice", d);
        e->devices |= UINT64_C(1) << d;
        if (d > e->maxdev)
            e->maxdev = (int)d;
    }
    return true;
}

static bool parse_counts(ms__ydoc_t *y, const yaml_node_t *n, const char *field,
                         ms__k8s_entry_t *e)
{
    char f[MS__K8S_FIELD * 2];
    int i, j;

    if (!ms__ymap(y, n, field))
        return false;
    if (ms__ymap_len(n) > MS_MAX_PROFILES)
        return ms__yerr(y, n, field, "more than %d profiles", MS_MAX_PROFILES);
    for (i = 0; i < ms__ymap_len(n); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, n, i, &v, field);
        long c;

        if (k == NULL)
            return false;
        ms__kfield(f, sizeof(f), "%s.%s", field, k);
        if (strlen(k) == 0 || strlen(k) >= MS__K8S_NAME)
            return ms__yerr(y, v, f, "empty or overlong profile name");
        for (j = 0; j < e->nprof; j++)
            if (strcmp(e->prof[j], k) == 0)
                return ms__yerr(y, v, f, "profile '%s' given twice", k);
        if (!ms__yint(y, v, f, 0, MS_MAX_INST, &c))
            return false;
        memcpy(e->prof[e->nprof], k, strlen(k) + 1);
        e->count[e->nprof] = (int)c;
        e->prof_line[e->nprof] = ms__ynode_line(v);
        e->nprof++;
    }
    return true;
}

static bool parse_entry(ms__ydoc_t *y, const yaml_node_t *n, const char *field,
                        bool allow_filter, ms__k8s_entry_t *e)
{
    char f[MS__K8S_FIELD * 2];
    bool have_dev = false, have_md = false, have_en = false;
    int i;

    memset(e, 0, sizeof(*e));
    e->line = ms__ynode_line(n);
    e->mig_enabled = true;
    if (!ms__ymap(y, n, field))
        return false;
    for (i = 0; i < ms__ymap_len(n); i++) {
        const yaml_node_t *v;
        const char *k = ms__ymap_key(y, n, i, &v, field);

        if (k == NULL)
            return false;
        ms__kfield(f, sizeof(f), "%s.%s", field, k);
        if (strcmp(k, "devices") == 0) {
            if (!parse_devices(y, v, f, e))
                return false;
            have_dev = true;
        } else if (strcmp(k, "mig-enabled") == 0) {
            if (!ms__ybool(y, v, f, &e->mig_enabled))
                return false;
            have_en = true;
        } else if (strcmp(k, "mig-devices") == 0) {
            if (!parse_counts(y, v, f, e))
                return false;
            have_md = true;
        } else if (allow_filter && strcmp(k, "device-filter") == 0) {
            e->filtered = true;
        } else {
            return ms__yerr(y, v, f, "unknown key '%s' (expected devices, mig-enabled, mig-devices)",
                            k);
        }
    }
    if (!have_dev)
        return ms__yerr(y, n, field, "missing devices (all or a list of GPU indices)");
    (void)have_en;
    if (e->mig_enabled && !have_md)
        return ms__yerr(y, n, field, "missing mig-devices (write {} for none)");
    if (!e->mig_enabled)
        for (i = 0; i < e->nprof; i++)
            if (e->count[i] > 0)
                return ms__yerr(y, n, field, "mig-devices given with mig-enabled: false");
    return true;
}

bool ms__k8s_parse_entries(ms__ydoc_t *y, const yaml_node_t *n, const char *field,
                           bool allow_filter, ms__k8s_entry_t **out, int *nout)
{
    char f[MS__K8S_FIELD * 2];
    ms__k8s_entry_t *e;
    int i, j, len;

    *out = NULL;
    *nout = 0;
    if (!ms__yseq(y, n, field))
        return false;
    if ((len = ms__yseq_len(n)) == 0)
        return ms__yerr(y, n, field, "empty layout");
    if ((e = calloc((size_t)len, sizeof(*e))) == NULL)
        return ms__yerr(y, n, field, "out of memory");
    for (i = 0; i < len; i++) {
        ms__kfield(f, sizeof(f), "%s[%d]", field, i);
        if (!parse_entry(y, ms__yseq_item(y, n, i), f, allow_filter, &e[i])) {
            free(e);
            return false;
        }
        /* two entries for one GPU would leave its layout ambiguous (filtered
         * entries may overlap: they select different models) */
        for (j = 0; j < i && !e[i].filtered; j++)
            if (!e[j].filtered && (e[i].all || e[j].all || (e[i].devices & e[j].devices))) {
                ms__yerr(y, ms__yseq_item(y, n, i), f, "devices overlap those of %s[%d]", field, j);
                free(e);
                return false;
            }
    }
    *out = e;
    *nout = len;
    return true;
}

bool ms__k8s_entry_check(const char *path, ms_diag_t *diag, const ms__k8s_entry_t *e,
                         const ms_model_t *m, const char *field, int *prof_idx)
{
    char f[MS__K8S_FIELD * 4], *spec;
    size_t cap = 1, len = 0;
    uint32_t set = 0;
    ms_geom_t *g = NULL;
    ms_status_t st;
    int i, c, total = 0;

    for (i = 0; i < e->nprof; i++) {
        int k = ms_model_profile_find(m, e->prof[i]);
        ms__kfield(f, sizeof(f), "%s.mig-devices.%s", field, e->prof[i]);
        if (k < 0) {
            ms_diag_set(diag, path, e->prof_line[i], f, "'%s' is not a MIG profile of %s",
                        e->prof[i], m->name);
            return false;
        }
        prof_idx[i] = k;
        if (e->count[i] > m->profiles[k].max_count) {
            ms_diag_set(diag, path, e->prof_line[i], f,
                        "%d x %s: at most %d fit one %s GPU", e->count[i],
                        m->profiles[k].name, m->profiles[k].max_count, m->name);
            return false;
        }
        if (e->count[i] > 0)
            set |= UINT32_C(1) << k;
        total += e->count[i];
        cap += (size_t)e->count[i] * (strlen(m->profiles[k].name) + 1);
    }
    if (total == 0)
        return true;
    ms__kfield(f, sizeof(f), "%s.mig-devices", field);
    if (total > MS_MAX_INST) {
        ms_diag_set(diag, path, e->line, f, "%d instances cannot be placed on one %s GPU", total,
                    m->name);
        return false;
    }
    if ((spec = malloc(cap)) == NULL) {
        ms_diag_set(diag, path, e->line, f, "out of memory");
        return false;
    }
    for (i = 0; i < e->nprof; i++)
        for (c = 0; c < e->count[i]; c++) {
            size_t l = strlen(m->profiles[prof_idx[i]].name);
            if (len > 0)
                spec[len++] = '+';
            memcpy(spec + len, m->profiles[prof_idx[i]].name, l);
            len += l;
        }
    spec[len] = '\0';
    st = ms_geom_create(m, set, &g);
    if (st == MS_OK)
        st = ms_policy_layout_check(g, spec, NULL);
    ms_geom_destroy(g);
    if (st != MS_OK) {
        ms_diag_set(diag, path, e->line, f, "%s cannot be placed on one %s GPU%s", spec,
                    m->name, st == MS_ENOTSUP ? " (profile combination not modelled)" : "");
        free(spec);
        return false;
    }
    free(spec);
    return true;
}
