/* dra_map.c - published devices to migsched's model (the DRA loop
 * thread): which node, GPU, model, profile and placement start each device
 * of a managed driver is, read from the scheme (docs/dra.md, "Devices"):
 *   - a GPU is a counter set of a pool: every device consuming it is one
 *     of its MIG placements (or its whole-GPU device); a device consuming
 *     no counters is a GPU with MIG off;
 *   - the model is the productName attribute (NVIDIA's marketing name, as
 *     NVML gives it, or migsched's model name);
 *   - the profile is the profile attribute, the placement start the first
 *     memory-slice-N counter it consumes; the slices consumed must be the
 *     profile's size at a legal start, or the device is not modelled;
 *   - the whole-GPU device (type gpu) consumes every memory slice: it is
 *     the full-size profile at start 0.
 * Only the pool's newest generation counts, and only once all its slices
 * are there (a pool being republished is skipped until it is whole).
 * Devices that cannot be modelled (an unknown model, a shared device,
 * counters that disagree with the geometry) are counted and logged: the
 * allocator leaves them alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml/nvml.h"
#include "service/dra_int.h"

static int cmp_slice(const void *a, const void *b)
{
    const dra_slice_t *x = *(const dra_slice_t *const *)a, *y = *(const dra_slice_t *const *)b;
    int c = strcmp(x->driver, y->driver);

    if (c == 0)
        c = strcmp(x->pool, y->pool);
    if (c == 0)
        c = x->gen > y->gen ? -1 : x->gen < y->gen ? 1 : 0;
    return c != 0 ? c : strcmp(x->name, y->name);
}

/* "gpu-2" before "gpu-10": digits compare as numbers. */
static int natcmp(const char *a, const char *b)
{
    while (*a != '\0' && *b != '\0') {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            char *ea, *eb;
            unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);

            if (x != y)
                return x < y ? -1 : 1;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a != '\0' ? 1 : *b != '\0' ? -1 : 0;
}

static int cmp_gpu(const void *a, const void *b)
{
    const dra_gpu_t *x = a, *y = b;
    int c = strcmp(x->node, y->node);

    if (c == 0)
        c = strcmp(x->driver, y->driver);
    return c != 0 ? c : natcmp(x->label, y->label);
}

void dra_map_free(dra_map_t *m)
{
    int i, k;

    for (i = 0; i < m->ngpu; i++) {
        free(m->gpu[i].driver);
        free(m->gpu[i].pool);
        free(m->gpu[i].node);
        free(m->gpu[i].dev);
        free(m->gpu[i].at);
        free(m->gpu[i].sname);
    }
    free(m->gpu);
    for (i = 0; i < m->nkind; i++) {
        for (k = 0; k < m->kind[i].nattrs; k++) {
            free(m->kind[i].attrs[k].key);
            free(m->kind[i].attrs[k].v.s);
        }
        for (k = 0; k < m->kind[i].ncaps; k++)
            free(m->kind[i].caps[k].key);
        free(m->kind[i].attrs);
        free(m->kind[i].caps);
    }
    free(m->kind);
    for (i = 0; i < m->ngeoms; i++)
        ms_geom_destroy(m->geoms[i]);
    free(m->geoms);
    free(m->gmodels);
    free(m->gsched);
    ms__idmap_fini(&m->devix);
    for (i = 0; i < m->ndevkeys; i++)
        free(m->devkeys[i]);
    free(m->devkeys);
    free(m->devgpu);
    free(m->devdev);
    memset(m, 0, sizeof(*m));
}

/* The geometry of a model: every profile migsched models (the classic set
 * and the ones NVIDIA also publishes, so that an allocation of any of them
 * is accounted for), else the classic set. */
static const ms_geom_t *geom_of(dra_map_t *m, const ms_model_t *md)
{
    ms_geom_t *g = NULL, **gv;
    const ms_model_t **mv;
    uint32_t set = 0;
    int i;

    for (i = 0; i < m->ngeoms; i++)
        if (m->gmodels[i] == md)
            return m->geoms[i];
    for (i = 0; i < md->nprofiles; i++)
        if ((md->profiles[i].flags & (MS_PF_ALL_ME | MS_PF_GFX | MS_PF_NO_ME)) == 0)
            set |= 1u << i;
    if (ms_geom_create(md, set, &g) != MS_OK && ms_geom_create(md, 0, &g) != MS_OK)
        return NULL;
    if ((gv = realloc(m->geoms, (size_t)(m->ngeoms + 1) * sizeof(*gv))) == NULL) {
        ms_geom_destroy(g);
        return NULL;
    }
    m->geoms = gv;
    if ((mv = realloc(m->gmodels, (size_t)(m->ngeoms + 1) * sizeof(*mv))) == NULL) {
        ms_geom_destroy(g);
        return NULL;
    }
    m->gmodels = mv;
    m->geoms[m->ngeoms] = g;
    m->gmodels[m->ngeoms++] = md;
    return g;
}

static const char *attr_str(const dra_slice_t *s, const dra_pdev_t *d, const char *name)
{
    char key[DRA_NAME_MAX + 2];
    const dra_val_t *v;

    snprintf(key, sizeof(key), "%s/%s", s->driver, name);
    v = dra_kv_get(d->attrs, d->nattrs, key);
    return v != NULL && (v->kind == DRA_V_STR || v->kind == DRA_V_VER) ? v->s : NULL;
}

static const ms_model_t *model_of(const dra_slice_t *s, const dra_pdev_t *d)
{
    const char *pn = attr_str(s, d, "productName");
    const ms_model_t *md;

    if (pn == NULL)
        return NULL;
    md = ms_model_find(pn);
    return md != NULL ? md : ms_nvml_model_for_name(pn);
}

/* The memory slices a consumption takes, as a mask; its width in *w (the
 * memory-slice-N counters of set). -1 when they are not memory-slice-N. */
static int slice_mask(const dra_cset_t *use, const dra_cset_t *set, int *w)
{
    int i, n, mask = 0, wid = 0;

    for (i = 0; i < set->n; i++)
        if (sscanf(set->c[i].name, "memory-slice-%d", &n) == 1 && n >= 0 && n < MS_MAX_WIDTH && n + 1 > wid)
            wid = n + 1;
    for (i = 0; i < use->n; i++)
        if (sscanf(use->c[i].name, "memory-slice-%d", &n) == 1) {
            if (n < 0 || n >= wid || use->c[i].value < 1)
                return -1;
            mask |= 1 << n;
        }
    *w = wid;
    return mask;
}

static int full_profile(const ms_geom_t *g)
{
    int k;

    for (k = ms_geom_nprofiles(g) - 1; k >= 0; k--) {
        const ms_profile_t *p = ms_geom_profile(g, k);

        if (p->msize == ms_geom_width(g) && (p->start_mask & 1u) != 0 && (p->flags & MS_PF_BASE) != 0)
            return k;
    }
    return -1;
}

/* --- kinds: what selectors see ------------------------------------------------------- */

static int kv_copy(const dra_kv_t *src, int n, dra_kv_t **out)
{
    int i;

    if ((*out = calloc((size_t)n + 1, sizeof(**out))) == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        (*out)[i].v = src[i].v;
        (*out)[i].v.s = NULL;
        if (((*out)[i].key = strdup(src[i].key)) == NULL ||
            (src[i].v.s != NULL && ((*out)[i].v.s = strdup(src[i].v.s)) == NULL)) {
            for (; i >= 0; i--) {
                free((*out)[i].key);
                free((*out)[i].v.s);
            }
            free(*out);
            *out = NULL;
            return -1;
        }
    }
    return 0;
}

static bool val_eq(const dra_val_t *a, const dra_val_t *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case DRA_V_STR:
    case DRA_V_VER: return strcmp(a->s, b->s) == 0;
    case DRA_V_INT: return a->i == b->i;
    case DRA_V_BOOL: return a->b == b->b;
    default: return a->q == b->q;
    }
}

/* Keep in kv only what the device has with the same value. */
static void kv_meet(dra_kv_t *kv, int *n, const dra_kv_t *dev, int ndev)
{
    int i = 0;

    while (i < *n) {
        const dra_val_t *v = dra_kv_get(dev, ndev, kv[i].key);

        if (v != NULL && val_eq(v, &kv[i].v)) {
            i++;
            continue;
        }
        free(kv[i].key);
        free(kv[i].v.s);
        kv[i] = kv[--*n];
    }
}

static int kind_merge(dra_map_t *m, const dra_gpu_t *g, const dra_dev_t *dv, const dra_pdev_t *d)
{
    bool whole = dv->kind == DRA_DEV_WHOLE;
    const ms_model_t *md = ms_geom_model(g->geom);
    dra_kind_t *k;
    int i;

    for (i = 0; i < m->nkind; i++) {
        k = &m->kind[i];
        if (k->model == md && k->mig_gpu == g->mig && k->whole == whole && k->prof == dv->prof &&
            strcmp(k->driver, g->driver) == 0) {
            kv_meet(k->attrs, &k->nattrs, d->attrs, d->nattrs);
            kv_meet(k->caps, &k->ncaps, d->caps, d->ncaps);
            return i;
        }
    }
    if (m->nkind % 16 == 0) {
        dra_kind_t *v = realloc(m->kind, (size_t)(m->nkind + 16) * sizeof(*v));

        if (v == NULL)
            return -1;
        m->kind = v;
    }
    k = &m->kind[m->nkind];
    memset(k, 0, sizeof(*k));
    k->driver = g->driver;
    k->model = md;
    k->geom = g->geom;
    k->mig_gpu = g->mig;
    k->whole = whole;
    k->prof = dv->prof;
    if (kv_copy(d->attrs, d->nattrs, &k->attrs) != 0 || kv_copy(d->caps, d->ncaps, &k->caps) != 0) {
        if (k->attrs != NULL) {
            for (i = 0; i < d->nattrs; i++) {
                free(k->attrs[i].key);
                free(k->attrs[i].v.s);
            }
            free(k->attrs);
        }
        return -1;
    }
    k->nattrs = d->nattrs;
    k->ncaps = d->ncaps;
    return m->nkind++;
}

void dra_kind_view(const dra_kind_t *k, dra_devview_t *v)
{
    v->driver = k->driver;
    v->attrs = k->attrs;
    v->nattrs = k->nattrs;
    v->caps = k->caps;
    v->ncaps = k->ncaps;
}

/* --- building ------------------------------------------------------------------- */

typedef struct build {
    svc_dra_t *x;
    dra_map_t *m;
    int capgpu;
    int pool0;                     /* the current pool's first GPU */
} build_t;

static dra_gpu_t *gpu_get(build_t *b, const dra_slice_t *s, const char *set, const ms_geom_t *geom, bool mig)
{
    dra_map_t *m = b->m;
    dra_gpu_t *g;
    int i;

    if (set != NULL)
        for (i = b->pool0; i < m->ngpu; i++)
            if (m->gpu[i].mig && strcmp(m->gpu[i].label, set) == 0)
                return m->gpu[i].geom == geom ? &m->gpu[i] : NULL;
    if (m->ngpu == b->capgpu) {
        int cap = b->capgpu ? b->capgpu * 2 : 64;
        dra_gpu_t *v = realloc(m->gpu, (size_t)cap * sizeof(*v));

        if (v == NULL)
            return NULL;
        m->gpu = v;
        b->capgpu = cap;
    }
    g = &m->gpu[m->ngpu];
    memset(g, 0, sizeof(*g));
    g->geom = geom;
    g->mig = mig;
    g->whole = -1;
    g->gpu = -1;
    g->sched = mig ? 0 : 1;
    snprintf(g->label, sizeof(g->label), "%s", set != NULL ? set : "");
    if (mig) {
        size_t n = (size_t)ms_geom_nprofiles(geom) * (size_t)ms_geom_width(geom);

        if ((g->at = malloc(n * sizeof(*g->at))) == NULL)
            return NULL;
        memset(g->at, 0xff, n * sizeof(*g->at));
    }
    if ((g->driver = strdup(s->driver)) == NULL || (g->pool = strdup(s->pool)) == NULL ||
        (g->node = strdup(s->node)) == NULL) {
        free(g->driver);
        free(g->pool);
        free(g->node);
        free(g->at);
        return NULL;
    }
    m->ngpu++;
    return g;
}

static int dev_add(dra_gpu_t *g, const dra_pdev_t *d, int kind, int prof, int start)
{
    dra_dev_t *v;

    if (g->ndev % 16 == 0) {
        if ((v = realloc(g->dev, (size_t)(g->ndev + 16) * sizeof(*v))) == NULL)
            return -1;
        g->dev = v;
    }
    v = &g->dev[g->ndev];
    memset(v, 0, sizeof(*v));
    snprintf(v->name, sizeof(v->name), "%s", d->name);
    v->kind = kind;
    v->prof = prof;
    v->start = start;
    v->kindix = -1;
    if (kind == DRA_DEV_WHOLE) {
        g->whole = g->ndev;
        if (!g->mig || g->label[0] == '\0')
            snprintf(g->label, sizeof(g->label), "%s", d->name);
    }
    return g->ndev++;
}

/* One device of a complete pool: its GPU and place, or skipped. */
static void add_device(build_t *b, const dra_slice_t *s, const dra_pdev_t *d, dra_slice_t *const *pool, int np)
{
    const ms_model_t *md = model_of(s, d);
    const ms_geom_t *geom = md != NULL ? geom_of(b->m, md) : NULL;
    const char *type = attr_str(s, d, "type"), *pn;
    const dra_cset_t *set = NULL;
    dra_gpu_t *g;
    int i, k, w = 0, mask, start, prof;

    if (geom == NULL || d->multi || d->ncons > 1) {
        b->m->skipped++;
        return;
    }
    if (d->ncons == 0) {   /* a GPU with MIG off: the device is the GPU */
        if ((type != NULL && strcmp(type, "gpu") != 0) || (g = gpu_get(b, s, NULL, geom, false)) == NULL ||
            dev_add(g, d, DRA_DEV_WHOLE, full_profile(geom), -1) < 0)
            b->m->skipped++;
        return;
    }
    for (i = 0; i < np && set == NULL; i++)
        for (k = 0; k < pool[i]->nsets; k++)
            if (strcmp(pool[i]->sets[k].name, d->cons[0].name) == 0)
                set = &pool[i]->sets[k];
    if (set == NULL || (mask = slice_mask(&d->cons[0], set, &w)) <= 0 || w != ms_geom_width(geom) ||
        (g = gpu_get(b, s, set->name, geom, true)) == NULL) {
        b->m->skipped++;
        return;
    }
    if (type != NULL && strcmp(type, "gpu") == 0) {
        prof = full_profile(geom);
        if (prof < 0 || mask != (1 << w) - 1 || g->whole >= 0 || dev_add(g, d, DRA_DEV_WHOLE, prof, 0) < 0)
            b->m->skipped++;
        return;
    }
    for (start = 0; ((mask >> start) & 1) == 0; start++)
        ;
    pn = attr_str(s, d, "profile");
    prof = pn != NULL ? ms_geom_profile_find(geom, pn) : -1;
    if (prof < 0 || ms_geom_profile(geom, prof)->start_mask == 0 ||
        ((ms_geom_profile(geom, prof)->start_mask >> start) & 1u) == 0 ||
        mask != ((1 << ms_geom_profile(geom, prof)->msize) - 1) << start || g->at == NULL ||
        g->at[prof * w + start] >= 0) {
        b->m->skipped++;
        return;
    }
    if ((k = dev_add(g, d, DRA_DEV_MIG, prof, start)) >= 0)
        g->at[prof * w + start] = (int16_t)k;
    else
        b->m->skipped++;
}

/* add_device's last step: the device's kind. */
static void add_kind(build_t *b, dra_gpu_t *g, const dra_pdev_t *d)
{
    if (g->ndev > 0 && g->dev[g->ndev - 1].kindix < 0)
        g->dev[g->ndev - 1].kindix = kind_merge(b->m, g, &g->dev[g->ndev - 1], d);
}

/* A complete pool's devices. */
static void add_pool(build_t *b, dra_slice_t *const *pool, int np)
{
    int i, k;

    int g;

    b->pool0 = b->m->ngpu;
    for (i = 0; i < np; i++)
        for (k = 0; k < pool[i]->ndev; k++) {
            add_device(b, pool[i], &pool[i]->dev[k], pool, np);
            /* the device just added, if it was: its GPU's last, without a kind */
            for (g = b->pool0; g < b->m->ngpu; g++)
                add_kind(b, &b->m->gpu[g], &pool[i]->dev[k]);
        }
}

/* --- the index of devices by driver/pool/name ------------------------------------------ */

static const char *devkey(const void *ctx, int32_t v)
{
    return ((const dra_map_t *)ctx)->devkeys[v];
}

static int index_devices(dra_map_t *m)
{
    int i, k, n = 0;

    for (i = 0; i < m->ngpu; i++)
        n += m->gpu[i].ndev;
    if (n > 0 && ((m->devkeys = calloc((size_t)n, sizeof(*m->devkeys))) == NULL ||
                  (m->devgpu = calloc((size_t)n, sizeof(*m->devgpu))) == NULL ||
                  (m->devdev = calloc((size_t)n, sizeof(*m->devdev))) == NULL))
        return -1;
    for (i = 0; i < m->ngpu; i++)
        for (k = 0; k < m->gpu[i].ndev; k++) {
            size_t len = strlen(m->gpu[i].driver) + strlen(m->gpu[i].pool) + strlen(m->gpu[i].dev[k].name) + 3;
            char *key = malloc(len);

            if (key == NULL)
                return -1;
            snprintf(key, len, "%s/%s/%s", m->gpu[i].driver, m->gpu[i].pool, m->gpu[i].dev[k].name);
            m->devkeys[m->ndevkeys] = key;
            m->devgpu[m->ndevkeys] = i;
            m->devdev[m->ndevkeys] = k;
            if (ms__idmap_find(&m->devix, key) >= 0) {   /* the same device twice: the first counts */
                free(key);
                continue;
            }
            if (ms__idmap_reserve(&m->devix) != 0)
                return -1;
            (void)ms__idmap_put(&m->devix, m->ndevkeys++);
        }
    return 0;
}

bool dra_map_find(const dra_map_t *m, const char *driver, const char *pool, const char *name, int *gpu, int *dev)
{
    char key[3 * (DRA_NAME_MAX + 1) + 4];
    int32_t v;

    if ((size_t)snprintf(key, sizeof(key), "%s/%s/%s", driver, pool, name) >= sizeof(key) ||
        (v = ms__idmap_find(&m->devix, key)) < 0)
        return false;
    *gpu = m->devgpu[v];
    *dev = m->devdev[v];
    return true;
}

/* --- the build -------------------------------------------------------------------------- */

/* The managed, node-local slices, sorted by driver, pool, newest first. */
static dra_slice_t **managed_slices(svc_dra_t *x, int *n)
{
    dra_tab_t *t = &x->tab[DRA_K_SLICE];
    dra_slice_t **v = calloc((size_t)t->n + 1, sizeof(*v));
    int32_t i;

    *n = 0;
    if (v == NULL)
        return NULL;
    for (i = 0; i < t->n; i++) {
        dra_slice_t *s = t->v[i];

        if (s != NULL && s->node != NULL && dra_driver_managed(x, s->driver))
            v[(*n)++] = s;
    }
    qsort(v, (size_t)*n, sizeof(*v), cmp_slice);
    return v;
}

int dra_map_build(svc_dra_t *x)
{
    dra_map_t nm;
    build_t b;
    dra_slice_t **v;
    int n, i, e, incomplete = 0;

    memset(&nm, 0, sizeof(nm));
    memset(&b, 0, sizeof(b));
    b.x = x;
    b.m = &nm;
    if ((v = managed_slices(x, &n)) == NULL)
        return -1;
    for (i = 0; i < n; i = e) {
        int np = 1;

        for (e = i + 1; e < n && strcmp(v[e]->driver, v[i]->driver) == 0 && strcmp(v[e]->pool, v[i]->pool) == 0; e++)
            if (v[e]->gen == v[i]->gen)
                np++;
        if (np != v[i]->count) {   /* being republished: wait for the rest */
            incomplete++;
            continue;
        }
        add_pool(&b, v + i, np);
    }
    if (nm.ngpu > 1)
        qsort(nm.gpu, (size_t)nm.ngpu, sizeof(*nm.gpu), cmp_gpu);
    free(v);
    if ((nm.gsched = calloc((size_t)nm.ngeoms + 1, sizeof(*nm.gsched))) != NULL)
        for (i = 0; i < nm.ngpu; i++)
            for (e = 0; e < nm.ngeoms; e++)
                if (nm.geoms[e] == nm.gpu[i].geom)
                    nm.gsched[e] |= 1 << nm.gpu[i].sched;
    dra_map_free(&x->map);
    x->map = nm;
    ms__idmap_init(&x->map.devix, devkey, &x->map, NULL, NULL);
    if (index_devices(&x->map) != 0)
        return -1;
    if (incomplete > 0 || x->map.skipped > 0)
        ms_log("info", "dra: devices mapped", json_pack("{s:i,s:i,s:i,s:i}", "gpus", x->map.ngpu, "kinds",
                                                        x->map.nkind, "skipped", x->map.skipped, "incomplete_pools",
                                                        incomplete));
    return 0;
}
